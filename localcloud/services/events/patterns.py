"""EventBridge's event patterns, as AWS matches them.

moto 5.2.5 differs from AWS here, and the patches make it as AWS documents it: moto does
not look into arrays of objects (``"detail": {"items": [{"sku": "a"}]}``); EventBridge
matches a pattern field against every value of such an array ("Arrays in Amazon
EventBridge event patterns"). A boolean is not a number to a ``numeric`` filter.
``TestEventPattern`` answers nothing in moto; here it answers ``{"Result": …}`` with the
same matcher. A ``wildcard`` filter is matched in linear time (:func:`wildcard_match`):
moto turned each ``*`` into a regular expression's ``.*``, and a pattern of 13 stars
against a long value backtracked for minutes, holding the interpreter lock, so the whole
server froze (issue 47).
"""

from __future__ import annotations

import json
from typing import Any, Final

from moto.events.models import EventPattern, EventsBackend
from moto.events.responses import EventsHandler
from moto.events.utils import PAGINATION_MODEL
from moto.utilities.paginator import paginate

from localcloud.patches.registry import Method, Patch


def flatten(node: Any, prefix: str = "", result: dict[str, Any] | None = None) -> dict[str, Any]:
    """The event's leaves by dotted path; an array of objects contributes every value of
    each object's fields to the path (``detail.items.sku`` → ``["a", "b"]``), as
    EventBridge matches arrays."""
    if result is None:
        result = {}
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{prefix}.{key}" if prefix else key
            if isinstance(value, dict) and value:
                flatten(value, path, result)
            elif isinstance(value, list) and any(isinstance(v, dict) for v in value):
                for item in value:
                    if isinstance(item, dict):
                        for leaf, found in flatten(item, path).items():
                            known = result.setdefault(leaf, [])
                            if not isinstance(known, list):
                                known = result[leaf] = [known]
                            known.extend(found if isinstance(found, list) else [found])
                    else:
                        result.setdefault(path, [])
                        if isinstance(result[path], list):
                            result[path].append(item)
            else:
                result[path] = value
    return result


def _segments(pattern: str) -> list[str]:
    """The literal text between a wildcard pattern's unescaped ``*`` (``\\*`` is a star,
    ``\\\\`` a backslash: "Wildcard matching" in "Content filtering in Amazon
    EventBridge event patterns")."""
    segments, current, i = [], [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "*\\":
            current.append(pattern[i + 1])
            i += 2
            continue
        if c == "*":
            segments.append("".join(current))
            current = []
        else:
            current.append(c)
        i += 1
    segments.append("".join(current))
    return segments


def wildcard_match(item: Any, pattern: str) -> bool:
    """Whether ``item`` (a string) matches an EventBridge ``wildcard`` pattern, each ``*``
    any run of characters: the first literal a prefix, the last a suffix, the ones between
    found in order, leftmost first (which is enough: a later match can only leave less
    room), in time linear in the value's length times the pattern's."""
    if not isinstance(item, str):
        return False
    segments = _segments(pattern)
    if len(segments) == 1:
        return item == segments[0]
    first, *middle, last = segments
    if len(item) < len(first) + len(last) or not item.startswith(first):
        return False
    if not item.endswith(last):
        return False
    position, end = len(first), len(item) - len(last)
    for segment in middle:
        found = item.find(segment, position, end)
        if found < 0:
            return False
        position = found + len(segment)
    return True


def _wildcard(_original: Method) -> Method:
    return staticmethod(wildcard_match)


def _rules_by_prefix(_original: Method) -> Method:
    @paginate(pagination_model=PAGINATION_MODEL)
    def list_rules(
        self: EventsBackend, prefix: str | None = None, event_bus_arn: str | None = None
    ) -> list[Any]:
        bus = self._get_event_bus(self._normalize_event_bus_arn(event_bus_arn))
        return [rule for name, rule in bus.rules.items() if name.startswith(prefix or "")]

    return list_rules


def _matches_event(_original: Method) -> Method:
    def matches_event(self: EventPattern, event: Any) -> bool:
        pattern = self.get_pattern()
        if not pattern:
            return True
        return bool(self._does_event_match(flatten(json.loads(json.dumps(event))), pattern))

    return matches_event


def _item_matches(original: Method) -> Method:
    def _does_item_match_filters(self: EventPattern, item: Any, filters: list[Any]) -> bool:
        numeric = [f for f in filters if isinstance(f, dict) and "numeric" in f]
        others = [f for f in filters if f not in numeric]
        if others and original(self, item, others):
            return True
        values = item if isinstance(item, list) else [item]
        numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        return bool(numeric and numbers and original(self, numbers, numeric))

    return _does_item_match_filters


def _test_event_pattern(_original: Method) -> Method:
    def test_event_pattern(self: EventsHandler) -> str:
        pattern = EventPattern.load(self._get_param("EventPattern"))
        try:
            event = json.loads(self._get_param("Event"))
        except (TypeError, ValueError):
            from moto.events.exceptions import InvalidEventPatternException

            raise InvalidEventPatternException(reason="Event is not valid JSON") from None
        return json.dumps({"Result": pattern.matches_event(event)})

    return test_event_pattern


PATCHES: Final = (
    Patch(
        EventPattern,
        "matches_event",
        ("self", "event"),
        _matches_event,
        "a pattern field matches every value of an array of objects",
    ),
    Patch(
        EventPattern,
        "_does_item_match_filters",
        ("self", "item", "filters"),
        _item_matches,
        "a numeric filter matches numbers only, not booleans",
    ),
    Patch(
        EventPattern,
        "_wildcard_match",
        ("item", "pattern"),
        _wildcard,
        "a wildcard filter matches in linear time (moto's regular expression backtracked "
        "for minutes on a pattern of many stars)",
    ),
    Patch(
        EventsBackend,
        "list_rules",
        ("self", "prefix", "event_bus_arn"),
        _rules_by_prefix,
        "ListRules' NamePrefix is a prefix (moto compiled it into a regular expression, "
        "which could freeze the server)",
    ),
    Patch(
        EventsHandler,
        "test_event_pattern",
        ("self",),
        _test_event_pattern,
        "TestEventPattern answers whether the event matches",
    ),
)

__all__ = ["PATCHES", "flatten", "wildcard_match"]
