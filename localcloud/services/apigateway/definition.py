"""An API's OpenAPI definition (SAM's ``DefinitionBody``, the ``Body`` of an
``AWS::ApiGateway::RestApi``) made into the API's resources, methods and integrations
through the API Gateway API, as API Gateway's import does.

Swagger 2.0 (what SAM generates) and OpenAPI 3 are read alike: ``paths``, each method with
its ``x-amazon-apigateway-integration``; ``x-amazon-apigateway-any-method`` is ``ANY``.
Only Lambda proxy integrations (``aws_proxy`` to a function's ``…/invocations`` URI) run
locally so far; any other is refused by name (:func:`refused_integration`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

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
    proxy integration runs, and a ``mock`` one whose one ``default`` response sets static
    headers (what SAM's ``Cors`` writes for each ``OPTIONS`` method)."""
    if not integration:
        return "an operation without x-amazon-apigateway-integration is not run locally"
    kind = str(integration.get("type", "")).lower()
    if kind == "mock":
        return _refused_mock(integration)
    if kind != "aws_proxy":
        return f"integration type {kind or '(none)'} is not run locally yet (aws_proxy is)"
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
        if str(integration.get("type", "")).lower() == "mock":
            _put_mock(client, api_id, resource_id, method, integration)
            continue
        client.put_integration(
            restApiId=api_id,
            resourceId=resource_id,
            httpMethod=method,
            type="AWS_PROXY",
            integrationHttpMethod=str(integration.get("httpMethod", "POST")),
            uri=str(integration["uri"]),
        )


def _put_mock(
    client: Any, api_id: str, resource_id: str, method: str, integration: Mapping[str, Any]
) -> None:
    default = integration["responses"]["default"] or {}
    status = str(default.get("statusCode", "200"))
    client.put_integration(
        restApiId=api_id,
        resourceId=resource_id,
        httpMethod=method,
        type="MOCK",
        requestTemplates={
            k: str(v) for k, v in (integration.get("requestTemplates") or {}).items()
        },
    )
    client.put_method_response(
        restApiId=api_id, resourceId=resource_id, httpMethod=method, statusCode=status
    )
    client.put_integration_response(
        restApiId=api_id,
        resourceId=resource_id,
        httpMethod=method,
        statusCode=status,
        selectionPattern="",
        responseParameters={
            k: str(v) for k, v in (default.get("responseParameters") or {}).items()
        },
        responseTemplates={k: str(v) for k, v in (default.get("responseTemplates") or {}).items()},
    )


def import_routes(client: Any, api_id: str, body: Mapping[str, Any]) -> None:
    """Create the routes and integrations of an HTTP API's OpenAPI ``body`` in the API
    ``api_id`` (``apigatewayv2``): one integration per operation, with the payload format
    version it declares (``payloadFormatVersion``, 2.0 unless said)."""
    for path, method, operation in operations(body):
        integration = operation[INTEGRATION]
        created = client.create_integration(
            ApiId=api_id,
            IntegrationType="AWS_PROXY",
            IntegrationUri=str(integration["uri"]),
            IntegrationMethod=str(integration.get("httpMethod", "POST")),
            PayloadFormatVersion=str(integration.get("payloadFormatVersion", "2.0")),
        )
        client.create_route(
            ApiId=api_id,
            RouteKey="$default" if path == "/$default" else f"{method} {path}",
            Target=f"integrations/{created['IntegrationId']}",
        )
