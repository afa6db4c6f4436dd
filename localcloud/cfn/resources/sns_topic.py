"""``AWS::SNS::Topic``: a topic, kept (with its subscriptions) by an update."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from localcloud.cfn.resources.base import Provider, physical_name

if TYPE_CHECKING:
    from localcloud.cfn.deployer import Deployment


class TopicProvider(Provider):
    TYPE = "AWS::SNS::Topic"
    PROPERTIES = frozenset({"DisplayName", "KmsMasterKeyId"})
    KEPT = True

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        name = physical_name(stack, logical_id, 256)
        attributes = {key: str(value) for key, value in properties.items()}
        arn = stack.client("sns").create_topic(Name=name, Attributes=attributes)["TopicArn"]
        stack.refs[logical_id] = arn
        stack.attributes[(logical_id, "TopicArn")] = arn
        stack.attributes[(logical_id, "TopicName")] = name

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("sns").delete_topic(TopicArn=stack.refs[logical_id])


PROVIDER: Final = TopicProvider()
