"""Resources as others write them deploy through CloudFormation's API (issue 29): explicit
physical names, with CloudFormation's ``AlreadyExists`` and a rollback when a second
stack takes them; provisioned tables with indexes, a stream and time to live; customer
managed policies (SAM Connectors' included); S3 buckets.

The fixture apps under ``fixtures/apps/`` are the suite's own; each case takes a
second (the change set runs in the local server, no SAM CLI).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError
from samcli.lib.bootstrap.bootstrap import _get_stack_template

from localcloud.account import LocalCloud
from localcloud.cloudformation.template import parse_body
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import FIXTURES

NAMED = (FIXTURES / "apps" / "named_resources" / "template.yaml").read_text()
INDEXED = (FIXTURES / "apps" / "indexed_table" / "template.yaml").read_text()


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(server=True, template=None) as running:
        yield running


def change_set(
    cloud: LocalCloud, stack: str, body: str, kind: str = "CREATE", **parameters: str
) -> dict[str, Any]:
    cfn = cloud.client("cloudformation")
    created = cfn.create_change_set(
        StackName=stack,
        ChangeSetName=f"cs-{uuid.uuid4().hex[:8]}",
        ChangeSetType=kind,
        TemplateBody=body,
        Capabilities=["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"],
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in parameters.items()],
    )
    described: dict[str, Any] = cfn.describe_change_set(ChangeSetName=created["Id"])
    assert described["Status"] == "CREATE_COMPLETE", described
    cfn.execute_change_set(ChangeSetName=created["Id"])
    return described


def stack(cloud: LocalCloud, name: str) -> dict[str, Any]:
    (found,) = cloud.client("cloudformation").describe_stacks(StackName=name)["Stacks"]
    return dict(found)


def outputs(cloud: LocalCloud, name: str) -> dict[str, str]:
    return {o["OutputKey"]: o["OutputValue"] for o in stack(cloud, name).get("Outputs", [])}


def failures(cloud: LocalCloud, name: str) -> list[tuple[str, str]]:
    listed = cloud.client("cloudformation").describe_stack_events(StackName=name)["StackEvents"]
    return [
        (e["LogicalResourceId"], e.get("ResourceStatusReason", ""))
        for e in listed
        if e["ResourceStatus"] == "CREATE_FAILED"
    ]


def test_explicit_names_are_used_as_written(cloud: LocalCloud) -> None:
    change_set(cloud, "named-first", NAMED, Prefix="acme")

    assert stack(cloud, "named-first")["StackStatus"] == "CREATE_COMPLETE"
    found = outputs(cloud, "named-first")
    assert found["TableName"] == "acme-orders"
    assert found["LedgerName"] == "acme-ledger"
    assert found["QueueUrl"].endswith("/acme-jobs")
    assert found["FifoQueueName"] == "acme-ordered.fifo"
    assert found["RoleArn"] == "arn:aws:iam::123456789012:role/acme-worker"
    assert found["PolicyArn"] == "arn:aws:iam::123456789012:policy/acme-worker-writes"
    assert found["LogGroup"] == "/acme/worker"
    assert found["TopicName"] == "acme-alerts"
    assert found["Bucket"] == "acme-exports"
    assert found["FunctionName"] == "acme-greeter"
    answer = cloud.client("lambda").invoke(FunctionName="acme-greeter", Payload=b'{"name": "x"}')
    assert json.load(answer["Payload"]) == {"greeting": "hello, x"}
    assert found["StateMachineName"] == "acme-greeting"
    iam = cloud.client("iam")
    attached = iam.list_attached_role_policies(RoleName="acme-worker")["AttachedPolicies"]
    assert [p["PolicyArn"] for p in attached] == [found["PolicyArn"]]
    fifo = cloud.client("sqs").get_queue_attributes(
        QueueUrl=cloud.client("sqs").get_queue_url(QueueName="acme-ordered.fifo")["QueueUrl"],
        AttributeNames=["FifoQueue", "ContentBasedDeduplication"],
    )["Attributes"]
    assert fifo == {"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    assert found["StreamArn"] == "arn:aws:kinesis:us-east-1:123456789012:stream/acme-clicks"
    summary = cloud.client("kinesis").describe_stream_summary(StreamName="acme-clicks")
    assert summary["StreamDescriptionSummary"]["OpenShardCount"] == 2
    assert summary["StreamDescriptionSummary"]["RetentionPeriodHours"] == 48
    versioning = cloud.client("s3").get_bucket_versioning(Bucket="acme-exports")
    assert versioning["Status"] == "Enabled"


def test_a_second_stack_taking_the_same_names_fails_with_already_exists_and_rolls_back(
    cloud: LocalCloud,
) -> None:
    change_set(cloud, "collide-first", NAMED, Prefix="taken")
    first = outputs(cloud, "collide-first")
    cloud.client("dynamodb").put_item(TableName="taken-orders", Item={"pk": {"S": "kept"}})

    change_set(cloud, "collide-second", NAMED, Prefix="taken")

    assert stack(cloud, "collide-second")["StackStatus"] == "ROLLBACK_COMPLETE"
    (failed,) = failures(cloud, "collide-second")
    resource_type = str(parse_body(NAMED)["Resources"][failed[0]]["Type"])
    assert failed[1].startswith(f"Resource of type '{resource_type}' with identifier 'taken-")
    assert failed[1].endswith("already exists. (HandlerErrorCode: AlreadyExists)")
    # The first stack's resources are untouched: the second never adopted or deleted them.
    assert stack(cloud, "collide-first")["StackStatus"] == "CREATE_COMPLETE"
    item = cloud.client("dynamodb").get_item(TableName="taken-orders", Key={"pk": {"S": "kept"}})
    assert item.get("Item") == {"pk": {"S": "kept"}}
    assert cloud.client("iam").get_role(RoleName="taken-worker")["Role"]["Arn"] == first["RoleArn"]
    cloud.client("s3").head_bucket(Bucket="taken-exports")
    cloud.client("sqs").get_queue_url(QueueName="taken-jobs")
    topics = [t["TopicArn"] for t in cloud.client("sns").list_topics()["Topics"]]
    assert sum(arn.endswith(":taken-alerts") for arn in topics) == 1


@pytest.mark.slow  # seconds: the quick loop leaves it to make test
def test_every_explicit_name_collides_on_its_own(cloud: LocalCloud) -> None:
    """Each named resource is refused alone when only it is taken (the kind, not one
    type): each type asks its own service whether the name exists."""
    body = parse_body(NAMED)
    for logical_id, resource in body["Resources"].items():
        alone = {**body, "Resources": {logical_id: resource}, "Outputs": {}}
        if resource["Type"] == "AWS::IAM::ManagedPolicy":  # on its own: no role, no table
            allow = {"Effect": "Allow", "Action": "dynamodb:GetItem", "Resource": "*"}
            document = {"Version": "2012-10-17", "Statement": [allow]}
            properties = {**resource["Properties"], "Roles": [], "PolicyDocument": document}
            alone["Resources"] = {logical_id: {**resource, "Properties": properties}}
        prefix = f"solo{logical_id.lower()}"
        change_set(cloud, f"{prefix}-a", json.dumps(alone), Prefix=prefix)
        assert stack(cloud, f"{prefix}-a")["StackStatus"] == "CREATE_COMPLETE", logical_id
        change_set(cloud, f"{prefix}-b", json.dumps(alone), Prefix=prefix)
        assert stack(cloud, f"{prefix}-b")["StackStatus"] == "ROLLBACK_COMPLETE", logical_id
        ((failed, reason),) = failures(cloud, f"{prefix}-b")
        assert failed == logical_id
        assert "(HandlerErrorCode: AlreadyExists)" in reason, reason


def test_a_changed_table_name_replaces_the_table(cloud: LocalCloud) -> None:
    change_set(cloud, "renamed", NAMED, Prefix="before")
    change_set(cloud, "renamed", NAMED, "UPDATE", Prefix="after")

    assert stack(cloud, "renamed")["StackStatus"] == "UPDATE_COMPLETE"
    tables = cloud.client("dynamodb").list_tables()["TableNames"]
    assert "after-orders" in tables
    assert "before-orders" not in tables


def test_a_provisioned_table_with_indexes_stream_and_ttl_is_queried_as_on_aws(
    cloud: LocalCloud,
) -> None:
    change_set(cloud, "indexed", INDEXED)

    assert stack(cloud, "indexed")["StackStatus"] == "CREATE_COMPLETE", failures(cloud, "indexed")
    found = outputs(cloud, "indexed")
    dynamodb = cloud.client("dynamodb")
    table = dynamodb.describe_table(TableName=found["TableName"])["Table"]
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    assert table["ProvisionedThroughput"]["WriteCapacityUnits"] == 2
    assert table["StreamSpecification"] == {
        "StreamEnabled": True,
        "StreamViewType": "NEW_AND_OLD_IMAGES",
    }
    assert found["StreamArn"] == table["LatestStreamArn"]
    assert table["SSEDescription"]["Status"] == "ENABLED"
    ttl = dynamodb.describe_time_to_live(TableName=found["TableName"])["TimeToLiveDescription"]
    assert (ttl["TimeToLiveStatus"], ttl["AttributeName"]) == ("ENABLED", "expires_at")
    for customer, at, carrier, weight in (
        ("c1", 1, "ups", 3),
        ("c1", 2, "dhl", 9),
        ("c2", 3, "ups", 5),
    ):
        dynamodb.put_item(
            TableName=found["TableName"],
            Item={
                "customer": {"S": customer},
                "shipped_at": {"N": str(at)},
                "carrier": {"S": carrier},
                "weight": {"N": str(weight)},
                "note": {"S": "not projected"},
            },
        )
    by_carrier = dynamodb.query(
        TableName=found["TableName"],
        IndexName="by-carrier",
        KeyConditionExpression="carrier = :c",
        ExpressionAttributeValues={":c": {"S": "ups"}},
    )["Items"]
    assert [(i["customer"]["S"], i["weight"]["N"]) for i in by_carrier] == [
        ("c1", "3"),
        ("c2", "5"),
    ]
    assert all("note" not in item for item in by_carrier)  # INCLUDE projects weight only
    heaviest = dynamodb.query(
        TableName=found["TableName"],
        IndexName="by-weight",
        KeyConditionExpression="customer = :c",
        ExpressionAttributeValues={":c": {"S": "c1"}},
        ScanIndexForward=False,
    )["Items"]
    assert [i["weight"]["N"] for i in heaviest] == ["9", "3"]
    counters = dynamodb.describe_table(TableName=found["CountersName"])["Table"]
    assert counters["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert counters["ProvisionedThroughput"]["WriteCapacityUnits"] == 1


@pytest.mark.parametrize(
    ("properties", "refused"),
    [
        (
            {"BillingMode": "PAY_PER_REQUEST", "ProvisionedThroughput": {"ReadCapacityUnits": 1}},
            "T.ProvisionedThroughput: not allowed with BillingMode PAY_PER_REQUEST",
        ),
        ({}, "T.ProvisionedThroughput: required when BillingMode is PROVISIONED"),
        (
            {"ProvisionedThroughput": {"ReadCapacityUnits": 1}},
            "T.ProvisionedThroughput: ReadCapacityUnits and WriteCapacityUnits must both",
        ),
        ({"BillingMode": "ON_DEMAND"}, "T.BillingMode: 'ON_DEMAND' is not one of"),
        (
            {"BillingMode": "PAY_PER_REQUEST", "ContributorInsightsSpecification": {}},
            "T.ContributorInsightsSpecification: AWS::DynamoDB::Table property not supported",
        ),
    ],
)
def test_a_table_cloudformation_would_refuse_is_refused_by_name(
    cloud: LocalCloud, properties: dict[str, Any], refused: str
) -> None:
    body = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {
            "T": {
                "Type": "AWS::DynamoDB::Table",
                "Properties": {
                    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                    **properties,
                },
            }
        },
    }
    name = f"refused-{uuid.uuid4().hex[:6]}"
    change_set(cloud, name, json.dumps(body))  # refused when carried out, as on AWS

    assert stack(cloud, name)["StackStatus"] == "ROLLBACK_COMPLETE"
    assert any(refused in reason for _, reason in failures(cloud, name)), failures(cloud, name)


def test_connectors_generate_managed_policies_that_are_attached_then_deleted(
    cloud: LocalCloud,
) -> None:
    body = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {
            "Flow": {
                "Type": "AWS::Serverless::StateMachine",
                "Properties": {
                    "Definition": {
                        "StartAt": "Done",
                        "States": {"Done": {"Type": "Pass", "End": True}},
                    }
                },
            },
            "Ledger": {
                "Type": "AWS::Serverless::SimpleTable",
                "Properties": {
                    "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}
                },
            },
            "FlowWritesLedger": {
                "Type": "AWS::Serverless::Connector",
                "Properties": {
                    "Source": {"Id": "Flow"},
                    "Destination": {"Id": "Ledger"},
                    "Permissions": ["Read", "Write"],
                },
            },
        },
    }
    change_set(cloud, "connected", json.dumps(body))

    assert stack(cloud, "connected")["StackStatus"] == "CREATE_COMPLETE", failures(
        cloud, "connected"
    )
    resources = cloud.client("cloudformation").list_stack_resources(StackName="connected")[
        "StackResourceSummaries"
    ]
    by_id = {r["LogicalResourceId"]: r for r in resources}
    policy_arn = by_id["FlowWritesLedgerPolicy"]["PhysicalResourceId"]
    role = by_id["FlowRole"]["PhysicalResourceId"]
    iam = cloud.client("iam")
    attached = iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"]
    assert policy_arn in [p["PolicyArn"] for p in attached]
    version = iam.get_policy(PolicyArn=policy_arn)["Policy"]["DefaultVersionId"]
    document = iam.get_policy_version(PolicyArn=policy_arn, VersionId=version)["PolicyVersion"]
    actions = {a for s in document["Document"]["Statement"] for a in s["Action"]}
    assert {"dynamodb:GetItem", "dynamodb:PutItem"} <= actions

    cloud.client("cloudformation").delete_stack(StackName="connected")

    with pytest.raises(ClientError, match="NoSuchEntity"):
        iam.get_policy(PolicyArn=policy_arn)
    with pytest.raises(ClientError, match="NoSuchEntity"):
        iam.get_role(RoleName=role)


def test_a_bucket_gets_a_lower_case_derived_name_and_keeps_objects_on_update(
    cloud: LocalCloud,
) -> None:
    body: dict[str, Any] = {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {"Reports": {"Type": "AWS::S3::Bucket"}},
    }
    body["Outputs"] = {
        "Name": {"Value": {"Ref": "Reports"}},
        "Arn": {"Value": {"Fn::GetAtt": ["Reports", "Arn"]}},
    }
    change_set(cloud, "Bucketed-Stack", json.dumps(body))

    found = outputs(cloud, "Bucketed-Stack")
    assert found["Name"] == found["Name"].lower()
    assert found["Name"].startswith("bucketed-stack-reports-")
    assert found["Arn"] == f"arn:aws:s3:::{found['Name']}"
    s3 = cloud.client("s3")
    s3.put_object(Bucket=found["Name"], Key="kept.txt", Body=b"kept")
    body["Resources"]["Reports"]["Properties"] = {"Tags": [{"Key": "team", "Value": "ops"}]}
    change_set(cloud, "Bucketed-Stack", json.dumps(body), "UPDATE")
    assert s3.get_object(Bucket=found["Name"], Key="kept.txt")["Body"].read() == b"kept"
    assert s3.get_bucket_tagging(Bucket=found["Name"])["TagSet"] == [
        {"Key": "team", "Value": "ops"}
    ]


def test_sam_clis_managed_bucket_stack_deploys_and_takes_uploads_over_the_local_endpoint(
    cloud: LocalCloud,
) -> None:
    """SAM CLI's own managed stack (``--resolve-s3``) declares the SAM transform, a bucket
    with KMS encryption and a policy denying plain HTTP: it deploys, its policy is
    readable, and uploads to the local (HTTP) endpoint still work, as IAM is not
    enforced locally."""
    change_set(cloud, "aws-sam-cli-managed-test", _get_stack_template())

    assert stack(cloud, "aws-sam-cli-managed-test")["StackStatus"] == "CREATE_COMPLETE"
    bucket = outputs(cloud, "aws-sam-cli-managed-test")["SourceBucket"]
    s3 = cloud.client("s3")
    policy = json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"])
    assert {s["Effect"] for s in policy["Statement"]} == {"Allow", "Deny"}
    rules = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert rules[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "aws:kms"
    s3.put_object(Bucket=bucket, Key="package.zip", Body=b"zip")
    assert s3.get_object(Bucket=bucket, Key="package.zip")["Body"].read() == b"zip"
