"""What Step Functions does when the local cloud stops: every execution still running is
stopped, as StopExecution would stop it (``ABORTED``, its ``ExecutionAborted`` event), so
that nothing of it goes on: moto's interpreter runs each execution, each inline Map
iteration and each Parallel branch on threads of its own, and a never-ending one (a loop
of long ``Wait`` states stays far below the history quota) would otherwise run, and hold
its Map's pool, until the process ends, or keep the process from ending.
"""

from __future__ import annotations

import datetime
from typing import Any, Final

from moto.stepfunctions.parser.api import ExecutionStatus

from localcloud.services.stepfunctions import quotas

STOPPED_CAUSE: Final = "The local cloud stopped."
"""The cause an execution stopped with the local cloud has (its error is none)."""


def _running(backends: Any) -> list[Any]:
    found: list[Any] = []
    for regions in list(backends.values()):
        for backend in list(regions.values()):
            for machine in list(backend.state_machines):
                found.extend(
                    execution
                    for execution in list(machine.executions)
                    if execution.exec_status == ExecutionStatus.RUNNING
                )
    return found


def stop_running(cause: str = STOPPED_CAUSE) -> list[str]:
    """Stop every running execution of every account and region this process holds, as
    StopExecution does, without waiting for any; their ARNs."""
    from moto.stepfunctions.parser.models import stepfunctions_parser_backends

    now = datetime.datetime.now(datetime.UTC)
    stopped = []
    for execution in _running(stepfunctions_parser_backends):
        worker = execution.exec_worker
        if worker is not None and worker.env is not None:
            worker.stop(stop_date=now, error=None, cause=cause)
            stopped.append(str(execution.exec_arn))
    return stopped


def stopped_with_the_account() -> list[str]:
    """Stop every running execution (:func:`stop_running`); a line for each, for the
    terminal (the service's ``on_stop``). The histories' data budget starts again with
    the next account (:func:`~.quotas.forget_history_data`)."""
    lines = [
        f"[states] execution {arn.split(':', 6)[-1]} stopped with the local cloud"
        for arn in stop_running()
    ]
    quotas.forget_history_data()
    return lines


__all__ = ["STOPPED_CAUSE", "stop_running", "stopped_with_the_account"]
