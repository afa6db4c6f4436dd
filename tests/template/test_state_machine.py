"""statemachine/orders.asl.json: substitutions, transitions, retriers, catchers, validity.

cfn-lint does not read ``DefinitionUri`` files and moto accepts a ``Next`` that points to
a missing state, so these checks are the only guard on the ASL before a deploy.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import boto3
import botocore.exceptions
import pytest
from statelint.config import Config
from statelint.linter import Linter
from statelint.problem import ProblemType

from order_guard import exceptions
from tests.support.paths import ROOT
from tests.support.template import Template

ASL_PATH = ROOT / "statemachine" / "orders.asl.json"
ASL_TEXT = ASL_PATH.read_text()
ASL = json.loads(ASL_TEXT)
STATES: dict[str, Any] = ASL["States"]
# The ASL spec says BackoffRate is a float; Step Functions accepts the integer 2, and
# statelint lists FLOAT among its ignorable problem types (statelint --ignore FLOAT).
LINT_CONFIG = Config(ignored_problem_types={ProblemType.FLOAT})


def substitutions(template: Template) -> dict[str, Any]:
    machine = template.resources["OrdersStateMachine"]["Properties"]
    assert machine["DefinitionUri"] == "statemachine/orders.asl.json"
    return dict(machine["DefinitionSubstitutions"])


def test_every_placeholder_has_a_substitution_and_vice_versa(template: Template) -> None:
    placeholders = set(re.findall(r"\$\{(\w+)\}", ASL_TEXT))
    assert placeholders == set(substitutions(template)) == {"WorkflowWorkerFunctionArn"}


def test_the_asl_has_no_account_region_or_literal_arn() -> None:
    assert not re.search(r"\d{12}", ASL_TEXT)
    assert not re.search(r"arn:aws:lambda:", ASL_TEXT)
    assert not re.search(r"(us|eu|ap|sa|ca|me|af)-[a-z]+-\d", ASL_TEXT)


def transitions(states: dict[str, Any]) -> Iterator[tuple[str, str]]:
    for name, state in states.items():
        for key in ("Next", "Default"):
            if key in state:
                yield name, state[key]
        for choice in state.get("Choices", []):
            yield name, choice["Next"]
        for catcher in state.get("Catch", []):
            yield name, catcher["Next"]


def test_every_next_and_default_names_an_existing_state() -> None:
    missing = [(source, target) for source, target in transitions(STATES) if target not in STATES]
    assert missing == []
    assert ASL["StartAt"] in STATES


def test_every_state_is_reachable_from_start_at() -> None:
    reachable, frontier = set(), [ASL["StartAt"]]
    edges = list(transitions(STATES))
    while frontier:
        state = frontier.pop()
        if state not in reachable:
            reachable.add(state)
            frontier.extend(target for source, target in edges if source == state)
    assert reachable == set(STATES)


def test_check_quantity_sends_only_positive_numbers_to_store_order() -> None:
    check = STATES["CheckQuantity"]
    assert check["Type"] == "Choice"
    assert check["Default"] == "Rejected"
    (choice,) = check["Choices"]
    assert choice["Next"] == "StoreOrder"
    assert {"Variable": "$.quantity", "IsNumeric": True} in choice["And"]
    assert {"Variable": "$.quantity", "NumericGreaterThan": 0} in choice["And"]


def test_store_order_invokes_the_worker_with_the_whole_input() -> None:
    store = STATES["StoreOrder"]
    assert store["Resource"] == "arn:aws:states:::lambda:invoke"
    assert store["Parameters"] == {"FunctionName": "${WorkflowWorkerFunctionArn}", "Payload.$": "$"}
    assert store["ResultSelector"] == {"result.$": "$.Payload"}
    assert store["ResultPath"] == "$.saved"
    assert store["Next"] == "ReadSummary"


def test_each_task_state_retries_the_same_transient_names_with_backoff() -> None:
    """The names themselves are proved against the failure taxonomy in
    tests/unit/test_failure_taxonomy.py; here, the shape: backoff on every retrier, and
    ReadSummary retries what StoreOrder retries, but for the seed's fault mode."""
    store, summary = STATES["StoreOrder"]["Retry"], STATES["ReadSummary"]["Retry"]
    assert store[0]["ErrorEquals"] == ["TransientOrderError"]
    assert summary == store[1:]
    for retrier in store:
        assert retrier["BackoffRate"] >= 2
        assert retrier["IntervalSeconds"] >= 1
        assert 2 <= retrier["MaxAttempts"] <= 6


def test_nothing_retries_invalid_orders_or_conflicts() -> None:
    for state in STATES.values():
        for retrier in state.get("Retry", []):
            assert not {"InvalidOrder", "OrderConflict", "States.ALL"} & set(retrier["ErrorEquals"])


def test_store_order_catches_invalid_orders_and_conflicts_into_fail_states() -> None:
    invalid, conflict = STATES["StoreOrder"]["Catch"]
    assert invalid == {
        "ErrorEquals": ["InvalidOrder"],
        "ResultPath": "$.failure",
        "Next": "Rejected",
    }
    assert conflict["ErrorEquals"] == ["OrderConflict"]
    assert STATES[conflict["Next"]]["Type"] == "Fail"
    assert STATES["Rejected"]["Type"] == "Fail"
    assert STATES["Rejected"]["Error"] == "OrderRejected"


def test_read_summary_asks_for_the_saved_id_and_outputs_the_payload() -> None:
    summary = STATES["ReadSummary"]
    assert summary["Parameters"]["Payload"] == {"stage": "summary", "id.$": "$.saved.result.id"}
    assert summary["OutputPath"] == "$.Payload"
    assert summary["End"] is True


def test_states_all_appears_only_alone_and_last() -> None:
    for state in STATES.values():
        for field in ("Retry", "Catch"):
            entries = state.get(field, [])
            for position, entry in enumerate(entries):
                if "States.ALL" in entry["ErrorEquals"]:
                    assert entry["ErrorEquals"] == ["States.ALL"]
                    assert position == len(entries) - 1


def custom_error_names() -> set[str]:
    """Names a worker raises itself (``States.*``, ``Lambda.*``, ``Sandbox.*`` come from
    the services)."""
    names = set()
    for state in STATES.values():
        for entry in state.get("Retry", []) + state.get("Catch", []):
            names.update(name for name in entry["ErrorEquals"] if "." not in name)
    return names


def test_every_custom_error_name_is_a_class_the_worker_can_raise_under_that_name() -> None:
    """The runtime reports the unqualified class name: each name must be one of ours, or
    a DynamoDB error botocore models as its own class (else it arrives as ClientError)."""
    dynamodb = boto3.client("dynamodb", region_name="us-east-1")
    for name in custom_error_names():
        if hasattr(exceptions, name):
            cls = getattr(exceptions, name)
            # The root only: a subclass of another error would report its own name and
            # miss a retrier that lists the parent; the root is never raised or listed.
            assert cls.__bases__ == (exceptions.OrderGuardError,), f"{name}: {cls.__bases__}"
        elif hasattr(botocore.exceptions, name):
            cls = getattr(botocore.exceptions, name)
        else:
            cls = getattr(dynamodb.exceptions, name)
        assert cls.__name__ == name


@pytest.mark.parametrize(
    "arn", ["arn:aws:lambda:us-east-1:123456789012:function:order-guard-WorkflowWorker"]
)
def test_an_asl_validator_accepts_the_substituted_definition(arn: str) -> None:
    definition = ASL_TEXT.replace("${WorkflowWorkerFunctionArn}", arn)
    assert Linter.validate(definition, LINT_CONFIG) == []


def test_the_validator_is_not_a_rubber_stamp() -> None:
    broken = json.loads(ASL_TEXT)
    broken["States"]["StoreOrder"]["Next"] = "NoSuchState"
    problems = Linter.validate(json.dumps(broken), LINT_CONFIG)
    assert any("NoSuchState" in problem for problem in problems)
