"""The SQS event source mapping, emulated as AWS documents it.

moto's own SQS→Lambda trigger is not faithful (one record per call, the receive count
stuck at 1, partial batch responses ignored), so the local cloud polls the queue itself:

- receive up to ``BatchSize`` messages with all attributes, and build records with every
  field Lambda sends (``messageId``, ``receiptHandle``, ``body``, ``attributes``,
  ``messageAttributes``, ``md5OfBody``, ``eventSource``, ``eventSourceARN``,
  ``awsRegion``);
- invoke the function synchronously with ``{"Records": [...]}``;
- a function error (an exception) leaves the whole batch: every message becomes visible
  again after the visibility timeout;
- with ``ReportBatchItemFailures``: a null/absent/empty ``batchItemFailures`` (or a null
  or empty response) deletes the whole batch; listed ``itemIdentifier`` s stay and the
  rest are deleted; an ``itemIdentifier`` that is empty, null or not in the batch, or any
  malformed response, fails the whole batch (nothing deleted);
- without ``ReportBatchItemFailures`` any successful response deletes the whole batch;
- redrive to the dead-letter queue after ``maxReceiveCount`` receives is SQS's job, and
  moto's SQS does it.

Source: "Handling errors for an SQS event source in Lambda" and "Implementing partial
batch responses" in the AWS Lambda developer guide.
"""

from __future__ import annotations

import base64
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from localcloud.lambda_bridge import Invocation, LocalFunction

if TYPE_CHECKING:
    from mypy_boto3_sqs.client import SQSClient


@dataclass(frozen=True)
class BatchOutcome:
    """One poll: the invocation (or ``None`` when the queue gave nothing) and its effect."""

    invocation: Invocation | None
    message_ids: list[str]
    deleted: list[str]
    kept: list[str]
    verdict: str
    records: list[dict[str, Any]] = field(default_factory=list)


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


@dataclass
class SqsEventSourceMapping:
    """One ``Type: SQS`` event of a function."""

    sqs: SQSClient
    queue_url: str
    queue_arn: str
    region: str
    function: LocalFunction
    batch_size: int
    report_batch_item_failures: bool
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _thread: threading.Thread | None = field(default=None, repr=False)

    def poll_once(self, wait_seconds: int = 0) -> BatchOutcome:
        """Receive one batch, invoke the function, delete what succeeded."""
        response = self.sqs.receive_message(
            QueueUrl=self.queue_url,
            MaxNumberOfMessages=self.batch_size,
            WaitTimeSeconds=wait_seconds,
            AttributeNames=["All"],
            MessageAttributeNames=["All"],
        )
        messages = response.get("Messages", [])
        if not messages:
            return BatchOutcome(None, [], [], [], "queue returned no messages")
        records = [self._record(message) for message in messages]
        ids = [record["messageId"] for record in records]
        invocation = self.function.invoke({"Records": records})
        if invocation.error:
            keep, verdict = set(ids), f"function error {invocation.error_type}: whole batch failed"
        else:
            keep, verdict = judge_response(
                invocation.payload, ids, report_batch_item_failures=self.report_batch_item_failures
            )
        deleted = [message for message in messages if message["MessageId"] not in keep]
        for start in range(0, len(deleted), 10):
            chunk = deleted[start : start + 10]
            deletion = self.sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": message["ReceiptHandle"]}
                    for i, message in enumerate(chunk)
                ],
            )
            if deletion.get("Failed"):
                # The message stays and comes back: a duplicate next time, never lost.
                raise RuntimeError(f"DeleteMessageBatch failed for {deletion['Failed']}")
        return BatchOutcome(
            invocation=invocation,
            message_ids=ids,
            deleted=[message["MessageId"] for message in deleted],
            kept=[i for i in ids if i in keep],
            verdict=verdict,
            records=records,
        )

    def _record(self, message: Mapping[str, Any]) -> dict[str, Any]:
        attributes = message.get("Attributes", {})
        return {
            "messageId": message["MessageId"],
            "receiptHandle": message["ReceiptHandle"],
            "body": message["Body"],
            "attributes": {
                name: attributes[name]
                for name in (
                    "ApproximateReceiveCount",
                    "SentTimestamp",
                    "SenderId",
                    "ApproximateFirstReceiveTimestamp",
                    "SequenceNumber",
                    "MessageGroupId",
                    "MessageDeduplicationId",
                    "AWSTraceHeader",
                )
                if name in attributes
            },
            "messageAttributes": {
                name: _lambda_message_attribute(value)
                for name, value in message.get("MessageAttributes", {}).items()
            },
            "md5OfBody": message["MD5OfBody"],
            "eventSource": "aws:sqs",
            "eventSourceARN": self.queue_arn,
            "awsRegion": self.region,
        }

    # --- background polling (server mode) --------------------------------------------

    def start(self, idle_wait_seconds: float = 0.2) -> None:
        """Poll in a daemon thread until :meth:`stop`."""
        if self._thread is not None:
            return
        self._stop.clear()

        def run() -> None:
            while not self._stop.is_set():
                try:
                    outcome = self.poll_once()
                except Exception as exc:  # noqa: BLE001 - a poller must survive a bad poll
                    print(f"[event source mapping] poll failed: {exc!r}")
                    self._stop.wait(1.0)
                    continue
                if outcome.invocation is None:
                    self._stop.wait(idle_wait_seconds)

        self._thread = threading.Thread(target=run, name=f"esm-{self.function.name}", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
            self._thread = None


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
