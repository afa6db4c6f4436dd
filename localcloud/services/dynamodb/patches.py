"""moto's DynamoDB, made atomic as DynamoDB is.

DynamoDB evaluates a ``ConditionExpression`` and applies the write as one atomic step: of
many concurrent ``PutItem`` calls with ``attribute_not_exists(id)`` on one key, exactly
one succeeds. moto checks the condition and then stores the item in two Python steps with
no lock, so concurrent requests to the local server can both pass the check (seen with a
short thread switch interval: two winners in 22 of 150 rounds). Each item-writing method,
and each read that walks a table's items, runs behind one process-wide lock;
``localcloud/tests/test_dynamodb_writes.py`` races writers with and without it.

``DynamoHandler.put_item``, ``update_item`` and ``delete_item`` (the API's handlers, which
see the request): every such call is told to the write listeners as a :class:`WriteCall`
(the table, the key, the condition, ``Accepted`` or the error, the item before and after,
read under the same lock as the write, and the caller's access key id), whoever made it:
the live view's rows of DynamoDB writes (:mod:`localcloud.state.history`).
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.responses import DynamoHandler

from localcloud.patches.registry import Method, Patch
from localcloud.text import say

LOCK: Final = threading.RLock()


def _atomic(original: Method) -> Method:
    @functools.wraps(original)
    def atomic(self: DynamoDBBackend, *args: Any, **kwargs: Any) -> Any:
        with LOCK:
            return original(self, *args, **kwargs)

    return atomic


@dataclass(frozen=True)
class WriteCall:
    """One ``PutItem``, ``UpdateItem`` or ``DeleteItem`` as DynamoDB saw it.

    Attributes:
        at: epoch seconds.
        operation: ``PutItem``, ``UpdateItem`` or ``DeleteItem``.
        table: the table name.
        key: the item's key attributes (DynamoDB JSON).
        condition: the ``ConditionExpression`` with its ``#names`` and ``:values``
            substituted, or ``None`` (an unconditional write).
        outcome: ``Accepted``, or the error's code (``ConditionalCheckFailedException``).
        before: the item before the call (DynamoDB JSON), ``None`` if there was none.
        after: the item after the call, ``None`` if there is none.
        access_key: the access key id the call was signed with (who called).
    """

    at: float
    operation: str
    table: str
    key: Mapping[str, Any]
    condition: str | None
    outcome: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    access_key: str | None


WriteListener = Callable[[WriteCall], None]
WRITE_LISTENERS: list[WriteListener] = []
"""Told every write call, in the request's thread (the account's history)."""


def _substituted(condition: str | None, body: Mapping[str, Any]) -> str | None:
    """The condition as a reader should see it: ``#names`` and ``:values`` in place (a
    value as its plain string: ``:one`` with ``{"N": "1"}`` reads ``1``)."""
    if not condition:
        return None
    names = body.get("ExpressionAttributeNames") or {}
    values = body.get("ExpressionAttributeValues") or {}
    # longest first, so that ``:a`` does not replace the start of ``:ab``
    for placeholder in sorted(names, key=len, reverse=True):
        condition = condition.replace(placeholder, str(names[placeholder]))
    for placeholder in sorted(values, key=len, reverse=True):
        value = values[placeholder]
        shown = next(iter(value.values())) if isinstance(value, dict) and len(value) == 1 else value
        condition = condition.replace(placeholder, str(shown))
    return condition


def _stored(handler: DynamoHandler, table: str, key: Mapping[str, Any]) -> dict[str, Any] | None:
    """The item stored under ``key`` (DynamoDB JSON), ``None`` if none or unreadable."""
    try:
        found = handler.dynamodb_backend.get_item(table, dict(key))
    except Exception:  # noqa: BLE001 - no table, a bad key: the call itself says so
        return None
    return None if found is None else dict(found.to_json()["Attributes"])


def _key_of(handler: DynamoHandler, table: str, attributes: Mapping[str, Any]) -> dict[str, Any]:
    """The key attributes among ``attributes`` for ``table`` (all of them if unknown)."""
    try:
        found = handler.dynamodb_backend.get_table(table)
    except Exception:  # noqa: BLE001 - no table: the call itself says so
        return dict(attributes)
    names = (found.hash_key_attr, found.range_key_attr)
    return {name: attributes[name] for name in names if name and name in attributes}


def _error_code(exc: Exception) -> str:
    """moto's error type without its namespace (``…#ConditionalCheckFailedException``)."""
    return str(getattr(exc, "error_type", type(exc).__name__)).rsplit("#", 1)[-1]


def _tell(
    handler: DynamoHandler,
    operation: str,
    table: str,
    key: Mapping[str, Any],
    body: Mapping[str, Any],
    outcome: str,
    before: Mapping[str, Any] | None,
) -> None:
    """Tell the write listeners; never let them change the call's own answer (a write
    that was applied must not come back as a server error, or a caller's retry would
    meet its own first write)."""
    try:
        call = WriteCall(
            at=time.time(),
            operation=operation,
            table=table,
            key=key,
            condition=_substituted(body.get("ConditionExpression"), body),
            outcome=outcome,
            before=before,
            after=_stored(handler, table, key),
            access_key=handler.get_access_key(),
        )
        for listener in list(WRITE_LISTENERS):
            listener(call)
    except Exception as exc:  # noqa: BLE001 - the record is lost, the write's answer is not
        say(f"[dynamodb] a {operation} on {table} was not recorded: {type(exc).__name__}: {exc}")


def _recorded(operation: str) -> Callable[[Method], Method]:
    def make(original: Method) -> Method:
        def handle(self: DynamoHandler) -> Any:
            if not WRITE_LISTENERS:
                return original(self)
            body = self.body
            table = str(body.get("TableName", ""))
            given = body.get("Item" if operation == "PutItem" else "Key")
            if not isinstance(given, dict):  # malformed: DynamoDB's own validation answers
                return original(self)
            key = _key_of(self, table, given)
            outcome = "Accepted"
            with LOCK:  # before, the write and after as one step
                before = _stored(self, table, key)
                try:
                    return original(self)
                except Exception as exc:
                    outcome = _error_code(exc)
                    raise
                finally:
                    _tell(self, operation, table, key, body, outcome, before)

        return handle

    return make


PATCHES: Final = tuple(
    Patch(
        DynamoDBBackend,
        name,
        ("self", first) if first else ("self",),
        _atomic,
        "a conditional write must be atomic under concurrent writers, and a read must not "
        "walk a table while a write changes it, as on DynamoDB",
    )
    for name, first in (
        ("put_item", "table_name"),
        ("update_item", "table_name"),
        ("delete_item", "table_name"),
        ("transact_write_items", "transact_items"),
        ("batch_write_item", None),
        # reads too: moto walks a table's items in Python while a write may add one
        # ("dictionary changed size during iteration"); the live view reads every second
        ("get_item", "table_name"),
        ("query", "table_name"),
        ("scan", "table_name"),
        ("describe_table", "name"),
    )
) + tuple(
    Patch(
        DynamoHandler,
        name,
        ("self",),
        _recorded(operation),
        "the live view shows every write as DynamoDB decided it, for any caller's code",
    )
    for name, operation in (
        ("put_item", "PutItem"),
        ("update_item", "UpdateItem"),
        ("delete_item", "DeleteItem"),
    )
)
