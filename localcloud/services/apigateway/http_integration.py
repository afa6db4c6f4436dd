"""An HTTP API's first-class AWS service integration (``IntegrationSubtype``), run as API
Gateway runs it ("Working with AWS service integrations for HTTP APIs", "Integration
subtype reference"): each request parameter's value is evaluated, the service is called,
and its answer is the response, status, ``Content-Type`` and body as the service gave them.

A value is static text, a selection expression (``$request.body``,
``$request.body.JSONPATH``, ``$request.header.NAME``, ``$request.querystring.NAME``,
``$request.path.NAME``, ``$context.NAME``, ``$stageVariables.NAME``), or text with
expressions in it written ``${request.header.NAME}``. An expression that selects nothing
for a required parameter is API Gateway's 400 ``{"message": "Bad Request"}``. A JSON path
reads the body's first :data:`BODY_FOR_JSON_PATH` bytes, in the syntax HTTP APIs have (no
recursive descent, no filters), evaluated bounded (:mod:`localcloud.patches.jsonpath`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final

from werkzeug.wrappers import Request, Response

from localcloud.patches import jsonpath
from localcloud.services.apigateway.aws_integration import (
    SUBTYPES,
    ServiceCallFailed,
    subtype_call,
)
from localcloud.services.apigateway.formats import message

__all__ = ["BODY_FOR_JSON_PATH", "evaluate", "run_subtype"]

BODY_FOR_JSON_PATH: Final = 100 * 1024
"""The bytes of a body a JSON path reads: "When you specify a JSON path, API Gateway
truncates the request body at 100 KB and then applies the selection expression. To send
payloads larger than 100 KB, specify $request.body" ("Transforming API requests and
responses for HTTP APIs in API Gateway")."""

EXPRESSION: Final = re.compile(
    r"\$\{([a-zA-Z]+(?:\.[^}\s]+)?)\}|\$((?:request|context|stageVariables)(?:\.[\w.\-\[\]]+)?)"
)


def evaluate(value: str, request: Request, event: Mapping[str, Any]) -> str | None:
    """``value`` with its selection expressions evaluated for ``request`` (``event``: its
    payload format 2.0 event, whose ``requestContext``, path parameters and stage variables
    the expressions read); ``None`` when an expression selects nothing."""
    missing = False

    def one(match: re.Match[str]) -> str:
        nonlocal missing
        found = _select(match.group(1) or match.group(2), request, event)
        if found is None:
            missing = True
            return ""
        return found

    result = EXPRESSION.sub(one, value)
    return None if missing else result


def _select(expression: str, request: Request, event: Mapping[str, Any]) -> str | None:
    root, _, rest = expression.partition(".")
    if root == "request":
        kind, _, name = rest.partition(".")
        if kind == "body":
            data = request.get_data()
            if not name:
                return data.decode("utf-8", "replace")
            return _body_path(data[:BODY_FOR_JSON_PATH], name)
        if kind == "header":
            return request.headers.get(name)
        if kind == "querystring":
            values = request.args.getlist(name)
            return ",".join(values) if values else None
        if kind == "path":
            return (event.get("pathParameters") or {}).get(name)
        return None
    if root == "context":
        value: Any = event.get("requestContext") or {}
        for part in rest.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        return None if value is None else str(value)
    if root == "stageVariables":
        return (event.get("stageVariables") or {}).get(rest)
    return None


def _body_path(data: bytes, name: str) -> str | None:
    """What ``$request.body.<name>`` selects in ``data`` (a string as it is, anything else
    as JSON); ``None`` when ``data`` is not JSON (a body cut at 100 KB may not be), the path
    is not one HTTP APIs evaluate, or it selects nothing."""
    try:
        document = json.loads(data.decode("utf-8", "replace"))
        found = jsonpath.find(f"$.{name}", document, jsonpath.HTTP_API)
    except (ValueError, RecursionError):  # not JSON, nested too deep, a path refused
        return None
    if not found:
        return None
    selected = found[0] if len(found) == 1 else found
    return selected if isinstance(selected, str) else json.dumps(selected)


def run_subtype(
    request: Request, integration: Any, event: Mapping[str, Any], region: str, endpoint: str
) -> Response:
    """The response of a route whose integration has a subtype (``integration``: moto's
    model of it; ``region``: the API's)."""
    subtype = str(integration.integration_subtype)
    if subtype not in SUBTYPES:  # made through the API, which does not refuse it
        return message(500, "Internal Server Error")
    values: dict[str, str] = {}
    for name, expression in (integration.request_parameters or {}).items():
        value = evaluate(str(expression), request, event)
        if value is None:
            if name in SUBTYPES[subtype][2]:
                return message(400, "Bad Request")
            continue
        values[str(name)] = value
    try:
        answer = subtype_call(endpoint, subtype, values, region)
    except (ValueError, TypeError):  # MessageAttributes that are not JSON, a bad delay
        return message(400, "Bad Request")
    except ServiceCallFailed:  # the service did not answer
        return message(500, "Internal Server Error")
    response = Response(answer.body, answer.status)
    response.headers["Content-Type"] = answer.headers.get("content-type", "application/json")
    return response
