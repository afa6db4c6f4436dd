"""Create the template's resources in moto.

There is no second list of resources: every resource in ``template.yaml`` is created by
the handler for its type, and a type or property the local cloud cannot honour fails
with :class:`~localcloud.template.UnsupportedTemplate` naming the resource and property.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from localcloud.template import UnsupportedTemplate

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

_TABLE_PROPERTIES = {
    "AttributeDefinitions",
    "KeySchema",
    "BillingMode",
    "SSESpecification",
    "PointInTimeRecoverySpecification",
    "DeletionProtectionEnabled",
}


def _flag(value: Any) -> bool:
    return str(value).lower() == "true"


def create_table(
    client: DynamoDBClient, logical_id: str, name: str, properties: Mapping[str, Any]
) -> str:
    """Create an ``AWS::DynamoDB::Table`` from its (resolved) template properties.

    Returns:
        The table ARN.

    Raises:
        UnsupportedTemplate: a property this function does not translate.
    """
    unknown = sorted(set(properties) - _TABLE_PROPERTIES)
    if unknown:
        raise UnsupportedTemplate(
            f"{logical_id}.{unknown[0]}", "AWS::DynamoDB::Table property not supported locally"
        )
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
        kwargs["SSESpecification"] = {"Enabled": _flag(sse.get("SSEEnabled", False))}
    if "DeletionProtectionEnabled" in properties:
        kwargs["DeletionProtectionEnabled"] = _flag(properties["DeletionProtectionEnabled"])
    arn = client.create_table(**kwargs)["TableDescription"]["TableArn"]
    pitr = properties.get("PointInTimeRecoverySpecification")
    if pitr is not None:
        client.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={
                "PointInTimeRecoveryEnabled": _flag(pitr.get("PointInTimeRecoveryEnabled", False))
            },
        )
    return arn
