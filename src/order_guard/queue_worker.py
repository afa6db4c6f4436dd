"""SQS queue worker: an idempotent consumer with partial batch responses.

Triggered by the ``JobsQueue`` event source mapping with
``FunctionResponseTypes: [ReportBatchItemFailures]``. Each record is judged on its own
(:mod:`order_guard.batch` does the partial-batch mechanics):

- accepted and duplicate records are acknowledged (left out of the response);
- invalid, conflicting and failed records are listed as
  ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``; SQS makes them
  visible again after the visibility timeout and, after ``maxReceiveCount`` receives,
  the redrive policy moves them to the dead-letter queue.

Records of different business keys run concurrently (at most ``RECORD_CONCURRENCY`` at a
time, on threads the execution environment keeps between invocations; every record has
ended before the handler returns), so a batch of new orders waits on DynamoDB about once
instead of once per record (docs/performance.md); records that share a business key run
one after another in batch order, so the first of them is the original exactly as in a
sequential run (:func:`order_guard.batch.process_batch_by_key`).
Every record still gets its own write decision, ``RESULT`` line and metric.

A record is started only while ``context.get_remaining_time_in_millis()`` leaves room
for one DynamoDB call at its worst (``config.RECORD_BUDGET_S``); the records not started
are listed as batch item failures (``TimeBudgetExhausted``, nothing written), so the
finished ones are still acknowledged instead of the whole batch timing out and coming
back.

An event without a non-empty ``Records`` list raises: a malformed event is never
treated as an empty success. Every record writes one structured log line whose message
is ``RESULT``; receipt handles and the raw event are never logged.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from order_guard.batch import SQSBatchResponse, process_batch_by_key
from order_guard.config import DYNAMODB_CLIENT_CONFIG, RECORD_BUDGET_S, QueueWorkerSettings
from order_guard.decision import Decision, decision_for_error
from order_guard.exceptions import TimeBudgetExhausted
from order_guard.item import provenance
from order_guard.orders import parse_job_body
from order_guard.result import log_decision
from order_guard.store import put_order_once

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = [
    "Deadline",
    "Dependencies",
    "dependencies",
    "handle_batch",
    "lambda_handler",
    "process_record",
]

logger = Logger()
metrics = Metrics()


@dataclass(frozen=True, slots=True)
class Dependencies:
    """What the worker needs from its execution environment; tests build their own.

    ``record_threads``: the environment's threads for a batch's records, kept from one
    invocation to the next (docs/performance.md); ``None`` makes threads per batch.
    """

    dynamodb: DynamoDBClient
    settings: QueueWorkerSettings
    record_threads: ThreadPoolExecutor | None = None


@functools.cache
def dependencies() -> Dependencies:
    """Build the client, settings and record threads once per execution environment.

    Raises:
        ConfigurationError: a variable of ``QueueWorkerSettings.REQUIRED`` is missing.
    """
    settings = QueueWorkerSettings.from_environ(os.environ)
    return Dependencies(
        dynamodb=boto3.client("dynamodb", config=DYNAMODB_CLIENT_CONFIG),
        settings=settings,
        record_threads=ThreadPoolExecutor(  # no thread starts before the first batch
            max_workers=settings.record_concurrency, thread_name_prefix="record"
        ),
    )


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def lambda_handler(event: dict[str, Any], context: LambdaContext) -> SQSBatchResponse:
    """Lambda entry point for the SQS event source mapping.

    Returns:
        ``{"batchItemFailures": [{"itemIdentifier": <messageId>}, ...]}``; an empty list
        acknowledges the whole batch.

    Raises:
        InvalidBatchEvent: the event is not an object with a non-empty ``Records``
            list; the invocation fails, so the whole batch is retried.
        ConfigurationError: a required variable is missing (before any DynamoDB call).
    """
    return handle_batch(event, context, dependencies())


def handle_batch(
    event: dict[str, Any], context: LambdaContext | None, deps: Dependencies
) -> SQSBatchResponse:
    """Process one SQS batch with the given dependencies (the handler's testable core).

    ``context`` ``None`` means no time limit (tests that do not exercise the budget).
    """
    metrics.namespace = deps.settings.metrics_namespace  # Powertools read them at import;
    metrics.service = deps.settings.service_name  # the settings are the checked values
    return process_batch_by_key(
        event,
        functools.partial(process_record, deps=deps, deadline=Deadline(context)),
        concurrency=deps.settings.record_concurrency,
        threads=deps.record_threads,
    )


class Deadline:
    """The invocation's end, read from the Lambda context once per batch.

    ``get_remaining_time_in_millis()`` is read at the start and the monotonic clock
    measures from there, so one read serves every record.
    """

    def __init__(self, context: LambdaContext | None) -> None:
        remaining_ms = context.get_remaining_time_in_millis() if context is not None else None
        self._ends_at = None if remaining_ms is None else time.monotonic() + remaining_ms / 1000

    def remaining_s(self) -> float:
        """Seconds left (``inf`` without a context)."""
        return float("inf") if self._ends_at is None else self._ends_at - time.monotonic()


def process_record(
    record: Mapping[str, Any], deps: Dependencies, deadline: Deadline | None = None
) -> dict[str, Any]:
    """Store one job once and log its write decision.

    Returns:
        ``{"id", "quantity", "processed", "duplicate"}`` for an accepted
        (``processed: true``) or duplicate (``processed: false, duplicate: true``) job.

    Raises:
        TimeBudgetExhausted: less than ``RECORD_BUDGET_S`` (4.5 s) is left; the record
            was not started.
        InvalidOrder: the body breaks the order contract (no write was attempted).
        OrderConflict: the business key is stored with different details.
        TransientStoreError, UnreadableStoredOrder, botocore.exceptions.ClientError, …:
            the error decision.
        Each raise makes the record a batch item failure.
    """
    attributes = record.get("attributes")
    fields: dict[str, Any] = {
        "stage": "queue",
        "message_id": record.get("messageId"),
        "receive_count": attributes.get("ApproximateReceiveCount")
        if isinstance(attributes, Mapping)
        else None,
    }
    order = None
    try:
        remaining_s = deadline.remaining_s() if deadline is not None else float("inf")
        if remaining_s < RECORD_BUDGET_S:
            raise TimeBudgetExhausted(
                f"not started: {remaining_s:.1f} s of the invocation left, a record may "
                f"need {RECORD_BUDGET_S:.1f} s; it is listed for redelivery"
            )
        order = parse_job_body(record.get("body"))
        outcome = put_order_once(
            deps.dynamodb,
            deps.settings.orders_table,
            order,
            provenance=provenance(f"sqs:{fields['message_id']}"),
        )
    except Exception as exc:  # noqa: BLE001 - any failure is the record's RESULT line, then
        decision = decision_for_error(exc)  # its batch item failure (re-raised)
        unexpected = decision is Decision.ERROR and not isinstance(exc, TimeBudgetExhausted)
        log_decision(logger, decision, order, error=exc, traceback=unexpected, **fields)
        _count(decision)  # after the RESULT line: a metrics failure never hides a decision
        raise
    if outcome.decision is Decision.CONFLICT:
        log_decision(logger, outcome.decision, order, outcome=outcome, **fields)
        _count(outcome.decision)
        outcome.raise_for_conflict()
    processed = outcome.decision is Decision.ACCEPTED
    log_decision(
        logger,
        outcome.decision,
        order,
        outcome=outcome,
        processed=processed,
        duplicate=outcome.duplicate,
        **fields,
    )
    _count(outcome.decision)
    return {
        "id": order.id,
        "quantity": order.quantity,
        "processed": processed,
        "duplicate": outcome.duplicate,
    }


_METRICS_LOCK = threading.Lock()


def _count(decision: Decision) -> None:
    with _METRICS_LOCK:  # records run on several threads; the metric set is shared
        metrics.add_metric(name=decision.metric_name, unit=MetricUnit.Count, value=1)
