"""What the terminal says of an execution: one line when it fails, never moto's internals.

moto's interpreter logs every component a failure passes through, at ``ERROR``, each with
the ``repr`` of its part of the state machine's parse tree (about 3.6 KB for one failed
Choice): with no logging configured, Python prints them all on the terminal. The patches
log them at ``DEBUG`` instead (``logging.getLogger("moto.stepfunctions.parser")`` shows
them again), and :func:`report_end` prints one line for each execution that ends failed or
timed out, with its error and its cause, cut.
"""

from __future__ import annotations

import logging
from typing import Any, Final

from moto.stepfunctions.parser.api import ExecutionStatus
from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent
from moto.stepfunctions.parser.backend.execution import Execution as ParserExecution

from localcloud.patches.registry import Method, Patch
from localcloud.text import say

CAUSE_SHOWN: Final = 300
"""Characters of a failed execution's cause the terminal line shows, at most."""
_LOG = logging.getLogger("moto.stepfunctions.parser.asl.component.eval_component")


def report_end(execution: ParserExecution) -> None:
    """Say one line for an execution that ended ``FAILED`` or ``TIMED_OUT``::

    [states] orders: execution no-quantity FAILED: States.Runtime: An error occurred …
    """
    status = execution.exec_status
    if status not in (ExecutionStatus.FAILED, ExecutionStatus.TIMED_OUT):
        return
    cause = str(execution.cause or "")
    if len(cause) > CAUSE_SHOWN:
        cause = f"{cause[: CAUSE_SHOWN - 1]}…"
    said = f": {execution.error or 'no error'}" + (f": {cause}" if cause else "")
    machine = getattr(execution.state_machine, "name", execution.state_machine_arn)
    say(f"[states] {machine}: execution {execution.name} {status.value}{said}")


def _quietly(_original: Method) -> Method:
    def log(self: EvalComponent, *args: Any, **kwargs: Any) -> None:
        """moto's failure log of a component, at DEBUG (the history holds the failure)."""
        if _LOG.isEnabledFor(logging.DEBUG):
            _LOG.debug("[ASL] %s failed: %r %r", type(self).__name__, args, kwargs)

    return log


PATCHES: Final = (
    Patch(
        EvalComponent,
        "_log_failure_event_exception",
        ("self", "failure_event_exception"),
        _quietly,
        "a failed state is one terminal line, not every parse-tree node it passed at ERROR",
    ),
    Patch(
        EvalComponent,
        "_log_exception",
        ("self", "exception"),
        _quietly,
        "an interpreter error is one terminal line, not every parse-tree node it passed",
    ),
)
