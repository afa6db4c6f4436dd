"""The queue worker's batch mechanics: an SQS batch's records processed concurrently except
where they share a business key, and the partial batch response naming each failed record.

Powertools' batch utility did this before; its import (about 33 ms: asyncio,
multiprocessing, its event data classes) was a tenth of the function's cold start, which
Lambda bills since 1 August 2025 (AWS Compute Blog, "AWS Lambda standardizes billing for
INIT phase"). What the queue worker used of it is small, and kept exactly here:

- an event without a non-empty ``Records`` list raises :class:`UnexpectedBatchTypeError`
  (the invocation fails and the whole batch is retried); an event that is not a mapping
  raises ``ValueError``;
- each record is handed to the record handler; a record whose handler raises is a batch
  item failure, ``{"itemIdentifier": <messageId>}``, in batch order (the documented
  partial batch response for SQS: "Reporting batch item failures" in the Lambda
  Developer Guide); every record failing is still a partial response, never an error;
- a failed record that cannot be named (no ``messageId``, or not an object) raises
  ``KeyError`` / ``TypeError`` once every record has run: the invocation fails and the
  whole batch comes back, so nothing is acknowledged that was not stored.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, TypedDict


class PartialItemFailure(TypedDict):
    itemIdentifier: str


class PartialItemFailureResponse(TypedDict):
    """The partial batch response: ``{"batchItemFailures": [{"itemIdentifier": id}]}``."""

    batchItemFailures: list[PartialItemFailure]


class UnexpectedBatchTypeError(ValueError):
    """The event holds no non-empty ``Records`` list (the name Powertools gave it)."""


RecordHandler = Callable[[Mapping[str, Any]], Any]


def records_of(event: Any) -> list[Any]:
    """The event's records.

    Raises:
        ValueError: ``event`` is not a mapping.
        UnexpectedBatchTypeError: it has no non-empty ``Records`` list.
    """
    if not isinstance(event, Mapping):
        raise ValueError("Invalid event format: an SQS event is an object with Records")
    records = event.get("Records")
    if not isinstance(records, list) or not records:
        raise UnexpectedBatchTypeError(
            "Unexpected batch event type: an SQS event has a non-empty Records list"
        )
    return records


def business_key(record: Any) -> str | None:
    """The ``id`` a record's body names, without validating the rest (for grouping)."""
    body = record.get("body") if isinstance(record, Mapping) else None
    try:
        job = json.loads(body) if isinstance(body, str) else None
    except (ValueError, RecursionError):  # not JSON, or nested too deep: no key
        return None
    order_id = job.get("id") if isinstance(job, dict) else None
    return order_id if isinstance(order_id, str) else None


def process_partial_response(
    event: Any,
    record_handler: RecordHandler,
    *,
    concurrency: int,
    threads: ThreadPoolExecutor | None = None,
) -> PartialItemFailureResponse:
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
        ValueError, UnexpectedBatchTypeError: see :func:`records_of`.
        KeyError, TypeError: a failed record has no ``messageId`` or is not an object.
        RuntimeError: ``threads`` takes no more work (shut down, or a thread cannot
            start); the groups not started never start, those started have ended.
        BaseException: what a record handler raised that is not an ``Exception``, once
            every group has ended.
    """
    records = records_of(event)
    groups: dict[object, list[int]] = {}
    for index, record in enumerate(records):
        groups.setdefault(business_key(record) or ("record", index), []).append(index)
    failed = [False] * len(records)

    def run(indexes: list[int]) -> None:
        for index in indexes:
            try:
                record_handler(records[index])
            except Exception:  # noqa: BLE001 - the handler logged it; the record is listed
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
