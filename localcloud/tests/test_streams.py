"""Kinesis and DynamoDB streams on the local cloud, as the stream app
(``fixtures/apps/stream_app``) uses them: SAM's ``Kinesis`` and ``DynamoDB`` events become
event source mappings of the Lambda API that deliver Lambda's records in order, in
batches, with bisection, partial batch responses and on-failure destinations; the Lambda
API refuses the settings Lambda refuses; the live view names the sources."""

from __future__ import annotations

import base64
import json
import os
import time
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from localcloud.account import LocalCloud
from localcloud.cloudformation.template import load
from localcloud.services.dynamodb.stream_poller import TableStream
from localcloud.state import overview
from localcloud.tests.support.cloud import started
from localcloud.tests.support.logs import printed
from localcloud.tests.support.paths import APPS

REGION = "eu-west-1"
"""Not moto's default, so that a record's ``awsRegion`` is seen to be the stream's."""


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    template = load(APPS / "stream_app" / "template.yaml")
    with started(template=template, stack_name="stream-app", region=REGION) as running:
        yield running


def batches(cloud: LocalCloud, logical_id: str) -> list[dict[str, Any]]:
    """Every batch the function printed, oldest first."""
    return printed(cloud, logical_id)


def readings(cloud: LocalCloud, run: str) -> list[list[int]]:
    """The ``n`` of each reading of run ``run``, batch by batch."""
    return [
        [body["n"] for body in line["bodies"] if body.get("run") == run]
        for line in batches(cloud, "ReadingRecorder")
        if any(body.get("run") == run for body in line["bodies"])
    ]


def put_readings(cloud: LocalCloud, run: str, count: int, **marks: int) -> list[str]:
    """Put readings 0..count-1 of ``run`` on one shard (one partition key); a reading
    whose ``n`` a mark names carries that mark (``poison=3``); their sequence numbers."""
    kinesis = cloud.client("kinesis")
    numbers = []
    for n in range(count):
        body: dict[str, Any] = {"run": run, "n": n}
        body.update({mark: True for mark, marked in marks.items() if marked == n})
        answer = kinesis.put_record(
            StreamName=cloud.outputs["StreamName"],
            Data=json.dumps(body).encode(),
            PartitionKey=run,
        )
        numbers.append(answer["SequenceNumber"])
    return numbers


def failures(cloud: LocalCloud, output: str) -> list[dict[str, Any]]:
    sqs = cloud.client("sqs")
    url = cloud.outputs[output]
    found = []
    while messages := sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", []):
        for message in messages:
            found.append(json.loads(message["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return found


# --- Kinesis -----------------------------------------------------------------------------


def test_kinesis_records_reach_the_function_in_lambdas_shape(cloud: LocalCloud) -> None:
    (number,) = put_readings(cloud, "shape", 1)
    cloud.settle_streams()
    (line,) = [
        line for line in batches(cloud, "ReadingRecorder") if line["bodies"][0]["run"] == "shape"
    ]
    (record,) = line["received"]["Records"]
    function = cloud.client("lambda").get_function_configuration(
        FunctionName=cloud.function("ReadingRecorder").name
    )
    shard = record["eventID"].split(":")[0]
    assert set(record) == {
        "kinesis", "eventSource", "eventVersion", "eventID", "eventName",
        "invokeIdentityArn", "awsRegion", "eventSourceARN",
    }  # fmt: skip
    assert record["eventSource"] == "aws:kinesis"
    assert record["eventName"] == "aws:kinesis:record"
    assert record["eventVersion"] == "1.0"
    assert record["eventID"] == f"{shard}:{number}"
    assert shard.startswith("shardId-")
    assert record["invokeIdentityArn"] == function["Role"]
    assert record["awsRegion"] == REGION
    assert record["eventSourceARN"] == cloud.outputs["StreamArn"]
    data = record["kinesis"]
    assert set(data) == {
        "kinesisSchemaVersion", "partitionKey", "sequenceNumber", "data",
        "approximateArrivalTimestamp",
    }  # fmt: skip
    assert data["partitionKey"] == "shape"
    assert data["sequenceNumber"] == number
    assert json.loads(base64.b64decode(data["data"])) == {"run": "shape", "n": 0}
    assert isinstance(data["approximateArrivalTimestamp"], float)


def test_a_shard_is_read_in_order_in_batches_of_the_batch_size(cloud: LocalCloud) -> None:
    put_readings(cloud, "order", 25)
    cloud.settle_streams()
    assert readings(cloud, "order") == [list(range(10)), list(range(10, 20)), list(range(20, 25))]


def test_a_poison_reading_is_bisected_out_and_sent_to_the_on_failure_queue(
    cloud: LocalCloud,
) -> None:
    numbers = put_readings(cloud, "poison", 4, poison=2)
    cloud.settle_streams()
    seen = readings(cloud, "poison")
    assert seen[:3] == [[0, 1, 2, 3], [0, 1], [2, 3]]
    assert seen[3:] == [[2], [2], [3]]  # one retry of the one poison record, then on
    (failure,) = failures(cloud, "ReadingsFailedQueueUrl")
    assert failure["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert failure["requestContext"]["functionArn"] == cloud.function("ReadingRecorder").arn
    assert failure["responseContext"]["functionError"] == "Unhandled"
    info = failure["KinesisBatchInfo"]
    assert (info["startSequenceNumber"], info["endSequenceNumber"]) == (numbers[2], numbers[2])
    assert info["batchSize"] == 1
    assert info["streamArn"] == cloud.outputs["StreamArn"]


def test_a_reported_failure_retries_from_its_checkpoint_then_is_discarded(
    cloud: LocalCloud,
) -> None:
    numbers = put_readings(cloud, "partial", 4, report=1)
    cloud.settle_streams()
    assert readings(cloud, "partial") == [[0, 1, 2, 3], [1, 2, 3]]
    (failure,) = failures(cloud, "ReadingsFailedQueueUrl")
    assert "functionError" not in failure["responseContext"]  # it answered; it did not fail
    info = failure["KinesisBatchInfo"]
    assert (info["startSequenceNumber"], info["batchSize"]) == (numbers[1], 3)


def test_a_disabled_mapping_holds_its_records_until_enabled_again(cloud: LocalCloud) -> None:
    lambda_ = cloud.client("lambda")
    (uuid,) = [
        m["UUID"]
        for m in lambda_.list_event_source_mappings()["EventSourceMappings"]
        if m["EventSourceArn"] == cloud.outputs["StreamArn"]
    ]
    lambda_.update_event_source_mapping(UUID=uuid, Enabled=False)
    put_readings(cloud, "paused", 2)
    cloud.settle_streams()
    assert readings(cloud, "paused") == []
    lambda_.update_event_source_mapping(UUID=uuid, Enabled=True)
    cloud.settle_streams()
    assert readings(cloud, "paused") == [[0, 1]]


def test_an_at_timestamp_mapping_starts_at_its_time(cloud: LocalCloud) -> None:
    kinesis, lambda_ = cloud.client("kinesis"), cloud.client("lambda")
    kinesis.create_stream(StreamName="stamped", ShardCount=1)
    summary = kinesis.describe_stream_summary(StreamName="stamped")["StreamDescriptionSummary"]

    def put(n: int) -> None:
        body = json.dumps({"run": "stamped", "n": n}).encode()
        kinesis.put_record(StreamName="stamped", Data=body, PartitionKey="k")

    put(0)
    put(1)
    time.sleep(1.1)
    start = time.time()
    put(2)
    made = lambda_.create_event_source_mapping(
        FunctionName=cloud.function("ReadingRecorder").name,
        EventSourceArn=summary["StreamARN"],
        StartingPosition="AT_TIMESTAMP",
        StartingPositionTimestamp=start,
    )
    described = lambda_.get_event_source_mapping(UUID=made["UUID"])
    assert abs(described["StartingPositionTimestamp"].timestamp() - start) < 1
    cloud.settle_streams()
    assert readings(cloud, "stamped") == [[2]]


# --- DynamoDB streams --------------------------------------------------------------------


def test_table_changes_reach_the_function_as_stream_records(cloud: LocalCloud) -> None:
    dynamodb = cloud.client("dynamodb")
    table = cloud.outputs["TableName"]
    dynamodb.put_item(TableName=table, Item={"id": {"S": "a"}, "state": {"S": "new"}})
    dynamodb.put_item(TableName=table, Item={"id": {"S": "a"}, "state": {"S": "done"}})
    dynamodb.delete_item(TableName=table, Key={"id": {"S": "a"}})
    cloud.settle_streams()
    records = [r for line in batches(cloud, "ChangeRecorder") for r in line["received"]["Records"]]
    records = [r for r in records if r["dynamodb"]["Keys"] == {"id": {"S": "a"}}]
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY", "REMOVE"]
    insert, modify, remove = records
    assert insert["dynamodb"]["NewImage"] == {"id": {"S": "a"}, "state": {"S": "new"}}
    assert "OldImage" not in insert["dynamodb"]
    assert modify["dynamodb"]["OldImage"]["state"] == {"S": "new"}
    assert modify["dynamodb"]["NewImage"]["state"] == {"S": "done"}
    assert remove["dynamodb"]["OldImage"]["state"] == {"S": "done"}
    for record in records:
        assert record["eventSource"] == "aws:dynamodb"
        assert record["awsRegion"] == REGION
        assert record["eventSourceARN"] == cloud.outputs["TableStreamArn"]
        assert record["dynamodb"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
        assert isinstance(record["dynamodb"]["ApproximateCreationDateTime"], int)
    numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert numbers == sorted(numbers)


def test_a_failed_change_batch_goes_to_the_on_failure_topic(cloud: LocalCloud) -> None:
    dynamodb = cloud.client("dynamodb")
    table = cloud.outputs["TableName"]
    dynamodb.put_item(TableName=table, Item={"id": {"S": "b"}, "state": {"S": "broken"}})
    cloud.settle_streams()
    (failure,) = failures(cloud, "ChangesFailedQueueUrl")  # the topic's raw subscription
    assert failure["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert failure["requestContext"]["approximateInvokeCount"] == 1  # MaximumRetryAttempts 0
    info = failure["DDBStreamBatchInfo"]
    assert info["batchSize"] == 1
    assert info["streamArn"] == cloud.outputs["TableStreamArn"]
    assert info["approximateArrivalOfFirstRecord"].endswith("Z")


def test_a_mapping_made_later_from_latest_skips_the_changes_before_it(cloud: LocalCloud) -> None:
    dynamodb = cloud.client("dynamodb")
    lambda_ = cloud.client("lambda")
    table, stream = cloud.outputs["TableName"], cloud.outputs["TableStreamArn"]
    (template_mapping,) = [
        m
        for m in lambda_.list_event_source_mappings()["EventSourceMappings"]
        if m["EventSourceArn"] == stream
    ]
    lambda_.delete_event_source_mapping(UUID=template_mapping["UUID"])
    dynamodb.put_item(TableName=table, Item={"id": {"S": "before"}})
    made = lambda_.create_event_source_mapping(
        FunctionName=cloud.function("ChangeRecorder").name,
        EventSourceArn=stream,
        StartingPosition="LATEST",
        BatchSize=5,
        MaximumRetryAttempts=0,
        DestinationConfig=template_mapping["DestinationConfig"],
    )
    assert made["StartingPosition"] == "LATEST"
    dynamodb.put_item(TableName=table, Item={"id": {"S": "after"}})
    cloud.settle_streams()
    keys = [
        r["dynamodb"]["Keys"]["id"]["S"]
        for line in batches(cloud, "ChangeRecorder")
        for r in line["received"]["Records"]
    ]
    assert "after" in keys
    assert "before" not in keys


def test_a_waiting_changes_time_is_read_as_utc_whatever_the_machines_zone(
    cloud: LocalCloud,
) -> None:
    stream = TableStream(cloud.client("dynamodbstreams"), cloud.outputs["TableStreamArn"], REGION)
    (shard,) = stream.shard_ids()
    last = stream.last_sequence_number(shard)
    zone = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"  # moto keeps UTC times without a zone
    time.tzset()
    try:
        cloud.client("dynamodb").put_item(
            TableName=cloud.outputs["TableName"], Item={"id": {"S": "zoned"}}
        )
        count, first = stream.waiting(shard, last)
    finally:
        if zone is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = zone
        time.tzset()
    assert count == 1
    assert first is not None
    assert abs(first - time.time()) < 30
    cloud.settle_streams()


# --- the Lambda API refuses what Lambda refuses ------------------------------------------


@pytest.mark.parametrize(
    ("settings", "code", "words"),
    [
        ({}, "InvalidParameterValueException", "StartingPosition is required"),
        (
            {"StartingPosition": "AT_TIMESTAMP", "StartingPositionTimestamp": 1},
            "InvalidParameterValueException",
            "Unsupported starting position AT_TIMESTAMP for dynamodb",
        ),
        (
            {"StartingPosition": "LATEST", "MaximumRetryAttempts": 10001},
            "ValidationException",
            "Value '10001' at 'maximumRetryAttempts' failed to satisfy constraint: Member "
            "must have value less than or equal to 10000",
        ),
        (
            {"StartingPosition": "LATEST", "MaximumRecordAgeInSeconds": 30},
            "InvalidParameterValueException",
            "MaximumRecordAgeInSeconds 30 is out of range",
        ),
        (
            {"StartingPosition": "LATEST", "TumblingWindowInSeconds": 60},
            "InvalidParameterValueException",
            "TumblingWindowInSeconds is not emulated locally",
        ),
        (
            {
                "StartingPosition": "LATEST",
                "DestinationConfig": {"OnFailure": {"Destination": "arn:aws:s3:::bucket"}},
            },
            "InvalidParameterValueException",
            "is not emulated locally: an SQS queue or an SNS topic",
        ),
    ],
    ids=["no position", "at timestamp", "retries", "age", "tumbling window", "s3 destination"],
)
def test_a_stream_mapping_lambda_refuses_is_refused_by_name(
    cloud: LocalCloud, settings: dict[str, Any], code: str, words: str
) -> None:
    with pytest.raises(ClientError) as refused:
        cloud.client("lambda").create_event_source_mapping(
            FunctionName=cloud.function("ReadingRecorder").name,
            EventSourceArn=cloud.outputs["TableStreamArn"],
            **settings,
        )
    assert refused.value.response["Error"]["Code"] == code
    assert words in refused.value.response["Error"]["Message"]


def test_a_queue_mapping_refuses_a_streams_settings(cloud: LocalCloud) -> None:
    sqs = cloud.client("sqs")
    url = sqs.create_queue(QueueName="plain-queue")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    with pytest.raises(ClientError) as refused:
        cloud.client("lambda").create_event_source_mapping(
            FunctionName=cloud.function("ReadingRecorder").name,
            EventSourceArn=arn,
            StartingPosition="LATEST",
        )
    assert refused.value.response["Error"]["Code"] == "InvalidParameterValueException"
    assert "StartingPosition is not valid for SQS event sources" in str(refused.value)


# --- what the live view shows ------------------------------------------------------------


def test_the_view_names_each_stream_source_and_where_its_failures_go(cloud: LocalCloud) -> None:
    put_readings(cloud, "view", 1)
    cloud.client("dynamodb").put_item(
        TableName=cloud.outputs["TableName"], Item={"id": {"S": "viewed"}}
    )
    cloud.settle_streams()
    shown = {m["source"]: m for m in overview.mappings(cloud)}
    stream = shown[f"{cloud.outputs['StreamName']} (Kinesis)"]
    assert stream["starting_position"] == "TRIM_HORIZON"
    assert stream["on_failure"].startswith("stream-app-ReadingsFailedQueue")
    table = shown[f"{cloud.outputs['TableName']} (DynamoDB stream)"]
    assert table["batch_size"] == 5
    givens = {row["given"] for row in cloud.history.pages()["invocations"]}
    assert any(given.endswith("Kinesis record(s)") for given in givens)
    assert any(given.endswith("DynamoDB record(s)") for given in givens)
