"""What the account did, as it happened: every invocation and every write to DynamoDB.

The local cloud records each invocation the Lambda runtime runs (:func:`History.record` is a
runtime listener), and each ``PutItem``, ``UpdateItem`` and ``DeleteItem`` as DynamoDB
decided it, whoever's code made it (:func:`History.record_write`, which the account makes
a write listener of :mod:`localcloud.services.dynamodb.patches`), naming the function, request and
message when one of the account's functions made it. The live view and ``status`` keep
all of it after the log groups, queues or tables it came from are deleted (a
cleanup step). Memory only: it ends with the server. A project that reads more out of
its functions' invocations (their log lines) adds a listener of its own, and pages its
rows with :func:`page`.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Final, Protocol

from localcloud.services.lambda_.runtime import Function, Invocation, by_access_key, invoking


class WriteCall(Protocol):
    """One write as DynamoDB saw it (the fields of
    :class:`localcloud.services.dynamodb.patches.WriteCall`, which the account hands in)."""

    @property
    def at(self) -> float: ...
    @property
    def operation(self) -> str: ...
    @property
    def table(self) -> str: ...
    @property
    def key(self) -> Mapping[str, Any]: ...
    @property
    def condition(self) -> str | None: ...
    @property
    def outcome(self) -> str: ...
    @property
    def before(self) -> Mapping[str, Any] | None: ...
    @property
    def after(self) -> Mapping[str, Any] | None: ...
    @property
    def access_key(self) -> str | None: ...


@dataclass(frozen=True)
class InvocationRecord:
    """One invocation: which function, when (epoch s), what it was given, how it ended."""

    at: float
    function: str
    request_id: str
    given: str
    result: str
    returned: str
    duration_ms: float


@dataclass(frozen=True)
class WriteRecord:
    """One ``PutItem``, ``UpdateItem`` or ``DeleteItem`` as DynamoDB decided it.

    ``key`` is the item's key as text; ``before`` and ``after`` the whole item (plain
    JSON: ``{"quantity": 4}``), ``None`` when there was none; ``outcome`` is ``Accepted``
    or the error code (``ConditionalCheckFailedException``). ``function``, ``request_id``
    and ``source`` (``message <id>``) name the invocation that made the call, if one of
    the account's functions made it; otherwise ``function`` is ``None`` (the AWS CLI, a
    test, a script).
    """

    at: float
    table: str
    key: str
    operation: str
    condition: str | None
    outcome: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    function: str | None
    request_id: str | None
    source: str | None
    tag: str | None = None
    """What the caller said the write is, when it signed with a tagged client
    (:meth:`History.tag`): a lab's setup (``"setup"``), not the code under test."""


PAGE_SIZE = 50
"""Rows of one page of a history list (writes, invocations) in the live view and
``status``."""


def page(
    rows: Sequence[Any], number: int, size: int = PAGE_SIZE
) -> tuple[list[Any], dict[str, int]]:
    """Page ``number`` (from 1) of ``rows`` (oldest first), newest first, as JSON-ready
    dicts of its dataclass rows, and where it stands: ``{"page", "count", "total"}``. A
    page past the last is empty; a page copies at most ``size`` rows, whatever ``rows``
    holds."""
    total = len(rows)
    number = max(1, number)
    end = total - (number - 1) * size  # newest first: count from the end
    picked = [rows[i] for i in range(end - 1, max(0, end - size) - 1, -1)]
    return [asdict(row) for row in picked], {
        "page": number,
        "count": max(1, -(-total // size)),
        "total": total,
    }


TAGGED_SHOWN = 50
"""Tagged writes kept (and shown apart), at most: a setup writes a handful."""


def tag_access_key(tag: str) -> str:
    """The access key id a client tagged ``tag`` signs with (20 characters, ``AKIA…``, as
    AWS's long-term keys; apart from the functions' ``ASIA…`` keys)."""
    return "AKIA" + hashlib.sha256(f"tag:{tag}".encode()).hexdigest()[:16].upper()


class History:
    """The last ``limit`` invocations and writes, newest last (thread-safe).

    Writes a caller tagged (a lab's setup, a fixture's seed data: :meth:`tag`) are kept
    apart, in :attr:`tagged`, so that :attr:`writes` holds the decisions of the code
    under test only.
    """

    def __init__(self, limit: int = 10_000) -> None:
        self._lock = threading.Lock()
        self.invocations: deque[InvocationRecord] = deque(maxlen=limit)
        self.writes: deque[WriteRecord] = deque(maxlen=limit)
        self.tagged: deque[WriteRecord] = deque(maxlen=TAGGED_SHOWN)
        self._tags: dict[str, str] = {}

    def tag(self, tag: str) -> str:
        """The access key id whose writes are recorded as ``tag`` (sign a client with it:
        :meth:`localcloud.account.LocalCloud.client`'s ``tag``)."""
        key = tag_access_key(tag)
        with self._lock:
            self._tags[key] = tag
        return key

    def record(self, function: Function, event: Any, invocation: Invocation) -> None:
        """The runtime listener: keep the invocation."""
        now = time.time()
        entry = InvocationRecord(
            at=now,
            function=function.name,
            request_id=invocation.request_id,
            given=_given(event),
            result=_result(invocation),
            returned=_returned(invocation),
            duration_ms=round(invocation.duration_ms, 1),
        )
        with self._lock:
            self.invocations.append(entry)

    def record_write(self, call: WriteCall) -> None:
        """The write listener: keep the call, with the invocation that made it."""
        function = by_access_key(call.access_key)
        if function is not None and function.current is None:
            # Signed as a function, outside its invocations: functions run in-process
            # share this process's boto3 default session, whose credentials are those
            # of the first that made a client, so the caller is the one invoking now.
            function = invoking() or function
        current = function.current if function is not None else None
        record = WriteRecord(
            at=call.at,
            table=call.table,
            key=", ".join(str(plain(v)) for v in call.key.values()),
            operation=call.operation,
            condition=call.condition,
            outcome=call.outcome,
            before=None if call.before is None else plain_item(call.before),
            after=None if call.after is None else plain_item(call.after),
            function=function.name if function is not None else None,
            request_id=current[0] if current is not None else None,
            source=_message_of(current[1], call.key) if current is not None else None,
            tag=self._tags.get(call.access_key or "") if function is None else None,
        )
        with self._lock:
            (self.writes if record.tag is None else self.tagged).append(record)

    def pages(
        self, *, writes: int = 1, invocations: int = 1, size: int = PAGE_SIZE
    ) -> dict[str, Any]:
        """One page of each list (:func:`page`): ``{"writes": [...], "invocations":
        [...], "pages": {"writes": {"page", "count", "total"}, "invocations": {...}},
        "tagged_writes": [...]}`` (the tagged writes, newest first, all of them)."""
        shown: dict[str, Any] = {"pages": {}}
        with self._lock:
            shown["tagged_writes"] = [asdict(row) for row in reversed(self.tagged)]
            for name, rows, number in (
                ("writes", self.writes, writes),
                ("invocations", self.invocations, invocations),
            ):
                shown[name], shown["pages"][name] = page(rows, number, size)
        return shown


def _result(invocation: Invocation) -> str:
    """``ok``, ``<n> listed`` (a partial batch response), or the error type."""
    if invocation.error_type:
        return invocation.error_type
    payload = invocation.payload
    failures = payload.get("batchItemFailures") if isinstance(payload, Mapping) else None
    return f"{len(failures)} listed" if isinstance(failures, list) and failures else "ok"


def _returned(invocation: Invocation) -> str:
    """What the invocation returned, as short JSON (an error's envelope included)."""
    text = json.dumps(invocation.payload, default=str, sort_keys=True)
    return text if len(text) <= 200 else f"{text[:199]}…"


def plain(value: Any) -> Any:
    """A DynamoDB attribute value (``{"N": "4"}``) as plain JSON (``4``)."""
    if not isinstance(value, Mapping) or len(value) != 1:
        return value
    ((kind, inner),) = value.items()
    if kind == "N":
        text = str(inner)
        return int(text) if text.lstrip("-").isascii() and text.lstrip("-").isdigit() else text
    if kind in ("SS", "NS", "BS") and isinstance(inner, list):
        return sorted(str(v) for v in inner)
    if kind == "NULL":
        return None
    if kind == "M" and isinstance(inner, Mapping):
        return plain_item(inner)
    if kind == "L" and isinstance(inner, list):
        return [plain(v) for v in inner]
    return inner


def plain_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A whole item in plain JSON, attribute names sorted (``id`` first)."""
    return {k: plain(item[k]) for k in sorted(item, key=lambda k: (k != "id", k))}


def _message_of(event: Any, key: Mapping[str, Any]) -> str | None:
    """The SQS message an invocation's write came from: the record whose body names the
    item's key (the one record of a batch of one); ``None`` for other events."""
    records = event.get("Records") if isinstance(event, Mapping) else None
    if not isinstance(records, list) or not records:
        return None
    wanted = {str(plain(v)) for v in key.values()}
    records = [record for record in records if isinstance(record, Mapping)]
    for record in records:
        try:
            body = json.loads(record.get("body", ""))
        except (TypeError, ValueError):
            continue
        if isinstance(body, Mapping) and str(body.get("id")) in wanted:
            return f"message {record.get('messageId')}"
    return f"message {records[0].get('messageId')}" if len(records) == 1 else None


_RECORD_SOURCES: Final = {
    "aws:sns": "SNS ",
    "aws:s3": "S3 ",
    "aws:kinesis": "Kinesis ",
    "aws:dynamodb": "DynamoDB ",
}
"""How a batch of records names its source (``aws:sqs`` batches say only their size)."""


def _given(event: Any) -> str:
    if isinstance(event, Mapping) and isinstance(event.get("Records"), list):
        records = event["Records"]
        first = records[0] if records and isinstance(records[0], Mapping) else {}
        kind = _RECORD_SOURCES.get(str(first.get("EventSource") or first.get("eventSource")), "")
        return f"{len(records)} {kind}record(s)"
    if isinstance(event, Mapping) and {"detail-type", "source", "detail"} <= set(event):
        return f"EventBridge: {event['source']} · {event['detail-type']}"
    text = json.dumps(event, default=str)
    return text if len(text) <= 120 else f"{text[:119]}…"
