"""moto's SNS, delivering to Lambda as SNS does.

moto 5.2.5 hands a ``lambda`` subscription's message to ``send_sns_message``, which
sends a fixed example record (``"EventSubscriptionArn": "arn:aws:sns:EXAMPLE"``, the
message attributes ``Test`` and ``TestBinary`` whatever was published, a 1970 timestamp)
and invokes the function synchronously, inside ``Publish``. After the patch
(``Subscription.publish``), a message that passes the subscription's filter policy
(moto's matcher, applied first) invokes the function asynchronously
(:mod:`localcloud.services.lambda_.asynchronous`: retries, destinations) with the record
SNS sends: ``EventSubscriptionArn`` the subscription's ARN, ``Sns`` holding the
notification moto signs for HTTP endpoints (``Message``, ``MessageId``, ``Timestamp``,
``TopicArn``, ``Subject`` or ``null``, the published ``MessageAttributes`` as ``{"Type",
"Value"}``, ``Signature``, ``SigningCertUrl``, ``UnsubscribeUrl``). Source: "Invoking
Lambda functions with Amazon SNS notifications" in the Lambda developer guide. Other
protocols are moto's own (SQS with ``RawMessageDelivery`` and filter policies).
"""

from __future__ import annotations

import json
from typing import Any, Final

from moto.sns.models import Subscription

from localcloud.patches.registry import Method, Patch
from localcloud.services.lambda_ import asynchronous
from localcloud.text import say


def lambda_record(subscription: Subscription, notification: dict[str, Any]) -> dict[str, Any]:
    """The event a Lambda subscriber of ``subscription`` receives for one notification
    (moto's signed HTTP notification, renamed as the Lambda record names its fields)."""
    sns = {
        "SignatureVersion": notification["SignatureVersion"],
        "Timestamp": notification["Timestamp"],
        "Signature": notification["Signature"],
        "SigningCertUrl": notification["SigningCertURL"],
        "MessageId": notification["MessageId"],
        "Message": notification["Message"],
        "MessageAttributes": notification.get("MessageAttributes", {}),
        "Type": "Notification",
        "UnsubscribeUrl": notification["UnsubscribeURL"].replace(
            "arn:aws:sns:us-east-1:", f"arn:aws:sns:{subscription.topic.sns_backend.region_name}:"
        ),
        "TopicArn": notification["TopicArn"],
        "Subject": notification.get("Subject"),
    }
    return {
        "Records": [
            {
                "EventVersion": "1.0",
                "EventSubscriptionArn": subscription.arn,
                "EventSource": "aws:sns",
                "Sns": sns,
            }
        ]
    }


def _publish(original: Method) -> Method:
    def publish(
        self: Subscription,
        message: str,
        message_id: str,
        subject: str | None = None,
        message_attributes: dict[str, Any] | None = None,
        group_id: str | None = None,
        deduplication_id: str | None = None,
        message_structure: str | None = None,
    ) -> None:
        if self.protocol != "lambda":
            original(
                self,
                message,
                message_id,
                subject,
                message_attributes,
                group_id,
                deduplication_id,
                message_structure,
            )
            return
        matcher = self._filter_policy_matcher
        if matcher is not None and not matcher.matches(message_attributes, message):
            return
        if message_structure == "json":
            message = self._parse_message_structure(message, self.protocol)
        notification = self.get_post_data(
            message, message_id, subject, message_attributes=message_attributes
        )
        parts = str(self.endpoint).split(":")
        try:
            asynchronous.submit(
                str(self.endpoint),
                json.loads(json.dumps(lambda_record(self, notification))),
                account_id=parts[4],
                region=parts[3],
            )
        except KeyError:  # a deleted function: SNS drops it; Publish and the rest go on
            say(f"[sns] {self.endpoint}: no such function; the message is not delivered to it")

    return publish


PATCHES: Final = (
    Patch(
        Subscription,
        "publish",
        (
            "self",
            "message",
            "message_id",
            "subject",
            "message_attributes",
            "group_id",
            "deduplication_id",
            "message_structure",
        ),
        _publish,
        "a Lambda subscriber gets SNS's record, asynchronously, after the filter policy",
    ),
)

__all__ = ["PATCHES", "lambda_record"]
