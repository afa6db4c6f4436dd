"""Which Task resources a state machine may call locally, and the refusal of the others by
name, at deploy and at ``CreateStateMachine`` / ``UpdateStateMachine``.

A Task state's ``Resource`` is a Lambda function's ARN, an activity's, or a service
integration ``arn:aws:states:::<service>:<action>[.sync|.sync:2|.waitForTaskToken]``
(Step Functions Developer Guide, "Integrating services"). moto 5.2.5's interpreter
(``moto.stepfunctions.parser.asl.component.state.exec.state_task.service``) implements a
handful of them against the local account; the local cloud runs those whose service it
holds and which its tests execute (``localcloud/tests/test_state_machine_resources.py``):
:data:`RUN_LOCALLY`. Any other, an activity, ``aws-sdk:*`` or the callback pattern
(``.waitForTaskToken``), would be accepted by moto and then fail the execution, or call a
service the account does not hold: it is refused before the state machine exists,
naming the state's path and the resource.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable, Iterator, Mapping
from typing import Any, Final

from moto.core.exceptions import AWSError
from moto.stepfunctions.parser.asl.component.state.exec.state_task.service.state_task_service_sfn import (  # noqa: E501
    StateTaskServiceSfn,
)
from moto.stepfunctions.parser.asl.eval.environment import Environment

from localcloud.patches.registry import Method, Patch

SERVICE_INTEGRATION: Final = "arn:aws:states:::"
"""The prefix of a service integration's ``Resource``."""

RUN_LOCALLY: Final[Mapping[str, tuple[frozenset[str], frozenset[str]]]] = {
    "lambda": (frozenset({"invoke"}), frozenset({""})),
    "dynamodb": (frozenset({"getItem", "putItem", "updateItem", "deleteItem"}), frozenset({""})),
    "sqs": (frozenset({"sendMessage"}), frozenset({""})),
    "sns": (frozenset({"publish"}), frozenset({""})),
    "states": (frozenset({"startExecution"}), frozenset({"", ".sync", ".sync:2"})),
}
"""Service → (its actions, its integration patterns: ``""`` is request-response) that the
local cloud runs: moto's interpreter implements each against the local account."""


class InvalidDefinition(AWSError):
    """400 ``InvalidDefinition``: Step Functions' answer to a definition it will not take;
    here, a Task resource the local cloud does not run."""

    TYPE = "InvalidDefinition"
    STATUS = 400


def refusal(resource: str) -> str | None:
    """Why a Task ``Resource`` is not run locally (``None`` when it is)."""
    if resource.startswith("arn:aws:lambda:") and ":function:" in resource:
        return None
    if not resource.startswith(SERVICE_INTEGRATION):
        return f"{resource} is not run by the local cloud (only functions and service integrations)"
    service, _, call = resource.removeprefix(SERVICE_INTEGRATION).partition(":")
    action, dot, pattern = call.partition(".")
    supported = RUN_LOCALLY.get(service)
    if supported is None:
        named = ", ".join(sorted(RUN_LOCALLY))
        return (
            f"{resource}: the {service} integration is not run by the local cloud (it runs {named})"
        )
    actions, patterns = supported
    if action not in actions:
        runs = ", ".join(sorted(actions))
        return f"{resource}: {service}:{action} is not run by the local cloud ({service}: {runs})"
    if dot + pattern not in patterns:
        runs = ", ".join(p or "request-response" for p in sorted(patterns))
        return (
            f"{resource}: the {dot + pattern} pattern is not run by the local cloud "
            f"({service}:{action}: {runs})"
        )
    return None


def refused_tasks(definition: Mapping[str, Any], at: str = "") -> Iterator[tuple[str, str]]:
    """Each Task of ``definition`` (``Parallel`` branches and ``Map`` processors included)
    whose resource is not run locally: its path (``/States/<name>/Resource``, as Step
    Functions' validation names one) and :func:`refusal`'s reason."""
    states = definition.get("States")
    if not isinstance(states, Mapping):
        return
    for name, state in states.items():
        if not isinstance(state, Mapping):
            continue
        here = f"{at}/States/{name}"
        resource = state.get("Resource")
        if state.get("Type") == "Task" and isinstance(resource, str):
            reason = refusal(resource)
            if reason is not None:
                yield f"{here}/Resource", reason
        for index, branch in enumerate(state.get("Branches") or []):
            if isinstance(branch, Mapping):
                yield from refused_tasks(branch, f"{here}/Branches[{index}]")
        for key in ("Iterator", "ItemProcessor"):
            processor = state.get(key)
            if isinstance(processor, Mapping):
                yield from refused_tasks(processor, f"{here}/{key}")


def first_refused(definition: Mapping[str, Any]) -> tuple[str, str] | None:
    """The first of :func:`refused_tasks`, or ``None``."""
    return next(refused_tasks(definition), None)


# moto's port of the interpreter leaves the step that fits a Task's parameters and result
# to the service's API shapes undone (``StateTaskService._normalise_parameters`` and
# ``_normalise_response`` are empty). DynamoDB, SQS and SNS name their members in
# PascalCase, as the Amazon States Language does, so they work as written; Step Functions'
# own API names them in camelCase, so a ``states:startExecution`` task was sent
# ``StateMachineArn`` (botocore: KeyError 'Input') and its ``.sync`` resolvers read
# ``ExecutionArn`` from a response holding ``executionArn``. AWS's answer, in every
# pattern, is the API's output in PascalCase (``ExecutionArn``, ``StartDate``; for
# ``.sync`` and ``.sync:2`` DescribeExecution's: ``Output`` a string, or JSON for
# ``.sync:2``): Step Functions Developer Guide, "Start a new AWS Step Functions state
# machine from a running execution".

_VERBATIM: Final = frozenset({"input", "output"})
"""DescribeExecution's members holding the execution's data, passed on as they are."""


def pascal_case(value: Any) -> Any:
    """``value`` with each object key's first letter upper-cased, at every depth except
    inside :data:`_VERBATIM` members, and each date as epoch milliseconds (an int: the
    form the developer guide's example outputs show ``StartDate`` in)."""
    if isinstance(value, datetime.datetime):
        return int(value.timestamp() * 1000)
    if isinstance(value, dict):
        return {
            key[:1].upper() + key[1:]: item if key in _VERBATIM else pascal_case(item)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [pascal_case(item) for item in value]
    return value


def _camel_case_parameters(original: Method) -> Method:
    def _normalise_parameters(
        self: StateTaskServiceSfn,
        parameters: dict[str, Any],
        boto_service_name: str | None = None,
        service_action_name: str | None = None,
    ) -> None:
        original(self, parameters, boto_service_name, service_action_name)
        if service_action_name is None:
            for key in list(parameters):
                parameters[key[:1].lower() + key[1:]] = parameters.pop(key)

    return _normalise_parameters


def _pascal_case_response(original: Method) -> Method:
    def _eval_service_task(
        self: StateTaskServiceSfn, env: Environment, *args: Any, **kwargs: Any
    ) -> None:
        original(self, env, *args, **kwargs)
        env.stack.append(pascal_case(env.stack.pop()))

    return _eval_service_task


def _pascal_case_result(original: Method) -> Method:
    def build_resolver(
        self: StateTaskServiceSfn, *args: Any, **kwargs: Any
    ) -> Callable[[], Any] | None:
        resolver = original(self, *args, **kwargs)
        if resolver is None:
            return None

        def resolve() -> Any:
            result = resolver()
            return None if result is None else pascal_case(result)

        return resolve

    return build_resolver


_RESOLVER_PARAMETERS: Final = (
    "self",
    "env",
    "resource_runtime_part",
    "normalised_parameters",
    "state_credentials",
)

PATCHES: Final = (
    Patch(
        StateTaskServiceSfn,
        "_normalise_parameters",
        ("self", "parameters", "boto_service_name", "service_action_name"),
        _camel_case_parameters,
        "a states:startExecution task's parameters reach the API in its camelCase",
    ),
    Patch(
        StateTaskServiceSfn,
        "_eval_service_task",
        _RESOLVER_PARAMETERS,
        _pascal_case_response,
        "a states:startExecution task's result is the API's output in PascalCase, as on AWS",
    ),
    Patch(
        StateTaskServiceSfn,
        "_build_sync_resolver",
        _RESOLVER_PARAMETERS,
        _pascal_case_result,
        "a .sync nested execution's result is DescribeExecution's output in PascalCase",
    ),
    Patch(
        StateTaskServiceSfn,
        "_build_sync2_resolver",
        _RESOLVER_PARAMETERS,
        _pascal_case_result,
        "a .sync:2 nested execution's result is DescribeExecution's output in PascalCase",
    ),
)
