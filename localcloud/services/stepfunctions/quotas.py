"""Step Functions' quotas that bound what one execution takes, as AWS applies them.

moto 5.2.5 applies neither of these:

* StartExecution ``input``: at most 262,144 bytes of UTF-8 (the StartExecution API
  reference, request parameter ``input``; "Step Functions service quotas", Maximum input or
  output size for a task, state, or execution). A larger input is refused before the
  execution exists: ``ValidationException``, "1 validation error detected: Value at
  'input' failed to satisfy constraint: Member must have size less than or equal to 262144
  bytes in UTF-8 encoding" (HTTP 400; the value is not repeated, as for any sensitive
  member). moto starts the execution with any input.
* A Standard execution's history: at most 25,000 events ("Step Functions service quotas",
  Maximum execution history size; "Avoid reaching the history quota"). When the history
  holds 24,999 events, the 25,000th is recorded only if it is ``ExecutionSucceeded``;
  any other is replaced by ``ExecutionFailed`` (``States.Runtime``, "The execution
  reached the maximum number of history events (25000).", previous event 24,999), the
  execution fails with that error and cause, and nothing more is recorded. An Express
  execution's history is unlimited. moto records events without bound: a state machine
  that never ends runs, and grows, for as long as the server does.

Between states the 256 KB quota holds in moto already (``States.DataLimitExceeded``,
``moto.stepfunctions.parser.quotas``).

What a history holds is bounded locally too, where AWS keeps it on its own disks: an
event's ``input`` or ``output`` is kept while its execution's history holds less than
:data:`HISTORY_DATA_CHARACTERS` of them and every history of the server less than
:data:`SERVER_HISTORY_DATA_CHARACTERS`; past either it is kept as ``""`` with
``inputDetails``/``outputDetails`` ``{"truncated": true}``, the shape AWS gives data it
did not keep (issue 47's held-back attacks: a loop on a 100 KB state took the server past
1.5 GB in 10 s). moto 5.2.5 runs an Express state machine's executions as Standard ones
(its interpreter's ``sm_type`` is always ``STANDARD``), so their histories are bounded
alike.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Final, cast

from moto.stepfunctions.exceptions import ValidationException
from moto.stepfunctions.parser.api import (
    ExecutionFailedEventDetails,
    ExecutionStatus,
    HistoryEventType,
)
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.eval.event.event_manager import (
    EventHistoryContext,
    EventManager,
)
from moto.stepfunctions.parser.backend.execution import Execution as ParserExecution
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker

from localcloud.patches.registry import Method, Patch

INPUT_MAX_BYTES: Final = 262_144
"""StartExecution ``input``, in bytes of UTF-8."""
HISTORY_MAX_EVENTS: Final = 25_000
"""Events in a Standard execution's history."""
HISTORY_ERROR: Final = "States.Runtime"
HISTORY_CAUSE: Final = (
    f"The execution reached the maximum number of history events ({HISTORY_MAX_EVENTS})."
)
_QUOTA: Final = "_localcloud_history_quota"
HISTORY_DATA_CHARACTERS: Final = 16 * 1024 * 1024
"""The events' ``input`` and ``output`` one execution's history keeps (characters)."""
SERVER_HISTORY_DATA_CHARACTERS: Final = 512 * 1024 * 1024
"""The same, every execution of the server together (characters)."""
_DATA: Final = "_localcloud_history_data"
_DATA_LOCK = threading.Lock()
_server_data = 0


def forget_history_data() -> None:
    """The server's histories' data counted from nothing again (a new account: the one
    before, and its histories, are gone)."""
    global _server_data
    with _DATA_LOCK:
        _server_data = 0


def _take_data(manager: EventManager, size: int) -> bool:
    """Count ``size`` characters of data against the execution's and the server's
    budgets, if both have room."""
    global _server_data
    with _DATA_LOCK:
        held = int(getattr(manager, _DATA, 0))
        if held + size > HISTORY_DATA_CHARACTERS:
            return False
        if _server_data + size > SERVER_HISTORY_DATA_CHARACTERS:
            return False
        setattr(manager, _DATA, held + size)
        _server_data += size
        return True


def _kept(manager: EventManager, event_details: EventDetails | None) -> EventDetails | None:
    """``event_details`` with each ``input`` and ``output`` the budgets do not admit kept
    as ``""``, marked ``truncated``."""
    if not event_details:
        return event_details
    kept: dict[str, Any] = {}
    for key, detail in event_details.items():
        if isinstance(detail, dict):
            detail = dict(detail)
            for field in ("input", "output"):
                value = detail.get(field)
                if isinstance(value, str) and value and not _take_data(manager, len(value)):
                    detail[field] = ""
                    detail[f"{field}Details"] = {"truncated": True}
        kept[key] = detail
    return cast(EventDetails, kept)


def input_violation(execution_input: str | None) -> str | None:
    """What is wrong with a StartExecution ``input`` of more than :data:`INPUT_MAX_BYTES`
    bytes of UTF-8 (in the words of AWS's validation message), or ``None``."""
    if execution_input is None:
        return None
    if len(execution_input.encode("utf-8", "surrogatepass")) <= INPUT_MAX_BYTES:
        return None
    return (
        "Value at 'input' failed to satisfy constraint: Member must have size less than or "
        f"equal to {INPUT_MAX_BYTES} bytes in UTF-8 encoding"
    )


def validation_error(violations: list[str]) -> ValidationException:
    """AWS's ``ValidationException`` for a request's ``violations`` (each one
    "Value … at '<member>' failed to satisfy constraint: …"), all in one message:
    "N validation error(s) detected: <violation>; <violation>"."""
    count = len(violations)
    plural = "s" if count > 1 else ""
    return ValidationException(
        f"{count} validation error{plural} detected: {'; '.join(violations)}"
    )


def admits(number: int, event_type: str) -> bool:
    """Whether a Standard execution's history records its event ``number`` (from 1) of
    type ``event_type``: any below :data:`HISTORY_MAX_EVENTS`; the last one only if it is
    ``ExecutionSucceeded``; none after it."""
    if number < HISTORY_MAX_EVENTS:
        return True
    return number == HISTORY_MAX_EVENTS and event_type == HistoryEventType.ExecutionSucceeded


@dataclass
class HistoryQuota:
    """One Standard execution's history count; ``env`` is its program's environment (the
    one whose error ends the execution)."""

    env: Environment
    count: int = 0
    reached: bool = False
    last_event_id: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


def _failure() -> ExecutionFailedEventDetails:
    return ExecutionFailedEventDetails(error=HISTORY_ERROR, cause=HISTORY_CAUSE)


def _bounded_add_event(original: Method) -> Method:
    def add_event(
        self: EventManager,
        context: EventHistoryContext,
        event_type: HistoryEventType,
        event_details: EventDetails | None = None,
        timestamp: Any = None,
        update_source_event_id: bool = True,
    ) -> int:
        """moto's ``add_event``, counted against the execution's :class:`HistoryQuota`
        (a manager without one records as moto does), its data within the budgets."""
        event_details = _kept(self, event_details)
        quota: HistoryQuota | None = getattr(self, _QUOTA, None)
        if quota is None:
            return int(
                original(
                    self, context, event_type, event_details, timestamp, update_source_event_id
                )
            )
        with quota.lock:
            if quota.reached:
                return quota.last_event_id  # the history is closed: nothing more is recorded
            if admits(quota.count + 1, event_type):
                quota.last_event_id = int(
                    original(
                        self, context, event_type, event_details, timestamp, update_source_event_id
                    )
                )
                quota.count += 1
                return quota.last_event_id
            quota.reached = True
            quota.last_event_id = int(
                original(
                    self,
                    EventHistoryContext(previous_event_id=quota.last_event_id),
                    HistoryEventType.ExecutionFailed,
                    # moto's EventDetails is a total TypedDict; the event takes one key.
                    cast(EventDetails, {"executionFailedEventDetails": _failure()}),
                    None,
                    True,
                )
            )
            quota.count += 1
        quota.env.set_error(_failure())  # every frame stops; the program records nothing more
        return quota.last_event_id

    return add_event


def _quota_per_standard_execution(original: Method) -> Method:
    def _get_evaluation_environment(self: ExecutionWorker) -> Environment:
        """moto's environment for the execution, its history counted when the workflow is
        Standard."""
        env: Environment = original(self)
        if env.is_standard_workflow():
            setattr(env.event_manager, _QUOTA, HistoryQuota(env))
        return env

    return _get_evaluation_environment


def reflect(execution: ParserExecution) -> None:
    """At the end of ``execution``: if its history reached the quota, it failed with the
    quota's error and cause, whatever its program's frames raised on their way out."""
    worker = execution.exec_worker
    env = worker.env if worker is not None else None
    quota: HistoryQuota | None = getattr(env.event_manager, _QUOTA, None) if env else None
    if quota is not None and quota.reached:
        execution.exec_status = ExecutionStatus.FAILED
        execution.error = HISTORY_ERROR
        execution.cause = HISTORY_CAUSE


PATCHES: Final = (
    Patch(
        EventManager,
        "add_event",
        ("self", "context", "event_type", "event_details", "timestamp", "update_source_event_id"),
        _bounded_add_event,
        "a Standard execution's history holds 25,000 events; the execution fails at the "
        "last unless it succeeds there; the data histories hold is bounded (truncated as "
        "AWS marks it)",
    ),
    Patch(
        ExecutionWorker,
        "_get_evaluation_environment",
        ("self",),
        _quota_per_standard_execution,
        "each Standard execution's history is counted against its quota",
    ),
)

__all__ = [
    "HISTORY_DATA_CHARACTERS",
    "SERVER_HISTORY_DATA_CHARACTERS",
    "forget_history_data",
    "HISTORY_CAUSE",
    "HISTORY_ERROR",
    "HISTORY_MAX_EVENTS",
    "INPUT_MAX_BYTES",
    "PATCHES",
    "HistoryQuota",
    "admits",
    "input_violation",
    "reflect",
    "validation_error",
]
