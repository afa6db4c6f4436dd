"""JSONPath as a service evaluates an expression its caller wrote, bounded: the one way the
local cloud evaluates one (API Gateway's ``$input.path`` and ``$input.json``, Step
Functions' paths through moto's interpreter, EventBridge's ``InputPath`` and
``InputPathsMap``).

``jsonpath_ng.ext`` parses the expression; what it built is checked against the syntax the
service documents (a :class:`Dialect`), and the nodes that walk a document are replaced by
bounded ones, so that no expression can hold the server:

- no arithmetic (``$.a * 400000000`` made a string of 2 GB) and none of jsonpath_ng's own
  additions (```len```, ```sub(/x/, y)```, ```sorted```, ``where``, ``|``, ``&`` …):
  Jayway JsonPath, which API Gateway and Step Functions evaluate with, has none; each is
  refused by name (:class:`JsonPathRefused`);
- a regular expression (``[?(@.a =~ "…")]``) runs in :mod:`regex`, its timeout the query's
  :data:`REGEX_SECONDS` in all and the GIL released (Python's :mod:`re` holds every thread
  of the server while ``(a|aa)+b`` takes it exponential time);
- a query visits or matches at most :data:`NODES` values (``$..*`` on a deep document,
  ``$[*]`` on a long array), each counted before it is made;
- an HTTP API's ``$request.body.name`` has no deep scan and no filters, and
  EventBridge's syntax is dot notation, array indexes and wildcards ("Amazon EventBridge
  input transformation", https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-transform-target-input.html:
  "EventBridge does not support all JSON Path syntax"): a filter or a deep scan is refused.

Sources: Step Functions' "Using JSONPath paths"
(https://docs.aws.amazon.com/step-functions/latest/dg/amazon-states-language-paths.html:
paths follow JsonPath syntax, reference paths a subset of it); API Gateway's mapping
templates take "a JSONPath expression" (Goessner's JSONPath, evaluated as Jayway JsonPath
evaluates it: https://github.com/json-path/JsonPath), which has filters, ``=~``, deep scan,
slices and functions but no arithmetic.
"""

from __future__ import annotations

import contextvars
import copy
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import regex
from jsonpath_ng.ext.arithmetic import Operation
from jsonpath_ng.ext.filter import And, Expression, Filter, Or
from jsonpath_ng.ext.parser import parse as parse_extended
from jsonpath_ng.jsonpath import (
    Child,
    DatumInContext,
    Descendants,
    Fields,
    Index,
    JSONPath,
    Root,
    Slice,
    This,
    Wildcard,
)

__all__ = [
    "EVENTBRIDGE",
    "HTTP_API",
    "JAYWAY",
    "NODES",
    "REGEX_SECONDS",
    "BoundedPath",
    "Dialect",
    "JsonPathRefused",
    "find",
    "parse",
]

NODES: Final = 262_144
"""The values one query may visit or match: twice the most a 256 KB document (Step
Functions' input, an EventBridge event) can hold, so any query of one such document fits;
a 10 MB API Gateway body can hold more, but a template walks at most 1,000 of them."""
REGEX_SECONDS: Final = 1.0
"""The time one query's regular expressions may take in all (the local cloud's bound)."""


class JsonPathRefused(ValueError):
    """An expression the service does not evaluate (not JSONPath, or syntax outside its
    :class:`Dialect`), or a query past a bound of this module. The message names what."""


@dataclass(frozen=True)
class Dialect:
    """The JSONPath syntax a service documents.

    Args:
        name: the service's words for it, for messages.
        nodes: the jsonpath_ng node classes it allows (exact classes: a subclass of an
            allowed one, such as jsonpath_ng's ```sorted```, is not allowed).
    """

    name: str
    nodes: frozenset[type[JSONPath]]


JAYWAY: Final = Dialect(
    "Jayway JsonPath (API Gateway, Step Functions)",
    frozenset(
        {Root, This, Fields, Index, Slice, Wildcard, Child, Descendants, Filter, Expression}
        | {And, Or}
    ),
)
"""Names, indexes, slices, wildcards, deep scan and filters of comparisons, existence and
``=~``."""
HTTP_API: Final = Dialect(
    "HTTP APIs' JSON path (no recursive descent, no filters)",
    frozenset({Root, Fields, Index, Slice, Wildcard, Child}),
)
"""An HTTP API's ``$request.body.name`` ("Transforming API requests and responses for HTTP
APIs": "Recursive descent ($request.body..name) and filter expressions (?(expression))
aren't supported")."""
EVENTBRIDGE: Final = Dialect(
    "EventBridge's JSON path (dot notation, array indexes, wildcards)",
    frozenset({Root, Fields, Index, Wildcard, Child}),
)

_COMPARISONS: Final = frozenset({None, "!", "==", "=", "!=", "<", "<=", ">", ">=", "=~"})
_NAMED: Final[dict[str, str]] = {
    Operation.__name__: "arithmetic",
    Descendants.__name__: "a deep scan (..)",
    Filter.__name__: "a filter [?(...)]",
    Slice.__name__: "a slice [m:n]",
    "Where": "`where`",
    "WhereNot": "`wherenot`",
    "_Union": "a union (|)",
    "_Intersect": "an intersection (&)",
}
"""How a message names a node (by class name); any other as it is written."""


@dataclass
class _Budget:
    """What one query may still do."""

    expression: str
    nodes_left: int = NODES
    regex_deadline: float = field(default_factory=lambda: time.monotonic() + REGEX_SECONDS)

    def spend(self, count: int) -> None:
        self.nodes_left -= count
        if self.nodes_left < 0:
            raise JsonPathRefused(
                f"the JSONPath {self.expression[:200]!r} visits or matches more than "
                f"{NODES:,} values, the local cloud's bound on one query"
            )


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "jsonpath_budget", default=None
)


def _spend(count: int) -> None:
    budget = _BUDGET.get()
    if budget is None:  # pragma: no cover - the nodes are reached through BoundedPath only
        raise RuntimeError("a bounded JSONPath node evaluated outside BoundedPath.find")
    budget.spend(count)


def _children(datum: Any) -> int:
    value = datum.value if isinstance(datum, DatumInContext) else datum
    return len(value) if isinstance(value, list | tuple | dict) else 0


class _Wildcard(Wildcard):
    def find(self, datum: Any) -> list[DatumInContext]:
        _spend(_children(datum))
        return super().find(datum)


class _Slice(Slice):
    def find(self, datum: Any) -> list[DatumInContext]:
        _spend(_children(datum))
        return super().find(datum)


class _Filter(Filter):
    def find(self, datum: Any) -> list[DatumInContext]:
        _spend(_children(datum))
        return super().find(datum)  # type: ignore[no-untyped-call,no-any-return]


class _Descendants(Descendants):
    """jsonpath_ng's deep scan (depth first, in document order), each value counted
    before it is wrapped (jsonpath_ng wraps every child of a value at once)."""

    def find(self, datum: Any) -> list[DatumInContext]:
        found: Any = self.left.find(datum)
        stack: list[DatumInContext] = (found if isinstance(found, list) else [found])[::-1]
        matches: list[DatumInContext] = []
        while stack:
            node = stack.pop()
            matches.extend(self.right.find(node))
            value = node.value
            if isinstance(value, list | dict):
                _spend(len(value))
                items = enumerate(value) if isinstance(value, list) else value.items()
                path: Callable[[Any], JSONPath] = Index if isinstance(value, list) else Fields
                children = [DatumInContext(v, context=node, path=path(k)) for k, v in items]
                stack.extend(reversed(children))
        return matches


class _Matching(Expression):
    """``target =~ "pattern"``: the values ``target`` finds that are strings the pattern
    is found in (jsonpath_ng's ``re.search``), run in :mod:`regex` within the query's
    time."""

    def find(self, datum: Any) -> list[DatumInContext]:
        found = self.target.find(DatumInContext.wrap(datum))
        return [m for m in found if isinstance(m.value, str) and _search(self.value, m.value)]


def _search(pattern: Any, text: str) -> bool:
    budget = _BUDGET.get()
    assert budget is not None  # reached through BoundedPath only
    if not isinstance(pattern, str):
        raise JsonPathRefused(f"=~ takes a pattern in quotes, not {pattern!r}")
    left = max(budget.regex_deadline - time.monotonic(), 0.001)
    try:
        return regex.search(pattern, text, timeout=left, concurrent=True) is not None
    except TimeoutError as exc:
        raise JsonPathRefused(
            f"the regular expression {pattern[:80]!r} of the JSONPath "
            f"{budget.expression[:200]!r} ran past {REGEX_SECONDS:g} s, the local cloud's "
            "bound on one query's regular expressions"
        ) from exc
    except regex.error as exc:
        raise JsonPathRefused(f"{pattern[:80]!r} is not a regular expression ({exc})") from exc


_BOUNDED: Final[dict[type[JSONPath], type[JSONPath]]] = {
    Wildcard: _Wildcard,
    Slice: _Slice,
    Filter: _Filter,
    Descendants: _Descendants,
}


def _bounded(node: JSONPath, dialect: Dialect, expression: str) -> JSONPath:
    """A copy of the parsed ``node`` whose walking nodes are bounded.

    Raises:
        JsonPathRefused: a node outside ``dialect``.
    """
    kind = type(node)
    if kind not in dialect.nodes:
        what = _NAMED.get(kind.__name__) or str(node)
        raise JsonPathRefused(
            f"the JSONPath {expression[:200]!r} uses {what}, which {dialect.name} does not have"
        )
    made = copy.copy(node)

    def inner(child: JSONPath) -> JSONPath:
        return _bounded(child, dialect, expression)

    if isinstance(made, Child | Descendants):
        made.left, made.right = inner(made.left), inner(made.right)
    elif isinstance(made, Filter):
        made.expressions = [inner(e) for e in made.expressions]
    elif isinstance(made, And | Or):
        made.operands = [inner(o) for o in made.operands]
    elif isinstance(made, Expression):
        if made.op not in _COMPARISONS:
            raise JsonPathRefused(f"the JSONPath {expression[:200]!r} compares with {made.op}")
        made.target = inner(made.target)
        if isinstance(made.value, JSONPath):
            made.value = inner(made.value)
        if made.op == "=~":
            made.__class__ = _Matching
    if kind in _BOUNDED:
        made.__class__ = _BOUNDED[kind]
    return made


@dataclass(frozen=True)
class BoundedPath:
    """A parsed JSONPath, bounded (:func:`parse`): ``find`` as jsonpath_ng's."""

    expression: str
    tree: JSONPath

    def find(self, data: Any) -> list[DatumInContext]:
        """The matches of the expression in ``data`` (jsonpath_ng's ``DatumInContext``).

        Raises:
            JsonPathRefused: past :data:`NODES` values or :data:`REGEX_SECONDS`, or a
                pattern that is not a regular expression.
        """
        token = _BUDGET.set(_Budget(self.expression))
        try:
            found: Any = self.tree.find(data)
        finally:
            _BUDGET.reset(token)
        return found if isinstance(found, list) else [found]


@functools.lru_cache(maxsize=256)
def parse(expression: str, dialect: Dialect = JAYWAY) -> BoundedPath:
    """``expression`` parsed, checked against ``dialect`` and bounded.

    Raises:
        JsonPathRefused: not a string, not JSONPath, or syntax ``dialect`` does not have
            (named: "uses arithmetic, which Jayway JsonPath … does not have").
    """
    if not isinstance(expression, str):
        raise JsonPathRefused(f"a JSONPath is a string, not {type(expression).__name__}")
    try:
        tree = parse_extended(expression)
    except Exception as exc:  # noqa: BLE001 - jsonpath_ng raises several classes, some bare
        raise JsonPathRefused(f"{expression[:200]!r} is not a JSONPath ({exc})") from exc
    return BoundedPath(expression, _bounded(tree, dialect, expression))


def find(expression: str, document: Any, dialect: Dialect = JAYWAY) -> list[Any]:
    """The values ``expression`` selects in ``document`` (JSON values), in document order.

    Raises:
        JsonPathRefused: as :func:`parse` and :meth:`BoundedPath.find` do.
    """
    return [match.value for match in parse(expression, dialect).find(document)]
