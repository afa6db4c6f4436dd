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
``OrderConflict`` are caught; see :mod:`order_guard.transient`). Every failure of the
store stage, the attempts counter's included, writes a ``RESULT`` line first.

``mode`` is a demonstration of the retry path, accepted only when the template's
``FaultModesEnabled`` is true (:mod:`order_guard.fault_modes`, imported only then).

The attempt count is diagnostics, logged as the ``attempt`` of the ``RESULT`` line; a
resent update counts once (:func:`~order_guard.attempts.count_attempt`), and invalid input
is rejected before counting. Unless the fault mode reads the count (``after-write``,
``flaky``), a counter failure is logged as ``AttemptsCounterFailed`` with its error,
counted in that metric, and the order stored with ``attempt: null``; for those two modes
it fails the attempt as ``TransientStoreError`` (retried) or ``AttemptsCounterUnavailable``
(permanent, listed by no retrier), after a ``RESULT`` line.
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
from botocore.exceptions import BotoCoreError, ClientError

from order_guard.attempts import count_attempt
from order_guard.config import DYNAMODB_CLIENT_CONFIG, WorkflowWorkerSettings
from order_guard.decision import Decision, decision_for_error
from order_guard.exceptions import InvalidOrder, OrderGuardError
from order_guard.item import provenance
from order_guard.orders import Order, validate_job, validate_order_id
from order_guard.result import error_fields, log_decision, log_summary
from order_guard.store import put_order_once, read_order
from order_guard.transient import describe

if TYPE_CHECKING:
    from aws_lambda_powertools.utilities.typing import LambdaContext
    from mypy_boto3_dynamodb.client import DynamoDBClient

    from order_guard.fault_modes import FaultMode

__all__ = ["MODES", "Dependencies", "dependencies", "handle", "lambda_handler"]

MODES: Final = ("normal", "after-write", "flaky", "permanent")
"""The values of a store job's ``mode``; all but ``normal`` are fault modes."""
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
    """Validate, count the attempt, apply a requested fault mode and write once.

    Returns:
        ``{"id": str, "quantity": int, "total_cents": int, "duplicate": bool}``.
    """
    try:
        order = validate_job(event, optional_keys={"mode"})
        mode = _mode(event, fault_modes_enabled=deps.settings.fault_modes_enabled)
    except InvalidOrder as exc:
        _log_result(Decision.INVALID, None, error=exc)
        raise
    fault_mode = _fault_mode(mode)
    attempt = _count_attempt(order, mode, deps, fault_mode)
    context = {"mode": mode, "attempt": attempt}
    fault = fault_mode.before_write(order, attempt) if fault_mode else None
    if fault is not None:
        _log_result(decision_for_error(fault), order, error=fault, **context)
        raise fault
    try:
        outcome = put_order_once(
            deps.dynamodb,
            deps.settings.orders_table,
            order,
            provenance=provenance(f"lambda:{invocation_id}"),
        )
    except Exception as exc:  # noqa: BLE001 - any failure of the write is its RESULT line
        _log_result(decision_for_error(exc), order, error=exc, **context)
        raise
    _log_result(outcome.decision, order, outcome=outcome, **context)
    outcome.raise_for_conflict()
    fault = fault_mode.after_write(outcome, attempt) if fault_mode else None
    if fault is not None:
        raise fault
    return {**order.details(), "duplicate": outcome.duplicate}


def _fault_mode(mode: str) -> FaultMode | None:
    """``None`` for ``normal``; a fault mode's demonstration is imported on first use, so
    a deployment without fault modes (where :func:`_mode` refuses them) never loads it."""
    if mode == "normal":
        return None
    from order_guard.fault_modes import FaultMode  # noqa: PLC0415 - off the deployed path

    return FaultMode(mode)


def _count_attempt(
    order: Order, mode: str, deps: Dependencies, fault_mode: FaultMode | None
) -> int | None:
    """The attempt number for ``order``, or ``None`` when the counter failed and ``mode``
    does not need it (see the module docstring).

    Raises:
        TransientStoreError: the counter failed transiently and ``mode`` needs the count.
        AttemptsCounterUnavailable: it failed permanently and ``mode`` needs the count.
    """
    try:
        return count_attempt(deps.dynamodb, deps.settings.attempts_table, order.id)
    except (BotoCoreError, ClientError, OrderGuardError) as exc:
        if fault_mode is None or not fault_mode.needs_count:
            logger.warning(
                "AttemptsCounterFailed",
                extra={"id": order.id, "mode": mode, "reason": describe(exc), **error_fields(exc)},
            )
            metrics.add_metric(name="AttemptsCounterFailed", unit=MetricUnit.Count, value=1)
            return None
        failure = fault_mode.counter_failure(order, exc)
        reason = f"attempts counter: {failure}"
        _log_result(decision_for_error(failure), order, error=failure, reason=reason, mode=mode)
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
    except Exception as exc:  # noqa: BLE001 - any failure of the read is its RESULT line
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
