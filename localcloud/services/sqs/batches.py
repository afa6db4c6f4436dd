"""The pure parts of the SQS event source mapping: a message as Lambda's record, the
documented judgement of a batch's response, and Lambda's 6 MB payload limit. Tested
without a server.

Source: "Handling errors for an SQS event source in Lambda" and "Implementing partial
batch responses" in the AWS Lambda developer guide.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping, Sequence
from typing import Any

MAX_PAYLOAD_BYTES = 6 * 1024 * 1024
"""Lambda's limit on a synchronous invocation's request payload (6 MB)."""
MAX_RECEIVE = 10
"""SQS ReceiveMessage returns at most 10 messages a call."""


def judge_response(
    response: Any, batch_ids: Sequence[str], *, report_batch_item_failures: bool
) -> tuple[set[str], str]:
    """Apply the documented partial-batch semantics to a successful invocation's response.

    Returns:
        (message ids to keep for redelivery, a one-line verdict).
    """
    every = set(batch_ids)
    if not report_batch_item_failures:
        return set(), "success: whole batch deleted"
    if response is None or response == {} or response == "":
        return set(), "empty response: whole batch succeeded"
    if not isinstance(response, Mapping):
        return every, "malformed response (not an object): whole batch failed"
    failures = response.get("batchItemFailures")
    if failures is None or failures == []:
        return set(), "no batch item failures: whole batch succeeded"
    if not isinstance(failures, list):
        return every, "malformed batchItemFailures (not a list): whole batch failed"
    keep: set[str] = set()
    for failure in failures:
        identifier = failure.get("itemIdentifier") if isinstance(failure, Mapping) else None
        if not isinstance(identifier, str) or not identifier or identifier not in every:
            return every, f"invalid itemIdentifier {identifier!r}: whole batch failed"
        keep.add(identifier)
    return keep, f"{len(keep)} batch item failure(s) kept, {len(every) - len(keep)} deleted"


def record(message: Mapping[str, Any], queue_arn: str, region: str) -> dict[str, Any]:
    """The Lambda record of one received message: every attribute ``ReceiveMessage``
    returned for it, unchanged (system attributes included), its body and MD5s."""
    made: dict[str, Any] = {
        "messageId": message["MessageId"],
        "receiptHandle": message["ReceiptHandle"],
        "body": message["Body"],
        "attributes": dict(message.get("Attributes", {})),
        "messageAttributes": {
            name: _lambda_message_attribute(value)
            for name, value in message.get("MessageAttributes", {}).items()
        },
        "md5OfBody": message["MD5OfBody"],
    }
    if "MD5OfMessageAttributes" in message:
        made["md5OfMessageAttributes"] = message["MD5OfMessageAttributes"]
    made.update({"eventSource": "aws:sqs", "eventSourceARN": queue_arn, "awsRegion": region})
    return made


def split_by_payload(records: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Consecutive groups of records whose ``{"Records": [...]}`` event stays within
    Lambda's 6 MB payload limit (:data:`MAX_PAYLOAD_BYTES`); one record per group at
    least (an SQS message is at most 1 MiB, far below it)."""
    chunks: list[list[dict[str, Any]]] = []
    current: list[dict[str, Any]] = []
    size = len(b'{"Records": []}')
    for record in records:
        record_size = len(json.dumps(record).encode()) + len(b", ")
        if current and size + record_size > MAX_PAYLOAD_BYTES:
            chunks.append(current)
            current, size = [], len(b'{"Records": []}')
        current.append(record)
        size += record_size
    if current:
        chunks.append(current)
    return chunks


def _lambda_message_attribute(value: Mapping[str, Any]) -> dict[str, Any]:
    """SQS ``MessageAttributeValue`` → the Lambda record's camel-case form (binary as base64)."""
    attribute: dict[str, Any] = {
        "stringListValues": value.get("StringListValues", []),
        "binaryListValues": [_b64(item) for item in value.get("BinaryListValues", [])],
        "dataType": value.get("DataType"),
    }
    if "StringValue" in value:
        attribute["stringValue"] = value["StringValue"]
    if "BinaryValue" in value:
        attribute["binaryValue"] = _b64(value["BinaryValue"])
    return attribute


def _b64(data: bytes | str) -> str:
    return base64.b64encode(data if isinstance(data, bytes) else data.encode()).decode()
