"""An HTTP API's CORS configuration, answered as API Gateway answers it ("Configuring
CORS for an HTTP API"): with a configuration, API Gateway answers every preflight
``OPTIONS`` request itself (an ``OPTIONS`` route is not reached), adds the configured
headers to each integration's response to an allowed origin, and drops the CORS headers
an integration returns. An origin not allowed gets no CORS header, and the browser keeps
the answer from the page.

The configuration is the ``CorsConfiguration`` of ``AWS::ApiGatewayV2::Api`` (``AllowOrigins``,
``AllowMethods``, ``AllowHeaders``, ``ExposeHeaders``, ``MaxAge``, ``AllowCredentials``) or
the ``x-amazon-apigateway-cors`` of its OpenAPI body (the same keys in lower camel case,
what SAM's ``CorsConfiguration`` writes).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from werkzeug.wrappers import Request, Response

__all__ = ["KEYS", "add_headers", "configuration", "is_preflight", "preflight", "refused"]

KEYS: Final = (
    "AllowOrigins",
    "AllowMethods",
    "AllowHeaders",
    "ExposeHeaders",
    "MaxAge",
    "AllowCredentials",
)


def configuration(raw: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``raw`` with its keys as ``AWS::ApiGatewayV2::Api`` names them (``allowOrigins`` is
    ``AllowOrigins``); ``None`` for none."""
    if not raw:
        return None
    by_lower = {key.lower(): key for key in KEYS}
    return {by_lower.get(str(k).lower(), str(k)): v for k, v in raw.items()}


def _allowed_origin(cors: Mapping[str, Any], origin: str | None) -> str | None:
    """The ``Access-Control-Allow-Origin`` value for ``origin``, or ``None`` when it is not
    allowed: an entry is an origin, ``*`` (any: answered ``*``), or ``http://*`` /
    ``https://*`` (any of that scheme: answered with the origin)."""
    if not origin:
        return None
    allowed = [str(entry) for entry in cors.get("AllowOrigins") or []]
    if "*" in allowed:
        return "*"
    for entry in allowed:
        if entry == origin or (
            entry in ("http://*", "https://*") and origin.startswith(entry[:-1])
        ):
            return origin
    return None


def refused(cors: Mapping[str, Any]) -> str | None:
    """Why a CORS configuration is not run, or ``None``: credentials with every origin
    allowed (``*``), a pair browsers refuse, which would otherwise mean echoing every
    origin with credentials."""
    if cors.get("AllowCredentials") and "*" in [str(e) for e in cors.get("AllowOrigins") or []]:
        return "AllowCredentials cannot be true while AllowOrigins holds '*'"
    return None


def _join(values: Any) -> str:
    return ",".join(str(value) for value in values or [])


def is_preflight(request: Request) -> bool:
    """Whether ``request`` is a CORS preflight: ``OPTIONS`` with an ``Origin`` and an
    ``Access-Control-Request-Method``."""
    return (
        request.method == "OPTIONS"
        and "Origin" in request.headers
        and "Access-Control-Request-Method" in request.headers
    )


def _allow(cors: Mapping[str, Any], request: Request, response: Response) -> str | None:
    """Set the headers a preflight and a response share for an allowed origin (the
    origin, credentials, ``Vary``); the origin allowed, or ``None``."""
    origin = _allowed_origin(cors, request.headers.get("Origin"))
    if origin is None:
        return None
    response.headers["Access-Control-Allow-Origin"] = origin
    if cors.get("AllowCredentials"):
        response.headers["Access-Control-Allow-Credentials"] = "true"
    if origin != "*":
        response.headers.add("Vary", "Origin")
    return origin


def preflight(cors: Mapping[str, Any], request: Request) -> Response:
    """API Gateway's answer to a preflight request: 204, with the CORS headers when the
    origin is allowed."""
    response = Response(status=204)
    origin = _allow(cors, request, response)
    if origin is None:
        return response
    if cors.get("AllowMethods"):
        response.headers["Access-Control-Allow-Methods"] = _join(cors["AllowMethods"])
    if cors.get("AllowHeaders"):
        response.headers["Access-Control-Allow-Headers"] = _join(cors["AllowHeaders"])
    if cors.get("MaxAge") is not None:
        response.headers["Access-Control-Max-Age"] = str(cors["MaxAge"])
    return response


def add_headers(cors: Mapping[str, Any], request: Request, response: Response) -> Response:
    """``response`` with the integration's CORS headers replaced by the configured ones
    for the request's origin."""
    for name in list(response.headers.keys()):
        if name.lower().startswith("access-control-"):
            response.headers.remove(name)
    if _allow(cors, request, response) is not None and cors.get("ExposeHeaders"):
        response.headers["Access-Control-Expose-Headers"] = _join(cors["ExposeHeaders"])
    return response
