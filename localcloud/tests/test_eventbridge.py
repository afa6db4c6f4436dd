"""EventBridge on the local cloud, as the events app (``fixtures/apps/events_app``) uses
it: AWS's own EC2 state-change events reach a ``CloudWatchEvent`` function, rules on a
custom bus deliver to Lambda (asynchronously, retried, then to an on-failure
destination), SQS, SNS and Step Functions with each input kind, a disabled rule delivers
nothing; SNS delivers to a Lambda subscriber through its filter policy; ``Invoke`` with
``InvocationType=Event`` answers 202 and runs the function afterwards."""

from __future__ import annotations

import io
import json
import re
import time
import zipfile
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from localcloud.account import LocalCloud
from localcloud.cloudformation.template import load
from localcloud.tests.support.cloud import started
from localcloud.tests.support.logs import printed
from localcloud.tests.support.paths import APPS

EVENTS_APP = APPS / "events_app"
AMAZON_LINUX = "resolve:ssm:/aws/service/ami-amazon-linux-latest/amzn2-ami-hvm-x86_64-gp2"


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(template=load(EVENTS_APP / "template.yaml"), stack_name="events-app") as running:
        yield running


def logged(cloud: LocalCloud, logical_id: str, key: str) -> list[Any]:
    """What the function printed under ``key`` (one JSON line per invocation), oldest
    first; ``[]`` when it has no log group (never invoked)."""
    return [line[key] for line in printed(cloud, logical_id) if key in line]


def put(cloud: LocalCloud, detail_type: str, detail: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = cloud.client("events").put_events(
        Entries=[
            {
                "Source": "jobs.tasks",
                "DetailType": detail_type,
                "Detail": json.dumps(detail),
                "EventBusName": cloud.outputs["TasksBusName"],
            }
        ]
    )
    cloud.settle_events(30)
    return answer


def received(cloud: LocalCloud, output: str) -> list[dict[str, Any]]:
    sqs = cloud.client("sqs")
    messages: list[dict[str, Any]] = sqs.receive_message(
        QueueUrl=cloud.outputs[output], MaxNumberOfMessages=10, MessageAttributeNames=["All"]
    ).get("Messages", [])
    for message in messages:
        sqs.delete_message(QueueUrl=cloud.outputs[output], ReceiptHandle=message["ReceiptHandle"])
    return messages


def test_a_function_has_no_log_group_until_its_first_invocation(cloud: LocalCloud) -> None:
    # Lambda makes /aws/lambda/<name> at the first invocation (the role allows
    # logs:CreateLogGroup); creating the function makes none. The SAM CLI's event-bridge
    # test waits on ResourceNotFoundException for it.
    lam, logs = cloud.client("lambda"), cloud.client("logs")
    role = lam.get_function_configuration(FunctionName=cloud.function("TaskRecorder").name)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("index.py", "def handler(event, context):\n    print('hello')\n")
    lam.create_function(
        FunctionName="events-app-late-logger",
        Runtime="python3.13",
        Role=role["Role"],
        Handler="index.handler",
        Code={"ZipFile": archive.getvalue()},
    )
    group = "/aws/lambda/events-app-late-logger"
    assert logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"] == []
    lam.invoke(FunctionName="events-app-late-logger", Payload=b"{}")
    assert [g["logGroupName"] for g in logs.describe_log_groups(logGroupNamePrefix=group)[
        "logGroups"]] == [group]  # fmt: skip
    lam.delete_function(FunctionName="events-app-late-logger")


def test_ec2_instances_state_changes_reach_the_cloudwatch_event_function(
    cloud: LocalCloud,
) -> None:
    ec2 = cloud.client("ec2")
    instance = ec2.run_instances(
        ImageId=AMAZON_LINUX, InstanceType="t2.nano", MinCount=1, MaxCount=1
    )["Instances"][0]
    instance_id = instance["InstanceId"]
    ec2.stop_instances(InstanceIds=[instance_id])
    ec2.start_instances(InstanceIds=[instance_id])
    ec2.terminate_instances(InstanceIds=[instance_id])
    cloud.settle_events(30)

    events = [e for e in logged(cloud, "InstanceWatcher", "received")
              if e["detail"]["instance-id"] == instance_id]  # fmt: skip
    states = sorted(event["detail"]["state"] for event in events)
    assert states == sorted(
        ["pending", "running", "stopping", "stopped", "pending", "running",
         "shutting-down", "terminated"]
    )  # fmt: skip
    event = events[0]
    assert event["source"] == "aws.ec2"
    assert event["detail-type"] == "EC2 Instance State-change Notification"
    assert event["resources"] == [f"arn:aws:ec2:us-east-1:123456789012:instance/{instance_id}"]
    assert set(event) == {
        "version", "id", "detail-type", "source", "account", "time", "region",
        "resources", "detail",
    }  # fmt: skip
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", event["time"])


def test_resolve_ssm_is_the_parameters_ami_and_an_unknown_parameter_is_refused(
    cloud: LocalCloud,
) -> None:
    ec2, ssm = cloud.client("ec2"), cloud.client("ssm")
    wanted = ssm.get_parameter(Name=AMAZON_LINUX.removeprefix("resolve:ssm:"))["Parameter"]
    instance = ec2.run_instances(
        ImageId=AMAZON_LINUX, InstanceType="t2.nano", MinCount=1, MaxCount=1
    )["Instances"][0]
    assert instance["ImageId"] == wanted["Value"]
    ec2.terminate_instances(InstanceIds=[instance["InstanceId"]])
    count = len(ec2.describe_instances()["Reservations"])
    with pytest.raises(ClientError) as refused:
        ec2.run_instances(
            ImageId="resolve:ssm:/no/such/parameter", InstanceType="t2.nano", MinCount=1, MaxCount=1
        )
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValue"
    assert "/no/such/parameter" in refused.value.response["Error"]["Message"]
    assert len(ec2.describe_instances()["Reservations"]) == count
    cloud.settle_events(30)


def test_a_rule_without_input_sends_the_whole_event_in_aws_shape(cloud: LocalCloud) -> None:
    answer = put(cloud, "Task Created", {"task": "whole-1"})
    assert answer["FailedEntryCount"] == 0
    event_id = answer["Entries"][0]["EventId"]
    events = [e for e in logged(cloud, "TaskRecorder", "received") if e.get("id") == event_id]
    assert len(events) == 1
    assert events[0]["detail"] == {"task": "whole-1"}
    assert events[0]["source"] == "jobs.tasks"
    assert events[0]["resources"] == []
    assert "ingestion-time" not in events[0]
    assert isinstance(events[0]["time"], str)
    assert events[0]["time"].endswith("Z")


def test_input_transformer_quotes_values_outside_strings_and_inlines_them_inside(
    cloud: LocalCloud,
) -> None:
    put(cloud, "Task Done", {"task": "done-1", "size": 3})
    transformed = [e for e in logged(cloud, "TaskRecorder", "received") if "said" in e]
    assert {"task": "done-1", "size": 3, "said": "task done-1 is done"} in transformed


def test_a_disabled_rule_delivers_nothing(cloud: LocalCloud) -> None:
    answer = put(cloud, "Task Created", {"task": "whole-2"})
    seen = logged(cloud, "TaskRecorder", "received")
    # the enabled rule on the same pattern delivered it; the disabled one did not
    assert [e for e in seen if e.get("id") == answer["Entries"][0]["EventId"]]
    assert {"never": True} not in seen


def test_input_path_reaches_sqs_and_a_constant_input_reaches_sns(cloud: LocalCloud) -> None:
    put(cloud, "Task Queued", {"task": "queued-1"})
    assert [m["Body"] for m in received(cloud, "TaskQueueUrl")] == ['{"task": "queued-1"}']
    # raw message delivery: the SNS message is the target's Input, as written
    assert [m["Body"] for m in received(cloud, "TopicQueueUrl")] == ['{"queued": "yes"}']


def test_a_state_machine_target_starts_an_execution_with_the_input_path(
    cloud: LocalCloud,
) -> None:
    put(cloud, "Task Flow", {"task": "flow-1"})
    sfn = cloud.client("stepfunctions")
    arn = cloud.outputs["TaskFlowArn"]
    inputs = [
        json.loads(sfn.describe_execution(executionArn=e["executionArn"])["input"])
        for e in sfn.list_executions(stateMachineArn=arn)["executions"]
    ]
    assert {"task": "flow-1"} in inputs


def status_events_until_end(cloud: LocalCloud, execution_arn: str) -> list[dict[str, Any]]:
    """Every status-change event that reached the rule's queue until the execution
    ``execution_arn`` ended (or 30 s passed), in arrival order."""
    deadline = time.monotonic() + 30
    found: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        cloud.settle_events(30)
        found += [json.loads(m["Body"]) for m in received(cloud, "FlowStatusQueueUrl")]
        ends = [e for e in found if e["detail"]["executionArn"] == execution_arn]
        if any(e["detail"]["status"] != "RUNNING" for e in ends):
            break
        time.sleep(0.05)
    return found


def statuses(cloud: LocalCloud, execution_arn: str) -> list[dict[str, Any]]:
    """The status-change events of one execution, until it ended."""
    found = status_events_until_end(cloud, execution_arn)
    return [e for e in found if e["detail"]["executionArn"] == execution_arn]


def test_a_standard_executions_status_changes_reach_the_default_bus(cloud: LocalCloud) -> None:
    sfn = cloud.client("stepfunctions")
    arn = sfn.start_execution(
        stateMachineArn=cloud.outputs["TaskFlowArn"], name="watched", input='{"a": 1}'
    )["executionArn"]
    running, succeeded = statuses(cloud, arn)
    assert running["source"] == "aws.states"
    assert running["detail-type"] == "Step Functions Execution Status Change"
    assert running["resources"] == [arn]
    assert running["detail"] == {
        "executionArn": arn,
        "stateMachineArn": cloud.outputs["TaskFlowArn"],
        "name": "watched",
        "status": "RUNNING",
        "startDate": running["detail"]["startDate"],
        "stopDate": None,
        "input": '{"a":1}',
        "inputDetails": {"included": True},
        "output": None,
        "outputDetails": None,
        "error": None,
        "cause": None,
    }
    described = sfn.describe_execution(executionArn=arn)
    assert running["detail"]["startDate"] == int(described["startDate"].timestamp() * 1000)
    done = succeeded["detail"]
    assert (done["status"], done["output"], done["outputDetails"]) == (
        "SUCCEEDED",
        '{"a":1}',
        {"included": True},
    )
    assert done["stopDate"] >= done["startDate"]


def test_a_failed_executions_error_and_cause_reach_the_bus(cloud: LocalCloud) -> None:
    sfn = cloud.client("stepfunctions")
    arn = sfn.start_execution(stateMachineArn=cloud.outputs["FailingFlowArn"], name="broken")[
        "executionArn"
    ]
    events = statuses(cloud, arn)
    assert [e["detail"]["status"] for e in events] == ["RUNNING", "FAILED"]
    failed = events[-1]["detail"]
    assert (failed["error"], failed["cause"], failed["output"]) == (
        "Flow.Broken",
        "broken on purpose",
        None,
    )


def test_an_express_workflow_sends_no_status_change(cloud: LocalCloud) -> None:
    sfn = cloud.client("stepfunctions")
    arn = sfn.start_execution(stateMachineArn=cloud.outputs["QuickFlowArn"], name="quick")[
        "executionArn"
    ]
    standard = sfn.start_execution(stateMachineArn=cloud.outputs["TaskFlowArn"], name="after")[
        "executionArn"
    ]
    assert sfn.describe_execution(executionArn=arn)["status"] in ("RUNNING", "SUCCEEDED")
    found = status_events_until_end(cloud, standard)  # the express one ran before it
    found += [json.loads(m["Body"]) for m in received(cloud, "FlowStatusQueueUrl")]
    assert [e["detail"]["status"] for e in found if e["detail"]["executionArn"] == standard] == [
        "RUNNING",
        "SUCCEEDED",
    ]
    assert not [e for e in found if e["detail"]["executionArn"] == arn]


def test_a_failing_target_is_retried_then_its_record_goes_to_the_on_failure_destination(
    cloud: LocalCloud,
) -> None:
    answer = put(cloud, "Task Refused", {"task": "refused-1"})
    tries = [e for e in logged(cloud, "TaskRefuser", "refused")
             if e["id"] == answer["Entries"][0]["EventId"]]  # fmt: skip
    assert len(tries) == 2  # MaximumRetryAttempts: 1
    (message,) = received(cloud, "FailuresQueueUrl")
    record = json.loads(message["Body"])
    assert record["version"] == "1.0"
    assert record["requestContext"]["condition"] == "RetriesExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == 2
    assert record["requestContext"]["functionArn"].endswith(":$LATEST")
    assert record["requestPayload"]["detail"] == {"task": "refused-1"}
    assert record["responseContext"]["functionError"] == "Unhandled"
    assert record["responsePayload"]["errorType"] == "ValueError"
    # the dead-letter queue gets the event too ("in addition to or instead of")
    (dead,) = received(cloud, "RefusedDeadLettersUrl")
    assert json.loads(dead["Body"])["detail"] == {"task": "refused-1"}
    attributes = dead["MessageAttributes"]
    assert attributes["ErrorMessage"]["StringValue"] == "refused on purpose"
    assert attributes["RequestID"]["StringValue"] == record["requestContext"]["requestId"]


def test_put_events_answers_each_entry_and_a_malformed_one_harms_no_neighbour(
    cloud: LocalCloud,
) -> None:
    bus = cloud.outputs["TasksBusName"]
    answer = cloud.client("events").put_events(
        Entries=[
            {"Source": "jobs.tasks", "DetailType": "Task Queued", "Detail": "{not json",
             "EventBusName": bus},
            {"Source": "jobs.tasks", "DetailType": "Task Queued",
             "Detail": json.dumps({"task": "queued-2"}), "EventBusName": bus},
        ]
    )  # fmt: skip
    cloud.settle_events(30)
    assert answer["FailedEntryCount"] == 1
    assert answer["Entries"][0]["ErrorCode"] == "MalformedDetail"
    assert "EventId" in answer["Entries"][1]
    assert [m["Body"] for m in received(cloud, "TaskQueueUrl")] == ['{"task": "queued-2"}']
    received(cloud, "TopicQueueUrl")


def test_an_event_invocation_answers_202_then_runs_retries_and_reports_the_failure(
    cloud: LocalCloud,
) -> None:
    function = cloud.function("TaskRefuser")
    answer = cloud.client("lambda").invoke(
        FunctionName=function.name, InvocationType="Event", Payload=b'{"queued": "invoke-1"}'
    )
    assert answer["StatusCode"] == 202
    assert answer["Payload"].read() == b""
    cloud.settle_events(30)
    assert logged(cloud, "TaskRefuser", "refused").count({"queued": "invoke-1"}) == 2
    (message,) = received(cloud, "FailuresQueueUrl")
    record = json.loads(message["Body"])
    assert record["requestPayload"] == {"queued": "invoke-1"}
    assert record["requestContext"]["condition"] == "RetriesExhausted"
    (dead,) = received(cloud, "RefusedDeadLettersUrl")
    assert json.loads(dead["Body"]) == {"queued": "invoke-1"}


def test_sns_delivers_its_record_to_a_lambda_subscriber_through_the_filter_policy(
    cloud: LocalCloud,
) -> None:
    sns = cloud.client("sns")
    topic = cloud.outputs["NoticeTopicArn"]  # SAM's SNS event, with a FilterPolicy
    (subscription,) = [
        s["SubscriptionArn"] for s in sns.list_subscriptions_by_topic(TopicArn=topic)[
            "Subscriptions"] if s["Protocol"] == "lambda"
    ]  # fmt: skip
    for kind in ("wanted", "unwanted"):
        sns.publish(
            TopicArn=topic,
            Message=f"sns-{kind}",
            MessageAttributes={"kind": {"DataType": "String", "StringValue": kind}},
        )
    cloud.settle_events(30)
    records = [
        event["Records"][0]
        for event in logged(cloud, "TaskRecorder", "received")
        if isinstance(event, dict) and "Records" in event
        and event["Records"][0]["Sns"]["TopicArn"] == topic
    ]  # fmt: skip
    assert [record["Sns"]["Message"] for record in records] == ["sns-wanted"]
    record = records[0]
    assert record["EventSource"] == "aws:sns"
    assert record["EventSubscriptionArn"] == subscription
    assert record["Sns"]["MessageAttributes"] == {"kind": {"Type": "String", "Value": "wanted"}}
    assert record["Sns"]["Subject"] is None
    assert record["Sns"]["Type"] == "Notification"
    assert {"SigningCertUrl", "UnsubscribeUrl", "Signature", "Timestamp"} <= set(record["Sns"])


def test_the_view_lists_each_event_source_and_names_what_each_invocation_was_given(
    cloud: LocalCloud,
) -> None:
    put(cloud, "Task Created", {"task": "viewed-1"})
    cloud.client("sns").publish(
        TopicArn=cloud.outputs["NoticeTopicArn"],
        Message="viewed",
        MessageAttributes={"kind": {"DataType": "String", "StringValue": "wanted"}},
    )
    cloud.settle_events(30)
    state = cloud.view_data({})
    sources = {(e["kind"], e["source"]): e for e in state["event_sources"]}
    bus = cloud.outputs["TasksBusName"]
    rules = [e for (kind, source), e in sources.items()
             if kind == "EventBridge rule" and source.startswith(f"{bus}/")]  # fmt: skip
    recorder = cloud.function("TaskRecorder").name
    assert any(recorder in e["targets"] and '"Task Created"' in e["trigger"] for e in rules)
    assert any(e["state"] == "DISABLED" for e in rules)
    (watcher,) = [e for (kind, source), e in sources.items()
                  if kind == "EventBridge rule" and "aws.ec2" in e["trigger"]]  # fmt: skip
    assert watcher["targets"] == [cloud.function("InstanceWatcher").name]
    notice = cloud.outputs["NoticeTopicArn"].rsplit(":", 1)[-1]
    assert sources[("SNS subscription (lambda)", notice)]["targets"] == [recorder]
    given = {i.given for i in cloud.history.invocations if i.function == recorder}
    assert "EventBridge: jobs.tasks · Task Created" in given
    assert "1 SNS record(s)" in given


def test_log_group_and_archive_targets_keep_motos_delivery(cloud: LocalCloud) -> None:
    events, logs = cloud.client("events"), cloud.client("logs")
    bus = cloud.outputs["TasksBusName"]
    logs.create_log_group(logGroupName="/events/tasks-archive")
    events.put_rule(Name="to-log-group", EventBusName=bus, EventPattern=json.dumps(
        {"source": ["jobs.tasks"], "detail-type": ["Task Logged"]}))  # fmt: skip
    events.put_targets(
        Rule="to-log-group",
        EventBusName=bus,
        Targets=[
            {
                "Id": "log",
                "Arn": "arn:aws:logs:us-east-1:123456789012:log-group:/events/tasks-archive",
            }
        ],
    )
    put(cloud, "Task Logged", {"task": "logged-1"})
    streams = logs.describe_log_streams(logGroupName="/events/tasks-archive")["logStreams"]
    messages = [
        e["message"]
        for s in streams
        for e in logs.get_log_events(
            logGroupName="/events/tasks-archive", logStreamName=s["logStreamName"]
        )["events"]
    ]
    assert any('"logged-1"' in message for message in messages)


def test_a_deleted_lambda_subscriber_fails_neither_publish_nor_the_other_subscribers(
    cloud: LocalCloud,
) -> None:
    sns, sqs, lam = cloud.client("sns"), cloud.client("sqs"), cloud.client("lambda")
    topic = sns.create_topic(Name="events-app-mixed")["TopicArn"]
    queue = sqs.create_queue(QueueName="events-app-mixed")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])[
        "Attributes"]["QueueArn"]  # fmt: skip
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("index.py", "def handler(event, context):\n    return event\n")
    role = lam.get_function_configuration(FunctionName=cloud.function("TaskRecorder").name)
    gone = lam.create_function(
        FunctionName="events-app-gone", Runtime="python3.13", Role=role["Role"],
        Handler="index.handler", Code={"ZipFile": archive.getvalue()},
    )["FunctionArn"]  # fmt: skip
    sns.subscribe(TopicArn=topic, Protocol="lambda", Endpoint=gone)
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    lam.delete_function(FunctionName="events-app-gone")
    assert "MessageId" in sns.publish(TopicArn=topic, Message="still delivered")
    (message,) = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=2)["Messages"]
    assert json.loads(message["Body"])["Message"] == "still delivered"
