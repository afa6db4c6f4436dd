"""The service's CloudFormation types, one provider each:

- ``AWS::Logs::LogGroup``: a log group, kept (with its events) by an update.
- ``AWS::Logs::QueryDefinition``: a saved Logs Insights query. Created when moto
  implements ``PutQueryDefinition``; recorded otherwise (moto 5.2.5 does not), with a stable
  id and a note, in :attr:`~localcloud.cloudformation.provider.Deployment.records`.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import moto
from moto.logs.responses import LogsResponse

from localcloud.cloudformation.provider import ACCOUNT_ID, Deployment, Provider


class LogGroupProvider(Provider):
    TYPE = "AWS::Logs::LogGroup"
    PROPERTIES = frozenset({"RetentionInDays", "LogGroupName"})
    KEPT = True
    NAME_PROPERTY = "LogGroupName"
    NAME_LIMIT = 512

    def exists(self, stack: Deployment, name: str) -> bool:
        found = stack.client("logs").describe_log_groups(logGroupNamePrefix=name)["logGroups"]
        return any(group["logGroupName"] == name for group in found)

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        name = self.name(stack, logical_id, properties)
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


@dataclass(frozen=True)
class QueryDefinition:
    """A query definition as deployed: its resolved properties, and whether moto holds it
    (``created``) or the local cloud only recorded it."""

    query_definition_id: str
    name: str
    query_string: str
    log_group_names: tuple[str, ...]
    created: bool


class QueryDefinitionProvider(Provider):
    TYPE = "AWS::Logs::QueryDefinition"
    PROPERTIES = frozenset({"Name", "QueryString", "LogGroupNames"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        log_groups = tuple(str(group) for group in properties.get("LogGroupNames", []))
        created = hasattr(LogsResponse, "put_query_definition")
        if created:
            definition_id = str(
                stack.client("logs").put_query_definition(
                    name=properties["Name"],
                    queryString=properties["QueryString"],
                    logGroupNames=list(log_groups),
                )["queryDefinitionId"]
            )
        else:
            definition_id = str(
                uuid.uuid5(uuid.NAMESPACE_URL, f"localcloud:{stack.stack_name}/{logical_id}")
            )
            stack.notes.append(
                f"{logical_id}: saved query recorded, not created (moto {moto.__version__} has "
                "no PutQueryDefinition); run its query string in Logs Insights on AWS"
            )
        stack.records[logical_id] = QueryDefinition(
            query_definition_id=definition_id,
            name=str(properties["Name"]),
            query_string=str(properties["QueryString"]),
            log_group_names=log_groups,
            created=created,
        )
        stack.refs[logical_id] = definition_id

    def delete(self, stack: Deployment, logical_id: str) -> None:
        if stack.records[logical_id].created:
            stack.client("logs").delete_query_definition(queryDefinitionId=stack.refs[logical_id])


PROVIDERS: Final = (LogGroupProvider(), QueryDefinitionProvider())
