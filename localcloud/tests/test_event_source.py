"""The local SQS event source mapping follows the documented Lambda semantics.

Source: AWS Lambda developer guide, "Implementing partial batch responses" and
"Handling errors for an SQS event source in Lambda".
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest

from localcloud.services.lambda_ import InProcessFunction
from localcloud.services.sqs.batches import MAX_PAYLOAD_BYTES, judge_response
from localcloud.services.sqs.poller import SqsEventSourceMapping
from localcloud.tests.support.paths import FIXTURES

ESM_FUNCTIONS = FIXTURES / "esm_functions"
IDS = ["a", "b", "c"]


@pytest.mark.parametrize(
    ("response", "kept"),
    [
        (None, set()),
        ({}, set()),
        ({"batchItemFailures": None}, set()),
        ({"batchItemFailures": []}, set()),
        ({"batchItemFailures": [{"itemIdentifier": "b"}]}, {"b"}),
        ({"batchItemFailures": [{"itemIdentifier": "a"}, {"itemIdentifier": "c"}]}, {"a", "c"}),
        ({"batchItemFailures": [{"itemIdentifier": ""}]}, set(IDS)),
        ({"batchItemFailures": [{"itemIdentifier": None}]}, set(IDS)),
        ({"batchItemFailures": [{"itemIdentifier": "zzz"}]}, set(IDS)),
        ({"batchItemFailures": [{}]}, set(IDS)),
        ({"batchItemFailures": "b"}, set(IDS)),
        ({"batchItemFailures": ["b"]}, set(IDS)),
        ("junk", set(IDS)),
        ([1, 2], set(IDS)),
    ],
)
def test_partial_batch_responses_are_judged_as_documented(response: Any, kept: set[str]) -> None:
    keep, verdict = judge_response(response, IDS, report_batch_item_failures=True)
    assert keep == kept, verdict


def test_without_report_batch_item_failures_any_response_succeeds() -> None:
    keep, _ = judge_response(
        {"batchItemFailures": [{"itemIdentifier": "a"}]}, IDS, report_batch_item_failures=False
    )
    assert keep == set()


@pytest.fixture
def queues(aws: None) -> Iterator[dict[str, str]]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    dlq = sqs.create_queue(QueueName="esm-dlq")["QueueUrl"]
    dlq_arn = sqs.get_queue_attributes(QueueUrl=dlq, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    queue = sqs.create_queue(
        QueueName="esm-queue",
        Attributes={
            "VisibilityTimeout": "1",
            "RedrivePolicy": json.dumps({"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 3}),
        },
    )["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    return {"queue": queue, "arn": arn, "dlq": dlq}


def mapping(queues: dict[str, str], batch_size: int = 10) -> SqsEventSourceMapping:
    function = InProcessFunction(
        name="responder",
        arn="arn:aws:lambda:us-east-1:123456789012:function:responder",
        code_uri=ESM_FUNCTIONS,
        handler="responder.handler",
        environment={},
        timeout_s=3,
        memory_mb=128,
        log_group="/aws/lambda/responder",
        region="us-east-1",
    )
    return SqsEventSourceMapping(
        sqs=boto3.client("sqs", region_name="us-east-1"),
        queue_url=queues["queue"],
        queue_arn=queues["arn"],
        region="us-east-1",
        function=function,
        batch_size=batch_size,
        report_batch_item_failures=True,
    )


def send(queues: dict[str, str], *bodies: dict[str, Any]) -> list[str]:
    sqs = boto3.client("sqs", region_name="us-east-1")
    return [
        sqs.send_message(QueueUrl=queues["queue"], MessageBody=json.dumps(b))["MessageId"]
        for b in bodies
    ]


def depth(url: str) -> tuple[int, int]:
    attributes = boto3.client("sqs", region_name="us-east-1").get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


def test_records_carry_every_field_lambda_sends(queues: dict[str, str]) -> None:
    esm = mapping(queues)
    (message_id,) = send(queues, {"answer": None})

    (record,) = esm.poll_once().records

    assert set(record) == {
        "messageId",
        "receiptHandle",
        "body",
        "attributes",
        "messageAttributes",
        "md5OfBody",
        "eventSource",
        "eventSourceARN",
        "awsRegion",
    }
    assert record["messageId"] == message_id
    assert record["eventSource"] == "aws:sqs"
    assert record["eventSourceARN"] == queues["arn"]
    assert record["awsRegion"] == "us-east-1"
    assert record["attributes"]["ApproximateReceiveCount"] == "1"
    assert {"SentTimestamp", "SenderId", "ApproximateFirstReceiveTimestamp"} <= set(
        record["attributes"]
    )


def test_message_attributes_arrive_in_the_lambda_record_form(queues: dict[str, str]) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.send_message(
        QueueUrl=queues["queue"],
        MessageBody=json.dumps({"answer": None}),
        MessageAttributes={
            "tenant": {"DataType": "String", "StringValue": "acme"},
            "blob": {"DataType": "Binary", "BinaryValue": b"\x00\x01"},
        },
    )
    (record,) = mapping(queues).poll_once().records
    assert record["messageAttributes"]["tenant"]["stringValue"] == "acme"
    assert record["messageAttributes"]["tenant"]["dataType"] == "String"
    assert record["messageAttributes"]["blob"]["binaryValue"] == "AAE="


def test_batch_size_caps_the_records_per_invocation(queues: dict[str, str]) -> None:
    send(queues, *[{"answer": None}] * 5)
    outcome = mapping(queues, batch_size=2).poll_once()
    assert len(outcome.records) == 2


def test_listed_failures_stay_and_the_rest_are_deleted(queues: dict[str, str]) -> None:
    ids = send(queues, {"answer": "fail-ids"}, {"fail": True}, {"ok": 1})
    esm = mapping(queues)

    outcome = esm.poll_once()

    assert len(outcome.records) == 3, "moto returned a partial batch"
    assert outcome.kept == [ids[1]]
    assert sorted(outcome.deleted) == sorted([ids[0], ids[2]])
    assert depth(queues["queue"]) == (0, 1)


@pytest.mark.parametrize(
    "answer", [None, {}, {"batchItemFailures": None}, {"batchItemFailures": []}]
)
def test_an_empty_response_or_failure_list_deletes_the_whole_batch(
    queues: dict[str, str], answer: Any
) -> None:
    send(queues, {"answer": answer}, {"x": 1})
    outcome = mapping(queues).poll_once()
    assert outcome.kept == []
    assert depth(queues["queue"]) == (0, 0)


@pytest.mark.parametrize(
    "answer",
    [
        {"batchItemFailures": [{"itemIdentifier": ""}]},
        {"batchItemFailures": [{"itemIdentifier": None}]},
        {"batchItemFailures": [{"itemIdentifier": "not-in-this-batch"}]},
        "junk",
        {"batchItemFailures": "$ID0"},
    ],
)
def test_an_invalid_identifier_or_malformed_response_fails_the_whole_batch(
    queues: dict[str, str], answer: Any
) -> None:
    ids = send(queues, {"answer": answer}, {"x": 1})
    outcome = mapping(queues).poll_once()
    assert sorted(outcome.kept) == sorted(ids)
    assert outcome.deleted == []
    assert depth(queues["queue"]) == (0, 2)


def test_a_function_error_leaves_the_batch_for_redelivery_after_the_visibility_timeout(
    queues: dict[str, str],
) -> None:
    (message_id,) = send(queues, {"answer": "raise"})
    esm = mapping(queues)

    first = esm.poll_once()

    assert first.invocation is not None
    assert first.invocation.error
    assert first.invocation.error_type == "RuntimeError"
    assert first.kept == [message_id]
    assert esm.poll_once().invocation is None, "invisible during the visibility timeout"
    deadline = time.monotonic() + 10
    while not (again_outcome := esm.poll_once()).records and time.monotonic() < deadline:
        time.sleep(0.1)
    (again,) = again_outcome.records
    assert again["messageId"] == message_id
    assert again["attributes"]["ApproximateReceiveCount"] == "2"


@pytest.mark.slow  # seconds: the quick loop leaves it to make test
def test_a_message_that_keeps_failing_is_redriven_after_max_receive_count(
    queues: dict[str, str],
) -> None:
    body = {"answer": "raise"}
    send(queues, body)
    esm = mapping(queues)
    receives = []
    deadline = time.monotonic() + 15
    while depth(queues["dlq"]) == (0, 0) and time.monotonic() < deadline:
        outcome = esm.poll_once()
        receives += [r["attributes"]["ApproximateReceiveCount"] for r in outcome.records]
        if outcome.invocation is None:
            time.sleep(0.2)
    assert receives == ["1", "2", "3"]
    (dead,) = boto3.client("sqs", region_name="us-east-1").receive_message(QueueUrl=queues["dlq"])[
        "Messages"
    ]
    assert json.loads(dead["Body"]) == body
    assert depth(queues["queue"]) == (0, 0)


def test_records_carry_every_attribute_receive_message_returned(queues: dict[str, str]) -> None:
    sqs = boto3.client("sqs", region_name="us-east-1")
    sqs.send_message(
        QueueUrl=queues["queue"],
        MessageBody=json.dumps({"answer": None}),
        MessageAttributes={"tenant": {"DataType": "String", "StringValue": "acme"}},
        MessageSystemAttributes={
            "AWSTraceHeader": {"DataType": "String", "StringValue": "Root=1-5759e988-bd862e3fe"}
        },
    )
    esm = mapping(queues)

    (record,) = esm.poll_once().records

    assert record["attributes"]["AWSTraceHeader"] == "Root=1-5759e988-bd862e3fe"
    assert len(record["md5OfMessageAttributes"]) == 32
    assert set(record["attributes"]) >= {
        "ApproximateReceiveCount",
        "SentTimestamp",
        "SenderId",
        "ApproximateFirstReceiveTimestamp",
    }


def test_a_batch_over_lambdas_6_mb_payload_limit_is_split_into_invocations(aws: None) -> None:
    """Ten orders padded to 1,000,000 bytes each: never one 10 MB event."""
    sqs = boto3.client("sqs", region_name="us-east-1")
    url = sqs.create_queue(
        QueueName="big-messages",
        Attributes={"MaximumMessageSize": str(1024 * 1024), "VisibilityTimeout": "30"},
    )["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    for i in range(10):
        order = json.dumps({"answer": None, "n": i})
        sqs.send_message(QueueUrl=url, MessageBody=order + " " * (1_000_000 - len(order)))
    esm = mapping({"queue": url, "arn": arn, "dlq": ""})

    outcome = esm.poll_once()

    events = esm.function.module_globals["SEEN"]  # what the handler was invoked with
    assert [len(event["Records"]) for event in events] == [6, 4]
    assert all(len(json.dumps(event).encode()) <= MAX_PAYLOAD_BYTES for event in events)
    assert len(outcome.invocations) == 2
    assert outcome.deleted == outcome.message_ids  # every chunk's records acknowledged
