"""API Gateway's mapping templates, rendered as a REST API's non-proxy integration renders
them: Velocity (``airspeed-ext``, the library LocalStack renders them with) with the
variables of API Gateway's "Mapping template and access logging variable reference":

- ``$input``: ``body`` (the payload as text), ``json(x)`` (the JSON text of what the
  JSONPath expression ``x`` selects: Jayway's syntax, no arithmetic, evaluated bounded by
  :mod:`localcloud.patches.jsonpath`), ``path(x)`` (that value itself), ``params()`` (a
  map of ``path``, ``querystring`` and ``header``, each of names to values) and
  ``params(x)`` (the value of ``x``: path, then query string, then header; ``""`` when
  absent);
- ``$util``: ``escapeJavaScript``, ``parseJson``, ``urlEncode``, ``urlDecode``,
  ``base64Encode``, ``base64Decode``;
- ``$context`` (the proxy event's ``requestContext``: ``requestId``, ``stage``,
  ``resourcePath``, ``httpMethod``, ``identity.sourceIp`` …) and ``$stageVariables``.

Those, the Java methods templates call on strings, lists and maps (``size()``,
``keySet()``, ``containsKey(k)``, ``put`` … :mod:`.velocity_members`) and a map's entries
are all a template reaches: airspeed runs sandboxed (:mod:`.velocity_patches`), within
API Gateway's quotas and the local cloud's bounds (:mod:`.velocity`), and a template that
passes one does not render. Maps print as Java prints them (``{a=1, b=2}``);
``$util``'s functions of a null are of ``""``. Not rendered: ``$context.requestOverride``
and ``responseOverride``.
"""

from __future__ import annotations

import base64
import json
import traceback
from collections.abc import Mapping
from typing import Any, ClassVar, Final
from urllib.parse import quote_plus, unquote_plus

import airspeed
from airspeed import operators

from localcloud.patches import jsonpath
from localcloud.services.apigateway import velocity
from localcloud.services.apigateway.velocity import PAYLOAD_SIZE, TemplateError, java_text
from localcloud.services.apigateway.velocity_patches import NO_FILES, compiled, in_force

__all__ = ["MappingInput", "MappingUtil", "TemplateError", "render"]

_ENCODER: Final = json.JSONEncoder()
"""``json.dumps``'s defaults, as :meth:`MappingInput.json` writes its text."""


def _copied(value: Any) -> Any:
    """A copy of a JSON value for a template to walk and change (``put``, ``add``), each
    value copied counted by the rendering's sandbox."""
    sandbox = velocity.active()
    if sandbox is not None:
        sandbox.made_values(1)
    if isinstance(value, dict):
        return {str(k): _copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copied(item) for item in value]
    return value


class MappingInput:
    """``$input``: the payload ``body`` (text) and the method request's ``parameters``
    (``{"path": {…}, "querystring": {…}, "header": {…}}``); the body is parsed once."""

    TEMPLATE_PROPERTIES: ClassVar[frozenset[str]] = frozenset({"body"})
    TEMPLATE_METHODS: ClassVar[frozenset[str]] = frozenset({"json", "path", "params"})

    def __init__(self, body: str, parameters: Mapping[str, Mapping[str, str]]) -> None:
        self.body = body
        self._parameters = parameters
        self._document: Any = None
        self._parsed = False

    def __repr__(self) -> str:
        return "$input"

    def _parse(self) -> Any:
        if not self._parsed:
            try:
                self._document = json.loads(self.body) if self.body.strip() else {}
            except json.JSONDecodeError as exc:
                raise TemplateError(f"$input of a body that is not JSON ({exc})") from exc
            except RecursionError as exc:
                raise TemplateError("$input of a body nested too deeply") from exc
            self._parsed = True
        return self._document

    def _select(self, expression: str) -> Any:
        """What the JSONPath ``expression`` selects: ``None`` (nothing), the value, or the
        list of values it matched; bounded (:mod:`localcloud.patches.jsonpath`)."""
        document = self._parse()
        try:
            found = jsonpath.find(expression, document, jsonpath.JAYWAY)
        except jsonpath.JsonPathRefused as exc:
            raise TemplateError(str(exc)) from exc
        if not found:
            return None
        return found[0] if len(found) == 1 else found

    def json(self, expression: str = "$") -> str:
        """The JSON text of what ``expression`` selects (``null`` when nothing), written
        piece by piece and stopped where it would pass the rendering's text bound (many
        matches can each hold the whole body: ``$..*``)."""
        value = self._select(expression)
        sandbox = velocity.current()
        pieces: list[str] = []
        written = 0
        try:
            for piece in _ENCODER.iterencode(value):
                written += len(piece)
                sandbox.room_for_text(written)
                pieces.append(piece)
        except RecursionError as exc:
            raise TemplateError("$input.json of a value nested too deeply") from exc
        return "".join(pieces)

    def path(self, expression: str = "$") -> Any:
        """What ``expression`` selects, as an object templates can walk (a copy of it)."""
        try:
            return _copied(self._select(expression))
        except RecursionError as exc:
            raise TemplateError("$input.path of a value nested too deeply") from exc

    def params(self, name: str | None = None) -> Any:
        """Every parameter by kind, or the value of ``name`` (path, query string, then
        header; ``""`` when it is none of them)."""
        if name is None:
            return {kind: dict(values) for kind, values in self._parameters.items()}
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
    """A ``$util`` argument as text: a null is ``""``, anything else as Java prints it."""
    return "" if value is None else java_text(value)


class MappingUtil:
    """``$util``."""

    TEMPLATE_METHODS: ClassVar[frozenset[str]] = frozenset(
        {
            "escapeJavaScript",
            "parseJson",
            "urlEncode",
            "urlDecode",
            "base64Encode",
            "base64Decode",
        }
    )

    def __repr__(self) -> str:
        return "$util"

    @staticmethod
    def escapeJavaScript(text: Any) -> str:  # noqa: N802 - API Gateway's name
        """``text`` escaped by JavaScript string rules, as API Gateway's does (Apache
        Commons' ``escapeJavaScript``: quotes, backslash, ``/``, control and non-ASCII
        characters), so it can stand inside a JSON string."""
        return "".join(_escape(ch) for ch in _text(text))

    @staticmethod
    def parseJson(text: str) -> Any:  # noqa: N802 - API Gateway's name
        try:
            return _copied(json.loads(text))
        except (json.JSONDecodeError, TypeError) as exc:
            raise TemplateError(f"$util.parseJson of text that is not JSON ({exc})") from exc
        except RecursionError as exc:
            raise TemplateError("$util.parseJson of JSON nested too deeply") from exc

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


def _release(error: BaseException) -> None:
    """Clear the locals of the finished frames a failed rendering left in ``error``'s
    tracebacks (its causes' too). They hold what the template was given and made (a
    parsed 10 MB body is some 250 MB of Python values) in a reference cycle that only the
    garbage collector frees, minutes later: forty failing renderings of 10 MB bodies held
    717 MB (issue 47's held-back attacks)."""
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        traceback.clear_frames(current.__traceback__)
        pending += [current.__cause__, current.__context__]


def render(
    template: str,
    *,
    body: str,
    parameters: Mapping[str, Mapping[str, str]],
    context: Mapping[str, Any],
    stage_variables: Mapping[str, str],
) -> str:
    """``template`` rendered for a request or a response (``body`` is the payload it
    maps: the method request's, or the integration's answer), sandboxed and bounded
    (:mod:`.velocity`).

    Raises:
        TemplateError: the template does not render: bad syntax, a failing member, a
            bound passed (:data:`.velocity.TEMPLATE_SIZE`, a rendered body over
            :data:`.velocity.PAYLOAD_SIZE` …), or the sandbox is not installed (no local
            cloud is running: a template is never rendered unsandboxed).
    """
    if not in_force():
        raise TemplateError("mapping templates render only in a running local cloud (sandboxed)")
    namespace = {
        "input": MappingInput(body, parameters),
        "util": MappingUtil(),
        "context": _copied(dict(context)),
        "stageVariables": dict(stage_variables),
    }
    output = operators.StoppableStream()
    try:
        with velocity.started():
            compiled(template).merge_to(namespace, output, NO_FILES)
    except airspeed.TemplateError as exc:
        _release(exc)
        if isinstance(exc.__cause__, TemplateError):
            raise TemplateError(f"the mapping template does not render ({exc.__cause__})") from exc
        raise TemplateError(f"the mapping template does not render ({exc})") from exc
    except RecursionError as exc:
        _release(exc)
        raise TemplateError("the mapping template nests too deeply to render") from exc
    rendered: str = output.getvalue()
    if len(rendered.encode()) > PAYLOAD_SIZE:
        raise TemplateError(
            f"the mapping template rendered {len(rendered.encode()):,} bytes: API Gateway's "
            "payload quota is 10 MB"
        )
    return rendered
