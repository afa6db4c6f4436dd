"""S3 event notifications on the local cloud, as the bucket app
(``fixtures/apps/bucket_app``) uses them: SAM's ``S3`` event invokes a function with S3's
record for a key under its prefix only, removals reach a queue and a topic, and the
bucket's EventBridge notifications reach a rule on the default bus."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.cloudformation.template import load
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import APPS


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    template = load(APPS / "bucket_app" / "template.yaml")
    with started(template=template, stack_name="bucket-app") as running:
        yield running


def bodies(cloud: LocalCloud, output: str) -> list[Any]:
    sqs = cloud.client("sqs")
    url = cloud.outputs[output]
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    for message in messages:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return [json.loads(message["Body"]) for message in messages]


def records(cloud: LocalCloud) -> list[dict[str, Any]]:
    function = cloud.function("UploadRecorder")
    logs = cloud.client("logs")
    found = []
    try:
        streams = logs.describe_log_streams(logGroupName=function.log_group)["logStreams"]
    except logs.exceptions.ResourceNotFoundException:
        return []
    for stream in streams:
        for event in logs.get_log_events(
            logGroupName=function.log_group, logStreamName=stream["logStreamName"]
        )["events"]:
            if event["message"].startswith("{"):
                found.extend(json.loads(event["message"])["received"]["Records"])
    return found


def test_an_upload_under_the_prefix_invokes_the_function_with_s3s_record(
    cloud: LocalCloud,
) -> None:
    s3 = cloud.client("s3")
    bucket = cloud.outputs["BucketName"]
    s3.put_object(Bucket=bucket, Key="uploads/photo one.png", Body=b"12345")
    s3.put_object(Bucket=bucket, Key="elsewhere/photo.png", Body=b"123")
    cloud.settle_events(30)
    (record,) = [r for r in records(cloud) if r["s3"]["object"]["key"].startswith("uploads")]
    assert not [r for r in records(cloud) if "elsewhere" in r["s3"]["object"]["key"]]
    assert record["eventSource"] == "aws:s3"
    assert record["eventVersion"] == "2.1"
    assert record["eventName"] == "ObjectCreated:Put"
    assert record["awsRegion"] == "us-east-1"
    assert set(record) == {
        "eventVersion", "eventSource", "awsRegion", "eventTime", "eventName",
        "userIdentity", "requestParameters", "responseElements", "s3",
    }  # fmt: skip
    assert record["s3"]["bucket"]["name"] == bucket
    assert record["s3"]["bucket"]["arn"] == f"arn:aws:s3:::{bucket}"
    assert "principalId" in record["s3"]["bucket"]["ownerIdentity"]
    obj = record["s3"]["object"]
    assert obj["key"] == "uploads/photo+one.png"  # URL-encoded, as S3 sends it
    assert obj["size"] == 5
    assert obj["eTag"] == "827ccb0eea8a706c4c34a16891f84e7b"  # md5 of 12345
    assert len(obj["sequencer"]) == 16
    assert set(record["responseElements"]) == {"x-amz-request-id", "x-amz-id-2"}


def test_a_removal_reaches_the_queue_and_the_topic_without_size_or_etag(
    cloud: LocalCloud,
) -> None:
    s3 = cloud.client("s3")
    bucket = cloud.outputs["BucketName"]
    s3.put_object(Bucket=bucket, Key="gone.txt", Body=b"x")
    bodies(cloud, "RemovalsQueueUrl")
    s3.delete_object(Bucket=bucket, Key="gone.txt")
    cloud.settle_events(30)
    (queued,) = [b for b in bodies(cloud, "RemovalsQueueUrl") if "Records" in b]
    (record,) = queued["Records"]
    assert record["eventName"] == "ObjectRemoved:Delete"
    assert record["s3"]["object"]["key"] == "gone.txt"
    assert "size" not in record["s3"]["object"]
    assert "eTag" not in record["s3"]["object"]
    (published,) = bodies(cloud, "TopicQueueUrl")  # raw delivery: the record itself
    assert published["Records"][0]["eventName"] == "ObjectRemoved:Delete"


def test_eventbridge_notifications_reach_a_default_bus_rule_as_s3_names_them(
    cloud: LocalCloud,
) -> None:
    s3 = cloud.client("s3")
    bucket = cloud.outputs["BucketName"]
    bodies(cloud, "BridgedQueueUrl")
    s3.put_object(Bucket=bucket, Key="bridged.txt", Body=b"abc")
    cloud.settle_events(30)
    events = [e for e in bodies(cloud, "BridgedQueueUrl")
              if e["detail"]["object"]["key"] == "bridged.txt"]  # fmt: skip
    assert len(events) == 1
    event = events[0]
    assert event["source"] == "aws.s3"
    assert event["detail-type"] == "Object Created"
    assert event["resources"] == [f"arn:aws:s3:::{bucket}"]
    assert event["detail"]["bucket"] == {"name": bucket}
    assert event["detail"]["reason"] == "PutObject"
    assert event["detail"]["object"]["size"] == 3
    assert isinstance(event["time"], str)


def test_the_view_lists_the_buckets_notifications(cloud: LocalCloud) -> None:
    bucket = cloud.outputs["BucketName"]
    rows = [e for e in cloud.view_data({})["event_sources"] if e["source"] == bucket]
    assert {(e["trigger"], tuple(e["targets"])) for e in rows} == {
        ("s3:ObjectCreated:*", (cloud.function("UploadRecorder").name,)),
        ("s3:ObjectRemoved:*", (cloud.outputs["RemovalsQueueUrl"].rsplit("/", 1)[-1],)),
        ("s3:ObjectRemoved:Delete", (cloud.deployment.refs["RemovalsTopic"].rsplit(":", 1)[-1],)),
        ("every event", ("the default event bus",)),
    }
