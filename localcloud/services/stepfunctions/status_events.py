"""Step Functions' own events on the account's default bus: ``Step Functions Execution
Status Change`` (source ``aws.states``) each time a Standard workflow's execution starts
(``RUNNING``) and when it ends (``SUCCEEDED``, ``FAILED``, ``TIMED_OUT``, ``ABORTED``), so
that rules matching them fire. Express workflows send none, as on AWS.

The event's ``detail`` (source: "Step Functions execution status change events" in the
Step Functions developer guide)::

    {"executionArn", "stateMachineArn", "name", "status",
     "startDate": <epoch ms>, "stopDate": <epoch ms> | null,
     "input": <JSON text>, "inputDetails": {"included": true},
     "output": <JSON text> | null, "outputDetails": {"included": true} | null,
     "error": … | null, "cause": … | null}

and its ``resources`` hold the execution's ARN. Each status is put once per execution,
however many of moto's code paths reach it (a stop is reflected twice).
"""

from __future__ import annotations

import datetime
import json
import threading
from typing import Any, Final

from moto.stepfunctions.parser.api import ExecutionStatus, StateMachineType
from moto.stepfunctions.parser.backend.execution import Execution as ParserExecution

from localcloud.patches.registry import Method, Patch

SOURCE: Final = "aws.states"
DETAIL_TYPE: Final = "Step Functions Execution Status Change"
_PUT = threading.Lock()
_SENT_ATTRIBUTE: Final = "_localcloud_statuses_sent"


def _epoch_ms(moment: Any) -> int | None:
    if not isinstance(moment, datetime.datetime):
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1000)


def _text(value: Any) -> str:
    return json.dumps(value, separators=(",", ":"))


def detail(execution: ParserExecution, status: ExecutionStatus) -> dict[str, Any]:
    """The event's ``detail`` for ``execution`` now in ``status``."""
    succeeded = status == ExecutionStatus.SUCCEEDED
    ended = status != ExecutionStatus.RUNNING
    return {
        "executionArn": execution.exec_arn,
        "stateMachineArn": execution.state_machine_arn,
        "name": execution.name,
        "status": str(status.value if hasattr(status, "value") else status),
        "startDate": _epoch_ms(execution.start_date),
        "stopDate": _epoch_ms(execution.stop_date) if ended else None,
        "input": _text(execution.input_data),
        "inputDetails": {"included": True},
        "output": _text(execution.output) if succeeded else None,
        "outputDetails": {"included": True} if succeeded else None,
        "error": execution.error if ended else None,
        "cause": execution.cause if ended else None,
    }


def workflow_type(execution: ParserExecution) -> str:
    """``STANDARD`` or ``EXPRESS``: the state machine's ``type`` (moto gives every
    execution ``sm_type`` ``STANDARD``, whatever its state machine is)."""
    return str(getattr(execution.state_machine, "type", None) or execution.sm_type)


def status_changed(execution: ParserExecution, status: ExecutionStatus | None = None) -> None:
    """Put the execution's status change on its account's default bus, once per status
    (a Standard workflow's only)."""
    status = status or execution.exec_status
    if status is None or workflow_type(execution) != StateMachineType.STANDARD:
        return
    with _PUT:
        sent: set[str] = getattr(execution, _SENT_ATTRIBUTE, set())
        if status in sent:
            return
        sent.add(status)
        setattr(execution, _SENT_ATTRIBUTE, sent)
    from moto.events.models import events_backends

    events_backends[execution.account_id][execution.region_name].put_events(
        [
            {
                "Source": SOURCE,
                "DetailType": DETAIL_TYPE,
                "Detail": json.dumps(detail(execution, status)),
                "Resources": [execution.exec_arn],
            }
        ]
    )


def _start(original: Method) -> Method:
    def start(self: ParserExecution) -> None:
        """Put ``RUNNING`` before the interpreter's threads run (so that it comes before
        the end), then start as moto does."""
        if self.exec_worker is None:
            status_changed(self, ExecutionStatus.RUNNING)
        original(self)

    return start


PATCHES: Final = (
    Patch(
        ParserExecution,
        "start",
        ("self",),
        _start,
        "a Standard execution's start reaches EventBridge as AWS's status-change event",
    ),
)

__all__ = ["DETAIL_TYPE", "PATCHES", "SOURCE", "detail", "status_changed", "workflow_type"]
