"""Where an API's request arrives, and what reaches :func:`~.invoke.handle`: the WSGI
app the guard hands every API request to (:func:`answer`).

On AWS a stage is reached at ``https://{api-id}.execute-api.{region}.amazonaws.com/
{stage}/{path}``, a name this machine cannot resolve to itself without DNS and TLS
interception. Locally it is reached two ways:

- path-style, ``{endpoint}/restapis/{api-id}/{stage}/_user_request_/{path}``
  (:func:`is_route`), which every HTTP client reaches. It shares the control plane's
  origin, so the guard sandboxes what it serves, and a browser that navigates to it is
  sent on (307) to
- the API's own origin, ``http://{api-id}.execute-api.localhost:{port}/{stage}/{path}``
  (:func:`is_origin`, :func:`origin_url`; an HTTP API's ``$default`` stage at its root),
  as on AWS, where a page the API serves runs its scripts. Browsers resolve every
  ``*.localhost`` name to loopback themselves (RFC 6761, section 6.3); most operating
  systems' resolvers do not, hence the path-style form too.

A request body over API Gateway's 10 MB payload quota ("Amazon API Gateway quotas") is
refused before it is read, by the guard (:mod:`localcloud.server.bodies`), with API
Gateway's answer: 413, ``{"message":"Request Too Long"}`` (the gateway response
``REQUEST_TOO_LARGE``, "Gateway response types for API Gateway"); one past what the
server holds at once is throttled (429 ``{"message":"Too Many Requests"}``). werkzeug's
``max_content_length`` is not used for it: on a chunked body werkzeug's ``LimitedStream``
stops reading at the limit without an error, so the body would arrive cut short.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Final
from urllib.parse import quote

from werkzeug.wrappers import Request, Response

from localcloud.server.request_path import decided_path
from localcloud.services.apigateway.formats import message
from localcloud.services.apigateway.invoke import DEFAULT, ROUTE, find, handle

__all__ = [
    "ORIGIN",
    "BODY_COPIES",
    "PAYLOAD_LIMIT",
    "answer",
    "is_origin",
    "is_route",
    "origin_url",
    "throttled",
    "too_large",
]

ORIGIN: Final = re.compile(r"^([a-z0-9]+)\.execute-api\.localhost(?::\d+)?$")
"""The ``Host`` of an API's own origin: ``{api-id}.execute-api.localhost[:port]``."""
API_ID: Final = re.compile(r"[a-z0-9]+")
"""An API id as API Gateway makes them (ten lower-case letters and digits)."""
PAYLOAD_LIMIT: Final = 10 * 1024 * 1024
"""API Gateway's request payload quota, REST and HTTP APIs (bytes; "Amazon API Gateway
quotas": 10 MB)."""
BODY_COPIES: Final = 8
"""How many times answering a route holds a body, as the server counts it against what it
holds at once: the body, its text, its base64, the event's JSON, the invocation's request
and the function's copy; a mapping template's parse of a JSON body holds several times
more (measured: forty concurrent 10 MB bodies took 1.2 GB past the server's bound when
each counted once)."""


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


def answer(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
    """The WSGI app of every API's routes, both forms (see the module docstring): a
    request to a path-style route or to an API's origin, which the guard decided on the
    same ``PATH_INFO`` (:func:`~localcloud.server.request_path.decided_path`). A browser
    navigating to a path-style route of an API that exists is redirected (307) to the
    API's origin; any other id is never put in a ``Location``."""
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
        if _navigation(request) and API_ID.fullmatch(api_id) and find(api_id)[1] is not None:
            port = host.rpartition(":")[2] if ":" in host else "80"
            return _redirect(request, api_id, stage_name, rest_path or "/", port)(
                environ, start_response
            )
    return handle(request, api_id, stage_name, rest_path)(environ, start_response)


def too_large() -> Response:
    """API Gateway's answer to a body over :data:`PAYLOAD_LIMIT` (the guard refuses it
    unread: :mod:`localcloud.server.bodies`)."""
    answer = message(413, "Request Too Long")
    answer.headers["Connection"] = "close"  # the body was not read
    return answer


def throttled() -> Response:
    """API Gateway's answer to a request it throttles (429 ``Too Many Requests``): the
    server holds as many bodies as it may (:mod:`localcloud.server.bodies`)."""
    return message(429, "Too Many Requests")


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
