"""``AWS::Lambda::EventSourceMapping``: a mapping the account polls (the SAM transform
makes one per ``SQS``, ``Kinesis`` or ``DynamoDB`` event of a function;
:mod:`.event_source_mappings`), made and changed through the Lambda API, whose checks
(:mod:`.mapping_patches`) refuse what Lambda refuses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from botocore.exceptions import ClientError

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import Deployment, Provider, flag, refuse_unknown
from localcloud.services.lambda_ import event_source_mappings, mapping_patches


class EventSourceMappingProvider(Provider):
    """``AWS::Lambda::EventSourceMapping`` through ``CreateEventSourceMapping``, whose
    checks (:mod:`.mapping_patches`) refuse what Lambda refuses, naming the setting.

    An update keeps the mapping, and with it a stream's checkpoint, and changes it through
    ``UpdateEventSourceMapping``; a changed ``EventSourceArn``, ``StartingPosition`` or
    ``StartingPositionTimestamp`` replaces it, as CloudFormation does ("Update requires:
    Replacement" in the type's reference). A setting no longer declared goes back to
    Lambda's default.
    """

    TYPE = "AWS::Lambda::EventSourceMapping"
    PROPERTIES = frozenset(
        {
            "EventSourceArn",
            "FunctionName",
            "BatchSize",
            "FunctionResponseTypes",
            "Enabled",
            "MaximumBatchingWindowInSeconds",
            "StartingPosition",
            "StartingPositionTimestamp",
            "MaximumRetryAttempts",
            "MaximumRecordAgeInSeconds",
            "BisectBatchOnFunctionError",
            "ParallelizationFactor",
            "DestinationConfig",
        }
    )
    KEPT = True
    _NUMBERS: ClassVar[tuple[str, ...]] = tuple(mapping_patches.RANGES)
    """The numeric settings (those the Lambda API checks against a range)."""
    _STREAM_DEFAULTS: ClassVar[dict[str, Any]] = {
        "BatchSize": 100,
        "MaximumBatchingWindowInSeconds": 0,
        "MaximumRetryAttempts": -1,
        "MaximumRecordAgeInSeconds": -1,
        "ParallelizationFactor": 1,
        "BisectBatchOnFunctionError": False,
        "DestinationConfig": {},
    }
    _QUEUE_DEFAULTS: ClassVar[dict[str, Any]] = {
        "BatchSize": 10,
        "MaximumBatchingWindowInSeconds": 0,
    }
    """What a setting the template no longer declares goes back to (the
    CreateEventSourceMapping reference's defaults), for a stream and for a queue."""

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        source = str(properties["EventSourceArn"])
        polled = event_source_mappings.polled_services()
        if source.split(":")[2:3] not in ([name] for name in polled):
            raise UnsupportedTemplate(
                f"{logical_id}.EventSourceArn",
                f"only {', '.join(sorted(polled)).upper()} event sources are emulated locally"
                if polled
                else "event sources are polled only in a running local account (LocalCloud)",
            )
        kwargs = self._settings(stack, logical_id, properties)
        kwargs["EventSourceArn"] = source
        for name in ("StartingPosition", "StartingPositionTimestamp"):
            if name in properties:
                kwargs[name] = properties[name]
        if "StartingPositionTimestamp" in kwargs:
            kwargs["StartingPositionTimestamp"] = float(kwargs["StartingPositionTimestamp"])
        uuid = stack.client("lambda").create_event_source_mapping(**kwargs)["UUID"]
        stack.refs[logical_id] = uuid

    def _settings(
        self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]
    ) -> dict[str, Any]:
        """The settings both ``CreateEventSourceMapping`` and ``UpdateEventSourceMapping``
        take, as the template declares them."""
        enabled = flag(properties.get("Enabled", True))
        if not enabled:
            stack.notes.append(f"{logical_id}: Enabled is false, so nothing polls its source")
        kwargs: dict[str, Any] = {
            "FunctionName": str(properties["FunctionName"]),
            "FunctionResponseTypes": list(properties.get("FunctionResponseTypes", [])),
            "Enabled": enabled,
        }
        for name in self._NUMBERS:
            if name in properties:
                kwargs[name] = int(properties[name])
        if "BisectBatchOnFunctionError" in properties:
            kwargs["BisectBatchOnFunctionError"] = flag(properties["BisectBatchOnFunctionError"])
        destination = properties.get("DestinationConfig")
        if destination is not None:
            refuse_unknown(
                dict(destination), {"OnFailure"}, f"{logical_id}.DestinationConfig", self.TYPE
            )
            kwargs["DestinationConfig"] = {
                "OnFailure": {"Destination": str(destination["OnFailure"]["Destination"])}
            }
        return kwargs

    def update(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        lambda_ = stack.client("lambda")
        try:
            current = lambda_.get_event_source_mapping(UUID=stack.refs[logical_id])
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceNotFoundException":
                raise
            self.create(stack, logical_id, properties)  # deleted through the API meanwhile
            return
        stated = {
            "EventSourceArn": current.get("EventSourceArn"),
            "StartingPosition": current.get("StartingPosition"),
            "StartingPositionTimestamp": _epoch(current.get("StartingPositionTimestamp")),
        }
        wanted = {
            "EventSourceArn": str(properties["EventSourceArn"]),
            "StartingPosition": properties.get("StartingPosition"),
            "StartingPositionTimestamp": _epoch(properties.get("StartingPositionTimestamp")),
        }
        if stated != wanted:
            self.delete(stack, logical_id)
            self.create(stack, logical_id, properties)
            return
        stream = str(properties["EventSourceArn"]).split(":")[2:3] != ["sqs"]
        defaults = self._STREAM_DEFAULTS if stream else self._QUEUE_DEFAULTS
        kwargs = {**defaults, **self._settings(stack, logical_id, properties)}
        lambda_.update_event_source_mapping(UUID=stack.refs[logical_id], **kwargs)

    def delete(self, stack: Deployment, logical_id: str) -> None:
        """Delete the mapping; one already gone (deleted through the API) counts as
        deleted, as CloudFormation treats a resource that no longer exists."""
        try:
            stack.client("lambda").delete_event_source_mapping(UUID=stack.refs[logical_id])
        except ClientError as exc:
            if exc.response["Error"]["Code"] != "ResourceNotFoundException":
                raise


def _epoch(value: Any) -> float | None:
    """A starting position timestamp as epoch seconds (the API answers a datetime; a
    template writes a number), ``None`` when there is none."""
    if value is None:
        return None
    if hasattr(value, "timestamp"):
        return float(value.timestamp())
    return float(value)


__all__ = ["EventSourceMappingProvider"]
