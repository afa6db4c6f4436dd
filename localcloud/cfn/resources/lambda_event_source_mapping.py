"""``AWS::Lambda::EventSourceMapping``: an SQS event source mapping (the SAM transform
makes one per ``SQS`` event of a function). Created through the Lambda API; the account
polls it (:mod:`localcloud.sqs.mappings`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from localcloud.cfn.exceptions import UnsupportedTemplate
from localcloud.cfn.resources.base import Provider, flag
from localcloud.sqs import mappings

if TYPE_CHECKING:
    from localcloud.cfn.deployer import Deployment


class EventSourceMappingProvider(Provider):
    TYPE = "AWS::Lambda::EventSourceMapping"
    PROPERTIES = frozenset(
        {"EventSourceArn", "FunctionName", "BatchSize", "FunctionResponseTypes", "Enabled"}
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        source = str(properties["EventSourceArn"])
        if not source.startswith("arn:aws:sqs:"):
            raise UnsupportedTemplate(
                f"{logical_id}.EventSourceArn", "only SQS event sources are emulated locally"
            )
        enabled = flag(properties.get("Enabled", True))
        if not enabled:
            stack.notes.append(f"{logical_id}: Enabled is false, so nothing polls its queue")
        uuid = stack.client("lambda").create_event_source_mapping(
            FunctionName=str(properties["FunctionName"]),
            EventSourceArn=source,
            BatchSize=int(properties.get("BatchSize", 10)),
            FunctionResponseTypes=list(properties.get("FunctionResponseTypes", [])),
            Enabled=enabled,
        )["UUID"]
        stack.refs[logical_id] = uuid
        stack.event_sources.append(mappings.get(uuid))

    def delete(self, stack: Deployment, logical_id: str) -> None:
        uuid = stack.refs[logical_id]
        stack.event_sources[:] = [s for s in stack.event_sources if s.uuid != uuid]
        stack.client("lambda").delete_event_source_mapping(UUID=uuid)


PROVIDER: Final = EventSourceMappingProvider()
