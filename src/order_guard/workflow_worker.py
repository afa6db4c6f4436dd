"""Workflow worker: the ``StoreOrder`` and ``ReadSummary`` tasks of ``OrdersStateMachine``.

Two stages, chosen by the payload:

``{"id", "quantity", "mode"?}`` — store stage
    Validate, count the attempt (one ``UpdateItem ADD attempts :one`` on the attempts
    table, diagnostics only), then the same conditional write as the queue worker.
    Returns ``{"id", "quantity", "total_cents", "duplicate"}``.

``{"stage": "summary", "id"}`` — summary stage
    One strongly consistent ``GetItem``. Returns ``{"id", "total_cents", "completed": true}``.

Every invocation writes one structured log line whose message is ``RESULT``, with its
``stage`` (``store``: the write decision; ``summary``: ``outcome`` found or error).

Errors are raised, never returned: the Lambda runtime reports the class name as
``errorType`` and the state machine's retriers and catchers match it
(``TransientOrderError`` and ``TransientStoreError`` are retried; ``InvalidOrder`` and
``OrderConflict`` are caught; see :mod:`order_guard.failures`). Every failure of the
store stage, the attempts counter's included, writes a ``RESULT`` line first.

``mode`` is a demonstration of the retry path (template parameter ``FaultModesEnabled``):

=============  ===================================================================
normal         no fault (the default)
after-write    attempt 1 raises ``TransientOrderError`` *after* the write decision:
               the retry finds the order it wrote and reports ``duplicate: true``
flaky          attempt 1 raises ``TransientOrderError`` *before* the write
permanent      raises ``InvalidOrder`` on every attempt
=============  ===================================================================

Attempts are counted per business key, so a new execution of the same order sees
attempt 3, 4, … and no longer faults. A counter update that botocore resends counts
once (:func:`~order_guard.attempts.count_attempt`); an invocation whose counter committed
and which then failed was an attempt, and the retry is the next one. Invalid input is
rejected before the attempt is counted: no DynamoDB write is made for a job that breaks
the contract.

The counter is diagnostics, and only the fault modes ``after-write`` and ``flaky`` read
it (:data:`COUNTED_MODES`). Without them (mode ``normal``, or fault modes disabled) a
counter failure of any kind is logged under its own name (``AttemptsCounterFailed``,
with its error), counted in the ``AttemptsCounterFailed`` metric, and the order is
stored as if the counter did not exist (``attempt: null`` in its ``RESULT`` line). With
them, a transient counter failure fails the attempt as ``TransientStoreError``
(retried) and a permanent one (access denied, a missing table) fails the execution as
``AttemptsCounterUnavailable``, which no retrier lists; both write a ``RESULT`` line.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import boto3
from aws_lambda_powertools import Logger, Metrics
from aws_lambda_powertools.metrics import MetricUnit

from order_guard.attempts import count_attempt
from order_guard.config import DYNAMODB_CLIENT_CONFIG, WorkflowWorkerSettings
from order_guard.errors import AttemptsCounterUnavailable, InvalidOrder, TransientOrderError
from order_guard.failures import describe, error_fields, is_transient
from order_guard.orders import Order, validate_job, validate_order_id
from order_guard.result import log_decision, log_summary
from order_guard.store import (
    Decision,
    decision_for_error,
    provenance,
    put_order_once,
    read_order,
)

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from mypy_boto3_dynamodb.client import DynamoDBClient

MODES: Final = ("normal", "after-write", "flaky", "permanent")
COUNTED_MODES: Final = frozenset({"after-write", "flaky"})
"""The fault modes whose fault depends on the attempt count."""
SUMMARY_KEYS: Final = frozenset({"stage", "id"})

logger = Logger()
metrics = Metrics()


@dataclass(frozen=True, slots=True)
class Dependencies:
    """What the worker needs from its execution environment; tests build their own."""

    dynamodb: DynamoDBClient
    settings: WorkflowWorkerSettings


@functools.cache
def dependencies() -> Dependencies:
    """Build the client and settings once per execution environment.

    Raises:
        ConfigurationError: a required variable is missing or malformed.
    """
    return Dependencies(
        dynamodb=boto3.client("dynamodb", config=DYNAMODB_CLIENT_CONFIG),
        settings=WorkflowWorkerSettings.from_environ(os.environ),
    )


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
def lambda_handler(event: Any, context: LambdaContext) -> dict[str, Any]:
    """Lambda entry point for the state machine's ``lambda:invoke`` tasks."""
    return handle(event, context, dependencies())


def handle(event: Any, context: LambdaContext | None, deps: Dependencies) -> dict[str, Any]:
    """Dispatch to the store or the summary stage (the handler's testable core).

    Raises:
        InvalidOrder: the payload breaks the contract, or ``mode`` is unknown, or a
            fault mode is requested while fault modes are disabled, or mode is
            ``permanent``.
        TransientOrderError: the ``flaky`` / ``after-write`` fault on attempt 1.
        TransientStoreError: a DynamoDB call (the write, the read, or the counter when
            the mode needs it) failed transiently, or answered as DynamoDB never does.
        AttemptsCounterUnavailable: the counter failed permanently and the mode needs it.
        OrderConflict: the business key is stored with different details.
        OrderNotFound: the summary stage found no order.
        ConfigurationError: (``lambda_handler``) a required variable is missing.
        botocore.exceptions.ClientError, UnreadableStoredOrder: the error decision.
    """
    metrics.namespace = deps.settings.metrics_namespace  # Powertools read them at import;
    metrics.service = deps.settings.service_name  # the settings are the checked values
    if isinstance(event, Mapping) and "stage" in event:
        return summary_stage(event, deps)
    invocation = getattr(context, "aws_request_id", None) or "unknown"
    return store_stage(event, deps, invocation_id=invocation)


def store_stage(event: Any, deps: Dependencies, *, invocation_id: str) -> dict[str, Any]:
    """Validate, count the attempt, apply the fault mode and write once.

    Returns:
        ``{"id": str, "quantity": int, "total_cents": int, "duplicate": bool}``.
    """
    try:
        order = validate_job(event, optional_keys={"mode"})
        mode = _mode(event, fault_modes_enabled=deps.settings.fault_modes_enabled)
    except InvalidOrder as exc:
        _log_result(Decision.INVALID, None, error=exc)
        raise
    attempt = _count_attempt(order, mode, deps)
    context = {"mode": mode, "attempt": attempt}
    if mode == "permanent":
        refusal = InvalidOrder(
            f"order {order.id!r}: mode 'permanent' rejects the order on every attempt"
        )
        _log_result(Decision.INVALID, order, error=refusal, **context)
        raise refusal
    if mode == "flaky" and attempt == 1:
        fault = TransientOrderError(
            f"order {order.id!r}: mode 'flaky' fails attempt 1 before the write"
        )
        _log_result(Decision.ERROR, order, error=fault, **context)
        raise fault
    try:
        outcome = put_order_once(
            deps.dynamodb,
            deps.settings.orders_table,
            order,
            provenance=provenance(f"lambda:{invocation_id}"),
        )
    except Exception as exc:
        _log_result(decision_for_error(exc), order, error=exc, **context)
        raise
    if outcome.decision is Decision.CONFLICT:
        _log_result(outcome.decision, order, outcome=outcome, **context)
        outcome.raise_for_conflict()
    _log_result(outcome.decision, order, outcome=outcome, **context)
    if mode == "after-write" and attempt == 1:
        raise TransientOrderError(
            f"order {order.id!r}: mode 'after-write' fails attempt 1 after the write "
            f"(decision: {outcome.decision.value})"
        )
    return {**order.details(), "duplicate": outcome.duplicate}


def _count_attempt(order: Order, mode: str, deps: Dependencies) -> int | None:
    """The attempt number for ``order``, or ``None`` when the counter failed and ``mode``
    does not need it (see the module docstring).

    Raises:
        TransientStoreError: the counter failed transiently and ``mode`` needs the count.
        AttemptsCounterUnavailable: it failed permanently and ``mode`` needs the count.
    """
    try:
        return count_attempt(deps.dynamodb, deps.settings.attempts_table, order.id)
    except Exception as exc:
        if mode not in COUNTED_MODES:
            logger.warning(
                "AttemptsCounterFailed",
                extra={"id": order.id, "mode": mode, "reason": describe(exc), **error_fields(exc)},
            )
            metrics.add_metric(name="AttemptsCounterFailed", unit=MetricUnit.Count, value=1)
            return None
        failure: Exception = exc
        if not is_transient(exc):
            failure = AttemptsCounterUnavailable(
                f"order {order.id!r}: mode {mode!r} needs the attempts count and the counter "
                f"failed permanently: {describe(exc)}"
            )
        _log_result(
            decision_for_error(failure),
            order,
            error=failure,
            reason=f"attempts counter: {failure}",
            mode=mode,
        )
        if failure is exc:
            raise
        raise failure from exc


def summary_stage(event: Mapping[str, Any], deps: Dependencies) -> dict[str, Any]:
    """Read the stored order back.

    Returns:
        ``{"id": str, "total_cents": int, "completed": True}``.

    Raises:
        InvalidOrder: keys other than exactly ``stage`` and ``id``, a stage other than
            ``"summary"``, or an invalid ``id``.
        OrderNotFound: no order is stored under ``id``.
    """
    order_id = event.get("id") if isinstance(event.get("id"), str) else None
    try:
        keys = set(event)
        if keys != SUMMARY_KEYS:
            got = ", ".join(sorted(map(str, keys)))
            raise InvalidOrder(f"summary payload must have exactly the keys id, stage; got {got}")
        if event["stage"] != "summary":
            raise InvalidOrder(f"stage must be 'summary', got {event['stage']!r}")
        stored = read_order(
            deps.dynamodb, deps.settings.orders_table, validate_order_id(event["id"])
        )
    except Exception as exc:
        log_summary(logger, "error", order_id, error=exc)
        raise
    details = stored.details()
    log_summary(logger, "found", details["id"], total_cents=details["total_cents"])
    metrics.add_metric(name="SummariesRead", unit=MetricUnit.Count, value=1)
    return {"id": details["id"], "total_cents": details["total_cents"], "completed": True}


def _mode(event: Mapping[str, Any], *, fault_modes_enabled: bool) -> str:
    mode = event.get("mode", "normal")
    if not isinstance(mode, str) or mode not in MODES:
        raise InvalidOrder(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
    if mode != "normal" and not fault_modes_enabled:
        raise InvalidOrder(
            f"mode {mode!r} is a demonstration fault mode and fault modes are disabled "
            "in this deployment (template parameter FaultModesEnabled=false)"
        )
    return mode


def _log_result(decision: Decision, order: Order | None, **kwargs: Any) -> None:
    """The store stage's ``RESULT`` line (:func:`order_guard.result.log_decision`), then
    its decision's metric: a metrics failure never hides a decision."""
    log_decision(logger, decision, order, stage="store", **kwargs)
    metrics.add_metric(name=decision.metric_name, unit=MetricUnit.Count, value=1)
