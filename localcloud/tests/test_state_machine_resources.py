"""State machines as SAM templates write them (issue 29): an explicit ``Name``; the
service integrations a workflow calls (DynamoDB, SQS, SNS) and nested executions
(``states:startExecution``, ``.sync`` and ``.sync:2``) run against the local account; any
other Task resource is refused by name, at deploy and at the API, wherever it is nested.

The fixture app ``fixtures/apps/nested_execution`` is the suite's own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import ClientError

from localcloud.account import LocalCloud
from localcloud.cloudformation.exceptions import AlreadyExists, UnsupportedTemplate
from localcloud.cloudformation.template import Template, load, parse_body
from localcloud.services.stepfunctions.integrations import refusal
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import FIXTURES

APP = FIXTURES / "apps" / "nested_execution" / "template.yaml"
ROLE = "arn:aws:iam::123456789012:role/any"


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(template=load(APP), stack_name="nested-a") as running:
        yield running


def finished(cloud: LocalCloud, arn: str, timeout_s: float = 30) -> dict[str, Any]:
    sfn = cloud.client("stepfunctions")
    deadline = time.monotonic() + timeout_s
    while (execution := sfn.describe_execution(executionArn=arn))["status"] == "RUNNING":
        assert time.monotonic() < deadline, f"{arn} still running"
        time.sleep(0.05)
    return dict(execution)


def test_a_parent_calls_each_service_and_its_child_as_a_nested_execution(
    cloud: LocalCloud,
) -> None:
    sfn = cloud.client("stepfunctions")
    started_at = sfn.start_execution(
        stateMachineArn=cloud.outputs["ParentArn"], input='{"id": "order-7"}'
    )
    execution = finished(cloud, started_at["executionArn"])
    assert execution["status"] == "SUCCEEDED", execution
    output = json.loads(execution["output"])
    child = {"from": "child", "id": "order-7"}
    assert output["json"] == {"output": child}  # .sync:2: the child's output as JSON
    assert json.loads(output["text"]["output"]) == child  # .sync: as a string
    assert output["read"] == {"stored": "order-7"}  # putItem, then getItem
    sqs = cloud.client("sqs")
    (message,) = sqs.receive_message(QueueUrl=cloud.outputs["QueueUrl"])["Messages"]
    assert message["Body"] == "order-7"
    history = sfn.get_execution_history(executionArn=started_at["executionArn"])["events"]
    succeeded = [e["taskSucceededEventDetails"] for e in history if e["type"] == "TaskSucceeded"]
    published = [d for d in succeeded if d["resource"] == "publish"]
    assert [d["resourceType"] for d in published] == ["sns"]
    assert "MessageId" in json.loads(published[0]["output"])
    children = sfn.list_executions(stateMachineArn=child_arn(cloud))["executions"]
    assert [c["status"] for c in children] == ["SUCCEEDED", "SUCCEEDED"]


def test_a_request_response_start_execution_answers_as_the_api_does(cloud: LocalCloud) -> None:
    sfn = cloud.client("stepfunctions")
    child = child_arn(cloud)
    definition = {
        "StartAt": "Start",
        "States": {
            "Start": {
                "Type": "Task",
                "Resource": "arn:aws:states:::states:startExecution",
                "Parameters": {"StateMachineArn": child, "Input": {"id": "x"}},
                "End": True,
            }
        },
    }
    arn = sfn.create_state_machine(
        name="starts-child", definition=json.dumps(definition), roleArn=ROLE
    )["stateMachineArn"]
    execution = finished(cloud, sfn.start_execution(stateMachineArn=arn)["executionArn"])
    assert execution["status"] == "SUCCEEDED", execution
    answer = json.loads(execution["output"])
    assert sorted(answer) == ["ExecutionArn", "StartDate"]
    assert answer["ExecutionArn"].startswith(child.replace(":stateMachine:", ":execution:"))
    assert isinstance(answer["StartDate"], int)  # epoch milliseconds


def test_the_explicit_name_is_used_and_a_second_stack_taking_it_rolls_back(
    cloud: LocalCloud, tmp_path: Path
) -> None:
    assert cloud.outputs["ChildName"] == "nested-a-child"
    body = parse_body(APP.read_text())
    body["Resources"]["Child"]["Properties"]["Name"] = "nested-a-child"
    with pytest.raises(AlreadyExists, match="nested-a-child") as failed:
        cloud.deploy(load_body(body, tmp_path), stack_name="nested-b")
    assert "already exists" in str(failed.value)
    machines = cloud.client("stepfunctions").list_state_machines()["stateMachines"]
    assert not [m for m in machines if m["name"].startswith("nested-b-")]


def load_body(body: dict[str, Any], folder: Path) -> Template:
    (folder / "template.yaml").write_text(json.dumps(body))
    return load(folder / "template.yaml")


def child_arn(cloud: LocalCloud) -> str:
    return cloud.outputs["ParentArn"].rsplit(":", 1)[0] + ":" + cloud.outputs["ChildName"]


def task(resource: str) -> dict[str, Any]:
    return {"Type": "Task", "Resource": resource, "End": True}


REFUSED = {
    "/States/Glue/Resource": {
        "StartAt": "Glue",
        "States": {"Glue": task("arn:aws:states:::glue:startJobRun.sync")},
    },
    "/States/Both/Branches[1]/States/Run/Resource": {
        "StartAt": "Both",
        "States": {
            "Both": {
                "Type": "Parallel",
                "End": True,
                "Branches": [
                    {"StartAt": "Ok", "States": {"Ok": {"Type": "Pass", "End": True}}},
                    {"StartAt": "Run", "States": {"Run": task("arn:aws:states:::ecs:runTask")}},
                ],
            }
        },
    },
    "/States/Each/ItemProcessor/States/Scan/Resource": {
        "StartAt": "Each",
        "States": {
            "Each": {
                "Type": "Map",
                "End": True,
                "ItemProcessor": {
                    "StartAt": "Scan",
                    "States": {"Scan": task("arn:aws:states:::aws-sdk:dynamodb:scan")},
                },
            }
        },
    },
    "/States/Each/Iterator/States/Wait/Resource": {
        "StartAt": "Each",
        "States": {
            "Each": {
                "Type": "Map",
                "End": True,
                "Iterator": {
                    "StartAt": "Wait",
                    "States": {"Wait": task("arn:aws:states:::sqs:sendMessage.waitForTaskToken")},
                },
            }
        },
    },
}


@pytest.mark.parametrize("path", sorted(REFUSED))
def test_a_task_not_run_locally_is_refused_by_name_at_the_api(cloud: LocalCloud, path: str) -> None:
    sfn = cloud.client("stepfunctions")
    definition = json.dumps(REFUSED[path])
    with pytest.raises(ClientError) as refused:
        sfn.create_state_machine(name="refused", definition=definition, roleArn=ROLE)
    error = refused.value.response["Error"]
    assert error["Code"] == "InvalidDefinition"
    assert error["Message"].startswith("Invalid State Machine Definition: 'UNSUPPORTED_LOCALLY: ")
    assert error["Message"].endswith(f" at {path}'")
    assert not [m for m in sfn.list_state_machines()["stateMachines"] if m["name"] == "refused"]
    # UpdateStateMachine refuses the same definition.
    kept = sfn.create_state_machine(
        name=f"kept-{sorted(REFUSED).index(path)}",
        definition=json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}),
        roleArn=ROLE,
    )["stateMachineArn"]
    with pytest.raises(ClientError, match="UNSUPPORTED_LOCALLY"):
        sfn.update_state_machine(stateMachineArn=kept, definition=definition)


def test_a_task_not_run_locally_is_refused_at_deploy_naming_the_state(
    cloud: LocalCloud, tmp_path: Path
) -> None:
    body = parse_body(APP.read_text())
    states = body["Resources"]["Parent"]["Properties"]["Definition"]["States"]
    states["Ship"]["Resource"] = "arn:aws:states:::sqs:sendMessage.waitForTaskToken"
    with pytest.raises(UnsupportedTemplate) as refused:
        cloud.deploy(load_body(body, tmp_path), stack_name="nested-c")
    assert str(refused.value).startswith("Parent.Definition/States/Ship/Resource: ")
    assert ".waitForTaskToken pattern is not run by the local cloud" in str(refused.value)


@pytest.mark.parametrize(
    "resource",
    [
        "arn:aws:lambda:us-east-1:123456789012:function:any",
        "arn:aws:states:::lambda:invoke",
        "arn:aws:states:::dynamodb:putItem",
        "arn:aws:states:::dynamodb:getItem",
        "arn:aws:states:::sqs:sendMessage",
        "arn:aws:states:::sns:publish",
        "arn:aws:states:::states:startExecution.sync:2",
    ],
)
def test_the_integrations_run_locally_are_not_refused(resource: str) -> None:
    assert refusal(resource) is None


@pytest.mark.parametrize(
    ("resource", "named"),
    [
        ("arn:aws:states:::events:putEvents", "the events integration"),
        ("arn:aws:states:::dynamodb:scan", "dynamodb:scan"),
        ("arn:aws:states:::lambda:invoke.waitForTaskToken", ".waitForTaskToken pattern"),
        ("arn:aws:states:us-east-1:123456789012:activity:review", "activity:review"),
    ],
)
def test_a_refusal_names_what_is_not_run(resource: str, named: str) -> None:
    reason = refusal(resource)
    assert reason is not None
    assert named in reason
    assert resource in reason
