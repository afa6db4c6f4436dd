"""The local cloud with the suite's jobs app deployed: its resources follow the template,
a state machine's task reaches the real function, and the Lambda runtime behaves like the
runtime."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator

import pytest

from localcloud.account import LocalCloud
from localcloud.cloudformation.deployer import function_properties
from localcloud.tests.support.cloud import app_template, started
from localcloud.tests.support.paths import JOBS_APP


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(visibility_timeout=1) as running:
        yield running


# --- the moto hook -----------------------------------------------------------------


def test_state_machine_tasks_reach_the_real_handler(cloud: LocalCloud) -> None:
    """If moto stopped routing lambda:invoke through the hooked method, the task would
    get moto's echo instead of the worker's priced result."""
    from localcloud.state import run_execution

    machine = cloud.outputs["TaskStateMachineArn"]
    described, _ = run_execution(cloud, machine, "hook-probe", {"id": "hook-probe", "quantity": 2})
    assert json.loads(described["output"]) == {
        "id": "hook-probe",
        "total": 600,
        "completed": True,
    }


# --- resources follow the template --------------------------------------------------


def test_every_template_resource_exists_locally(cloud: LocalCloud) -> None:
    deployment = cloud.deployment
    # as deployed: after the SAM transform (the functions' event source mappings too)
    assert set(deployment.refs) == set(deployment.template.resources)
    assert set(cloud.template.resources) < set(deployment.refs)


def test_queues_follow_the_template(cloud: LocalCloud) -> None:
    sqs = cloud.client("sqs")
    queue = sqs.get_queue_attributes(
        QueueUrl=cloud.outputs["TaskQueueUrl"], AttributeNames=["All"]
    )["Attributes"]
    redrive = json.loads(queue["RedrivePolicy"])
    assert redrive == {
        "deadLetterTargetArn": cloud.outputs["TaskDeadLetterQueueArn"],
        "maxReceiveCount": int(cloud.template.parameters["MaxReceiveCount"]),
    }
    assert queue["SqsManagedSseEnabled"] == "true"
    assert queue["VisibilityTimeout"] == "1"  # the local override, reported in notes
    assert any(
        "visibility timeout 1 s locally (template: 60 s)" in n for n in cloud.deployment.notes
    )
    dlq = sqs.get_queue_attributes(
        QueueUrl=cloud.outputs["TaskDeadLetterQueueUrl"], AttributeNames=["All"]
    )["Attributes"]
    assert dlq["MessageRetentionPeriod"] == "1209600"


def test_tables_follow_the_template(cloud: LocalCloud) -> None:
    dynamodb = cloud.client("dynamodb")
    for output, logical_id in (
        ("ItemsTableName", "ItemsTable"),
        ("TriesTableName", "TriesTable"),
    ):
        table = dynamodb.describe_table(TableName=cloud.outputs[output])["Table"]
        assert table["KeySchema"] == cloud.template.resources[logical_id]["Properties"]["KeySchema"]
        assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    backups = dynamodb.describe_continuous_backups(TableName=cloud.outputs["ItemsTableName"])
    pitr = backups["ContinuousBackupsDescription"]["PointInTimeRecoveryDescription"]
    assert pitr["PointInTimeRecoveryStatus"] == "ENABLED"


def test_log_groups_follow_the_template(cloud: LocalCloud) -> None:
    logs = cloud.client("logs")
    for output in ("ConsumerLogGroupName", "TaskLogGroupName"):
        (group,) = logs.describe_log_groups(logGroupNamePrefix=cloud.outputs[output])["logGroups"]
        assert group["retentionInDays"] == int(cloud.template.parameters["LogRetentionInDays"])


def test_functions_get_globals_and_their_own_environment_resolved(cloud: LocalCloud) -> None:
    worker = cloud.function("TaskFunction")
    assert worker.environment["ITEMS_TABLE_NAME"] == cloud.outputs["ItemsTableName"]
    assert worker.environment["TRIES_TABLE_NAME"] == cloud.outputs["TriesTableName"]
    assert worker.environment["VERBOSE"] == "true"  # samconfig [default]
    assert worker.environment["SERVICE_NAME"] == "workflow-worker"
    assert worker.timeout_s == cloud.template.function_globals["Timeout"]
    assert worker.log_group == cloud.outputs["TaskLogGroupName"]
    configuration = cloud.client("lambda").get_function_configuration(FunctionName=worker.name)
    assert configuration["Runtime"] == "python3.13"
    assert configuration["Architectures"] == ["arm64"]


def test_the_event_source_mapping_follows_the_template(cloud: LocalCloud) -> None:
    source = cloud.event_source
    assert source.batch_size == int(cloud.template.parameters["BatchSize"])
    assert source.report_batch_item_failures is True
    assert source.queue_arn == cloud.outputs["TaskQueueArn"]
    assert source.function is cloud.function("ConsumerFunction")


def test_the_state_machine_is_the_asl_file_with_substitutions(cloud: LocalCloud) -> None:
    definition = cloud.client("stepfunctions").describe_state_machine(
        stateMachineArn=cloud.outputs["TaskStateMachineArn"]
    )["definition"]
    worker_arn = cloud.deployment.get_att("TaskFunction", "Arn")
    expected = (
        (JOBS_APP / "statemachine" / "jobs.asl.json")
        .read_text()
        .replace("${TaskFunctionArn}", worker_arn)
    )
    assert json.loads(definition) == json.loads(expected)


def test_the_stack_outputs_are_published_for_describe_stacks(cloud: LocalCloud) -> None:
    (stack,) = cloud.client("cloudformation").describe_stacks(StackName="jobs-app")["Stacks"]
    assert {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]} == cloud.outputs


def test_globals_merge_like_sam() -> None:
    properties = function_properties(app_template(), "ConsumerFunction")
    assert properties["Runtime"] == "python3.13"
    assert set(properties["Environment"]["Variables"]) >= {
        "ITEMS_TABLE_NAME",
        "SERVICE_NAME",
    }


# --- the local runtime behaves like Lambda ---------------------------------------------


def test_an_exception_becomes_the_runtime_error_envelope(cloud: LocalCloud) -> None:
    response = cloud.client("lambda").invoke(
        FunctionName=cloud.outputs["TaskFunctionName"],
        Payload=json.dumps({"id": "envelope", "quantity": 0}),
    )
    assert response["FunctionError"] == "Unhandled"
    envelope = json.loads(response["Payload"].read())
    assert envelope["errorType"] == "InvalidJob"
    assert "quantity must be from 1 to 10" in envelope["errorMessage"]
    assert isinstance(envelope["stackTrace"], list)
    assert envelope["stackTrace"]


def test_each_function_sees_only_its_own_environment(cloud: LocalCloud) -> None:
    import os

    queue = cloud.function("ConsumerFunction")
    assert "TRIES_TABLE_NAME" not in queue.environment
    before = dict(os.environ)
    queue.invoke({"Records": [{"messageId": "m-1", "body": '{"id": "env-1", "quantity": 1}'}]})
    assert dict(os.environ) == before


def test_invocation_logs_go_to_the_function_log_group(cloud: LocalCloud) -> None:
    worker = cloud.function("TaskFunction")
    invocation = worker.invoke({"id": "logged-job", "quantity": 1})
    events = cloud.client("logs").filter_log_events(
        logGroupName=cloud.outputs["TaskLogGroupName"],
        filterPattern=f'"{invocation.request_id}"',
    )["events"]
    messages = [e["message"] for e in events]
    assert messages[0] == f"START RequestId: {invocation.request_id} Version: $LATEST"
    assert any('"message": "STORED"' in m and "logged-job" in m for m in messages)
    assert messages[-1].startswith(f"REPORT RequestId: {invocation.request_id}")


def test_the_alarm_and_the_saved_query_follow_the_template(cloud: LocalCloud) -> None:
    (alarm,) = cloud.client("cloudwatch").describe_alarms(
        AlarmNames=[cloud.outputs["DeadLettersAlarmName"]]
    )["MetricAlarms"]
    queue = cloud.outputs["TaskDeadLetterQueueUrl"].rsplit("/", 1)[-1]
    assert alarm["Dimensions"] == [{"Name": "QueueName", "Value": queue}]
    assert alarm["AlarmActions"] == []  # !If without an e-mail: AWS::NoValue
    # moto has no PutQueryDefinition: the query is recorded, resolved, and a note says so
    query = cloud.deployment.records["StoredQueryDefinition"]
    assert (query.name, query.log_group_names) == (
        "jobs-app/stored jobs",
        (cloud.outputs["TaskLogGroupName"],),
    )
    assert any(
        n.startswith("StoredQueryDefinition: saved query recorded") for n in cloud.deployment.notes
    )


def test_an_alarm_email_adds_an_encrypted_topic_its_subscription_and_the_alarms_action(
    make_cloud: Callable[..., LocalCloud],
) -> None:
    alarmed = app_template(parameter_overrides="AlarmEmail=oncall@example.com")
    cloud = make_cloud(template=alarmed, stack_name="jobs-app-alarmed")
    topic = cloud.outputs["AlarmTopicArn"]
    sns = cloud.client("sns")
    key = sns.get_topic_attributes(TopicArn=topic)["Attributes"]["KmsMasterKeyId"]
    assert cloud.client("kms").describe_key(KeyId=key)["KeyMetadata"]["KeyState"] == "Enabled"
    (subscription,) = sns.list_subscriptions_by_topic(TopicArn=topic)["Subscriptions"]
    assert (subscription["Protocol"], subscription["Endpoint"]) == ("email", "oncall@example.com")
    (alarm,) = cloud.client("cloudwatch").describe_alarms(
        AlarmNames=[cloud.outputs["DeadLettersAlarmName"]]
    )["MetricAlarms"]
    assert alarm["AlarmActions"] == [topic]
