"""Where Lambda sends what it could not process, or a record of what it did: an SQS queue
or an SNS topic of the account, written straight into moto's backends (no request is
signed, as none is on AWS: Lambda's service principal sends it).

Shared by asynchronous invocation (:mod:`.asynchronous`: destinations and dead-letter
queues) and the stream event source mappings (:mod:`.stream_mappings`: on-failure
destinations).
"""

from __future__ import annotations

from typing import Any

from localcloud.services.lambda_.runtime import Invocation


def service_of(arn: str) -> str:
    """The service an ARN names (``sqs`` in ``arn:aws:sqs:…``), ``""`` for no ARN."""
    parts = arn.split(":")
    return parts[2] if len(parts) >= 6 and parts[0] == "arn" else ""


def response_context(invocation: Invocation, executed_version: str) -> dict[str, Any]:
    """The ``responseContext`` of Lambda's invocation record: ``{"statusCode": 200,
    "executedVersion": …}``, with ``"functionError": "Unhandled"`` when the function
    raised (source: "Retaining records of asynchronous invocations", the record's shape)."""
    response: dict[str, Any] = {"statusCode": 200, "executedVersion": executed_version}
    if invocation.error:
        response["functionError"] = "Unhandled"
    return response


def to_queue(arn: str, body: str, attributes: dict[str, Any] | None = None) -> None:
    """Send ``body`` (with message ``attributes``, SQS's shape) to the queue ``arn``.

    Raises:
        KeyError: no such account or region.
        moto's ``QueueDoesNotExist``: the queue is gone.
    """
    from moto.sqs.models import sqs_backends

    _, _, _, region, account, name = arn.split(":", 5)
    sqs_backends[account][region].send_message(name, body, message_attributes=attributes or {})


def to_topic(arn: str, body: str, attributes: dict[str, Any] | None = None) -> None:
    """Publish ``body`` (with message ``attributes``) to the topic ``arn``.

    Raises:
        moto's ``TopicNotFound``: the topic is gone.
    """
    from moto.sns.models import sns_backends

    _, _, _, region, account, _ = arn.split(":", 5)
    sns_backends[account][region].publish(body, arn=arn, message_attributes=attributes or {})


__all__ = ["response_context", "service_of", "to_queue", "to_topic"]
