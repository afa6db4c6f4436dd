"""moto's CloudWatch Logs, filtering as AWS filters.

moto 5.2.5 applies a ``FilterLogEvents`` pattern in one place,
``moto.logs.models.LogStream.filter_log_events``, and honours only plain and quoted
terms: a JSON pattern (``{ $.level = "ERROR" }``) gives every event. The patch asks
moto for the events of the time window (its empty pattern keeps them all, checked before
installing) and applies the pattern with :mod:`localcloud.services.logs.filter_pattern`; a pattern
the language refuses is ``InvalidParameterException`` (HTTP 400) naming it.
"""

from __future__ import annotations

import functools
from typing import Any, Final

from moto.logs.exceptions import InvalidParameterException
from moto.logs.models import LogStream
from moto.logs.utils import EventMessageFilter

from localcloud.patches.registry import Method, Patch, PatchMismatch
from localcloud.services.logs.filter_pattern import FilterPatternError, parse


def _filtered(original: Method) -> Method:
    @functools.wraps(original)
    def filter_log_events(
        self: Any, start_time: int, end_time: int, filter_pattern: str | None
    ) -> list[dict[str, Any]]:
        try:
            compiled = parse(filter_pattern or "")
        except FilterPatternError as error:
            raise InvalidParameterException(
                msg=f"Invalid filter pattern {filter_pattern!r}: {error}"
            ) from error
        events: list[dict[str, Any]] = original(self, start_time, end_time, "")
        return [event for event in events if compiled.matches(event["message"])]

    return filter_log_events


def empty_pattern_keeps_every_event() -> None:
    """The patch relies on moto's empty pattern keeping every event of the window.

    Raises:
        PatchMismatch: it no longer does.
    """
    if not EventMessageFilter("").matches("any message"):
        raise PatchMismatch(
            "moto changed: its empty filter pattern no longer matches every event, which "
            "the patched LogStream.filter_log_events relies on"
        )


PATCHES: Final = (
    Patch(
        LogStream,
        "filter_log_events",
        ("self", "start_time", "end_time", "filter_pattern"),
        _filtered,
        "FilterLogEvents must apply the whole filter-pattern language, JSON patterns too",
    ),
)
CHECKS: Final = (empty_pattern_keeps_every_event,)
