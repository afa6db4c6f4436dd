"""An API invoked as API Gateway invokes it, at a local URL of either form.

On AWS a stage is reached at ``https://{api-id}.execute-api.{region}.amazonaws.com/
{stage}/{path}``, a name this machine cannot resolve to itself without DNS and TLS
interception. Locally it is reached two ways:

- ``{endpoint}/restapis/{api-id}/{stage}/_user_request_/{path}`` (LocalStack's path-style
  form, apart from the control plane's ``/restapis/{id}/…``), which every HTTP client
  reaches; a stack output holding an execute-api URL of the stack's own API is written in
  that form (:func:`local_url`). It shares the control plane's origin, so the guard
  sandboxes what it serves, and a browser that navigates to it is sent on to
- ``http://{api-id}.execute-api.localhost:{port}/{stage}/{path}`` (:func:`origin_url`):
  the API on an origin of its own, as on AWS, where a page the API serves runs its
  scripts. Browsers resolve every ``*.localhost`` name to loopback themselves (RFC 6761,
  section 6.3); most operating systems' resolvers do not, hence the path-style form too.

A request body over API Gateway's 10 MB payload quota ("Amazon API Gateway quotas") is
refused before it is read: 413, ``{"message":"Request Too Long"}`` (the gateway response
``REQUEST_TOO_LARGE``, "Gateway response types for API Gateway").

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

import io
import re
import threading
from collections.abc import Callable, Iterable
from typing import Any, Final
from urllib.parse import quote

from moto.apigateway.models import RestAPI, apigateway_backends
from moto.apigatewayv2.models import apigatewayv2_backends
from werkzeug.wrappers import Request, Response

from localcloud.server.request_path import decided_path
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
ORIGIN: Final = re.compile(r"^([a-z0-9]+)\.execute-api\.localhost(?::\d+)?$")
"""The ``Host`` of an API's own origin: ``{api-id}.execute-api.localhost[:port]``."""
PAYLOAD_LIMIT: Final = 10 * 1024 * 1024
"""API Gateway's request payload quota, REST and HTTP APIs (bytes; "Amazon API Gateway
quotas": 10 MB)."""
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
        kind, api, _ = _find(api_id)
        if api_id not in ids or api is None:
            return match.group(0)
        if kind == "http" and (not segment or segment not in api.stages or segment == DEFAULT):
            # $default is reached with no stage in the path: the segment is the path's
            return f"{endpoint}/restapis/{api_id}/{DEFAULT}/_user_request_/{segment or ''}"
        if not segment:
            return match.group(0)
        return f"{endpoint}/restapis/{api_id}/{segment}/_user_request_"

    return EXECUTE_API.sub(local, value)


def is_route(path: str) -> bool:
    """Whether ``path`` is an API's path-style route (public and unsigned, as on AWS)."""
    return ROUTE.match(path) is not None


def is_origin(host: str) -> bool:
    """Whether ``host`` (a ``Host`` header, lower case) is an API's own origin; every path
    of it is that API's."""
    return ORIGIN.match(host) is not None


def origin_url(api_id: str, port: int | str) -> str:
    """The API's own origin, ``http://{api-id}.execute-api.localhost:{port}``."""
    return f"http://{api_id}.execute-api.localhost:{port}"


DEFAULT: Final = "$default"
"""An HTTP API's default stage, reached with no stage name in the path."""


def _find(api_id: str) -> tuple[str, Any, str]:
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
    kind, api, region = _find(api_id)
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


def answer(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    """The WSGI app of every API's routes, both forms (see the module docstring): a
    request to a path-style route or to an API's origin, which the guard decided on the
    same ``PATH_INFO`` (:func:`~localcloud.server.request_path.decided_path`). A browser
    navigating to a path-style route is redirected (307) to the API's origin."""
    if not _bounded_body(environ):
        return _too_large()(environ, start_response)
    request = Request(environ)
    path = decided_path(environ)
    host = str(request.headers.get("Host", "")).lower()
    own = ORIGIN.match(host)
    if own is not None:
        first, _, rest = path.removeprefix("/").partition("/")
        api_id, stage_name, rest_path = own.group(1), first, f"/{rest}"
    else:
        matched = ROUTE.match(path)
        if matched is None:  # the guard sends only routes here
            return message(403, "Missing Authentication Token")(environ, start_response)
        api_id, stage_name, rest_path = matched.groups()
        if _navigation(request):
            port = host.rpartition(":")[2] if ":" in host else "80"
            return _redirect(request, api_id, stage_name, rest_path or "/", port)(
                environ, start_response
            )
    return handle(request, api_id, stage_name, rest_path)(environ, start_response)


def _bounded_body(environ: dict[str, Any]) -> bool:
    """Whether the request's body is within :data:`PAYLOAD_LIMIT`; if it is, a body sent
    in chunks (no ``Content-Length``) is read here, at most one byte past the limit, and
    handed on as if its length had been declared. A declared length over the limit is
    refused unread."""
    declared = environ.get("CONTENT_LENGTH")
    if declared:
        return int(declared) <= PAYLOAD_LIMIT if declared.isdigit() else False
    if "wsgi.input_terminated" not in environ:
        return True  # no length and no chunks: no body (werkzeug reads none either)
    stream, parts, size = environ["wsgi.input"], [], 0
    while size <= PAYLOAD_LIMIT:
        part = stream.read(min(64 * 1024, PAYLOAD_LIMIT + 1 - size))
        if not part:
            break
        parts.append(part)
        size += len(part)
    if size > PAYLOAD_LIMIT:
        return False
    environ["wsgi.input"] = io.BytesIO(b"".join(parts))
    environ["CONTENT_LENGTH"] = str(size)
    del environ["wsgi.input_terminated"]
    return True


def _too_large() -> Response:
    answer = message(413, "Request Too Long")
    answer.headers["Connection"] = "close"  # the body was not read
    return answer


def _navigation(request: Request) -> bool:
    """Whether a browser loads the route as a page (Fetch Metadata: a top-level
    navigation), rather than a script or a program calling it."""
    return (
        request.method in ("GET", "HEAD")
        and request.headers.get("Sec-Fetch-Mode") == "navigate"
        and request.headers.get("Sec-Fetch-Dest") == "document"
    )


def _redirect(request: Request, api_id: str, stage: str, rest: str, port: str) -> Response:
    """307 to the same page on the API's own origin, where its scripts run."""
    path = rest if stage == DEFAULT else f"/{stage}{rest}"
    location = origin_url(api_id, port) + quote(path, safe="/!$&'()*+,;=:@-._~")
    if request.query_string:
        location += "?" + request.query_string.decode("latin-1")
    answer = Response(status=307)
    answer.headers["Location"] = location
    return answer
