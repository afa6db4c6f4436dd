"""Racing conditional writes made certain to overlap, for the tests of DynamoDB's atomic
conditional write on the local cloud.

moto's ``Table.put_item`` reads the item it may replace (``Table.get_item``), evaluates
the ``ConditionExpression`` against it, then stores the new item: two Python steps. Left to
the scheduler, two racing writers meet in that gap in a few rounds out of a hundred (with
the thread switch interval shortened to 10 µs: two winners in 22 of 150 rounds of 64
writers). :func:`widened_check_to_write` holds every writer in the gap for a while, so
that, unless something serialises the whole write as DynamoDB does
(:mod:`localcloud.services.dynamodb.patches`), every writer of a round reads "no item"
and wins: a round of a few writers proves what thousands of unforced rounds suggested.
"""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator
from typing import Any, Final

from moto.dynamodb.models.table import Table

GAP_S: Final = 0.05
"""How long each writer waits between its read of the current item and its store
(seconds): far longer than the few milliseconds a loopback request takes to reach the
server, so the writers of one round all read before the first stores."""


@contextlib.contextmanager
def widened_check_to_write(table_name: str, gap_s: float = GAP_S) -> Iterator[None]:
    """While open, every read of an item of ``table_name`` inside the emulator (the read a
    conditional ``PutItem`` checks its condition against, and ``GetItem``'s) returns
    after ``gap_s`` seconds; other tables are untouched. Patches :class:`Table` for the
    whole process: only for a test that owns the table name."""
    original = Table.get_item

    @functools.wraps(original)
    def slow_get_item(self: Table, *args: Any, **kwargs: Any) -> Any:
        found = original(self, *args, **kwargs)
        if self.name == table_name:
            time.sleep(gap_s)
        return found

    Table.get_item = slow_get_item  # type: ignore[method-assign]
    try:
        yield
    finally:
        Table.get_item = original  # type: ignore[method-assign]
