"""EventBridge's event patterns, as AWS matches them.

moto 5.2.5 differs from AWS here, and the patches make it as AWS documents it: moto does
not look into arrays of objects (``"detail": {"items": [{"sku": "a"}]}``); EventBridge
matches a pattern field against every value of such an array ("Arrays in Amazon
EventBridge event patterns"). A boolean is not a number to a ``numeric`` filter.
``TestEventPattern`` answers nothing in moto; here it answers ``{"Result": …}`` with the
same matcher.
"""

from __future__ import annotations

import json
from typing import Any, Final

from moto.events.models import EventPattern
from moto.events.responses import EventsHandler

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
        EventsHandler,
        "test_event_pattern",
        ("self",),
        _test_event_pattern,
        "TestEventPattern answers whether the event matches",
    ),
)

__all__ = ["PATCHES", "flatten"]
