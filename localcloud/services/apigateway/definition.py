"""An API's OpenAPI definition (SAM's ``DefinitionBody``, the ``Body`` of an
``AWS::ApiGateway::RestApi``) made into the API's resources, methods and integrations
through the API Gateway API, as API Gateway's import does.

Swagger 2.0 (what SAM generates) and OpenAPI 3 are read alike: ``paths``, each method with
its ``x-amazon-apigateway-integration``; ``x-amazon-apigateway-any-method`` is ``ANY``.
Lambda proxy integrations (``aws_proxy`` to a function's ``…/invocations`` URI), ``AWS``
integrations to the services the local cloud runs (:mod:`.aws_integration`), SAM's CORS
mocks and, in an HTTP API, first-class integrations (``integrationSubtype``) run locally;
any other is refused by name (:func:`refused_integration`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from localcloud.services.apigateway.aws_integration import refused_service, refused_subtype

METHODS: Final = frozenset({"get", "put", "post", "delete", "options", "head", "patch"})
ANY_METHOD: Final = "x-amazon-apigateway-any-method"
INTEGRATION: Final = "x-amazon-apigateway-integration"


def operations(body: Mapping[str, Any]) -> list[tuple[str, str, Mapping[str, Any]]]:
    """``(path, HTTP method, operation)`` of every operation the definition declares, the
    method upper case (``ANY`` for the any-method extension), in path order."""
    found = []
    for path, item in sorted((body.get("paths") or {}).items()):
        for key, operation in (item or {}).items():
            if key == ANY_METHOD:
                found.append((str(path), "ANY", operation or {}))
            elif key.lower() in METHODS:
                found.append((str(path), key.upper(), operation or {}))
    return found


def refused_integration(integration: Mapping[str, Any] | None) -> str | None:
    """Why the local cloud cannot run an operation's integration, or ``None``: a Lambda
    proxy integration runs, an ``aws`` one to a service the local cloud runs, and a
    ``mock`` one whose one ``default`` response sets static headers (what SAM's ``Cors``
    writes for each ``OPTIONS`` method)."""
    if not integration:
        return "an operation without x-amazon-apigateway-integration is not run locally"
    kind = str(integration.get("type", "")).lower()
    if kind == "mock":
        return _refused_mock(integration)
    if kind == "aws":
        return refused_service(str(integration.get("uri", "")))
    if kind != "aws_proxy":
        return f"integration type {kind or '(none)'} is not run locally yet (aws_proxy, aws are)"
    if integration.get("integrationSubtype"):
        return refused_subtype(
            str(integration["integrationSubtype"]), integration.get("requestParameters") or {}
        )
    if ":lambda:path/" not in str(integration.get("uri", "")):
        return "an aws_proxy integration runs locally only to a Lambda function"
    return None


def _refused_mock(integration: Mapping[str, Any]) -> str | None:
    responses = integration.get("responses") or {}
    if set(responses) != {"default"}:
        return "a mock integration runs locally only with one 'default' response"
    parameters = (responses["default"] or {}).get("responseParameters") or {}
    for name, value in parameters.items():
        if not (str(name).startswith("method.response.header.") and is_static(value)):
            return (
                "a mock integration's responseParameters run locally only as static "
                f"header values ('…'), not {name}: {value}"
            )
    return None


def is_static(value: Any) -> bool:
    """Whether a response parameter's value is a static one (``'text'``)."""
    text = str(value)
    return len(text) >= 2 and text[0] == text[-1] == "'"


def import_paths(client: Any, api_id: str, body: Mapping[str, Any]) -> None:
    """Create the resources, methods and integrations of ``body`` in the API ``api_id``
    (its root resource ``/`` exists already)."""
    resources = {
        item["path"]: item["id"] for item in client.get_resources(restApiId=api_id)["items"]
    }
    for path, method, operation in operations(body):
        parent = "/"
        for part in [p for p in path.split("/") if p]:
            here = f"{parent.rstrip('/')}/{part}"
            if here not in resources:
                resources[here] = client.create_resource(
                    restApiId=api_id, parentId=resources[parent], pathPart=part
                )["id"]
            parent = here
        resource_id = resources[path if path != "" else "/"]
        client.put_method(
            restApiId=api_id, resourceId=resource_id, httpMethod=method, authorizationType="NONE"
        )
        integration = operation[INTEGRATION]
        kind = str(integration.get("type", "")).lower()
        if kind == "mock":
            _put_mock(client, api_id, resource_id, method, integration)
            continue
        if kind == "aws":
            put_aws(client, api_id, resource_id, method, integration)
            continue
        client.put_integration(
            restApiId=api_id,
            resourceId=resource_id,
            httpMethod=method,
            type="AWS_PROXY",
            integrationHttpMethod=str(integration.get("httpMethod", "POST")),
            uri=str(integration["uri"]),
        )


def _texts(values: Any) -> dict[str, str]:
    return {str(k): str(v) for k, v in (values or {}).items()}


def _put_mock(
    client: Any, api_id: str, resource_id: str, method: str, integration: Mapping[str, Any]
) -> None:
    client.put_integration(
        restApiId=api_id,
        resourceId=resource_id,
        httpMethod=method,
        type="MOCK",
        requestTemplates=_texts(integration.get("requestTemplates")),
    )
    put_responses(client, api_id, resource_id, method, integration.get("responses") or {})


def put_aws(
    client: Any, api_id: str, resource_id: str, method: str, integration: Mapping[str, Any]
) -> None:
    """An ``AWS`` integration and its integration responses (a definition's keys
    ``requestTemplates``, ``requestParameters``, ``passthroughBehavior``, ``credentials``,
    ``responses``), as API Gateway's import makes them."""
    kwargs: dict[str, Any] = {
        "restApiId": api_id,
        "resourceId": resource_id,
        "httpMethod": method,
        "type": "AWS",
        "integrationHttpMethod": str(integration.get("httpMethod", "POST")),
        "uri": str(integration["uri"]),
        "requestTemplates": _texts(integration.get("requestTemplates")),
        "requestParameters": _texts(integration.get("requestParameters")),
    }
    if integration.get("passthroughBehavior"):
        kwargs["passthroughBehavior"] = str(integration["passthroughBehavior"]).upper()
    if integration.get("credentials"):
        kwargs["credentials"] = str(integration["credentials"])
    client.put_integration(**kwargs)
    put_responses(client, api_id, resource_id, method, integration.get("responses") or {})


def put_responses(
    client: Any, api_id: str, resource_id: str, method: str, responses: Mapping[str, Any]
) -> None:
    """The method's integration responses: a definition's ``responses``, keyed by
    selection pattern (``default``: the one without a pattern)."""
    for pattern, response in responses.items():
        response = response or {}
        status = str(response.get("statusCode", "200"))
        client.put_method_response(
            restApiId=api_id, resourceId=resource_id, httpMethod=method, statusCode=status
        )
        client.put_integration_response(
            restApiId=api_id,
            resourceId=resource_id,
            httpMethod=method,
            statusCode=status,
            selectionPattern="" if pattern == "default" else str(pattern),
            responseParameters=_texts(response.get("responseParameters")),
            responseTemplates=_texts(response.get("responseTemplates")),
        )


def import_routes(client: Any, api_id: str, body: Mapping[str, Any]) -> None:
    """Create the routes and integrations of an HTTP API's OpenAPI ``body`` in the API
    ``api_id`` (``apigatewayv2``): one integration per operation, with the payload format
    version it declares (``payloadFormatVersion``, 2.0 unless said)."""
    for path, method, operation in operations(body):
        integration = operation[INTEGRATION]
        kwargs: dict[str, Any] = {
            "ApiId": api_id,
            "IntegrationType": "AWS_PROXY",
            "PayloadFormatVersion": str(integration.get("payloadFormatVersion", "2.0")),
        }
        if integration.get("integrationSubtype"):
            kwargs["IntegrationSubtype"] = str(integration["integrationSubtype"])
            kwargs["RequestParameters"] = _texts(integration.get("requestParameters"))
            if integration.get("credentials"):
                kwargs["CredentialsArn"] = str(integration["credentials"])
        else:
            kwargs["IntegrationUri"] = str(integration["uri"])
            kwargs["IntegrationMethod"] = str(integration.get("httpMethod", "POST"))
        created = client.create_integration(**kwargs)
        client.create_route(
            ApiId=api_id,
            RouteKey="$default" if path == "/$default" else f"{method} {path}",
            Target=f"integrations/{created['IntegrationId']}",
        )
