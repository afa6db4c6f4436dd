"""Make moto's DynamoDB writes atomic, as DynamoDB's are.

DynamoDB evaluates a ``ConditionExpression`` and applies the write as one atomic step:
of many concurrent ``PutItem`` calls with ``attribute_not_exists(id)`` on one key,
exactly one succeeds. moto checks the condition and then stores the item in two Python
steps with no lock, so concurrent requests to the local cloud's server can both pass
the check (seen with a short thread switch interval: two winners in 22 of 150 rounds).
:func:`install` serialises moto's item writes behind one lock so the local cloud keeps
DynamoDB's guarantee; ``tests/test_concurrency.py`` shows the difference.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any

from moto.dynamodb.models import DynamoDBBackend

WRITES = ("put_item", "update_item", "delete_item", "transact_write_items", "batch_write_item")
_LOCK = threading.RLock()
_ORIGINALS: dict[str, Callable[..., Any]] = {}


def install() -> None:
    """Wrap each of moto's item-writing methods in one process-wide lock (idempotent)."""
    for name in WRITES:
        if name in _ORIGINALS:
            continue
        original = getattr(DynamoDBBackend, name)
        _ORIGINALS[name] = original

        @functools.wraps(original)
        def atomic(
            self: DynamoDBBackend, *args: Any, _original: Any = original, **kwargs: Any
        ) -> Any:
            with _LOCK:
                return _original(self, *args, **kwargs)

        setattr(DynamoDBBackend, name, atomic)


def uninstall() -> None:
    """Restore moto's own methods (for the test that shows why the lock is needed)."""
    for name, original in _ORIGINALS.items():
        setattr(DynamoDBBackend, name, original)
    _ORIGINALS.clear()


def installed() -> bool:
    return set(_ORIGINALS) == set(WRITES)
