"""The Lambda proxy integration's formats, as API Gateway's developer guide documents them
("Input format of a Lambda function for proxy integration", "Output format …", and for
HTTP APIs "Create AWS Lambda proxy integrations for HTTP APIs"): the event of payload
format 1.0 and 2.0, the result each maps back to, and API Gateway's own answers.
"""

from __future__ import annotations

import base64
import binascii
import fnmatch
import json
import time
import uuid
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Final
from urllib.parse import parse_qsl

from werkzeug.wrappers import Request, Response

from localcloud.services.lambda_.runtime import (
    RequestTooLarge,
    Throttled,
    invoke_through_api,
    lookup,
)

ACCOUNT_ID: Final = "123456789012"
PROXY_KEYS: Final = frozenset(
    {"statusCode", "headers", "multiValueHeaders", "body", "isBase64Encoded", "cookies"}
)


def match_path(template: str, path: str) -> dict[str, str] | None:
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


def message(status: int, text: str, error_type: str | None = None) -> Response:
    """API Gateway's own answer: ``{"message": text}``."""
    response = Response(json.dumps({"message": text}), status, mimetype="application/json")
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


TEXT_TYPES: Final = (
    "application/json",
    "application/javascript",
    "application/xml",
    "application/x-www-form-urlencoded",
)


def _is_text(mimetype: str) -> bool:
    """Whether an HTTP API reads a body of ``mimetype`` as text."""
    return (
        mimetype.startswith("text/")
        or mimetype in TEXT_TYPES
        or mimetype.endswith(("+json", "+xml"))
    )


def request_body(
    request: Request, binary_media_types: Sequence[str] | None = None
) -> tuple[str | None, bool]:
    """The event's ``body`` and ``isBase64Encoded``.

    A REST API (``binary_media_types``: its ``binaryMediaTypes``, which may hold
    wildcards, ``image/*``) base64-encodes a body whose ``Content-Type`` is one of them
    and passes any other as UTF-8 text ("Working with binary media types for REST
    APIs"); an HTTP API (``None``) base64-encodes every body that is not of a text type,
    or, with no ``Content-Type``, not UTF-8.
    """
    raw = request.get_data()
    if not raw:
        return None, False
    mimetype = request.mimetype.lower()
    if binary_media_types is not None:
        binary = is_binary(mimetype, binary_media_types)
    elif mimetype:
        binary = not _is_text(mimetype)
    else:
        try:
            raw.decode("utf-8")
            binary = False
        except UnicodeDecodeError:
            binary = True
    if binary:
        return base64.b64encode(raw).decode(), True
    return raw.decode("utf-8", "replace"), False


def proxy_event(
    request: Request,
    *,
    api_id: str,
    stage: str,
    stage_variables: Mapping[str, str],
    resource_path: str,
    resource_id: str,
    path: str,
    parameters: Mapping[str, str],
    version: str | None = None,
    binary_media_types: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The Lambda proxy event of payload format 1.0 of ``request`` (an HTTP API's 1.0
    integration adds ``version``; a REST API gives its ``binary_media_types``)."""
    body, encoded = request_body(request, binary_media_types)
    headers, multi_headers = _multi((k, v) for k, v in request.headers.items())
    query, multi_query = _multi(
        parse_qsl(request.query_string.decode("latin-1"), keep_blank_values=True)
    )
    request_id = str(uuid.uuid4())
    now = time.time()
    return {
        **({"version": version} if version else {}),
        "resource": resource_path,
        "path": path,
        "httpMethod": request.method,
        "headers": headers,
        "multiValueHeaders": multi_headers,
        "queryStringParameters": query,
        "multiValueQueryStringParameters": multi_query,
        "pathParameters": dict(parameters) or None,
        "stageVariables": dict(stage_variables) or None,
        "requestContext": {
            "accountId": ACCOUNT_ID,
            "apiId": api_id,
            "domainName": request.host,
            "domainPrefix": api_id,
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
            "path": path if stage == "$default" else f"/{stage}{path}",
            "protocol": request.environ.get("SERVER_PROTOCOL", "HTTP/1.1"),
            "requestId": request_id,
            "requestTime": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "requestTimeEpoch": int(now * 1000),
            "resourceId": resource_id,
            "resourcePath": resource_path,
            "stage": stage,
        },
        "body": body,
        "isBase64Encoded": encoded,
    }


def is_binary(mimetype: str, binary_media_types: Sequence[str]) -> bool:
    """Whether ``mimetype`` is one of a REST API's binary media types (either may hold a
    wildcard: ``image/*``, ``*/*``)."""
    wanted = mimetype.split(";")[0].strip().lower()
    return bool(wanted) and any(
        fnmatch.fnmatchcase(wanted, str(kind).lower())
        or fnmatch.fnmatchcase(str(kind).lower(), wanted)
        for kind in binary_media_types
    )


def proxy_response(result: Any, *, decode: bool = True) -> Response | None:
    """The HTTP response a proxy result maps to, or ``None`` when it is malformed.
    A base64 ``body`` (``isBase64Encoded``) is sent as its bytes when ``decode``, else as
    the base64 text (a REST API whose request's ``Accept`` is not a binary media type:
    "Content type conversions in API Gateway")."""
    if not isinstance(result, dict) or not set(result) <= PROXY_KEYS - {"cookies"}:
        return None
    status = result.get("statusCode")
    if isinstance(status, bool) or not isinstance(status, int) or not 100 <= status <= 599:
        return None
    body = result.get("body")
    if body is not None and not isinstance(body, str):
        return None
    payload = (body or "").encode()
    if result.get("isBase64Encoded") and decode:
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


def invoke_proxy(uri: str, event: Mapping[str, Any]) -> Any:
    """The result of the function a Lambda proxy integration's ``uri`` names, given
    ``event``; ``None`` for a function error, a throttle, an event over Lambda's 6 MB
    payload quota (Lambda refuses the invocation) or a function that is gone."""
    function_arn = uri.split("/functions/", 1)[-1].removesuffix("/invocations")
    try:
        invocation = invoke_through_api(lookup(function_arn), event)
    except (KeyError, Throttled, RequestTooLarge):
        return None
    return None if invocation.error else invocation.payload


def event_v2(
    request: Request,
    *,
    api_id: str,
    stage: str,
    stage_variables: Mapping[str, str],
    route_key: str,
    path: str,
    parameters: Mapping[str, str],
) -> dict[str, Any]:
    """The Lambda proxy event of payload format 2.0 (HTTP APIs): repeated headers and
    query strings joined with commas, cookies apart, header names lower case."""
    body, encoded = request_body(request)
    headers: dict[str, str] = {}
    cookies: list[str] = []
    for name, value in request.headers.items():
        if name.lower() == "cookie":
            cookies += [part.strip() for part in value.split(";") if part.strip()]
            continue
        key = name.lower()
        headers[key] = f"{headers[key]},{value}" if key in headers else value
    query: dict[str, str] = {}
    raw_query = request.query_string.decode("latin-1")
    for key, value in parse_qsl(raw_query, keep_blank_values=True):
        query[key] = f"{query[key]},{value}" if key in query else value
    request_id = str(uuid.uuid4())
    now = time.time()
    event: dict[str, Any] = {
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": path if stage == "$default" else f"/{stage}{path}",
        "rawQueryString": raw_query,
        "headers": headers,
        "requestContext": {
            "accountId": ACCOUNT_ID,
            "apiId": api_id,
            "domainName": request.host,
            "domainPrefix": api_id,
            "http": {
                "method": request.method,
                "path": path if stage == "$default" else f"/{stage}{path}",
                "protocol": request.environ.get("SERVER_PROTOCOL", "HTTP/1.1"),
                "sourceIp": request.remote_addr or "127.0.0.1",
                "userAgent": request.headers.get("User-Agent", ""),
            },
            "requestId": request_id,
            "routeKey": route_key,
            "stage": stage,
            "time": time.strftime("%d/%b/%Y:%H:%M:%S +0000", time.gmtime(now)),
            "timeEpoch": int(now * 1000),
        },
        "isBase64Encoded": encoded,
    }
    if cookies:
        event["cookies"] = cookies
    if query:
        event["queryStringParameters"] = query
    if parameters:
        event["pathParameters"] = dict(parameters)
    if stage_variables:
        event["stageVariables"] = dict(stage_variables)
    if body is not None:
        event["body"] = body
    return event


def response_v2(result: Any) -> Response | None:
    """The HTTP response a payload format 2.0 result maps to, or ``None`` when it is
    malformed: a result with ``statusCode`` is read as 1.0's (``cookies`` as
    ``Set-Cookie`` headers); any other JSON value is a 200 whose body is that value's
    JSON (a string as it is)."""
    if isinstance(result, dict) and "statusCode" in result:
        cookies = result.get("cookies") or []
        if not isinstance(cookies, list):
            return None
        response = proxy_response({k: v for k, v in result.items() if k != "cookies"})
        if response is not None:
            for cookie in cookies:
                response.headers.add("Set-Cookie", str(cookie))
        return response
    body = result if isinstance(result, str) else json.dumps(result)
    return Response(body, 200, mimetype="application/json")
