"""An API invoked as API Gateway invokes it (:func:`handle`), once :mod:`.endpoint` has
found which API and stage a request reaches, in either local form: path-style,
``{endpoint}/restapis/{api-id}/{stage}/_user_request_/{path}`` (LocalStack's form, apart
from the control plane's ``/restapis/{id}/…``), which every HTTP client reaches and a
stack output holding an execute-api URL of the stack's own API is written in
(:func:`local_url`), or on the API's own origin, ``http://{api-id}.execute-api.localhost:
{port}/{stage}/{path}``.

What API Gateway does, as its developer guide documents it ("Set up Lambda proxy
integrations in API Gateway", "Input format of a Lambda function for proxy integration",
"Output format of a Lambda function for proxy integration"):

- the route: the resource whose path template matches (``{name}`` one segment,
  ``{name+}`` the rest), a method of the request's or ``ANY``; none is 403
  ``{"message":"Missing Authentication Token"}``;
- the event (payload format 1.0): ``resource``, ``path``, ``httpMethod``, ``headers`` and
  ``multiValueHeaders``, ``queryStringParameters`` and their multi-value form,
  ``pathParameters``, ``stageVariables``, ``requestContext``, ``body``, ``isBase64Encoded``
  (an empty one of these is ``null``);
- the result: ``statusCode``, ``headers``, ``multiValueHeaders``, ``body`` (a string,
  base64 when ``isBase64Encoded``); a function error, or any other shape, is 502
  ``{"message": "Internal server error"}``.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable
from typing import Any, Final

from moto.apigateway.models import RestAPI, apigateway_backends
from moto.apigatewayv2.models import apigatewayv2_backends
from werkzeug.wrappers import Request, Response

from localcloud.services.apigateway.cors import (
    add_headers,
    configuration,
    is_preflight,
    preflight,
)
from localcloud.services.apigateway.formats import (
    event_v2,
    invoke_proxy,
    is_binary,
    match_path,
    message,
    proxy_event,
    proxy_response,
    response_v2,
)
from localcloud.services.apigateway.http_integration import run_subtype
from localcloud.services.apigateway.rest_integration import run_aws_integration

ROUTE: Final = re.compile(r"^/restapis/([^/]+)/([^/]+)/_user_request_(/.*)?$")
"""``/restapis/{api-id}/{stage}/_user_request_/{path}``."""
EXECUTE_API: Final = re.compile(
    r"https://([a-z0-9]+)\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?(?:/([^/?#\s]*))?"
)
ACCOUNT_ID: Final = "123456789012"

_ENDPOINT_LOCK = threading.Lock()
_ENDPOINT: str | None = None


def set_endpoint(url: str | None) -> None:
    """The local cloud's endpoint (``http://127.0.0.1:4566``), that local API URLs start
    with; ``None`` when it stops."""
    global _ENDPOINT
    with _ENDPOINT_LOCK:
        _ENDPOINT = url


def local_url(value: str, api_ids: Iterable[str]) -> str:
    """``value`` with each execute-api URL of one of ``api_ids`` in its local form (see the
    module docstring); unchanged when the local cloud has no endpoint."""
    endpoint = _ENDPOINT
    ids = set(api_ids)
    if endpoint is None or not ids:
        return value

    def local(match: re.Match[str]) -> str:
        api_id, _, segment = match.groups()
        kind, api, _ = find(api_id)
        if api_id not in ids or api is None:
            return match.group(0)
        if kind == "http" and (not segment or segment not in api.stages or segment == DEFAULT):
            # $default is reached with no stage in the path: the segment is the path's
            return f"{endpoint}/restapis/{api_id}/{DEFAULT}/_user_request_/{segment or ''}"
        if not segment:
            return match.group(0)
        return f"{endpoint}/restapis/{api_id}/{segment}/_user_request_"

    return EXECUTE_API.sub(local, value)


DEFAULT: Final = "$default"
"""An HTTP API's default stage, reached with no stage name in the path."""


def find(api_id: str) -> tuple[str, Any, str]:
    """``("rest", RestAPI, region)`` or ``("http", Api, region)`` of that id, or
    ``("", None, "")``."""
    for region, backend in apigateway_backends[ACCOUNT_ID].items():
        if api_id in backend.apis:
            return "rest", backend.apis[api_id], region
    for region, http_backend in apigatewayv2_backends[ACCOUNT_ID].items():
        if api_id in http_backend.apis:
            return "http", http_backend.apis[api_id], region
    return "", None, ""


def _route(api: RestAPI, method: str, path: str) -> tuple[Any, Any, dict[str, str]] | None:
    """(resource, method, path parameters) of the route ``method path`` reaches: the most
    specific resource first (literal segments before ``{name}`` before ``{name+}``)."""

    def specificity(resource: Any) -> tuple[int, int]:
        parts = [p for p in resource.get_path().split("/") if p]
        greedy = sum(p.endswith("+}") for p in parts)
        variables = sum(p.startswith("{") for p in parts)
        return (greedy, variables)

    for resource in sorted(api.resources.values(), key=specificity):
        parameters = match_path(resource.get_path(), path)
        if parameters is None:
            continue
        declared = resource.resource_methods.get(method) or resource.resource_methods.get("ANY")
        if declared is not None:
            return resource, declared, parameters
    return None


def handle(request: Request, api_id: str, stage_name: str, rest: str | None) -> Response:
    """Answer a request to the API ``api_id``: ``stage_name`` is the path's first segment
    (a stage's name, or, for an HTTP API's ``$default`` stage, the path's own), ``rest``
    the path after it."""
    kind, api, region = find(api_id)
    if kind == "http":
        return _handle_http(request, api, region, stage_name, rest or "/")
    path = rest or "/"
    stage = None if api is None else api.stages.get(stage_name)
    if api is None or stage is None:
        return message(403, "Missing Authentication Token", "MissingAuthenticationTokenException")
    found = _route(api, request.method, path)
    if found is None:
        return message(403, "Missing Authentication Token", "MissingAuthenticationTokenException")
    resource, method, parameters = found
    integration = method.method_integration
    kind = str(getattr(integration, "integration_type", "")).upper()
    if kind == "MOCK":
        return mock_response(integration)
    uri = str(getattr(integration, "uri", "") or "")
    event = proxy_event(
        request,
        api_id=api.id,
        stage=stage.name,
        stage_variables=stage.variables,
        resource_path=resource.get_path(),
        resource_id=resource.id,
        path=path,
        parameters=parameters,
        binary_media_types=list(api.binaryMediaTypes or []),
    )
    if kind == "AWS":
        answer = run_aws_integration(request, integration, event, stage.variables, _endpoint())
        answer.headers["x-amzn-RequestId"] = event["requestContext"]["requestId"]
        return answer
    invocation = invoke_proxy(uri, event)
    accept = request.headers.get("Accept", "").split(",")[0]
    decode = is_binary(accept, list(api.binaryMediaTypes or []))
    response = None if invocation is None else proxy_response(invocation, decode=decode)
    if response is None:
        return message(502, "Internal server error")
    response.headers["x-amzn-RequestId"] = event["requestContext"]["requestId"]
    return response


def mock_response(integration: Any) -> Response:
    """A mock integration's answer (:func:`~.definition.refused_integration` says which
    run): its response's status, static headers and JSON template."""
    status, response = next(iter((integration.integration_responses or {}).items()))
    templates = response.response_templates or {}
    answer = Response(str(templates.get("application/json", "")), int(status))
    answer.headers["Content-Type"] = "application/json"
    for name, value in (response.response_parameters or {}).items():
        answer.headers[str(name).removeprefix("method.response.header.")] = str(value)[1:-1]
    return answer


def _http_route(api: Any, method: str, path: str) -> tuple[Any, dict[str, str]] | None:
    """(route, path parameters) an HTTP API's request reaches: the most specific path
    first, its method before ``ANY``, ``$default`` last (Working with routes for HTTP
    APIs, "Routing API requests")."""
    candidates = []
    default = None
    for route in api.routes.values():
        if route.route_key == DEFAULT:
            default = route
            continue
        wanted, _, template = str(route.route_key).partition(" ")
        if wanted not in (method, "ANY"):
            continue
        parameters = match_path(template, path)
        if parameters is None:
            continue
        parts = [p for p in template.split("/") if p]
        rank = (sum(p.endswith("+}") for p in parts), sum(p.startswith("{") for p in parts))
        candidates.append((rank, wanted == "ANY", route, parameters))
    if candidates:
        _, _, route, parameters = min(candidates, key=lambda c: (c[0], c[1]))
        return route, parameters
    return None if default is None else (default, {})


def _endpoint() -> str:
    """The local cloud's endpoint, which service integrations call."""
    endpoint = _ENDPOINT
    if endpoint is None:
        raise RuntimeError("the local cloud is not serving: no endpoint to call")
    return endpoint


def _handle_http(request: Request, api: Any, region: str, first: str, rest: str) -> Response:
    """An HTTP API's request: ``/{stage}/…``, or ``$default``'s with no stage in the
    path (the local URL's stage segment is then ``$default``)."""
    if first in api.stages:
        stage, path = api.stages[first], rest
    elif DEFAULT in api.stages:
        stage = api.stages[DEFAULT]
        path = rest if first == DEFAULT else f"/{first}{rest if rest != '/' else ''}"
    else:
        return message(404, "Not Found")
    cors = configuration(api.cors_configuration)
    if cors is None:
        return _http_answer(request, api, region, stage, path)
    if is_preflight(request):
        return preflight(cors, request)
    return add_headers(cors, request, _http_answer(request, api, region, stage, path))


def _http_answer(request: Request, api: Any, region: str, stage: Any, path: str) -> Response:
    """The answer of the route ``path`` reaches in ``stage``, before CORS."""
    found = _http_route(api, request.method, path)
    if found is None:
        return message(404, "Not Found")
    route, parameters = found
    integration = api.integrations.get(str(route.target).removeprefix("integrations/"))
    if integration is None:
        return message(500, "Internal Server Error")
    version = str(integration.payload_format_version or "2.0")
    common = {
        "api_id": api.api_id,
        "stage": stage.name,
        "stage_variables": stage.stage_variables,
        "path": path,
        "parameters": parameters,
    }
    if version == "1.0":
        event = proxy_event(
            request,
            resource_path=str(route.route_key).partition(" ")[2] or path,
            resource_id=route.route_id,
            version="1.0",
            **common,
        )
    else:
        event = event_v2(request, route_key=str(route.route_key), **common)
    if integration.integration_subtype:
        answer = run_subtype(request, integration, event, region, _endpoint())
        answer.headers["apigw-requestid"] = event["requestContext"]["requestId"]
        return answer
    result = invoke_proxy(str(integration.integration_uri), event)
    if result is None:
        return message(500, "Internal Server Error")
    response = proxy_response(result) if version == "1.0" else response_v2(result)
    if response is None:
        return message(500, "Internal Server Error")
    response.headers["apigw-requestid"] = event["requestContext"]["requestId"]
    return response
