"""Make moto refuse, and report, what AWS refuses and reports in three APIs.

moto 5.2.5 differs from AWS here, and :func:`install` patches its backends so the local
cloud answers as AWS does (the AWS CLI and boto3 see the same error code and HTTP 400):

* Step Functions ``StartExecution`` -- with ``execute_state_machine`` (the local cloud's
  mode) moto accepts any execution ``name``, and names one started without a name
  ``None`` (AWS gives it a UUID, as the patch does). AWS refuses a name longer than 80 characters
  (``ValidationException``) and a name holding white space, ``< > { } [ ] ? * " # % \\ ^ |
  ~ ` $ & , ; : /``, a control character (U+0000-001F, U+007F-009F, U+FFFE-FFFF), a
  surrogate (U+D800-DFFF) or U+10FFFF (``InvalidName``). Source: the StartExecution API
  reference, request parameter ``name`` (shape ``Name``: length 1-80), and its error list
  (https://docs.aws.amazon.com/step-functions/latest/apireference/API_StartExecution.html;
  the same text is in botocore's ``stepfunctions`` service model).
* Step Functions ``StopExecution`` -- moto drops ``error`` and ``cause`` (DescribeExecution
  and the ``ExecutionAborted`` history event show ``""``), and in the interpreter mode it
  answers before the execution has stopped, so the response has no ``stopDate`` (which
  the StopExecution API reference marks as required in the response). After the patch the
  execution is ``ABORTED`` when StopExecution returns, and the ``stopDate``, ``error``
  and ``cause`` it was given are the ones DescribeExecution and the history show.
* SQS ``SendMessage`` / ``SendMessageBatch`` -- moto stores any body. AWS allows only
  ``#x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF`` and otherwise
  "rejects the message and returns an InvalidMessageContents error" (SendMessage and
  SendMessageBatch API references); a ``String`` message attribute value "has the same
  restrictions on the content as the message body" (``MessageAttributeValue`` reference).
  In a batch, results are "reported individually": the bad entry is in ``Failed`` with
  code ``InvalidMessageContents`` and the others are sent.
"""

from __future__ import annotations

import datetime
import inspect
import re
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.sqs.constants import MAXIMUM_MESSAGE_LENGTH
from moto.sqs.exceptions import (
    BatchEntryIdsNotDistinct,
    BatchRequestTooLong,
    InvalidBatchEntryId,
    SQSException,
    TooManyEntriesInBatchRequest,
)
from moto.sqs.models import Message, SQSBackend
from moto.stepfunctions.exceptions import (
    ExecutionDoesNotExist,
    InvalidName,
    NameTooLongException,
    ValidationException,
)
from moto.stepfunctions.models import Execution as ModelExecution
from moto.stepfunctions.models import StateMachine, StepFunctionBackend
from moto.stepfunctions.parser.api import ExecutionStatus
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.program_state import ProgramRunning, ProgramStopped
from moto.stepfunctions.parser.backend.execution import BaseExecutionWorkerCommunication
from moto.stepfunctions.parser.backend.execution import Execution as ParserExecution
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse

Method = Callable[..., Any]

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

_SQS_OUTSIDE_ALLOWED = re.compile(r"[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
"""A character outside SQS's allowed set ``#x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to
#xFFFD | #x10000 to #x10FFFF`` (SendMessage API reference, ``MessageBody``)."""

SQS_ALLOWED_SET = "#x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF]"
"""The allowed set as AWS spells it in the InvalidMessageContents message."""

_STOP_GRACE_S = 5.0
"""How long StopExecution waits for a just-started execution's interpreter to enter its
first state (moto runs it on threads; a stop before then leaves no ExecutionAborted event)."""

_ORIGINALS: dict[tuple[type, str], Method] = {}
_LOCK = threading.Lock()


class InvalidMessageContents(SQSException):
    """SQS ``InvalidMessageContents`` (HTTP 400): "The message contains characters outside
    the allowed set." (SQS API reference, Common errors of SendMessage; botocore model)."""

    code = "InvalidMessageContents"


# --- Step Functions: StartExecution name ------------------------------------------------


def check_execution_name(name: str | None) -> None:
    """Refuse an execution name as AWS does; ``None`` (no name: AWS makes a UUID) passes.

    A length outside 1-80 is ``ValidationException`` ("1 validation error detected: Value
    '...' at 'name' failed to satisfy constraint: Member must have length less than or
    equal to 80", checked before the content, as AWS validates the request's shape first);
    a forbidden character is ``InvalidName`` ("Invalid Name: '...'"). Both HTTP 400.
    Sources: StartExecution API reference, parameter ``name`` and Errors.
    """
    if name is None:
        return
    if len(name) > NAME_MAX_LENGTH:
        raise NameTooLongException(name)
    if not name:
        raise ValidationException(
            "1 validation error detected: Value '' at 'name' failed to satisfy constraint: "
            "Member must have length greater than or equal to 1"
        )
    if _NAME_FORBIDDEN.search(name):
        raise InvalidName(f"Invalid Name: '{name}'")


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
        check_execution_name(name)
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

    return stop


def _reflect_execution_status(original: Method) -> Method:
    def reflect(self: BaseExecutionWorkerCommunication) -> None:
        """moto's end-of-run bookkeeping, keeping a stopped execution's stop date, error
        and cause (moto overwrites the date with "now" and leaves error and cause out)."""
        original(self)
        worker = self.execution.exec_worker
        env = worker.env if worker is not None else None
        state = env.program_state() if env is not None else None
        if isinstance(state, ProgramStopped):
            _record_stop(self.execution, state)

    return reflect


# --- SQS: message contents --------------------------------------------------------------


def invalid_contents(body: str, message_attributes: Mapping[str, Any] | None) -> str | None:
    """Why SQS would refuse this body or these message attributes, or ``None``.

    The body message is AWS's own wording ("Invalid binary character '#x7' was found in the
    message body, the set of allowed characters is ...", as quoted from real SQS replies in
    github.com/asim/nitro-plugins/issues/437 and Particular/NServiceBus.AmazonSQS#2630).
    For a ``String`` attribute value the wording is ours: AWS documents the rule
    (``MessageAttributeValue``) but not the message.
    """
    found = _SQS_OUTSIDE_ALLOWED.search(body)
    if found:
        return (
            f"Invalid binary character '{_hex(found.group())}' was found in the message "
            f"body, the set of allowed characters is {SQS_ALLOWED_SET}."
        )
    for name, value in (message_attributes or {}).items():
        text = value.get("StringValue")
        if not str(value.get("DataType", "")).startswith("String") or not isinstance(text, str):
            continue
        found = _SQS_OUTSIDE_ALLOWED.search(text)
        if found:
            return (
                f"Invalid binary character '{_hex(found.group())}' was found in the value "
                f"of message attribute '{name}', the set of allowed characters is "
                f"{SQS_ALLOWED_SET}."
            )
    return None


def _hex(character: str) -> str:
    return f"#x{ord(character):X}"


def _checked_send_message(original: Method) -> Method:
    def send_message(
        self: SQSBackend,
        queue_name: str,
        message_body: str,
        message_attributes: dict[str, Any] | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        problem = invalid_contents(message_body, message_attributes)
        if problem is not None:
            self.get_queue(queue_name)  # a missing queue is reported first, as before
            raise InvalidMessageContents(problem)
        return original(self, queue_name, message_body, message_attributes, *args, **kwargs)

    return send_message


def _check_batch_request(entries: Mapping[str, Mapping[str, Any]]) -> None:
    """The whole-request checks moto's ``send_message_batch`` makes, over every entry
    (the refused ones included), in moto's order."""
    if any(not re.fullmatch(r"[\w-]{1,80}", entry["Id"]) for entry in entries.values()):
        raise InvalidBatchEntryId()
    length = sum(len(entry["MessageBody"]) for entry in entries.values())
    if length > MAXIMUM_MESSAGE_LENGTH:
        raise BatchRequestTooLong(length)
    seen: set[str] = set()
    for entry in entries.values():
        if entry["Id"] in seen:
            raise BatchEntryIdsNotDistinct(entry["Id"])
        seen.add(entry["Id"])
    if len(entries) > 10:
        raise TooManyEntriesInBatchRequest(len(entries))


def _checked_send_message_batch(original: Method) -> Method:
    def send_message_batch(
        self: SQSBackend, queue_name: str, entries: dict[str, dict[str, Any]]
    ) -> tuple[list[Message], list[dict[str, Any]]]:
        refused = {
            key: problem
            for key, entry in entries.items()
            if (problem := invalid_contents(entry["MessageBody"], entry.get("MessageAttributes")))
        }
        if not refused:
            result: tuple[list[Message], list[dict[str, Any]]] = original(self, queue_name, entries)
            return result
        self.get_queue(queue_name)
        _check_batch_request(entries)
        accepted = {key: entry for key, entry in entries.items() if key not in refused}
        messages, failed = original(self, queue_name, accepted) if accepted else ([], [])
        failed = failed + [
            {
                "Id": entries[key]["Id"],
                "SenderFault": True,
                "Code": InvalidMessageContents.code,
                "Message": problem,
            }
            for key, problem in refused.items()
        ]
        order = {entry["Id"]: position for position, entry in enumerate(entries.values())}
        return messages, sorted(failed, key=lambda item: order.get(item["Id"], len(order)))

    return send_message_batch


# --- install ----------------------------------------------------------------------------

_PATCHES: tuple[tuple[type, str, tuple[str, ...], Callable[[Method], Method]], ...] = (
    (
        StepFunctionBackend,
        "start_execution",
        ("self", "state_machine_arn", "name"),
        _checked_start_execution,
    ),
    (
        StepFunctionsParserBackend,
        "start_execution",
        ("self", "state_machine_arn", "name"),
        _checked_start_execution,
    ),
    (StepFunctionResponse, "stop_execution", ("self",), _stop_execution_response),
    (StepFunctionBackend, "stop_execution", ("self", "execution_arn"), _backend_stop_execution),
    (StateMachine, "stop_execution", ("self", "execution_arn"), _state_machine_stop_execution),
    (ModelExecution, "stop", ("self",), _model_execution_stop),
    (ParserExecution, "stop", ("self", "stop_date", "error", "cause"), _parser_execution_stop),
    (
        BaseExecutionWorkerCommunication,
        "_reflect_execution_status",
        ("self",),
        _reflect_execution_status,
    ),
    (
        SQSBackend,
        "send_message",
        ("self", "queue_name", "message_body", "message_attributes"),
        _checked_send_message,
    ),
    (
        SQSBackend,
        "send_message_batch",
        ("self", "queue_name", "entries"),
        _checked_send_message_batch,
    ),
)

_MUST_INHERIT: tuple[tuple[type, str], ...] = ((StepFunctionsParserBackend, "stop_execution"),)
"""Methods the patches reach only while the subclass does not define its own."""


def install() -> None:
    """Apply every patch (idempotent). Raises ``RuntimeError``, patching nothing, if moto no
    longer has a method, or its parameters, as this module expects: better than silently
    not checking."""
    with _LOCK:
        for owner, name in _MUST_INHERIT:
            if name in vars(owner):
                raise RuntimeError(
                    f"moto changed: {_where(owner, name)} now has its own definition, which "
                    "localcloud.api_checks does not patch"
                )
        pending = [
            (owner, name, _expected(owner, name, parameters), make)
            for owner, name, parameters, make in _PATCHES
            if (owner, name) not in _ORIGINALS
        ]
        for owner, name, original, make in pending:
            _ORIGINALS[(owner, name)] = original
            setattr(owner, name, make(original))


def _expected(owner: type, name: str, parameters: tuple[str, ...]) -> Method:
    """moto's ``owner.name``, defined on ``owner`` itself and taking ``parameters`` first."""
    method: object = vars(owner).get(name)
    if not callable(method):
        raise RuntimeError(
            f"moto changed: {_where(owner, name)} is missing; localcloud.api_checks cannot patch it"
        )
    found = tuple(inspect.signature(method).parameters)[: len(parameters)]
    if found != parameters:
        raise RuntimeError(
            f"moto changed: {_where(owner, name)} takes {found}, localcloud.api_checks "
            f"expects {parameters}"
        )
    return method


def uninstall() -> None:
    """Restore moto's own methods."""
    with _LOCK:
        for (owner, name), original in reversed(_ORIGINALS.items()):
            setattr(owner, name, original)
        _ORIGINALS.clear()


def installed() -> bool:
    return len(_ORIGINALS) == len(_PATCHES)


def original(owner: type, name: str) -> Method:
    """moto's own method behind a patch (``KeyError`` if not patched)."""
    return _ORIGINALS[(owner, name)]


def _where(owner: type, name: str) -> str:
    return f"{owner.__module__}.{owner.__qualname__}.{name}"
