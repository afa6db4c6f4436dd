"""``AWS::DynamoDB::Table``: an on-demand table, kept (with its items) by an update."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from botocore.exceptions import ClientError

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import (
    Deployment,
    Provider,
    flag,
    physical_name,
    refuse_unknown,
)

PROPERTIES: Final = frozenset(
    {
        "AttributeDefinitions",
        "KeySchema",
        "BillingMode",
        "SSESpecification",
        "PointInTimeRecoverySpecification",
        "DeletionProtectionEnabled",
    }
)


def create_table(client: Any, logical_id: str, name: str, properties: Mapping[str, Any]) -> str:
    """Create a table from its (resolved) template properties; the test fixtures build
    their tables with it, from ``template.yaml``'s own properties.

    Returns:
        The table ARN.

    Raises:
        UnsupportedTemplate: a property this function does not translate, or a billing
            mode other than ``PAY_PER_REQUEST``.
    """
    refuse_unknown(properties, set(PROPERTIES), logical_id, "AWS::DynamoDB::Table")
    kwargs: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": list(properties["AttributeDefinitions"]),
        "KeySchema": list(properties["KeySchema"]),
        "BillingMode": properties.get("BillingMode", "PROVISIONED"),
    }
    if kwargs["BillingMode"] != "PAY_PER_REQUEST":
        raise UnsupportedTemplate(f"{logical_id}.BillingMode", "only PAY_PER_REQUEST is supported")
    sse = properties.get("SSESpecification")
    if sse is not None:
        kwargs["SSESpecification"] = {"Enabled": flag(sse.get("SSEEnabled", False))}
    if "DeletionProtectionEnabled" in properties:
        kwargs["DeletionProtectionEnabled"] = flag(properties["DeletionProtectionEnabled"])
    arn: str = client.create_table(**kwargs)["TableDescription"]["TableArn"]
    pitr = properties.get("PointInTimeRecoverySpecification")
    if pitr is not None:
        client.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={
                "PointInTimeRecoveryEnabled": flag(pitr.get("PointInTimeRecoveryEnabled", False))
            },
        )
    return arn


class TableProvider(Provider):
    TYPE = "AWS::DynamoDB::Table"
    PROPERTIES = PROPERTIES
    KEPT = True

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        dynamodb = stack.client("dynamodb")

        def exists(name: str) -> bool:
            try:
                dynamodb.describe_table(TableName=name)
            except ClientError:
                return False
            return True

        name = physical_name(stack, logical_id, 255, taken=exists)
        arn = create_table(dynamodb, logical_id, name, properties)
        stack.refs[logical_id] = name  # only once created: a rollback deletes what is ours
        stack.attributes[(logical_id, "Arn")] = arn

    def update(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        stack.client("dynamodb").update_table(
            TableName=stack.refs[logical_id],
            DeletionProtectionEnabled=flag(properties.get("DeletionProtectionEnabled", False)),
        )

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("dynamodb").delete_table(TableName=stack.refs[logical_id])


PROVIDERS: Final = (TableProvider(),)
