"""Step Functions' payload quota, measured without writing the payload out.

AWS: a task's, state's or execution's input or output is at most 256 KiB of data as a
UTF-8 encoded string ("Step Functions service quotas", Maximum input or output size), and
Step Functions reports ``States.DataLimitExceeded`` "when the output of a connector is
larger than payload size quota", "when the output of a state is larger than payload size
quota" and "when, after Parameters processing, the input of a state is larger than the
payload size quota" (Developer Guide, "Error handling in Step Functions"). It is terminal:
``States.ALL`` does not catch it.

moto 5.2.5 checks a state's output (and a task's result) by writing it whole as JSON
(``moto.stepfunctions.parser.quotas.is_within_size_quota``). What a payload template builds
can name one value many times, and the JSON text repeats it each time: a Pass state whose
``Parameters`` named a 200 KB input string 1,000 times (a 17 KB definition) took the
server 400 MB to find the output too large, 20,000 times 8 GB. moto did not check the
input a state's ``Parameters`` built at all: a Task's parameters were written out whole
into its ``TaskScheduled`` event first.

Here :func:`payload_size` counts the bytes piece by piece and stops past the quota; moto's
check uses it, and what ``Parameters`` (``Arguments``) and a Map's ``ItemSelector`` build
is checked as soon as it is built (:func:`too_large`), failing the state with
``States.DataLimitExceeded``.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, Final, cast

from moto.stepfunctions.parser.api import ExecutionFailedEventDetails, HistoryEventType
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEvent,
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name import (
    StatesErrorName,
)
from moto.stepfunctions.parser.asl.component.common.error_name.states_error_name_type import (
    StatesErrorNameType,
)
from moto.stepfunctions.parser.asl.component.common.parargs import Parargs
from moto.stepfunctions.parser.asl.component.state import state as state_module
from moto.stepfunctions.parser.asl.component.state.exec.state_map.item_selector import (
    ItemSelector,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task import (
    state_task_lambda,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service import (
    state_task_service,
)
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails

from localcloud.patches.registry import Method, Patch

PAYLOAD_MAX_BYTES: Final = 262_144
"""A state's input or output, as UTF-8: 256 KiB."""


def _default(value: Any) -> str:
    """What moto writes for a value JSON has no form for: a date as ISO 8601, else str."""
    if isinstance(value, datetime.date):
        return value.isoformat()
    return str(value)


_ENCODER: Final = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, default=_default)


def _utf8_bytes(text: str, limit: int) -> int:
    if len(text) > limit:  # at least a byte a character
        return limit + 1
    return len(text.encode("utf-8", "surrogatepass"))


def payload_size(value: Any, limit: int = PAYLOAD_MAX_BYTES) -> int:
    """The UTF-8 bytes of ``value`` as a payload (a string as it is, anything else as
    compact JSON), counted piece by piece; ``limit + 1`` as soon as it is more than
    ``limit``, whatever the rest (never more than ``limit`` bytes of it are written)."""
    pieces = (value,) if isinstance(value, str) else _ENCODER.iterencode(value)
    size = 0
    for piece in pieces:
        size += _utf8_bytes(piece, limit)
        if size > limit:
            return limit + 1
    return size


def within_quota(value: Any) -> bool:
    """Whether ``value`` fits the payload quota (moto's ``is_within_size_quota``)."""
    return payload_size(value) <= PAYLOAD_MAX_BYTES


def data_limit_exceeded(env: Environment, cause: str) -> FailureEventException:
    """The failure of a state whose payload is over the quota: ``States.DataLimitExceeded``
    with ``cause``, as moto fails a state whose output is."""
    error = StatesErrorNameType.StatesStatesDataLimitExceeded
    return FailureEventException(
        failure_event=FailureEvent(
            env=env,
            error_name=StatesErrorName(typ=error),
            event_type=HistoryEventType.TaskFailed,
            # moto's EventDetails is a total TypedDict; the event takes one key.
            event_details=cast(
                EventDetails,
                {
                    "executionFailedEventDetails": ExecutionFailedEventDetails(
                        error=error.to_name(), cause=cause
                    )
                },
            ),
        )
    )


def state_name(env: Environment) -> str:
    """The name of the state ``env`` runs now (``""`` before the first)."""
    data: Any = env.states.context_object.context_object_data
    return str((data.get("State") or {}).get("Name", ""))


def too_large(env: Environment, what: str) -> FailureEventException:
    """``States.DataLimitExceeded`` for the state running in ``env``, whose ``what`` (its
    input after Parameters processing, …) is over the quota."""
    return data_limit_exceeded(
        env,
        f"The state/task '{state_name(env)}' has {what} with a size exceeding the maximum "
        "number of bytes service limit.",
    )


def _bounded_quota_check(_original: Method) -> Method:
    def is_within_size_quota(value: Any) -> bool:
        """moto's payload check, counting without writing the payload out."""
        return within_quota(value)

    return is_within_size_quota


def _checked_after(what: str) -> Any:
    def make(original: Method) -> Method:
        def _eval_body(self: Any, env: Environment) -> None:
            """moto's payload template, then the quota on what it built."""
            original(self, env)
            if env.stack and not within_quota(env.stack[-1]):
                raise too_large(env, what)

        return _eval_body

    return make


PATCHES: Final = (
    *(
        Patch(
            module,
            "is_within_size_quota",
            ("value",),
            _bounded_quota_check,
            "a payload over 256 KiB is found so without writing it out whole",
        )
        for module in (state_module, state_task_lambda, state_task_service)
    ),
    Patch(
        Parargs,
        "_eval_body",
        ("self", "env"),
        _checked_after("an input after Parameters processing"),
        "a state's input after Parameters processing is held to the 256 KiB payload quota",
    ),
    Patch(
        ItemSelector,
        "_eval_body",
        ("self", "env"),
        _checked_after("an item after ItemSelector processing"),
        "a Map iteration's input after ItemSelector processing is held to the 256 KiB quota",
    ),
)

__all__ = [
    "PATCHES",
    "PAYLOAD_MAX_BYTES",
    "data_limit_exceeded",
    "payload_size",
    "state_name",
    "too_large",
    "within_quota",
]
