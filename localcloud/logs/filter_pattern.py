"""CloudWatch Logs filter patterns, as AWS documents them.

moto 5.2.5 honours only plain and quoted terms in ``FilterLogEvents``
(``moto.logs.utils.EventMessageFilter``); a JSON pattern such as
``{ $.decision = "conflict" }``, an OR group ``?a ?b`` or an exclusion ``-term`` gives
every event or none, silently. :func:`matches` implements the syntax of the CloudWatch
Logs user guide, "Filter pattern syntax for metric filters, subscription filters, filter
log events, and Live Tail"
(https://docs.aws.amazon.com/AmazonCloudWatch/latest/logs/FilterAndPatternSyntax.html;
the older text of the same page is ``doc_source/FilterAndPatternSyntax.md`` in
github.com/awsdocs/amazon-cloudwatch-logs-user-guide). Below, "the guide" is that page.

Unstructured events (section "Using filter patterns to match terms in unstructured log
events"):

* the empty pattern matches every event;
* a term matches an event whose message contains it; terms are case sensitive;
* several terms match only an event that contains all of them;
* ``"an exact phrase"`` in double quotes is one term, spaces included; a term holding a
  character other than a letter, a digit or ``_`` must be quoted;
* ``?a ?b`` matches an event that contains any of the ``?`` terms;
* ``-term`` excludes the events that contain the term (``ERROR -WARN``).

JSON events (section "Using filter patterns to match terms in JSON log events"):
``{ SELECTOR = "string" }``, ``!=``, the numeric comparisons ``= != < <= > >=``, the
wildcard ``*`` at the start or end of a string, ``IS TRUE``, ``IS FALSE``, ``IS NULL``,
``NOT EXISTS``, selectors ``$.a.b`` and ``$.a[0]``, ``&&`` and ``||`` with parentheses.
An event that is not a JSON object never matches a JSON pattern.

Anything else -- space-delimited patterns ``[w1, w2]``, regular expressions ``%...%``,
``?`` terms mixed with plain or excluded terms, unquoted terms with other characters --
raises :class:`FilterPatternError`, and ``FilterLogEvents`` fails with
``InvalidParameterException`` (HTTP 400) naming it (:mod:`localcloud.patches.logs`): a
refusal, never a wrong answer.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal
from typing import Final, Literal

__all__ = [
    "FilterPatternError",
    "JsonPattern",
    "TermPattern",
    "matches",
    "parse",
]


class FilterPatternError(ValueError):
    """A filter pattern this module does not implement, or that is not valid syntax."""


# --- unstructured patterns ---------------------------------------------------------------

_BARE_TERM: Final = re.compile(r"[A-Za-z0-9_]+")
"""The guide: "Enclose exact phrases and terms that include non-alphanumeric characters in
double quotation marks"; the older text names the underscore as allowed unquoted."""


@dataclass(frozen=True)
class TermPattern:
    """An unstructured pattern: terms that must all appear (AND), ``?`` terms of which one
    must appear (OR) and ``-`` terms that must not appear.

    The guide gives each form on its own or, for exclusion, with plain terms
    (``ERROR -WARN``); :func:`parse` refuses ``?`` terms mixed with the others, whose
    meaning it does not give.
    """

    required: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    def matches(self, message: str) -> bool:
        """Whether ``message`` contains the terms. A term matches anywhere in the message,
        case sensitive: the guide's term ``ERROR`` matches "Exiting with ERRORCODE: -1"."""
        if any(term in message for term in self.excluded):
            return False
        if self.any_of and not any(term in message for term in self.any_of):
            return False
        return all(term in message for term in self.required)


def _read_quoted(text: str, start: int) -> tuple[str, int]:
    """The string in double quotes at ``text[start]``, and the index after its closing
    quote. ``\\"`` and ``\\\\`` stand for a quote and a backslash; other escapes are
    refused rather than guessed."""
    chars: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == '"':
            return "".join(chars), index + 1
        if char == "\\":
            following = text[index + 1 : index + 2]
            if following not in ('"', "\\"):
                raise FilterPatternError(
                    f"unsupported escape {text[index : index + 2]!r} in a quoted term: "
                    'only \\" and \\\\ are implemented'
                )
            chars.append(following)
            index += 2
            continue
        chars.append(char)
        index += 1
    raise FilterPatternError(f"unterminated double quote at position {start}")


def _parse_terms(pattern: str) -> TermPattern:
    """Split an unstructured pattern into its plain, ``?`` and ``-`` terms."""
    required: list[str] = []
    any_of: list[str] = []
    excluded: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern[index].isspace():
            index += 1
            continue
        prefix = pattern[index] if pattern[index] in "?-" else ""
        index += len(prefix)
        if index < len(pattern) and pattern[index] == '"':
            term, index = _read_quoted(pattern, index)
            if index < len(pattern) and not pattern[index].isspace():
                raise FilterPatternError(
                    f"a quoted term must be followed by a space or the end, not "
                    f"{pattern[index]!r} (position {index})"
                )
        else:
            end = index
            while end < len(pattern) and not pattern[end].isspace():
                end += 1
            term = pattern[index:end]
            if not term:
                raise FilterPatternError(f"{prefix!r} must be followed by a term")
            if not _BARE_TERM.fullmatch(term):
                raise FilterPatternError(
                    f"unquoted term {term!r} holds a character other than a letter, a digit "
                    'or "_": AWS requires such a term in double quotes'
                )
            index = end
        {"": required, "?": any_of, "-": excluded}[prefix].append(term)
    if any_of and (required or excluded):
        raise FilterPatternError(
            "?term (OR) mixed with plain or -excluded terms is not implemented: the AWS "
            "guide documents ?a ?b on its own"
        )
    return TermPattern(tuple(required), tuple(any_of), tuple(excluded))


# --- JSON patterns -----------------------------------------------------------------------

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
        text, _ = _read_quoted(token.text, 0)
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


# --- entry points ------------------------------------------------------------------------

Pattern = TermPattern | JsonPattern


@functools.lru_cache(maxsize=256)
def parse(pattern: str) -> Pattern:
    """The compiled form of ``pattern``; ``FilterPatternError`` if it is not implemented.

    The guide starts a JSON pattern with ``{``, a space-delimited one with ``[`` and a
    regular expression with ``%``; the last two are refused.
    """
    stripped = pattern.strip()
    if stripped.startswith("{"):
        if not stripped.endswith("}"):
            raise FilterPatternError("a JSON pattern must end with '}'")
        try:
            return JsonPattern(_JsonParser(_json_tokens(stripped[1:-1], 1)).parse())
        except RecursionError:
            raise FilterPatternError("the JSON pattern nests parentheses too deeply") from None
    if stripped.startswith("["):
        raise FilterPatternError(
            "space-delimited patterns ([w1, w2, ...]) are not implemented by the local cloud"
        )
    if stripped.startswith("%"):
        raise FilterPatternError(
            "regular expression patterns (%...%) are not implemented by the local cloud"
        )
    return _parse_terms(stripped)


def matches(pattern: str, message: str) -> bool:
    """Whether the log event ``message`` matches the CloudWatch Logs filter ``pattern``.

    Raises ``FilterPatternError`` for a pattern outside what this module implements (see
    the module docstring), whatever the message.
    """
    return parse(pattern).matches(message)


# --- install -----------------------------------------------------------------------------
