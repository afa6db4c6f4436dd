"""A REST API's ``AWS`` (non-proxy) integration, run as API Gateway runs it ("Set up an
API integration request", "Set up an integration response", "Mapping template
reference"):

1. the request template for the request's ``Content-Type`` (``application/json`` when
   it has none) renders the integration request's body; with no template for that type
   the body passes through as it is (``passthroughBehavior`` ``WHEN_NO_MATCH``, the
   default), or the call is answered 415 ``{"message": "Unsupported Media Type"}``
   (``NEVER``; ``WHEN_NO_TEMPLATES`` when the integration has any template);
2. ``requestParameters`` set the integration request's headers, query strings and path
   parameters from static values (``'text'``), the method request's
   (``method.request.{path|querystring|header}.NAME``), ``context.NAME`` and
   ``stageVariables.NAME``;
3. the service's answer selects an integration response: the first whose
   ``selectionPattern`` matches the status code, else the one without a pattern; none is
   500 ``{"message": "Internal server error"}``, as a configuration error is on AWS;
4. that response's status code, its ``responseParameters`` (static values,
   ``integration.response.header.NAME``, ``integration.response.body`` and
   ``….body.JSONPATH``, ``context.NAME``, ``stageVariables.NAME``) and its template for
   ``application/json`` (or its only one) make the method response; with no template the
   service's body passes through.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote

from werkzeug.wrappers import Request, Response

from localcloud.services.apigateway.aws_integration import (
    Answer,
    ServiceCallFailed,
    ServiceUri,
    call_service,
    parse_uri,
)
from localcloud.services.apigateway.formats import message
from localcloud.services.apigateway.mapping import MappingInput, TemplateError, render

__all__ = ["method_parameters", "run_aws_integration"]

DEFAULT_CONTENT_TYPE: Final = "application/json"


def method_parameters(event: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """The method request's parameters by kind (``path``, ``querystring``, ``header``),
    from its proxy event (payload format 1.0)."""
    return {
        "path": dict(event.get("pathParameters") or {}),
        "querystring": dict(event.get("queryStringParameters") or {}),
        "header": dict(event.get("headers") or {}),
    }


def _source(
    expression: str,
    parameters: Mapping[str, Mapping[str, str]],
    context: Mapping[str, Any],
    stage_variables: Mapping[str, str],
    body: str,
) -> str | None:
    """The value a request parameter's source expression names, ``None`` when absent."""
    if len(expression) >= 2 and expression[0] == expression[-1] == "'":
        return expression[1:-1]
    kind, _, name = expression.partition(".")
    if expression.startswith("method.request."):
        where, _, name = expression.removeprefix("method.request.").partition(".")
        if where == "body":
            return body if not name else _text(MappingInput(body, parameters).path(f"$.{name}"))
        values = parameters.get(where) or {}
        if where == "header":
            return {k.lower(): v for k, v in values.items()}.get(name.lower())
        return values.get(name)
    if kind == "context":
        value: Any = context
        for part in name.split("."):
            value = value.get(part) if isinstance(value, Mapping) else None
        return None if value is None else str(value)
    if kind == "stageVariables":
        return stage_variables.get(name)
    return None


def _request_body(
    request: Request, integration: Any, parameters: Mapping[str, Any], variables: dict[str, Any]
) -> str | Response:
    """The integration request's body, or API Gateway's 415 answer."""
    body = request.get_data().decode("utf-8", "replace")
    templates = dict(integration.request_templates or {})
    content_type = (request.mimetype or DEFAULT_CONTENT_TYPE).lower()
    template = next((t for k, t in templates.items() if k.lower() == content_type), None)
    if template is None:
        behaviour = str(integration.passthrough_behaviour or "WHEN_NO_MATCH").upper()
        if behaviour == "NEVER" or (behaviour == "WHEN_NO_TEMPLATES" and templates):
            return message(415, "Unsupported Media Type")
        return body
    return render(str(template), body=body, parameters=parameters, **variables)


def run_aws_integration(
    request: Request,
    integration: Any,
    event: Mapping[str, Any],
    stage_variables: Mapping[str, str],
    endpoint: str,
) -> Response:
    """The method response of a request whose method has an ``AWS`` integration
    (``integration``: moto's model of it; ``event``: the request's proxy event, whose
    parameters and ``requestContext`` the templates read)."""
    uri = parse_uri(str(integration.uri or ""))
    if uri is None:
        return message(500, "Internal server error")
    parameters = method_parameters(event)
    context = event["requestContext"]
    variables = {"context": context, "stage_variables": stage_variables}
    raw_body = request.get_data().decode("utf-8", "replace")
    try:
        body = _request_body(request, integration, parameters, variables)
        if isinstance(body, Response):
            return body
        headers: dict[str, str] = {}
        query: dict[str, str] = {}
        path_values: dict[str, str] = {}
        targets = {"header": headers, "querystring": query, "path": path_values}
        for name, expression in (integration.request_parameters or {}).items():
            where, _, key = str(name).removeprefix("integration.request.").partition(".")
            value = _source(str(expression), parameters, context, stage_variables, raw_body)
            if where in targets and value is not None:
                targets[where][key] = value
    except TemplateError:
        return message(500, "Internal server error")
    # a path parameter's value is one segment, encoded as API Gateway encodes it
    rest = re.sub(
        r"\{([^}]+)\}",
        lambda m: _segment(path_values.get(m.group(1), "")),
        uri.rest,
    )
    try:
        answer = call_service(
            endpoint,
            ServiceUri(uri.region, uri.service, uri.kind, rest),
            method=str(integration.http_method or "POST"),
            body=body,
            headers=headers,
            query=query,
            content_type=request.content_type or DEFAULT_CONTENT_TYPE,
        )
    except ServiceCallFailed:  # the service did not answer: API Gateway's 500
        return message(500, "Internal server error")
    return _method_response(answer, integration, parameters, variables)


def _segment(value: str) -> str:
    """``value`` as one path segment: every reserved character encoded, and a value of
    dots alone too (``..`` would climb out of the service's path)."""
    encoded = quote(value, safe="")
    return encoded.replace(".", "%2E") if set(value) <= {"."} else encoded


def _matches(pattern: str, status: str) -> bool:
    """Whether a ``selectionPattern`` matches the whole status code (a pattern that is not
    a regular expression matches nothing)."""
    try:
        return re.fullmatch(pattern, status) is not None
    except re.error:
        return False


def _text(value: Any) -> str | None:
    """A selected value as a parameter's text: a string as it is, anything else as JSON."""
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


def _selected(integration: Any, status: int) -> Any | None:
    """The integration response the service's ``status`` selects."""
    default = None
    for response in (integration.integration_responses or {}).values():
        pattern = response.selection_pattern
        if not pattern:
            default = response
        elif _matches(str(pattern), str(status)):
            return response
    return default


def _method_response(
    answer: Answer, integration: Any, parameters: Mapping[str, Any], variables: dict[str, Any]
) -> Response:
    selected = _selected(integration, answer.status)
    if selected is None:
        return message(500, "Internal server error")
    text = answer.body.decode("utf-8", "replace")
    templates = dict(selected.response_templates or {})
    template = templates.get(DEFAULT_CONTENT_TYPE)
    if template is None and len(templates) == 1:
        template = next(iter(templates.values()))
    try:
        payload = (
            text
            if not template
            else render(str(template), body=text, parameters=parameters, **variables)
        )
    except TemplateError:
        return message(500, "Internal server error")
    response = Response(payload, int(selected.status_code))
    response.headers["Content-Type"] = DEFAULT_CONTENT_TYPE
    for name, expression in (selected.response_parameters or {}).items():
        value = _response_source(str(expression), answer, text, variables)
        if value is not None:
            response.headers[str(name).removeprefix("method.response.header.")] = value
    return response


def _response_source(
    expression: str, answer: Answer, text: str, variables: Mapping[str, Any]
) -> str | None:
    """A response parameter's value: static, the integration response's header or body,
    ``context.NAME`` or ``stageVariables.NAME``."""
    if len(expression) >= 2 and expression[0] == expression[-1] == "'":
        return expression[1:-1]
    if expression.startswith(("context.", "stageVariables.")):
        return _source(expression, {}, variables["context"], variables["stage_variables"], "")
    if expression.startswith("integration.response.header."):
        return answer.headers.get(expression.removeprefix("integration.response.header.").lower())
    if expression == "integration.response.body":
        return text
    if expression.startswith("integration.response.body."):
        try:
            selected = MappingInput(text, {}).path(
                "$." + expression.removeprefix("integration.response.body.")
            )
        except TemplateError:
            return None
        return _text(selected)
    return None
