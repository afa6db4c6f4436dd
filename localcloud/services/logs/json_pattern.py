"""JSON CloudWatch Logs filter patterns: ``{ $.selector = value && ... }``.

The guide's section "Using filter patterns to match terms in JSON log events"
(:mod:`localcloud.services.logs.filter_pattern` names the guide and lists the rules). An event that
is not a JSON object never matches. Raises
:class:`~localcloud.services.logs.term_pattern.FilterPatternError` for syntax it does not implement.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, Literal

from localcloud.services.logs.term_pattern import FilterPatternError, read_quoted

__all__ = ["JsonPattern", "parse_json"]

Selector = tuple[str | int, ...]
"""A JSON property path: property names and array indexes, from the root ``$``."""

Operator = Literal["=", "!=", "<", "<=", ">", ">="]
Test = Literal["IS TRUE", "IS FALSE", "IS NULL", "NOT EXISTS"]


@dataclass(frozen=True)
class Comparison:
    """``SELECTOR OPERATOR VALUE``: a string (``=``/``!=`` only) or a ``Decimal`` number."""

    selector: Selector
    operator: Operator
    value: str | Decimal


@dataclass(frozen=True)
class Check:
    """``SELECTOR IS TRUE`` / ``IS FALSE`` / ``IS NULL`` / ``NOT EXISTS``."""

    selector: Selector
    test: Test


@dataclass(frozen=True)
class And:
    """``left && right``."""

    left: Expression
    right: Expression


@dataclass(frozen=True)
class Or:
    """``left || right``."""

    left: Expression
    right: Expression


Expression = Comparison | Check | And | Or

_MISSING: Final = object()

_NUMBER: Final = re.compile(r"[+-]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][+-]?\d+)?")
"""The guide's NUMBER: "An integer with an optional + or - sign, a decimal with an
optional + or - sign, or a number in scientific notation"."""

_UNQUOTED_STRING: Final = re.compile(r"[A-Za-z0-9_.*-]+")
"""The guide: "Strings that consist entirely of alphanumeric characters do not need to be
quoted" (its own example ``{ $.sourceIPAddress != 123.123.* }`` adds ``.`` and ``*``);
"Strings that have unicode and other characters such as '@,' '$,' '\\,' etc. must be
enclosed in double quotes"."""

_SELECTOR: Final = re.compile(r"\$(?:\.[A-Za-z0-9_-]+(?:\[\d+\])*)+")
"""The guide: "Property selectors always start with dollar sign ($) ... alphanumeric
strings that also support '-' and '_' characters. Array elements are denoted with [NUMBER]
syntax, and must follow a property" (``$.users[0].id``, ``$.coordinates[0][1]``)."""

_SELECTOR_PART: Final = re.compile(r"\.([A-Za-z0-9_-]+)|\[(\d+)\]")

_JSON_TOKEN: Final = re.compile(
    r"""(?:
        (?P<paren>[()])
      | (?P<logic>&&|\|\|)
      | (?P<operator>!=|<=|>=|=|<|>)
      | (?P<string>"(?:[^"\\]|\\.)*")
      | (?P<word>[^\s()=!<>&|"]+)
    )""",
    re.VERBOSE,
)

_OPERATORS: Final[dict[str, Operator]] = {
    "=": "=",
    "!=": "!=",
    "<": "<",
    "<=": "<=",
    ">": ">",
    ">=": ">=",
}

_TESTS: Final[dict[tuple[str, str], Test]] = {
    ("IS", "TRUE"): "IS TRUE",
    ("IS", "FALSE"): "IS FALSE",
    ("IS", "NULL"): "IS NULL",
    ("NOT", "EXISTS"): "NOT EXISTS",
}


@dataclass(frozen=True)
class _Token:
    kind: str
    text: str
    position: int


def _json_tokens(body: str, offset: int) -> list[_Token]:
    """The tokens of the text between a JSON pattern's braces (``offset``: where it starts
    in the pattern, for error messages)."""
    tokens: list[_Token] = []
    index = 0
    while index < len(body):
        if body[index].isspace():
            index += 1
            continue
        found = _JSON_TOKEN.match(body, index)
        if found is None or found.lastgroup is None:
            raise FilterPatternError(
                f"unexpected {body[index]!r} at position {index + offset} of the JSON pattern"
            )
        tokens.append(_Token(found.lastgroup, found.group(), index + offset))
        index = found.end()
    return tokens


def _selector(token: _Token) -> Selector:
    if not _SELECTOR.fullmatch(token.text):
        raise FilterPatternError(
            f"unsupported selector {token.text!r}: implemented are $.name, $.a.b and $.a[0] "
            "(names of letters, digits, '-' and '_')"
        )
    return tuple(name if name else int(index) for name, index in _SELECTOR_PART.findall(token.text))


def _literal(token: _Token) -> str | Decimal:
    if token.kind == "string":
        text, _ = read_quoted(token.text, 0)
        return text
    if token.kind != "word":
        raise FilterPatternError(f"expected a value, found {token.text!r}")
    if token.text.startswith("%"):
        raise FilterPatternError(
            f"regular expression value {token.text!r} is not implemented "
            "(use a string with a leading or trailing * wildcard)"
        )
    if _NUMBER.fullmatch(token.text):
        return Decimal(token.text)
    if token.text.lower() in ("true", "false", "null"):
        raise FilterPatternError(
            f"comparing with {token.text!r} is not implemented: use IS TRUE, IS FALSE or "
            "IS NULL, as the AWS guide does"
        )
    if not _UNQUOTED_STRING.fullmatch(token.text):
        raise FilterPatternError(
            f"unquoted value {token.text!r} holds characters AWS requires in double quotes"
        )
    return token.text


class _JsonParser:
    """Recursive descent over the guide's compound conditions: "Parenthesis are allowed
    and the syntax follows standard order of operations () > && > ||"."""

    def __init__(self, tokens: list[_Token]) -> None:
        self._tokens = tokens
        self._next = 0

    def parse(self) -> Expression:
        if not self._tokens:
            raise FilterPatternError("empty JSON pattern {}: give at least one condition")
        expression = self._any()
        if self._next < len(self._tokens):
            token = self._tokens[self._next]
            raise FilterPatternError(
                f"unexpected {token.text!r} in the JSON pattern (expected && or ||)"
            )
        return expression

    def _peek(self) -> _Token | None:
        return self._tokens[self._next] if self._next < len(self._tokens) else None

    def _take(self, wanted: str) -> _Token:
        token = self._peek()
        if token is None:
            raise FilterPatternError(f"the JSON pattern ends where {wanted} was expected")
        self._next += 1
        return token

    def _any(self) -> Expression:
        expression = self._all()
        while (token := self._peek()) is not None and token.text == "||":
            self._next += 1
            expression = Or(expression, self._all())
        return expression

    def _all(self) -> Expression:
        expression = self._primary()
        while (token := self._peek()) is not None and token.text == "&&":
            self._next += 1
            expression = And(expression, self._primary())
        return expression

    def _primary(self) -> Expression:
        token = self._take("a condition")
        if token.text == "(":
            expression = self._any()
            if self._take("')'").text != ")":
                raise FilterPatternError("unbalanced parenthesis in the JSON pattern")
            return expression
        if token.kind != "word" or not token.text.startswith("$"):
            raise FilterPatternError(f"expected a selector such as $.field, found {token.text!r}")
        selector = _selector(token)
        following = self._take("an operator, IS or NOT EXISTS")
        if following.kind == "operator":
            operator = _OPERATORS[following.text]
            value = _literal(self._take("a value"))
            if isinstance(value, str) and operator not in ("=", "!="):
                raise FilterPatternError(
                    f"{operator} compares numbers only, not the string {value!r}"
                )
            return Comparison(selector, operator, value)
        second = (
            self._take("TRUE, FALSE, NULL or EXISTS") if following.text in ("IS", "NOT") else None
        )
        test = _TESTS.get((following.text, second.text)) if second else None
        if test is None:
            words = following.text + (f" {second.text}" if second else "")
            raise FilterPatternError(
                f"unsupported condition {words} after "
                f"{token.text}: implemented are =, !=, <, <=, >, >=, IS TRUE, IS FALSE, "
                "IS NULL and NOT EXISTS"
            )
        return Check(selector, test)


def _resolve(document: object, selector: Selector) -> object:
    """The value at ``selector``, or ``_MISSING`` when a property or index is absent."""
    current = document
    for part in selector:
        if isinstance(part, int):
            if not isinstance(current, list) or part >= len(current):
                return _MISSING
            current = current[part]
        else:
            if not isinstance(current, dict) or part not in current:
                return _MISSING
            current = current[part]
    return current


def _wildcard(pattern: str, value: str) -> bool:
    """The guide: "use the asterisk '*' wildcard character to match any text at, before,
    or after a search term ... *Event will match PutEvent and GetEvent. Event* will match
    EventId and EventName. Ev*ent will only match the actual string Ev*ent"."""
    if pattern == "*":
        return True
    leading, trailing = pattern.startswith("*"), pattern.endswith("*")
    core = pattern[1 if leading else 0 : -1 if trailing else None]
    if leading and trailing:
        return core in value
    if leading:
        return value.endswith(core)
    if trailing:
        return value.startswith(core)
    return value == pattern


_ORDER: Final[dict[str, Callable[[Decimal, Decimal], bool]]] = {
    "=": lambda left, right: left == right,
    "!=": lambda left, right: left != right,
    "<": lambda left, right: left < right,
    "<=": lambda left, right: left <= right,
    ">": lambda left, right: left > right,
    ">=": lambda left, right: left >= right,
}


def _compare(comparison: Comparison, found: object) -> bool:
    """The guide: "The SELECTOR must point to a value node (string or number) in the
    JSON. If it points to an array or object, the filter will not be applied", so that
    both ``=`` and ``!=`` fail. The guide says no more; this module reads a missing
    property, ``true``/``false``/``null`` (which have ``IS`` tests) and a value of the other
    type (a string against a number, a number against a string) as no value node either,
    so they fail alike. The bare wildcard ``*`` (the guide's ``{ $.latency = * }``)
    matches any string or number."""
    if isinstance(comparison.value, Decimal):
        if not isinstance(found, Decimal):
            return False
        return _ORDER[comparison.operator](found, comparison.value)
    if comparison.value == "*" and isinstance(found, Decimal):
        return comparison.operator == "="
    if not isinstance(found, str):
        return False
    matched = _wildcard(comparison.value, found)
    return matched if comparison.operator == "=" else not matched


def _evaluate(expression: Expression, document: dict[str, object]) -> bool:
    match expression:
        case And(left, right):
            return _evaluate(left, document) and _evaluate(right, document)
        case Or(left, right):
            return _evaluate(left, document) or _evaluate(right, document)
        case Check(selector, test):
            found = _resolve(document, selector)
            if test == "NOT EXISTS":
                return found is _MISSING
            expected = {"IS TRUE": True, "IS FALSE": False, "IS NULL": None}[test]
            return found is expected
        case Comparison(selector):
            return _compare(expression, _resolve(document, selector))


def _refuse_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _json_object(message: str) -> dict[str, object] | None:
    """``message`` as a JSON object, numbers as ``Decimal`` (exact comparisons), or None."""
    try:
        document = json.loads(
            message, parse_float=Decimal, parse_int=Decimal, parse_constant=_refuse_constant
        )
    except ValueError:
        return None
    return document if isinstance(document, dict) else None


@dataclass(frozen=True)
class JsonPattern:
    """A JSON pattern ``{ ... }``: the guide's "Using filter patterns to match terms in
    JSON log events"."""

    expression: Expression

    def matches(self, message: str) -> bool:
        """Whether ``message`` is a JSON object meeting the expression; any other event
        never matches (not even ``NOT EXISTS``)."""
        document = _json_object(message)
        return document is not None and _evaluate(self.expression, document)


def parse_json(pattern: str) -> JsonPattern:
    """The JSON pattern ``pattern`` (stripped, starting with ``{``) compiled.

    Raises ``FilterPatternError`` if it does not end with ``}``, nests parentheses past
    Python's recursion limit, or holds syntax outside the module docstring.
    """
    if not pattern.endswith("}"):
        raise FilterPatternError("a JSON pattern must end with '}'")
    try:
        return JsonPattern(_JsonParser(_json_tokens(pattern[1:-1], 1)).parse())
    except RecursionError:
        raise FilterPatternError("the JSON pattern nests parentheses too deeply") from None
