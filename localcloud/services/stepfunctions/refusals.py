"""moto's Step Functions, refusing and failing as Step Functions does where moto is lenient.

moto 5.2.5 differs from AWS here:

* Errors of moto's interpreter backend (``moto.stepfunctions.parser.api``: ``InvalidDefinition``,
  ``InvalidExecutionInput``, ``StateMachineDoesNotExist`` …) declare their code as the
  attribute ``code`` and their status as ``status_code``, but the base class they share,
  moto's ``AWSError``, reads ``TYPE`` and ``STATUS``: each is answered with an empty code
  (``An error occurred () when calling …``). After the patch each carries its code.
* ``StartExecution`` with input that is not JSON: AWS answers ``InvalidExecutionInput``
  (400, "Invalid State Machine Execution Input: '<why>'"); moto's interpreter backend
  raises its own, code-less error with only the parser's words.
* ``CreateStateMachine`` with a name already taken: AWS returns the existing state machine
  only when the request is the same (definition, role, type, logging and tracing
  configuration) and otherwise answers ``StateMachineAlreadyExists`` (400, "State Machine
  Already Exists: '<arn>'"); moto always returns the existing one, silently keeping the
  old definition.
* A Choice rule whose ``Variable`` (or a ``…Path`` operand) names a path that does not
  exist: AWS fails the execution with ``States.Runtime``, cause "Invalid path '<path>': The
  choice state's condition path references an invalid value."; only ``IsPresent`` may test
  a missing path. moto's comparison is simply false, so the rule falls through to
  ``Default``. ``And``, ``Or`` and ``Not`` are evaluated left to right and stop early, as in
  moto, which is what lets ``IsPresent`` guard a comparison in an ``And``.

Sources: the StartExecution and CreateStateMachine API references (Errors), the Amazon States
Language specification (Choice Rules: "If the path is not present … the interpreter fails
the execution with States.Runtime"), and the answers Step Functions gives.
"""

from __future__ import annotations

import json
from typing import Any, Final, cast

from moto.core.exceptions import AWSError
from moto.stepfunctions.exceptions import InvalidExecutionInput
from moto.stepfunctions.models import StateMachine, StepFunctionBackend
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
from moto.stepfunctions.parser.asl.component.state.choice.comparison.comparison_func import (
    ComparisonFuncStringVariableSample,
    ComparisonFuncValue,
)
from moto.stepfunctions.parser.asl.component.state.choice.comparison.comparison_operator_type import (  # noqa: E501
    ComparisonOperatorType,
)
from moto.stepfunctions.parser.asl.component.state.choice.comparison.comparison_variable import (
    ComparisonVariable,
)
from moto.stepfunctions.parser.asl.component.state.choice.comparison.variable import (
    NoSuchVariable,
)
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.asl.eval.event.event_detail import EventDetails
from moto.stepfunctions.parser.asl.utils.json_path import NoSuchJsonPathError, extract_json

from localcloud.patches.registry import Method, Patch
from localcloud.services.stepfunctions.integrations import InvalidDefinition, first_refused


class StateMachineAlreadyExists(AWSError):
    """400 ``StateMachineAlreadyExists``: the name is taken by a state machine made with
    another definition, role, type, logging or tracing configuration."""

    TYPE = "StateMachineAlreadyExists"
    STATUS = 400


def check_execution_input(execution_input: str | None) -> None:
    """Refuse StartExecution input that is not JSON, as AWS does.

    Raises:
        InvalidExecutionInput: "Invalid State Machine Execution Input: '<why>'" (HTTP 400),
            ``<why>`` the JSON parser's reason.
    """
    if execution_input is None:
        return
    try:
        json.loads(execution_input)
    except ValueError as exc:
        raise InvalidExecutionInput(f"Invalid State Machine Execution Input: '{exc}'") from None


def _coded_error(original: Method) -> Method:
    def __init__(  # noqa: N807 (the method it replaces)
        self: AWSError,
        message: str,
        exception_type: str | None = None,
        status: int | None = None,
    ) -> None:
        kind = type(self)
        if exception_type is None and kind.TYPE is None:
            # moto.stepfunctions.parser.api declares ``code`` and ``status_code`` instead.
            declared = getattr(kind, "code", None)
            if isinstance(declared, str):
                exception_type = declared
                status = status or getattr(kind, "status_code", None)
        original(self, message, exception_type, status)

    return __init__


def _same_request(machine: StateMachine, kwargs: dict[str, Any]) -> bool:
    wanted = {
        "definition": kwargs.get("definition"),
        "roleArn": kwargs.get("roleArn"),
        "type": kwargs.get("sm_type") or "STANDARD",
        "loggingConfiguration": kwargs.get("loggingConfiguration") or {"level": "OFF"},
        "tracingConfiguration": kwargs.get("tracingConfiguration") or {"enabled": False},
    }
    return all(getattr(machine, field) == value for field, value in wanted.items())


def check_integrations(definition: str | None) -> None:
    """Refuse a definition calling a Task resource the local cloud does not run.

    Raises:
        InvalidDefinition: "Invalid State Machine Definition: 'UNSUPPORTED_LOCALLY: <why>
            at <path>'" (HTTP 400), as Step Functions names a definition's fault.
    """
    if definition is None:
        return
    try:
        document = json.loads(definition)
    except ValueError:
        return  # moto's own parser answers that
    refused = first_refused(document) if isinstance(document, dict) else None
    if refused is not None:
        path, reason = refused
        raise InvalidDefinition(
            f"Invalid State Machine Definition: 'UNSUPPORTED_LOCALLY: {reason} at {path}'"
        )


def _create_once(original: Method) -> Method:
    def create_state_machine(
        self: StepFunctionBackend, name: str, *args: Any, **kwargs: Any
    ) -> Any:
        request = dict(zip(_CREATE_PARAMETERS, args, strict=False)) | kwargs
        check_integrations(request.get("definition"))
        for machine in self.state_machines:
            if machine.name == name and not _same_request(machine, request):
                raise StateMachineAlreadyExists(f"State Machine Already Exists: '{machine.arn}'")
        return original(self, name, *args, **kwargs)

    return create_state_machine


_CREATE_PARAMETERS: Final = (
    "definition",
    "roleArn",
    "tags",
    "publish",
    "loggingConfiguration",
    "tracingConfiguration",
    "encryptionConfiguration",
    "version_description",
    "sm_type",
)
"""``create_state_machine``'s parameters after ``name``, in order (the patch checks them)."""


def _update_checked(original: Method) -> Method:
    def update_state_machine(
        self: StepFunctionBackend,
        arn: str,
        definition: str | None = None,
        *args: Any,
        **kwargs: Any,
    ) -> Any:
        check_integrations(definition)
        return original(self, arn, definition, *args, **kwargs)

    return update_state_machine


def _invalid_path(env: Environment, path: str) -> FailureEventException:
    cause = f"Invalid path '{path}': The choice state's condition path references an invalid value."
    return FailureEventException(
        failure_event=FailureEvent(
            env=env,
            error_name=StatesErrorName(typ=StatesErrorNameType.StatesRuntime),
            event_type=HistoryEventType.ExecutionFailed,
            # moto's EventDetails is a total TypedDict; the interpreter reads one key.
            event_details=cast(
                EventDetails,
                {
                    "executionFailedEventDetails": ExecutionFailedEventDetails(
                        error=StatesErrorNameType.StatesRuntime.to_name(), cause=cause
                    )
                },
            ),
        )
    )


def _choice_path_must_exist(_original: Method) -> Method:
    def _eval_body(self: ComparisonVariable, env: Environment) -> None:
        """moto's comparison of a Choice rule's ``Variable``, failing the execution with
        ``States.Runtime`` when the path (or a ``…Path`` operand's) does not exist, unless
        the operator is ``IsPresent``."""
        self.variable.eval(env)
        comparison = self.comparison_function
        tests_presence = comparison.operator_type == ComparisonOperatorType.IsPresent
        if isinstance(env.stack[-1], NoSuchVariable) and not tests_presence:
            raise _invalid_path(env, self.variable.string_sampler.literal_value)
        if isinstance(comparison, ComparisonFuncStringVariableSample):
            operand = comparison.string_variable_sample
            try:
                operand.eval(env=env)
            except FailureEventException:
                raise _invalid_path(env, operand.literal_value) from None
            env.stack.pop()
        elif isinstance(comparison, ComparisonFuncValue) and comparison.operator_type.name.endswith(
            "Path"
        ):  # NumericEqualsPath …
            try:  # the operator reads the operand's path from the state's input
                extract_json(str(comparison.value), env.stack[-2])
            except NoSuchJsonPathError:
                raise _invalid_path(env, str(comparison.value)) from None
        comparison.eval(env)

    return _eval_body


PATCHES: Final = (
    Patch(
        AWSError,
        "__init__",
        ("self", "message", "exception_type", "status"),
        _coded_error,
        "the interpreter's errors must carry their code (they declare it as `code`)",
    ),
    Patch(
        StepFunctionBackend,
        "create_state_machine",
        ("self", "name", *_CREATE_PARAMETERS),
        _create_once,
        "a taken name with another definition is StateMachineAlreadyExists, as on AWS; "
        "a Task resource not run locally is refused by name",
    ),
    Patch(
        StepFunctionBackend,
        "update_state_machine",
        ("self", "arn", "definition"),
        _update_checked,
        "a new definition calling a Task resource not run locally is refused by name",
    ),
    Patch(
        ComparisonVariable,
        "_eval_body",
        ("self", "env"),
        _choice_path_must_exist,
        "a Choice rule on a missing path fails the execution with States.Runtime",
    ),
)
