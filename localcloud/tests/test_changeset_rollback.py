"""Change sets on the local server fail and roll back as CloudFormation's do (issue 13).

Driven through CloudFormation's own API (``CreateChangeSet``, ``ExecuteChangeSet``) with
a small SAM template (a queue, a table, a role, a function with an SQS event), so each
case takes a second; ``tests/e2e/test_sam_deploy.py`` does the same through the real
SAM CLI with the application's template.
"""

from __future__ import annotations

import io
import json
import uuid
import zipfile
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.tests.support.cloud import started

Body = dict[str, Any]


def template(change: Callable[[Body], None] | None = None) -> Body:
    body: Body = {
        "AWSTemplateFormatVersion": "2010-09-09",
        "Transform": "AWS::Serverless-2016-10-31",
        "Parameters": {"Mode": {"Type": "String", "Default": "a"}},
        "Conditions": {"IsA": {"Fn::Equals": [{"Ref": "Mode"}, "a"]}},
        "Globals": {"Function": {"Timeout": 3}},
        "Resources": {
            "Q": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": 60}},
            "T": {
                "Type": "AWS::DynamoDB::Table",
                "Properties": {
                    "BillingMode": "PAY_PER_REQUEST",
                    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                },
            },
            "R": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": []}
                },
            },
            "F": {
                "Type": "AWS::Serverless::Function",
                "Properties": {
                    "CodeUri": "s3://code/app.zip",
                    "Handler": "app.handler",
                    "Runtime": "python3.13",
                    "Role": {"Fn::GetAtt": ["R", "Arn"]},
                    "Environment": {"Variables": {"SIZE": {"Fn::If": ["IsA", "small", "large"]}}},
                    "Events": {
                        "Jobs": {
                            "Type": "SQS",
                            "Properties": {"Queue": {"Fn::GetAtt": ["Q", "Arn"]}, "BatchSize": 5},
                        }
                    },
                },
            },
        },
        "Outputs": {"QueueUrl": {"Value": {"Ref": "Q"}}, "TableName": {"Value": {"Ref": "T"}}},
    }
    if change is not None:
        change(body)
    return body


def broken_dashboard(body: Body) -> None:
    """A resource created after the function that fails (its body is not JSON)."""
    body["Resources"]["D"] = {
        "Type": "AWS::CloudWatch::Dashboard",
        "DependsOn": "F",
        "Properties": {"DashboardBody": "not json"},
    }


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(server=True, visibility_timeout=2, template=None) as running:
        package = io.BytesIO()
        with zipfile.ZipFile(package, "w") as archive:
            archive.writestr("app.py", "def handler(event, context):\n    return {}\n")
        s3 = running.client("s3")
        s3.create_bucket(Bucket="code")
        s3.put_object(Bucket="code", Key="app.zip", Body=package.getvalue())
        yield running


def change_set(
    cloud: LocalCloud, stack: str, body: Body, kind: str, **parameters: str
) -> dict[str, Any]:
    """Create the change set and, when CloudFormation would let it run, execute it."""
    cfn = cloud.client("cloudformation")
    created = cfn.create_change_set(
        StackName=stack,
        ChangeSetName=f"cs-{uuid.uuid4().hex[:8]}",
        ChangeSetType=kind,
        TemplateBody=json.dumps(body),
        Capabilities=["CAPABILITY_IAM"],
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()],
    )
    described: dict[str, Any] = cfn.describe_change_set(ChangeSetName=created["Id"])
    if described["Status"] == "CREATE_COMPLETE":
        cfn.execute_change_set(ChangeSetName=created["Id"])
    return described


def status(cloud: LocalCloud, stack: str) -> str:
    (found,) = cloud.client("cloudformation").describe_stacks(StackName=stack)["Stacks"]
    return str(found["StackStatus"])


def events(cloud: LocalCloud, stack: str) -> list[tuple[str, str]]:
    listed = cloud.client("cloudformation").describe_stack_events(StackName=stack)["StackEvents"]
    return [(e["LogicalResourceId"], e["ResourceStatus"]) for e in reversed(listed)]


def outputs(cloud: LocalCloud, stack: str) -> dict[str, str]:
    (found,) = cloud.client("cloudformation").describe_stacks(StackName=stack)["Stacks"]
    return {o["OutputKey"]: o["OutputValue"] for o in found["Outputs"]}


def names(cloud: LocalCloud, stack: str) -> dict[str, list[str]]:
    """The stack's functions, queues, tables and roles that exist, by physical name."""
    prefix = f"{stack}-"
    listed = {
        "functions": [
            f["FunctionName"] for f in cloud.client("lambda").list_functions()["Functions"]
        ],
        "queues": [
            url.rsplit("/", 1)[1] for url in cloud.client("sqs").list_queues().get("QueueUrls", [])
        ],
        "tables": cloud.client("dynamodb").list_tables()["TableNames"],
        "roles": [r["RoleName"] for r in cloud.client("iam").list_roles()["Roles"]],
    }
    return {
        kind: sorted(n for n in found if n.startswith(prefix)) for kind, found in listed.items()
    }


def test_a_create_that_fails_in_its_outputs_deletes_every_resource_it_made(
    cloud: LocalCloud,
) -> None:
    body = template(
        lambda b: b["Outputs"].update(
            {"Stream": {"Value": {"Fn::GetAtt": ["T", "StreamArn"]}}}  # the table has none
        )
    )

    change_set(cloud, "rb-outputs", body, "CREATE")

    assert status(cloud, "rb-outputs") == "ROLLBACK_COMPLETE"
    assert ("Outputs", "CREATE_FAILED") in events(cloud, "rb-outputs")
    assert ("F", "DELETE_COMPLETE") in events(cloud, "rb-outputs")
    assert names(cloud, "rb-outputs") == {"functions": [], "queues": [], "tables": [], "roles": []}
    mappings = cloud.client("lambda").list_event_source_mappings()["EventSourceMappings"]
    assert not [m for m in mappings if ":function:rb-outputs-" in m["FunctionArn"]]


def test_an_update_rollback_restores_the_previous_properties_and_keeps_the_data(
    cloud: LocalCloud,
) -> None:
    change_set(cloud, "rb-update", template(), "CREATE")
    found = outputs(cloud, "rb-update")
    dynamodb, sqs = cloud.client("dynamodb"), cloud.client("sqs")
    dynamodb.put_item(TableName=found["TableName"], Item={"id": {"S": "kept"}})

    def changed(body: Body) -> None:
        body["Resources"]["Q"]["Properties"]["DelaySeconds"] = 300
        body["Resources"]["T"]["Properties"]["DeletionProtectionEnabled"] = True
        broken_dashboard(body)

    change_set(cloud, "rb-update", template(changed), "UPDATE")

    assert status(cloud, "rb-update") == "UPDATE_ROLLBACK_COMPLETE"
    assert ("D", "UPDATE_FAILED") in events(cloud, "rb-update")
    assert outputs(cloud, "rb-update") == found
    assert dynamodb.get_item(TableName=found["TableName"], Key={"id": {"S": "kept"}}).get("Item")
    delay = sqs.get_queue_attributes(QueueUrl=found["QueueUrl"], AttributeNames=["DelaySeconds"])
    assert delay["Attributes"]["DelaySeconds"] == "0"
    table = dynamodb.describe_table(TableName=found["TableName"])["Table"]
    assert not table.get("DeletionProtectionEnabled")
    assert len(names(cloud, "rb-update")["functions"]) == 1  # the previous one, re-created


def test_an_update_rollback_keeps_a_table_it_added_with_deletion_policy_retain(
    cloud: LocalCloud,
) -> None:
    change_set(cloud, "rb-retain", template(), "CREATE")

    def added(body: Body) -> None:
        body["Resources"]["T2"] = {**body["Resources"]["T"], "DeletionPolicy": "Retain"}
        broken_dashboard(body)

    change_set(cloud, "rb-retain", template(added), "UPDATE")

    assert status(cloud, "rb-retain") == "UPDATE_ROLLBACK_COMPLETE"
    tables = names(cloud, "rb-retain")["tables"]
    assert len(tables) == 2  # T, and T2 kept by its DeletionPolicy, as CloudFormation does
    assert [t for t in tables if t.startswith("rb-retain-T2-")]


def test_a_failed_cleanup_is_a_delete_failed_event_of_a_completed_update(
    cloud: LocalCloud,
) -> None:
    def protected(body: Body) -> None:
        body["Resources"]["Old"] = {
            **body["Resources"]["T"],
            "Properties": {
                **body["Resources"]["T"]["Properties"],
                "DeletionProtectionEnabled": True,
            },
        }

    change_set(cloud, "rb-cleanup", template(protected), "CREATE")

    change_set(cloud, "rb-cleanup", template(), "UPDATE")  # Old removed: its delete fails

    assert status(cloud, "rb-cleanup") == "UPDATE_COMPLETE"
    assert ("Old", "DELETE_FAILED") in events(cloud, "rb-cleanup")


def test_a_table_that_holds_the_derived_name_is_never_adopted_or_deleted(
    cloud: LocalCloud,
) -> None:
    change_set(cloud, "rb-name", template(), "CREATE")
    usual = outputs(cloud, "rb-name")["TableName"]
    cloud.client("cloudformation").delete_stack(StackName="rb-name")
    dynamodb = cloud.client("dynamodb")
    dynamodb.create_table(
        TableName=usual,
        BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
    )
    dynamodb.put_item(TableName=usual, Item={"id": {"S": "someone-elses"}})

    change_set(cloud, "rb-name", template(broken_dashboard), "CREATE")

    assert status(cloud, "rb-name") == "ROLLBACK_COMPLETE"
    assert dynamodb.get_item(TableName=usual, Key={"id": {"S": "someone-elses"}}).get("Item")


@pytest.mark.parametrize(
    ("case", "change", "listed"),
    [
        # Compared after the SAM transform, as CloudFormation compares them: the function
        # changes; its event source mapping (FJobs: BatchSize, the queue, Ref F) does not.
        ("globals", lambda b: b["Globals"]["Function"].update(Timeout=20), ["F"]),
        (
            "condition",
            lambda b: b["Conditions"].update(IsA={"Fn::Equals": [{"Ref": "Mode"}, "b"]}),
            ["F"],
        ),
        ("queue", lambda b: b["Resources"]["Q"]["Properties"].update(DelaySeconds=5), ["Q"]),
        ("metadata", lambda b: b["Resources"]["Q"].update(Metadata={"SamResourceId": "Q"}), None),
    ],
)
def test_an_update_change_set_lists_what_changes(
    cloud: LocalCloud, case: str, change: Callable[[Body], None], listed: list[str] | None
) -> None:
    stack = f"rb-changes-{case}"
    change_set(cloud, stack, template(), "CREATE")

    described = change_set(cloud, stack, template(change), "UPDATE")

    if listed is None:  # Metadata alone: CloudFormation has nothing to do
        assert described["Status"] == "FAILED"
        assert "didn't contain changes" in described["StatusReason"]
        return
    assert sorted(c["ResourceChange"]["LogicalResourceId"] for c in described["Changes"]) == listed
    assert {c["ResourceChange"]["Action"] for c in described["Changes"]} == {"Modify"}
    assert status(cloud, stack) == "UPDATE_COMPLETE"
