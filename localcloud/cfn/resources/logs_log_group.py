"""``AWS::Logs::LogGroup``: a log group, kept (with its events) by an update."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from localcloud.cfn.resources.base import ACCOUNT_ID, Provider, physical_name

if TYPE_CHECKING:
    from localcloud.cfn.deployer import Deployment


class LogGroupProvider(Provider):
    TYPE = "AWS::Logs::LogGroup"
    PROPERTIES = frozenset({"RetentionInDays"})
    KEPT = True

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        name = physical_name(stack, logical_id, 512)
        logs = stack.client("logs")
        logs.create_log_group(logGroupName=name)
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = (
            f"arn:aws:logs:{stack.region}:{ACCOUNT_ID}:log-group:{name}:*"
        )
        self.update(stack, logical_id, properties)

    def update(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        logs = stack.client("logs")
        name = stack.refs[logical_id]
        if "RetentionInDays" in properties:
            logs.put_retention_policy(
                logGroupName=name, retentionInDays=int(properties["RetentionInDays"])
            )
        else:
            logs.delete_retention_policy(logGroupName=name)

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("logs").delete_log_group(logGroupName=stack.refs[logical_id])


PROVIDER: Final = LogGroupProvider()
