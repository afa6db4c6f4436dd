"""An SQS batch's records processed concurrently except where they share a business key,
answered with the partial batch response that names each failed record.

The partial batch response is the documented one for SQS ("Reporting batch item failures"
in the Lambda Developer Guide): ``{"batchItemFailures": [{"itemIdentifier": <messageId>}]}``,
in batch order; an empty list acknowledges the whole batch. The event source mapping
needs ``FunctionResponseTypes: [ReportBatchItemFailures]``.

It does a job Powertools' batch utility also does, under other names because the
contracts differ; why the queue worker does not import Powertools' is in
docs/performance.md, "Start-up".

==========================  =========================================  =============================
aspect                      Powertools' ``process_partial_response``   :func:`process_batch_by_key`
==========================  =========================================  =============================
the order records run in    one after another (``BatchProcessor``)     concurrently across business
                                                                       keys, in batch order within
                                                                       one key
every record failing        raises ``BatchProcessingError``: the       a partial response that lists
                            whole batch comes back (unless             every record
                            ``raise_on_entire_batch_failure=False``)
no non-empty ``Records``    ``UnexpectedBatchTypeError``               ``InvalidBatchEvent``, a
                            (a ``BatchProcessingError``)               ``ValueError``
the record handler gets     an ``SQSRecord`` data class                the record as Lambda sent it,
                                                                       a mapping
the handler's return value  kept as the record's success               ignored: a record fails only
                                                                       by raising
a failed record without     (its data class fails on access)           ``KeyError`` or ``TypeError``
``messageId``                                                          once every record has run
FIFO queues                 ``SqsFifoPartialProcessor`` stops at       not supported
                            the first failure
==========================  =========================================  =============================
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, TypedDict

from order_guard.exceptions import InvalidBatchEvent
from order_guard.orders import json_type

__all__ = [
    "RecordHandler",
    "SQSBatchItemFailure",
    "SQSBatchResponse",
    "batch_records",
    "process_batch_by_key",
]


class SQSBatchItemFailure(TypedDict):
    """One failed record of a partial batch response: ``{"itemIdentifier": <messageId>}``."""

    itemIdentifier: str


class SQSBatchResponse(TypedDict):
    """The partial batch response: ``{"batchItemFailures": [{"itemIdentifier": id}]}``."""

    batchItemFailures: list[SQSBatchItemFailure]


RecordHandler = Callable[[Mapping[str, Any]], Any]
"""Handles one record; it fails the record by raising, and its return value is ignored."""


def batch_records(event: Any) -> list[Any]:
    """The event's records.

    Raises:
        InvalidBatchEvent: ``event`` is not a mapping, or has no non-empty ``Records``
            list.
    """
    if not isinstance(event, Mapping):
        raise InvalidBatchEvent(
            f"an SQS event is an object with a non-empty Records list; got {json_type(event)}"
        )
    records = event.get("Records")
    if isinstance(records, list) and records:
        return records
    if "Records" not in event:
        got = "no Records key"
    elif isinstance(records, list):
        got = "an empty Records list"
    else:
        got = f"Records as {json_type(records)}"
    raise InvalidBatchEvent(f"an SQS event is an object with a non-empty Records list; got {got}")


def _business_key(record: Any) -> str | None:
    """The ``id`` a record's body names, without validating the rest (for grouping)."""
    body = record.get("body") if isinstance(record, Mapping) else None
    try:
        job = json.loads(body) if isinstance(body, str) else None
    except (ValueError, RecursionError):  # not JSON, or nested too deep: no key
        return None
    order_id = job.get("id") if isinstance(job, dict) else None
    return order_id if isinstance(order_id, str) else None


def process_batch_by_key(
    event: Any,
    record_handler: RecordHandler,
    *,
    concurrency: int,
    threads: ThreadPoolExecutor | None = None,
) -> SQSBatchResponse:
    """Run ``record_handler`` on every record of an SQS event and answer with the records
    that failed.

    Records are grouped by the ``id`` their body names (a body without a string ``id`` is
    a group of its own), and each group runs its records in batch order, so the decisions
    are those of a sequential run: the first record of a key is the original, a later
    identical copy a duplicate, a later different one a conflict. With more than one
    group and ``concurrency`` above 1 the groups run on ``threads`` (the execution
    environment's record threads, kept from one invocation to the next: its
    ``max_workers``, not ``concurrency``, bounds how many run at once) or, without it, on
    up to ``concurrency`` threads made for this batch. Either way no group runs after
    this returns or raises: nothing runs after the invocation.

    Raises:
        InvalidBatchEvent: see :func:`batch_records` (the invocation fails and the event
            source mapping retries the whole batch).
        KeyError, TypeError: a failed record has no ``messageId`` or is not an object.
        RuntimeError: ``threads`` takes no more work (shut down, or a thread cannot
            start); the groups not started never start, those started have ended.
        BaseException: what a record handler raised that is not an ``Exception``, once
            every group has ended.
    """
    records = batch_records(event)
    groups: dict[object, list[int]] = {}
    for index, record in enumerate(records):
        groups.setdefault(_business_key(record) or ("record", index), []).append(index)
    failed = [False] * len(records)

    def run(indexes: list[int]) -> None:
        for index in indexes:
            try:
                record_handler(records[index])
            except Exception:  # noqa: BLE001 - any failure of a record is its batch item failure
                failed[index] = True

    workers = min(concurrency, len(groups))
    if workers <= 1:
        for indexes in groups.values():
            run(indexes)
    elif threads is not None:
        _run_groups(threads, run, groups.values())
    else:
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="record") as own:
            _run_groups(own, run, groups.values())
    return {
        "batchItemFailures": [
            {"itemIdentifier": record["messageId"]}
            for record, listed in zip(records, failed, strict=True)
            if listed
        ]
    }


def _run_groups(
    threads: ThreadPoolExecutor, run: Callable[[list[int]], None], groups: Iterable[list[int]]
) -> None:
    """Run every group on ``threads`` and wait for them all. If handing the groups over
    fails part-way (``submit`` raises, possibly after queueing the work), no group starts
    from then on and the ones running are waited for, so none outlives the call."""
    turn = threading.Condition()
    running = 0
    abandoned = False

    def guarded(indexes: list[int]) -> None:
        nonlocal running
        with turn:
            if abandoned:
                return
            running += 1
        try:
            run(indexes)
        finally:
            with turn:
                running -= 1
                turn.notify_all()

    try:
        futures = [threads.submit(guarded, indexes) for indexes in groups]
    except BaseException:
        with turn:
            abandoned = True
            turn.wait_for(lambda: running == 0)
        raise
    wait(futures)  # every group ends within the invocation, even after one raised
    for future in futures:
        future.result()
