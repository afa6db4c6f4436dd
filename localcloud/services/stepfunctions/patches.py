"""moto's Step Functions, refusing and reporting what AWS refuses and reports (more in
:mod:`.refusals`).

moto 5.2.5 differs from AWS here:

* ``StartExecution`` -- with ``execute_state_machine`` (the local cloud's mode) moto
  accepts any execution ``name``, and names one started without a name ``None`` (AWS
  gives it a UUID, as the patch does). AWS refuses a name longer than 80 characters
  and an input over 262,144 bytes (:mod:`.quotas`) with one ``ValidationException``
  naming each, before anything else, then a name holding white space, ``< > { } [ ] ? * "
  # % \\ ^ | ~ ` $ & , ; : /``, a control character (U+0000-001F, U+007F-009F,
  U+FFFE-FFFF), a surrogate (U+D800-DFFF) or U+10FFFF (``InvalidName``). Source: the
  StartExecution API reference, request parameters ``name`` (shape ``Name``: length 1-80)
  and ``input``, and its error list
  (https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html;
  the same text is in botocore's ``stepfunctions`` service model).
* ``StopExecution`` -- moto drops ``error`` and ``cause`` (DescribeExecution and the
  ``ExecutionAborted`` history event show ``""``), and in the interpreter mode it answers
  before the execution has stopped, so the response has no ``stopDate`` (which the
  StopExecution API reference marks as required in the response). After the patch the
  execution is ``ABORTED`` when StopExecution returns, and the ``stopDate``, ``error``
  and ``cause`` it was given are the ones DescribeExecution and the history show. An
  execution stopped in an inline Map ended ``FAILED`` in moto (``States.Runtime``,
  ``AttributeError``, raised by its aborted iterations); it stays ``ABORTED``.
"""

from __future__ import annotations

import datetime
import re
import time
import uuid
from typing import Any, Final

from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.stepfunctions.exceptions import ExecutionDoesNotExist, InvalidName
from moto.stepfunctions.models import Execution as ModelExecution
from moto.stepfunctions.models import StateMachine, StepFunctionBackend
from moto.stepfunctions.parser.api import ExecutionStatus
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.program_state import (
    ProgramEnded,
    ProgramError,
    ProgramRunning,
    ProgramStopped,
)
from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication
from moto.stepfunctions.parser.backend.execution import Execution as ParserExecution
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse

from localcloud.patches.registry import Method, Patch, PatchMismatch
from localcloud.services.stepfunctions import quotas
from localcloud.services.stepfunctions.quotas import input_violation, validation_error
from localcloud.services.stepfunctions.refusals import check_execution_input
from localcloud.services.stepfunctions.reports import report_end
from localcloud.services.stepfunctions.status_events import status_changed
from localcloud.services.stepfunctions.threads import execution_slot

NAME_MAX_LENGTH = 80
"""StartExecution ``name``: shape ``Name``, length 1-80 (API reference, botocore model)."""

_NAME_FORBIDDEN = re.compile(
    r"[\s<>{}\[\]?*\"#%\\^|~`$&,;:/"
    r"\x00-\x1f\x7f-\x9f\ufffe\uffff\ud800-\udfff\U0010ffff]"
)
"""What a StartExecution ``name`` must not contain (API reference, parameter ``name``):
white space; brackets ``< > { } [ ]``; wildcards ``? *``; ``" # % \\ ^ | ~ ` $ & , ; : /``;
control characters U+0000-001F, U+007F-009F, U+FFFE-FFFF; surrogates U+D800-DFFF;
U+10FFFF. White space is Unicode white space (``\\s``)."""

_STOP_GRACE_S = 5.0
"""How long StopExecution waits for a just-started execution's interpreter to enter its
first state (moto runs it on threads; a stop before then leaves no ExecutionAborted event)."""


def name_violation(name: str | None) -> str | None:
    """What is wrong with the length of an execution ``name`` (in the words of AWS's
    validation message), or ``None``; ``None`` (no name: AWS makes a UUID) passes."""
    if name is None:
        return None
    if len(name) > NAME_MAX_LENGTH:
        return (
            f"Value '{name}' at 'name' failed to satisfy constraint: Member must have length "
            f"less than or equal to {NAME_MAX_LENGTH}"
        )
    if not name:
        return (
            "Value '' at 'name' failed to satisfy constraint: Member must have length "
            "greater than or equal to 1"
        )
    return None


def check_start_execution(name: str | None, execution_input: str | None) -> None:
    """Refuse a StartExecution request as AWS does.

    First the request's shape, every fault in one ``ValidationException`` ("1 validation
    error detected: Value '...' at 'name' failed to satisfy constraint: Member must have
    length less than or equal to 80"; "2 validation errors detected: …; …" with an input
    over 262,144 bytes too, :func:`.quotas.input_violation`); then a name with a forbidden
    character, ``InvalidName`` ("Invalid Name: '...'"); then input that is not JSON,
    ``InvalidExecutionInput``. All HTTP 400. ``name`` ``None`` (AWS makes a UUID) passes.
    Sources: StartExecution API reference, parameters ``name`` and ``input``, and Errors.
    """
    violations = [v for v in (name_violation(name), input_violation(execution_input)) if v]
    if violations:
        raise validation_error(violations)
    if name is not None and _NAME_FORBIDDEN.search(name):
        raise InvalidName(f"Invalid Name: '{name}'")
    check_execution_input(execution_input)


def _checked_start_execution(original: Method) -> Method:
    def start_execution(
        self: StepFunctionBackend,
        state_machine_arn: str,
        name: str | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        if name is None:
            # AWS names an execution started without one with a UUID; moto's interpreter
            # would name it "None", and a second one would collide with it.
            name = str(uuid.uuid4())
        check_start_execution(name, args[0] if args else kwargs.get("execution_input"))
        with execution_slot():  # ExecutionLimitExceeded past the running executions' quota
            return original(self, state_machine_arn, name, *args, **kwargs)

    return start_execution


# --- Step Functions: StopExecution error, cause and stopDate ----------------------------


def _stop_execution_response(_original: Method) -> Method:
    def stop_execution(self: StepFunctionResponse) -> ActionResult:
        """StopExecution passing ``error`` and ``cause`` on (moto's reads only the ARN);
        the response carries ``stopDate``, required in StopExecutionOutput."""
        backend: Any = self.stepfunction_backend
        execution = backend.stop_execution(
            self._get_param("executionArn"),
            error=self._get_param("error"),
            cause=self._get_param("cause"),
        )
        return ActionResult({"stopDate": execution.stop_date})

    return stop_execution


def _backend_stop_execution(_original: Method) -> Method:
    def stop_execution(
        self: StepFunctionBackend,
        execution_arn: str,
        error: str | None = None,
        cause: str | None = None,
    ) -> Any:
        self._validate_execution_arn(execution_arn)
        state_machine = self._get_state_machine_for_execution(execution_arn)
        stop: Any = state_machine.stop_execution
        return stop(execution_arn, error=error, cause=cause)

    return stop_execution


def _state_machine_stop_execution(_original: Method) -> Method:
    def stop_execution(
        self: StateMachine,
        execution_arn: str,
        error: str | None = None,
        cause: str | None = None,
    ) -> Any:
        """moto's ``StateMachine.stop_execution``, with the caller's error and cause in
        place of the ``""`` moto passes."""
        execution = next((x for x in self.executions if x.execution_arn == execution_arn), None)
        if execution is None:
            raise ExecutionDoesNotExist(f"Execution Does Not Exist: '{execution_arn}'")
        execution.stop(stop_date=utcnow(), error=error, cause=cause)
        return execution

    return stop_execution


def _model_execution_stop(original: Method) -> Method:
    def stop(self: ModelExecution, *args: Any, **kwargs: Any) -> None:
        """moto's mock execution (``execute_state_machine`` off): keep error and cause for
        DescribeExecution (its canned history cannot show them)."""
        original(self, *args, **kwargs)
        self.error = kwargs.get("error")
        self.cause = kwargs.get("cause")

    return stop


def _started_environment(execution: ParserExecution) -> Environment | None:
    """The execution's interpreter environment once its program has entered its first
    state, waiting up to ``_STOP_GRACE_S`` for moto's worker threads (``None`` if there is
    no environment by then). A stop any earlier would leave no ``ExecutionAborted`` event:
    moto's interpreter records that event only once it has begun the program's body."""
    deadline = time.monotonic() + _STOP_GRACE_S
    while True:
        worker = execution.exec_worker
        env: Environment | None = worker.env if worker is not None else None
        if env is not None:
            state = env.program_state()
            begun = len(env.event_manager.get_event_history()) > 1  # past ExecutionStarted
            if state is not None and (begun or not isinstance(state, ProgramRunning)):
                return env
        if execution.exec_status != ExecutionStatus.RUNNING or time.monotonic() > deadline:
            return env
        time.sleep(0.005)


def _record_stop(execution: ParserExecution, stopped: ProgramStopped) -> None:
    execution.exec_status = ExecutionStatus.ABORTED
    execution.stop_date = stopped.stop_date
    execution.error = stopped.error
    execution.cause = stopped.cause


def _parser_execution_stop(original: Method) -> Method:
    def stop(
        self: ParserExecution,
        stop_date: datetime.datetime,
        error: str | None,
        cause: str | None,
    ) -> None:
        """Stop the interpreter (its ``ExecutionAborted`` event takes error and cause from
        here) and mark the execution ``ABORTED`` before StopExecution answers, as AWS
        does, rather than whenever the worker thread notices."""
        env = _started_environment(self)
        if env is None:
            return
        if stop_date.tzinfo is None:
            stop_date = stop_date.replace(tzinfo=datetime.UTC)
        original(self, stop_date=stop_date, error=error, cause=cause)
        state = env.program_state()
        if isinstance(state, ProgramStopped):
            _record_stop(self, state)
            status_changed(self)

    return stop


def _stop_kept(original: Method) -> Method:
    def set_error(self: Environment, error: Any) -> None:
        """moto's ``set_error``, except on a stopped environment: an execution (or a Map
        iteration, a Parallel branch) stopped stays stopped, whatever its frames raise on
        their way out (moto's inline Map raised ``AttributeError`` there, and a stopped
        Map ended ``FAILED`` with ``States.Runtime``)."""
        if isinstance(self.program_state(), ProgramStopped):
            return
        original(self, error)

    return set_error


def _reflect_execution_status(original: Method) -> Method:
    def reflect(self: BaseExecutionWorkerCommunication) -> None:
        """moto's end-of-run bookkeeping, keeping a stopped execution's stop date, error
        and cause (moto overwrites the date with "now" and leaves error and cause out), and
        setting an execution's output, or its error and cause, before moto sets the status
        that shows them (moto sets the status first: a DescribeExecution in between read
        ``SUCCEEDED`` with no ``output``)."""
        worker = self.execution.exec_worker
        env = worker.env if worker is not None else None
        state = env.program_state() if env is not None else None
        if isinstance(state, ProgramEnded):
            self.execution.output = env.states.get_input()  # type: ignore[union-attr]
        elif isinstance(state, ProgramError) and state.error is not None:
            self.execution.error = state.error.get("error")
            self.execution.cause = state.error.get("cause")
        original(self)
        if isinstance(state, ProgramStopped):
            _record_stop(self.execution, state)
        quotas.reflect(self.execution)
        report_end(self.execution)
        status_changed(self.execution)

    return reflect


# --- SQS: message contents --------------------------------------------------------------


def parser_backend_inherits_stop_execution() -> None:
    """The Step Functions patches reach the interpreter's ``stop_execution`` only while
    ``StepFunctionsParserBackend`` inherits it from ``StepFunctionBackend``.

    Raises:
        PatchMismatch: it defines its own now.
    """
    if "stop_execution" in vars(StepFunctionsParserBackend):
        raise PatchMismatch(
            "moto changed: moto.stepfunctions.parser.models.StepFunctionsParserBackend."
            "stop_execution now has its own definition, which the patches do not reach"
        )


PATCHES: Final = (
    Patch(
        StepFunctionBackend,
        "start_execution",
        ("self", "state_machine_arn", "name", "execution_input"),
        _checked_start_execution,
        "StartExecution must refuse the names and input AWS refuses",
    ),
    Patch(
        StepFunctionsParserBackend,
        "start_execution",
        ("self", "state_machine_arn", "name", "execution_input"),
        _checked_start_execution,
        "StartExecution must refuse the names and input AWS refuses (the interpreter's "
        "backend), and executions past the 1,000 running ones",
    ),
    Patch(
        StepFunctionResponse,
        "stop_execution",
        ("self",),
        _stop_execution_response,
        "StopExecution answers with its stopDate",
    ),
    Patch(
        StepFunctionBackend,
        "stop_execution",
        ("self", "execution_arn"),
        _backend_stop_execution,
        "StopExecution keeps error and cause",
    ),
    Patch(
        StateMachine,
        "stop_execution",
        ("self", "execution_arn"),
        _state_machine_stop_execution,
        "StopExecution keeps error and cause",
    ),
    Patch(
        ModelExecution,
        "stop",
        ("self",),
        _model_execution_stop,
        "a stopped execution records error and cause",
    ),
    Patch(
        ParserExecution,
        "stop",
        ("self", "stop_date", "error", "cause"),
        _parser_execution_stop,
        "the interpreter's execution is ABORTED when StopExecution returns",
    ),
    Patch(
        Environment,
        "set_error",
        ("self", "error"),
        _stop_kept,
        "a stopped execution stays ABORTED, a Map running included, whatever fails after",
    ),
    Patch(
        BaseExecutionWorkerCommunication,
        "_reflect_execution_status",
        ("self",),
        _reflect_execution_status,
        "an aborted execution keeps its stop's error and cause; one that reached the history "
        "quota fails with its error; a failed one is said once; the end reaches EventBridge "
        "as AWS's status-change event",
    ),
)
CHECKS: Final = (parser_backend_inherits_stop_execution,)
