"""DLQ redrive for the local cloud: the equivalent of SQS ``StartMessageMoveTask``.

On AWS, move the dead-letter queue's messages back to the queue they came from with::

    aws sqs start-message-move-task --source-arn <the dead-letter queue's ARN>

(no destination: SQS returns each message to its original source queue). moto does not
implement ``StartMessageMoveTask``, so the local cloud moves the messages itself, with
the same effect: each message is sent again to the source queue with its body and
message attributes unchanged, then deleted from the dead-letter queue.

With an idempotent consumer a redrive is safe: a redriven copy of a message already
handled is acknowledged as a duplicate, and one the consumer refuses returns to the
dead-letter queue after ``maxReceiveCount`` receives.
"""

from __future__ import annotations

from typing import Any


def move_messages(
    sqs: Any, source_url: str, destination_url: str, *, max_messages: int = 100_000
) -> int:
    """Move every message from ``source_url`` (the DLQ) to ``destination_url``.

    Returns:
        How many messages were moved.
    """
    moved = 0
    while moved < max_messages:
        page = sqs.receive_message(
            QueueUrl=source_url,
            MaxNumberOfMessages=10,
            MessageAttributeNames=["All"],
            VisibilityTimeout=30,
        )
        messages = page.get("Messages", [])
        if not messages:
            return moved
        for message in messages:
            kwargs: dict[str, Any] = {"QueueUrl": destination_url, "MessageBody": message["Body"]}
            if message.get("MessageAttributes"):
                kwargs["MessageAttributes"] = message["MessageAttributes"]
            sqs.send_message(**kwargs)
            sqs.delete_message(QueueUrl=source_url, ReceiptHandle=message["ReceiptHandle"])
            moved += 1
    return moved
