"""A Choice rule on a path that does not exist fails the execution with ``States.Runtime``,
as Step Functions does (``localcloud.services.stepfunctions.refusals``): for every
comparison operator but ``IsPresent``, on ``Variable`` and on a ``…Path`` operand; ``And``,
``Or`` and ``Not`` evaluate left to right and stop early, so ``IsPresent`` can guard."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.config import DefaultConfig

from localcloud.tests.support.aws import REGION

MOTO_CONFIG: DefaultConfig = {
    "stepfunctions": {"execute_state_machine": True},
    "lambda": {"use_docker": False},
}
ROLE_ARN = "arn:aws:iam::123456789012:role/x"
INVALID_PATH = (
    "An error occurred while executing the state 'Check' (entered at the event id #2). "
    "Invalid path '{path}': The choice state's condition path references an invalid value."
)


@pytest.fixture
def sfn(patched: None) -> Iterator[Any]:
    with mock_aws(config=MOTO_CONFIG):
        yield boto3.client("stepfunctions", region_name=REGION)


def branch(described: dict[str, Any]) -> str:
    """The branch a succeeded execution took."""
    assert described["status"] == "SUCCEEDED", described
    return str(json.loads(described["output"])["branch"])


def run(sfn: Any, rule: dict[str, Any], execution_input: dict[str, Any]) -> dict[str, Any]:
    """Describe the finished execution of ``Check`` (``rule`` → Matched, else Default)."""
    definition = {
        "StartAt": "Check",
        "States": {
            "Check": {
                "Type": "Choice",
                "Choices": [{**rule, "Next": "Matched"}],
                "Default": "Default",
            },
            "Matched": {"Type": "Pass", "Result": {"branch": "matched"}, "End": True},
            "Default": {"Type": "Pass", "Result": {"branch": "default"}, "End": True},
        },
    }
    machine = sfn.create_state_machine(
        name=f"check-{time.monotonic_ns()}", definition=json.dumps(definition), roleArn=ROLE_ARN
    )["stateMachineArn"]
    execution = sfn.start_execution(
        stateMachineArn=machine, name="run", input=json.dumps(execution_input)
    )["executionArn"]
    deadline = time.monotonic() + 30  # moto's interpreter runs on threads; a hang guard
    while True:
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution)
        if described["status"] != "RUNNING" or time.monotonic() > deadline:
            return described


COMPARISONS = [
    {"NumericGreaterThan": 0},
    {"NumericEquals": 1},
    {"StringEquals": "x"},
    {"StringMatches": "x*"},
    {"BooleanEquals": True},
    {"TimestampEquals": "2026-01-01T00:00:00Z"},
    {"IsNull": True},
    {"IsNumeric": True},
    {"IsString": False},
]


@pytest.mark.parametrize("comparison", COMPARISONS, ids=lambda c: next(iter(c)))
def test_a_comparison_on_a_missing_variable_fails_the_execution(
    sfn: Any, comparison: dict[str, Any]
) -> None:
    described = run(sfn, {"Variable": "$.quantity", **comparison}, {"id": "a"})

    assert (described["status"], described["error"]) == ("FAILED", "States.Runtime")
    assert described["cause"] == INVALID_PATH.format(path="$.quantity")


def test_a_path_operand_that_is_missing_fails_the_execution(sfn: Any) -> None:
    described = run(sfn, {"Variable": "$.left", "NumericGreaterThanPath": "$.right"}, {"left": 8})

    assert (described["status"], described["error"]) == ("FAILED", "States.Runtime")
    assert described["cause"] == INVALID_PATH.format(path="$.right")


def test_a_present_path_operand_compares(sfn: Any) -> None:
    rule = {"Variable": "$.left", "NumericGreaterThanPath": "$.right"}
    assert branch(run(sfn, rule, {"left": 9, "right": 8})) == "matched"
    assert branch(run(sfn, rule, {"left": 7, "right": 8})) == "default"


@pytest.mark.parametrize(("present", "expected"), [(True, "default"), (False, "matched")])
def test_is_present_tests_a_missing_path_without_failing(
    sfn: Any, present: bool, expected: str
) -> None:
    described = run(sfn, {"Variable": "$.quantity", "IsPresent": present}, {"id": "a"})

    assert branch(described) == expected


def test_is_present_first_in_an_and_guards_the_comparison_after_it(sfn: Any) -> None:
    rule = {
        "And": [
            {"Variable": "$.quantity", "IsPresent": True},
            {"Variable": "$.quantity", "NumericGreaterThan": 0},
        ]
    }
    assert branch(run(sfn, rule, {"id": "a"})) == "default"
    assert branch(run(sfn, rule, {"quantity": 2})) == "matched"


def test_an_and_evaluated_left_to_right_fails_on_the_comparison_before_the_guard(
    sfn: Any,
) -> None:
    rule = {
        "And": [
            {"Variable": "$.quantity", "NumericGreaterThan": 0},
            {"Variable": "$.quantity", "IsPresent": True},
        ]
    }
    assert run(sfn, rule, {"id": "a"})["error"] == "States.Runtime"


def test_an_or_stops_at_its_first_true_rule(sfn: Any) -> None:
    rule = {
        "Or": [
            {"Variable": "$.quantity", "IsPresent": False},
            {"Variable": "$.quantity", "NumericGreaterThan": 0},
        ]
    }
    assert branch(run(sfn, rule, {"id": "a"})) == "matched"


def test_not_of_a_comparison_on_a_missing_path_still_fails(sfn: Any) -> None:
    rule = {"Not": {"Variable": "$.quantity", "NumericGreaterThan": 0}}
    assert run(sfn, rule, {"id": "a"})["error"] == "States.Runtime"
