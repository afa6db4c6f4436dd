"""A REST API invoked as API Gateway invokes it, at a path-style local URL.

On AWS a stage is reached at ``https://{api-id}.execute-api.{region}.amazonaws.com/
{stage}/{path}``, a name this machine cannot resolve to itself without DNS and TLS
interception. Locally it is ``{endpoint}/restapis/{api-id}/{stage}/_user_request_/{path}``
(LocalStack's path-style form, apart from the control plane's ``/restapis/{id}/…``), and
a stack output holding an execute-api URL of the stack's own API is written in that form
(:func:`local_url`).

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

import base64
import binascii
import json
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final
from urllib.parse import parse_qsl

from moto.apigateway.models import RestAPI, apigateway_backends
from werkzeug.wrappers import Request, Response

from localcloud.services.lambda_.runtime import Throttled, invoke_through_api, lookup

ROUTE: Final = re.compile(r"^/restapis/([^/]+)/([^/]+)/_user_request_(/.*)?$")
"""``/restapis/{api-id}/{stage}/_user_request_/{path}``."""
EXECUTE_API: Final = re.compile(
    r"https://([a-z0-9]+)\.execute-api\.([a-z0-9-]+)\.amazonaws\.com(?:\.cn)?/([^/?#\s]+)"
)
ACCOUNT_ID: Final = "123456789012"
PROXY_KEYS: Final = frozenset(
    {"statusCode", "headers", "multiValueHeaders", "body", "isBase64Encoded", "cookies"}
)

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
        api_id, _, stage = match.groups()
        if api_id not in ids:
            return match.group(0)
        return f"{endpoint}/restapis/{api_id}/{stage}/_user_request_"

    return EXECUTE_API.sub(local, value)


def is_route(path: str) -> bool:
    """Whether ``path`` is an API's route (public and unsigned, as on AWS)."""
    return ROUTE.match(path) is not None


def _find_api(api_id: str) -> RestAPI | None:
    for backend in apigateway_backends[ACCOUNT_ID].values():
        if api_id in backend.apis:
            return backend.apis[api_id]
    return None


def _match(template: str, path: str) -> dict[str, str] | None:
    """The path parameters if the resource path ``template`` matches ``path``."""
    wanted = [part for part in template.split("/") if part]
    given = [part for part in path.split("/") if part]
    found: dict[str, str] = {}
    for index, part in enumerate(wanted):
        if part.startswith("{") and part.endswith("+}"):
            if index >= len(given):
                return None
            found[part[1:-2]] = "/".join(given[index:])
            return found
        if index >= len(given):
            return None
        if part.startswith("{") and part.endswith("}"):
            found[part[1:-1]] = given[index]
        elif part != given[index]:
            return None
    return found if len(wanted) == len(given) else None


def _route(api: RestAPI, method: str, path: str) -> tuple[Any, Any, dict[str, str]] | None:
    """(resource, method, path parameters) of the route ``method path`` reaches: the most
    specific resource first (literal segments before ``{name}`` before ``{name+}``)."""

    def specificity(resource: Any) -> tuple[int, int]:
        parts = [p for p in resource.get_path().split("/") if p]
        greedy = sum(p.endswith("+}") for p in parts)
        variables = sum(p.startswith("{") for p in parts)
        return (greedy, variables)

    for resource in sorted(api.resources.values(), key=specificity):
        parameters = _match(resource.get_path(), path)
        if parameters is None:
            continue
        declared = resource.resource_methods.get(method) or resource.resource_methods.get("ANY")
        if declared is not None:
            return resource, declared, parameters
    return None


def _message(status: int, message: str, error_type: str | None = None) -> Response:
    response = Response(json.dumps({"message": message}), status, mimetype="application/json")
    if error_type:
        response.headers["x-amzn-ErrorType"] = error_type
    return response


def _multi(
    pairs: Iterable[tuple[str, str]],
) -> tuple[dict[str, str] | None, dict[str, list[str]] | None]:
    single: dict[str, str] = {}
    multi: dict[str, list[str]] = {}
    for key, value in pairs:
        single[key] = value
        multi.setdefault(key, []).append(value)
    return (single or None, multi or None)


def proxy_event(
    request: Request,
    api: RestAPI,
    stage: Any,
    resource: Any,
    path: str,
    parameters: Mapping[str, str],
) -> dict[str, Any]:
    """The Lambda proxy event (payload format 1.0) of ``request``."""
    raw = request.get_data()
    try:
        body: str | None = raw.decode("utf-8") if raw else None
        encoded = False
    except UnicodeDecodeError:
        body, encoded = base64.b64encode(raw).decode(), True
    headers, multi_headers = _multi((k, v) for k, v in request.headers.items())
    query, multi_query = _multi(
        parse_qsl(request.query_string.decode("latin-1"), keep_blank_values=True)
    )
    request_id = str(uuid.uuid4())
    now = time.time()
    return {
        "resource": resource.get_path(),
        "path": path,
        "httpMethod": request.method,
        "headers": headers,
        "multiValueHeaders": multi_headers,
        "queryStringParameters": query,
        "multiValueQueryStringParameters": multi_query,
        "pathParameters": dict(parameters) or None,
        "stageVariables": dict(stage.variables) or None,
        "requestContext": {
            "accountId": ACCOUNT_ID,
            "apiId": api.id,
            "domainName": request.host,
            "domainPrefix": api.id,
            "extendedRequestId": request_id,
            "httpMethod": request.method,
            "identity": {
                "sourceIp": request.remote_addr or "127.0.0.1",
                "userAgent": request.headers.get("User-Agent"),
                "accountId": None,
                "caller": None,
                "user": None,
                "userArn": None,
                "accessKey": None,
                "apiKey": None,
                "apiKeyId": None,
                "cognitoAuthenticationProvider": None,
                "cognitoAuthenticationType": None,
                "cognitoIdentityId": None,
                "cognitoIdentityPoolId": None,
                "principalOrgId": None,
                "clientCert": None,
            },
            "path": f"/{stage.name}{path}",
            "protocol": request.environ.get("SERVER_PROTOCOL", "HTTP/1.1"),
            "requestId": request_id,
            "requestTime": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "requestTimeEpoch": int(now * 1000),
            "resourceId": resource.id,
            "resourcePath": resource.get_path(),
            "stage": stage.name,
        },
        "body": body,
        "isBase64Encoded": encoded,
    }


def proxy_response(result: Any) -> Response | None:
    """The HTTP response a proxy result maps to, or ``None`` when it is malformed."""
    if not isinstance(result, dict) or not set(result) <= PROXY_KEYS - {"cookies"}:
        return None
    status = result.get("statusCode")
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        return None
    body = result.get("body")
    if body is not None and not isinstance(body, str):
        return None
    payload = (body or "").encode()
    if result.get("isBase64Encoded"):
        try:
            payload = base64.b64decode(body or "", validate=True)
        except (binascii.Error, ValueError):
            return None
    response = Response(payload, status)
    response.headers.remove("Content-Type")
    headers = result.get("headers") or {}
    multi = result.get("multiValueHeaders") or {}
    if not isinstance(headers, dict) or not isinstance(multi, dict):
        return None
    for name, value in headers.items():
        response.headers[str(name)] = str(value)
    for name, values in multi.items():
        if not isinstance(values, list):
            return None
        if str(name) in response.headers:
            response.headers.remove(str(name))
        for value in values:
            response.headers.add(str(name), str(value))
    if "Content-Type" not in response.headers:
        response.headers["Content-Type"] = "application/json"
    return response


def handle(request: Request) -> Response:
    """Answer a request to an API's route (:data:`ROUTE`)."""
    matched = ROUTE.match(request.path)
    assert matched is not None
    api_id, stage_name, rest = matched.groups()
    path = rest or "/"
    api = _find_api(api_id)
    stage = None if api is None else api.stages.get(stage_name)
    if api is None or stage is None:
        return _message(403, "Missing Authentication Token", "MissingAuthenticationTokenException")
    found = _route(api, request.method, path)
    if found is None:
        return _message(403, "Missing Authentication Token", "MissingAuthenticationTokenException")
    resource, method, parameters = found
    integration = method.method_integration
    uri = str(getattr(integration, "uri", "") or "")
    function_arn = uri.split("/functions/", 1)[-1].removesuffix("/invocations")
    try:
        function = lookup(function_arn)
    except KeyError:
        return _message(500, "Internal server error")
    event = proxy_event(request, api, stage, resource, path, parameters)
    try:
        invocation = invoke_through_api(function, event)
    except Throttled:
        return _message(429, "Too Many Requests")
    response = None if invocation.error else proxy_response(invocation.payload)
    if response is None:
        return _message(502, "Internal server error")
    response.headers["x-amzn-RequestId"] = event["requestContext"]["requestId"]
    return response


class Routes:
    """WSGI middleware: an API's routes answered here, anything else passed to ``app``."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "")
        if not is_route(path):
            return self.app(environ, start_response)
        return handle(Request(environ))(environ, start_response)
