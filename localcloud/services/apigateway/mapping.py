"""API Gateway's mapping templates, rendered as a REST API's non-proxy integration renders
them: Velocity (``airspeed-ext``, the library LocalStack renders them with) with the
variables of API Gateway's "Mapping template and access logging variable reference":

- ``$input``: ``body`` (the payload as text), ``json(x)`` (the JSON text of what the
  JSONPath expression ``x`` selects), ``path(x)`` (that value itself), ``params()`` (a
  map of ``path``, ``querystring`` and ``header``, each of names to values) and
  ``params(x)`` (the value of ``x``: path, then query string, then header; ``""`` when
  absent);
- ``$util``: ``escapeJavaScript``, ``parseJson``, ``urlEncode``, ``urlDecode``,
  ``base64Encode``, ``base64Decode``;
- ``$context`` (the proxy event's ``requestContext``: ``requestId``, ``stage``,
  ``resourcePath``, ``httpMethod``, ``identity.sourceIp`` …) and ``$stageVariables``.

Maps answer ``size()``, ``keySet()``, ``containsKey(k)``, ``isEmpty()``, ``put``,
``putAll`` and ``toString()`` as Java's do, since templates call them
(``#foreach($k in $input.params().header.keySet())``); ``$util``'s functions of a null
are of ``""``. Not rendered: ``$context.requestOverride`` and ``responseOverride``.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote_plus, unquote_plus

import airspeed
from jsonpath_ng.ext.parser import parse as jsonpath

__all__ = ["MappingInput", "MappingUtil", "TemplateError", "render"]


class TemplateError(ValueError):
    """A mapping template that does not render (bad syntax, a JSONPath that does not
    parse, ``$input.json`` of a body that is not JSON); API Gateway answers the call
    with a 500."""


class JavaMap(dict[str, Any]):
    """A dict answering the Java ``Map`` methods templates call, and printed as Java
    prints a map (``{a=1, b=2}``)."""

    def size(self) -> int:
        return len(self)

    def keySet(self) -> list[str]:  # noqa: N802 - Java's name, as templates call it
        return list(self)

    def containsKey(self, key: str) -> bool:  # noqa: N802 - Java's name
        return key in self

    def isEmpty(self) -> bool:  # noqa: N802 - Java's name
        return not self

    def put(self, key: str, value: Any) -> Any:
        previous = self.get(key)
        self[key] = value
        return previous

    def putAll(self, values: Mapping[str, Any]) -> None:  # noqa: N802 - Java's name
        self.update(values)

    def toString(self) -> str:  # noqa: N802 - Java's name
        return str(self)

    def __str__(self) -> str:
        return "{" + ", ".join(f"{k}={v}" for k, v in self.items()) + "}"


def _java(value: Any) -> Any:
    """``value`` with every dict a :class:`JavaMap`."""
    if isinstance(value, dict):
        return JavaMap({str(k): _java(v) for k, v in value.items()})
    if isinstance(value, list):
        return [_java(item) for item in value]
    return value


class MappingInput:
    """``$input``: the payload ``body`` (text) and the method request's ``parameters``
    (``{"path": {…}, "querystring": {…}, "header": {…}}``)."""

    def __init__(self, body: str, parameters: Mapping[str, Mapping[str, str]]) -> None:
        self.body = body
        self._parameters = parameters

    def _select(self, expression: str) -> Any:
        try:
            document = json.loads(self.body) if self.body.strip() else {}
        except json.JSONDecodeError as exc:
            raise TemplateError(f"$input of a body that is not JSON ({exc})") from exc
        try:
            found = [match.value for match in jsonpath(expression).find(document)]
        except Exception as exc:  # noqa: BLE001 - jsonpath_ng raises its own bare Exceptions
            raise TemplateError(f"JSONPath {expression!r} does not parse ({exc})") from exc
        if not found:
            return None
        return found[0] if len(found) == 1 else found

    def json(self, expression: str = "$") -> str:
        """The JSON text of what ``expression`` selects (``null`` when nothing)."""
        return json.dumps(self._select(expression))

    def path(self, expression: str = "$") -> Any:
        """What ``expression`` selects, as an object templates can walk."""
        return _java(self._select(expression))

    def params(self, name: str | None = None) -> Any:
        """Every parameter by kind, or the value of ``name`` (path, query string, then
        header; ``""`` when it is none of them)."""
        if name is None:
            return _java({kind: dict(values) for kind, values in self._parameters.items()})
        for kind in ("path", "querystring", "header"):
            values = self._parameters.get(kind) or {}
            if name in values:
                return values[name]
        headers = self._parameters.get("header") or {}
        return {k.lower(): v for k, v in headers.items()}.get(name.lower(), "")


_ESCAPES: Final = {
    '"': '\\"',
    "'": "\\'",
    "\\": "\\\\",
    "/": "\\/",
    "\b": "\\b",
    "\n": "\\n",
    "\t": "\\t",
    "\f": "\\f",
    "\r": "\\r",
}


def _escape(ch: str) -> str:
    """One character as Commons Lang's ``escapeJavaScript`` writes it: control and
    non-ASCII characters as ``\\uXXXX`` (upper case hex, UTF-16 units)."""
    if ch in _ESCAPES:
        return _ESCAPES[ch]
    code = ord(ch)
    if 32 <= code < 0x7F:
        return ch
    if code > 0xFFFF:
        units = ch.encode("utf-16-be")
        high, low = int.from_bytes(units[:2], "big"), int.from_bytes(units[2:], "big")
        return f"\\u{high:04X}\\u{low:04X}"
    return f"\\u{code:04X}"


def _text(value: Any) -> str:
    """A ``$util`` argument as text: a null is ``""``."""
    return "" if value is None else str(value)


class MappingUtil:
    """``$util``."""

    @staticmethod
    def escapeJavaScript(text: Any) -> str:  # noqa: N802 - API Gateway's name
        """``text`` escaped by JavaScript string rules, as API Gateway's does (Apache
        Commons' ``escapeJavaScript``: quotes, backslash, ``/``, control and non-ASCII
        characters), so it can stand inside a JSON string."""
        return "".join(_escape(ch) for ch in _text(text))

    @staticmethod
    def parseJson(text: str) -> Any:  # noqa: N802 - API Gateway's name
        try:
            return _java(json.loads(text))
        except (json.JSONDecodeError, TypeError) as exc:
            raise TemplateError(f"$util.parseJson of text that is not JSON ({exc})") from exc

    @staticmethod
    def urlEncode(text: Any) -> str:  # noqa: N802 - API Gateway's name
        return quote_plus(_text(text))

    @staticmethod
    def urlDecode(text: Any) -> str:  # noqa: N802 - API Gateway's name
        return unquote_plus(_text(text))

    @staticmethod
    def base64Encode(text: Any) -> str:  # noqa: N802 - API Gateway's name
        return base64.b64encode(_text(text).encode()).decode()

    @staticmethod
    def base64Decode(text: Any) -> str:  # noqa: N802 - API Gateway's name
        return base64.b64decode(_text(text)).decode("utf-8", "replace")


def render(
    template: str,
    *,
    body: str,
    parameters: Mapping[str, Mapping[str, str]],
    context: Mapping[str, Any],
    stage_variables: Mapping[str, str],
) -> str:
    """``template`` rendered for a request or a response (``body`` is the payload it
    maps: the method request's, or the integration's answer).

    Raises:
        TemplateError: the template does not render.
    """
    namespace = {
        "input": MappingInput(body, parameters),
        "util": MappingUtil(),
        "context": _java(dict(context)),
        "stageVariables": _java(dict(stage_variables)),
    }
    try:
        return str(airspeed.Template(template).merge(namespace))
    except airspeed.TemplateError as exc:
        raise TemplateError(f"the mapping template does not render ({exc})") from exc
