"""``AWS::Kinesis::Stream``: a data stream, kept (with its records) by an update.

Honoured: an explicit ``StreamName``, ``ShardCount`` (default 1 when provisioned),
``StreamModeDetails`` (``PROVISIONED`` or ``ON_DEMAND``), ``RetentionPeriodHours``,
``StreamEncryption`` and ``Tags``. Event source mappings read it (:mod:`.poller`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from botocore.exceptions import ClientError

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import Deployment, Provider, refuse_unknown

_MODES: Final = ("PROVISIONED", "ON_DEMAND")


class StreamProvider(Provider):
    TYPE = "AWS::Kinesis::Stream"
    PROPERTIES = frozenset(
        {
            "Name",
            "ShardCount",
            "StreamModeDetails",
            "RetentionPeriodHours",
            "StreamEncryption",
            "Tags",
        }
    )
    KEPT = True
    NAME_PROPERTY = "Name"
    NAME_LIMIT = 128

    def exists(self, stack: Deployment, name: str) -> bool:
        try:
            stack.client("kinesis").describe_stream_summary(StreamName=name)
        except ClientError:
            return False
        return True

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        kinesis = stack.client("kinesis")
        name = self.name(stack, logical_id, properties)
        mode = dict(properties.get("StreamModeDetails", {"StreamMode": "PROVISIONED"}))
        refuse_unknown(mode, {"StreamMode"}, f"{logical_id}.StreamModeDetails", self.TYPE)
        if mode.get("StreamMode") not in _MODES:
            raise UnsupportedTemplate(
                f"{logical_id}.StreamModeDetails.StreamMode", f"one of {', '.join(_MODES)}"
            )
        kwargs: dict[str, Any] = {"StreamName": name, "StreamModeDetails": mode}
        if mode["StreamMode"] == "PROVISIONED":
            kwargs["ShardCount"] = int(properties.get("ShardCount", 1))
        elif "ShardCount" in properties:
            raise UnsupportedTemplate(
                f"{logical_id}.ShardCount", "not allowed with StreamMode ON_DEMAND"
            )
        kinesis.create_stream(**kwargs)
        stack.refs[logical_id] = name
        summary = kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
        stack.attributes[(logical_id, "Arn")] = summary["StreamARN"]
        self.update(stack, logical_id, properties)

    def update(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        kinesis = stack.client("kinesis")
        name = stack.refs[logical_id]
        summary = kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]
        hours = int(properties.get("RetentionPeriodHours", 24))
        current = int(summary["RetentionPeriodHours"])
        if hours > current:
            kinesis.increase_stream_retention_period(StreamName=name, RetentionPeriodHours=hours)
        elif hours < current:
            kinesis.decrease_stream_retention_period(StreamName=name, RetentionPeriodHours=hours)
        encryption = properties.get("StreamEncryption")
        if encryption is not None and summary.get("EncryptionType", "NONE") == "NONE":
            where = f"{logical_id}.StreamEncryption"
            refuse_unknown(encryption, {"EncryptionType", "KeyId"}, where, self.TYPE)
            kinesis.start_stream_encryption(
                StreamName=name,
                EncryptionType=str(encryption["EncryptionType"]),
                KeyId=str(encryption["KeyId"]),
            )
        tags = {str(t["Key"]): str(t["Value"]) for t in properties.get("Tags", [])}
        if tags:
            kinesis.add_tags_to_stream(StreamName=name, Tags=tags)

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("kinesis").delete_stream(
            StreamName=stack.refs[logical_id], EnforceConsumerDeletion=True
        )


PROVIDERS: Final = (StreamProvider(),)
