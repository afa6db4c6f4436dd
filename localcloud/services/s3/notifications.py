"""S3 event notifications as S3 sends them: to Lambda, SQS and SNS
(``NotificationConfiguration``'s ``LambdaConfigurations``, ``QueueConfigurations`` and
``TopicConfigurations``; SAM's ``S3`` event makes the first), and to EventBridge.

moto 5.2.5 differs from AWS here (``moto.s3.notifications``), and the patches make it as
S3 documents it ("Event message structure" and "Using EventBridge" in the S3 user guide):

- ``_get_s3_event``: moto's record has no ``userIdentity``, ``requestParameters``,
  ``responseElements``, bucket ``ownerIdentity`` or object ``sequencer`` and
  ``versionId``, encodes a key's slashes, and gives a deleted object a size and an ETag.
  After the patch the record is S3's (the key URL-encoded with its slashes kept), a
  removal's object only its key, ``versionId`` (when versioned) and ``sequencer``.
- ``_invoke_awslambda``: moto calls the function synchronously inside ``PutObject`` and
  drops any error; here the record invokes the function asynchronously
  (:mod:`localcloud.services.lambda_.asynchronous`: retries, destinations).
- ``S3Response.get_bucket_notification``: moto leaves ``EventBridgeConfiguration`` out
  of ``GetBucketNotificationConfiguration``; S3 answers it (``{}``) when it is on.
- ``_send_event_bridge_message``: moto sends to the rules of every bus; S3 sends to the
  account's default bus only, with ``detail-type`` ``Object Created``/``Object Deleted``
  …, source ``aws.s3`` and ``detail.reason`` ``PutObject``/``DeleteObject`` … as S3
  names the API call (moto: ``ObjectCreated``).
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import itertools
import uuid
from typing import Any, Final
from urllib.parse import quote_plus

from moto.core.responses import ActionResult
from moto.core.utils import iso_8601_datetime_with_milliseconds, unix_time
from moto.s3 import notifications
from moto.s3.responses import S3Response

from localcloud.patches.registry import Method, Patch
from localcloud.services.lambda_ import asynchronous

OWNER: Final = "A3NL1KOZZKExample"
"""The principal id the records name as the bucket's owner and the requester (local)."""
_SEQUENCE = itertools.count(1)
_REASONS: Final = {
    "ObjectCreated:Put": "PutObject",
    "ObjectCreated:Post": "POST Object",
    "ObjectCreated:Copy": "CopyObject",
    "ObjectCreated:CompleteMultipartUpload": "CompleteMultipartUpload",
    "ObjectRemoved:Delete": "DeleteObject",
    "ObjectRemoved:DeleteMarkerCreated": "DeleteObject",
}


_DELETION_TYPES: Final = {
    "ObjectRemoved:Delete": "Permanently Deleted",
    "ObjectRemoved:DeleteMarkerCreated": "Delete Marker Created",
}
"""``detail.deletion-type`` of an ``Object Deleted`` event (S3's EventBridge detail)."""


def sequencer() -> str:
    """An increasing hexadecimal sequencer (S3's orders the events of one key)."""
    return f"{next(_SEQUENCE):016X}"


def record(event_name: str, bucket: Any, key: Any, configuration_id: str) -> dict[str, Any]:
    """One S3 event record (``eventName`` without the ``s3:`` prefix)."""
    name = event_name.removeprefix("s3:")
    request_id = uuid.uuid4().hex[:16]
    obj: dict[str, Any] = {"key": quote_plus(key.name, safe="/")}  # S3 keeps the slashes
    if name.startswith("ObjectCreated"):
        obj["size"] = key.size
        obj["eTag"] = key.etag.replace('"', "")
    if getattr(key, "version_id", None) and key.version_id != "null":
        obj["versionId"] = key.version_id
    obj["sequencer"] = sequencer()
    return {
        "eventVersion": "2.1",
        "eventSource": "aws:s3",
        "awsRegion": bucket.region_name,
        "eventTime": iso_8601_datetime_with_milliseconds(),
        "eventName": name,
        "userIdentity": {"principalId": OWNER},
        "requestParameters": {"sourceIPAddress": "127.0.0.1"},
        "responseElements": {
            "x-amz-request-id": request_id.upper(),
            "x-amz-id-2": hashlib.sha256(request_id.encode()).hexdigest(),
        },
        "s3": {
            "s3SchemaVersion": "1.0",
            "configurationId": configuration_id,
            "bucket": {
                "name": bucket.name,
                "ownerIdentity": {"principalId": OWNER},
                "arn": bucket.arn,
            },
            "object": obj,
        },
    }


def _get_s3_event(_original: Method) -> Method:
    def _get_s3_event(
        event_name: str, bucket: Any, key: Any, notification_id: str
    ) -> dict[str, list[dict[str, Any]]]:
        return {"Records": [record(event_name, bucket, key, notification_id)]}

    return _get_s3_event


def _invoke_awslambda(_original: Method) -> Method:
    def _invoke_awslambda(account_id: str, event_body: Any, fn_arn: str, region_name: str) -> None:
        # a function that is gone: S3 drops the event (asynchronous on AWS)
        with contextlib.suppress(KeyError):
            asynchronous.submit(fn_arn, event_body, account_id=account_id, region=region_name)

    return _invoke_awslambda


def _send_event_bridge_message(_original: Method) -> Method:
    def _send_event_bridge_message(account_id: str, bucket: Any, event_name: str, key: Any) -> None:
        from moto.events.models import events_backends
        from moto.events.utils import _BASE_EVENT_MESSAGE

        name = event_name.removeprefix("s3:")
        detail_object: dict[str, Any] = {"key": key.name, "sequencer": sequencer()}
        if name.startswith("ObjectCreated"):
            detail_object.update(size=key.size, etag=key.etag.replace('"', ""))
        if getattr(key, "version_id", None) and key.version_id != "null":
            detail_object["version-id"] = key.version_id
        event = copy.deepcopy(_BASE_EVENT_MESSAGE)
        event.update(
            {
                "detail-type": notifications._detail_type(event_name),
                "source": "aws.s3",
                "account": account_id,
                "time": unix_time(),
                "region": bucket.region_name,
                "resources": [bucket.arn],
                "detail": {
                    "version": "0",
                    "bucket": {"name": bucket.name},
                    "object": detail_object,
                    "request-id": uuid.uuid4().hex[:16].upper(),
                    "requester": account_id,
                    "source-ip-address": "127.0.0.1",
                    "reason": _REASONS.get(name, name.split(":")[0]),
                    **({"deletion-type": _DELETION_TYPES[name]} if name in _DELETION_TYPES else {}),
                },
            }
        )
        backend = events_backends[account_id][bucket.region_name]
        default = backend.event_buses.get("default")
        for rule in list(default.rules.values()) if default is not None else []:
            rule.send_to_targets(event)

    return _send_event_bridge_message


def _get_bucket_notification(original: Method) -> Method:
    def get_bucket_notification(self: S3Response) -> Any:
        configuration = self.backend.get_bucket_notification_configuration(self.bucket_name)
        if not configuration or configuration.event_bridge is None:
            return original(self)

        def entry(item: Any, arn_key: str) -> dict[str, Any]:
            made: dict[str, Any] = {"Id": item.id, arn_key: item.arn, "Events": item.events}
            if item.filters:
                made["Filter"] = {"Key": {"FilterRules": item.filters["S3Key"]["FilterRule"]}}
            return made

        result = {
            "TopicConfigurations": [entry(t, "TopicArn") for t in configuration.topic],
            "QueueConfigurations": [entry(q, "QueueArn") for q in configuration.queue],
            "LambdaFunctionConfigurations": [
                entry(f, "LambdaFunctionArn") for f in configuration.cloud_function
            ],
            "EventBridgeConfiguration": {},
        }
        self.data["Action"] = "GetBucketNotificationConfiguration"
        return self.serialized(ActionResult(result))

    return get_bucket_notification


PATCHES: Final = (
    Patch(
        S3Response,
        "get_bucket_notification",
        ("self",),
        _get_bucket_notification,
        "GetBucketNotificationConfiguration says when EventBridge notifications are on",
    ),
    Patch(
        notifications,
        "_get_s3_event",
        ("event_name", "bucket", "key", "notification_id"),
        _get_s3_event,
        "an S3 event record has every field S3 sends",
    ),
    Patch(
        notifications,
        "_invoke_awslambda",
        ("account_id", "event_body", "fn_arn", "region_name"),
        _invoke_awslambda,
        "S3 invokes a function asynchronously, through the local runtime",
    ),
    Patch(
        notifications,
        "_send_event_bridge_message",
        ("account_id", "bucket", "event_name", "key"),
        _send_event_bridge_message,
        "S3's EventBridge events go to the default bus, named as S3 names them",
    ),
)

__all__ = ["OWNER", "PATCHES", "record", "sequencer"]
