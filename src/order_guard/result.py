"""The ``RESULT`` log line: one per write decision, and one per summary read.

Both workers write it here and nowhere else; its fields are a contract read by the live
view and the state reader (``localcloud.state``), the saved CloudWatch Logs Insights
queries of ``template.yaml`` and the documented ``jq`` read-out (docs/local-cloud.md).
The message is ``RESULT``; the JSON keys, besides Powertools' own (``level``,
``timestamp``, ``function_request_id`` …):

===============  ===========================================================================
decision         the write decision: accepted, duplicate, conflict, invalid or error
id, quantity     the order's business key and quantity (absent when the job did not parse:
                 Powertools leaves out keys whose value is ``None``)
reason           why the decision is not accepted or duplicate (an error's message)
error_type       with ``reason`` from an error: its class name, the name Step Functions
transient        matches; whether a retry may succeed; ``cause_type`` when it wraps another
stored           conflict: the stored business details; ``requested``: this job's
previous         duplicate: the stored business details
stage            ``queue`` (the queue worker), ``store`` (the workflow's write) or ``summary``
                 (the workflow's read), whose line has ``outcome`` (``found`` or ``error``)
                 instead of ``decision``
===============  ===========================================================================

plus what the worker adds: the queue worker ``message_id``, ``receive_count``, and on
success ``processed`` and ``duplicate``; the workflow worker ``mode`` and ``attempt``.

Level: INFO for accepted and duplicate (and a summary found), WARNING otherwise, ERROR with
the traceback when the worker asks for it (an unexpected error).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final, Literal

from order_guard.decision import Decision
from order_guard.transient import is_transient

if TYPE_CHECKING:
    from aws_lambda_powertools import Logger

    from order_guard.decision import WriteOutcome
    from order_guard.orders import Order

__all__ = ["RESULT", "error_fields", "log_decision", "log_summary"]

RESULT: Final = "RESULT"
"""The message of the line, which every reader filters on."""

_QUIET: Final = frozenset({Decision.ACCEPTED, Decision.DUPLICATE})


def error_fields(exc: BaseException) -> dict[str, Any]:
    """The fields a log line gives a failure: ``error_type`` (the unqualified class name,
    the name Step Functions matches), ``transient``
    (:func:`~order_guard.transient.is_transient`), and ``cause_type`` when the error wraps
    another."""
    fields: dict[str, Any] = {"error_type": type(exc).__name__, "transient": is_transient(exc)}
    if exc.__cause__ is not None:
        fields["cause_type"] = type(exc.__cause__).__name__
    return fields


def log_decision(
    logger: Logger,
    decision: Decision,
    order: Order | None,
    *,
    error: BaseException | None = None,
    reason: str | None = None,
    outcome: WriteOutcome | None = None,
    traceback: bool = False,
    **fields: Any,
) -> None:
    """Write the ``RESULT`` line of one write decision.

    Args:
        logger: the worker's Powertools logger (JSON lines).
        decision: the write decision.
        order: the validated order, or ``None`` when the job did not parse.
        error: the error behind an invalid, conflict or error decision: its message is
            the ``reason`` (unless ``reason`` is given) and its kind the error fields.
        reason: why, when there is no error object or its message needs context.
        outcome: the conditional write's outcome: its stored details (``stored`` and
            ``requested`` for a conflict, ``previous`` for a duplicate).
        traceback: log at ERROR with the traceback of the exception being handled.
        fields: the worker's own keys (see the module docstring).
    """
    line: dict[str, Any] = {
        "decision": decision.value,
        "id": order.id if order else None,
        "quantity": order.quantity if order else None,
        **fields,
    }
    if error is not None or reason is not None:
        line["reason"] = reason if reason is not None else str(error)
    if error is not None:
        line.update(error_fields(error))
    if outcome is not None and outcome.decision is Decision.CONFLICT:
        line.update(stored=outcome.previous_details(), requested=outcome.order.details())
    elif outcome is not None and outcome.previous is not None:
        line["previous"] = outcome.previous_details()
    if traceback:
        logger.exception(RESULT, extra=line)
    elif decision in _QUIET:
        logger.info(RESULT, extra=line)
    else:
        logger.warning(RESULT, extra=line)


def log_summary(
    logger: Logger,
    outcome: Literal["found", "error"],
    order_id: str | None,
    *,
    error: BaseException | None = None,
    **fields: Any,
) -> None:
    """Write the ``RESULT`` line of the workflow's summary read: ``stage: summary``, its
    ``outcome`` and ``id``, and for an error its ``reason`` and error fields; INFO when
    found, WARNING otherwise."""
    line: dict[str, Any] = {"stage": "summary", "outcome": outcome, "id": order_id, **fields}
    if error is not None:
        line.update(reason=str(error), **error_fields(error))
    if outcome == "found":
        logger.info(RESULT, extra=line)
    else:
        logger.warning(RESULT, extra=line)
