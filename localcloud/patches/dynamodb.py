"""moto's DynamoDB, made atomic as DynamoDB is.

DynamoDB evaluates a ``ConditionExpression`` and applies the write as one atomic step: of
many concurrent ``PutItem`` calls with ``attribute_not_exists(id)`` on one key, exactly
one succeeds. moto checks the condition and then stores the item in two Python steps with
no lock, so concurrent requests to the local server can both pass the check (seen with a
short thread switch interval: two winners in 22 of 150 rounds). Each item-writing method
runs behind one process-wide lock; ``tests/localcloud/test_concurrency.py`` shows the
difference.
"""

from __future__ import annotations

import functools
import threading
from typing import Any, Final

from moto.dynamodb.models import DynamoDBBackend

from localcloud.patches.registry import Method, Patch

LOCK: Final = threading.RLock()


def _atomic(original: Method) -> Method:
    @functools.wraps(original)
    def atomic(self: DynamoDBBackend, *args: Any, **kwargs: Any) -> Any:
        with LOCK:
            return original(self, *args, **kwargs)

    return atomic


PATCHES: Final = tuple(
    Patch(
        DynamoDBBackend,
        name,
        ("self", first) if first else ("self",),
        _atomic,
        "a conditional write must be atomic under concurrent writers, as on DynamoDB",
    )
    for name, first in (
        ("put_item", "table_name"),
        ("update_item", "table_name"),
        ("delete_item", "table_name"),
        ("transact_write_items", "transact_items"),
        ("batch_write_item", None),
    )
)
