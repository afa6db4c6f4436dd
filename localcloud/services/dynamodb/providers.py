"""``AWS::DynamoDB::Table``: a table as templates write one, kept (with its items) by an
update.

Honoured as the emulator models them: an explicit ``TableName``; ``BillingMode``
``PAY_PER_REQUEST`` or ``PROVISIONED`` (the default, which needs ``ProvisionedThroughput``,
as CloudFormation says); global and local secondary indexes (queried as on AWS);
``StreamSpecification`` (the table's ``StreamArn``, which event source mappings read:
:mod:`.stream_poller`);
``TimeToLiveSpecification`` (recorded and readable; the emulator does not expire items);
``SSESpecification``; ``PointInTimeRecoverySpecification``; ``DeletionProtectionEnabled``;
``Tags``. Capacity is recorded, never enforced: nothing is throttled locally.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from botocore.exceptions import ClientError

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import Deployment, Provider, flag, refuse_unknown

PROPERTIES: Final = frozenset(
    {
        "TableName",
        "AttributeDefinitions",
        "KeySchema",
        "BillingMode",
        "ProvisionedThroughput",
        "GlobalSecondaryIndexes",
        "LocalSecondaryIndexes",
        "StreamSpecification",
        "TimeToLiveSpecification",
        "SSESpecification",
        "PointInTimeRecoverySpecification",
        "DeletionProtectionEnabled",
        "Tags",
    }
)
TYPE: Final = "AWS::DynamoDB::Table"
_INDEX_KEYS: Final = {"IndexName", "KeySchema", "Projection", "ProvisionedThroughput"}
_BILLING_MODES: Final = ("PROVISIONED", "PAY_PER_REQUEST")


def create_table(client: Any, logical_id: str, name: str, properties: Mapping[str, Any]) -> str:
    """Create a table from its (resolved) template properties; the test fixtures build
    their tables with it, from ``template.yaml``'s own properties.

    Returns:
        The table ARN.

    Raises:
        UnsupportedTemplate: a property this function does not translate, naming it, or
            a billing mode and throughput CloudFormation would refuse.
        botocore.exceptions.ClientError: what DynamoDB refused (a key attribute with no
            definition, an index limit).
    """
    refuse_unknown(properties, set(PROPERTIES), logical_id, TYPE)
    kwargs: dict[str, Any] = {
        "TableName": name,
        "AttributeDefinitions": list(properties["AttributeDefinitions"]),
        "KeySchema": list(properties["KeySchema"]),
        **_capacity(logical_id, properties),
    }
    provisioned = kwargs["BillingMode"] == "PROVISIONED"
    indexes = _indexes(logical_id, properties.get("GlobalSecondaryIndexes"), "Global", provisioned)
    if indexes:
        kwargs["GlobalSecondaryIndexes"] = indexes
    local = _indexes(logical_id, properties.get("LocalSecondaryIndexes"), "Local", False)
    if local:
        kwargs["LocalSecondaryIndexes"] = local
    stream = _stream(logical_id, properties.get("StreamSpecification"))
    if stream is not None:
        kwargs["StreamSpecification"] = stream
    sse = properties.get("SSESpecification")
    if sse is not None:
        refuse_unknown(
            sse,
            {"SSEEnabled", "SSEType", "KMSMasterKeyId"},
            f"{logical_id}.SSESpecification",
            TYPE,
        )
        kwargs["SSESpecification"] = {"Enabled": flag(sse.get("SSEEnabled", False))}
        for key in ("SSEType", "KMSMasterKeyId"):
            if key in sse:
                kwargs["SSESpecification"][key] = str(sse[key])
    if "DeletionProtectionEnabled" in properties:
        kwargs["DeletionProtectionEnabled"] = flag(properties["DeletionProtectionEnabled"])
    if properties.get("Tags"):
        kwargs["Tags"] = [
            {"Key": str(t["Key"]), "Value": str(t["Value"])} for t in properties["Tags"]
        ]
    arn: str = client.create_table(**kwargs)["TableDescription"]["TableArn"]
    pitr = properties.get("PointInTimeRecoverySpecification")
    if pitr is not None:
        client.update_continuous_backups(
            TableName=name,
            PointInTimeRecoverySpecification={
                "PointInTimeRecoveryEnabled": flag(pitr.get("PointInTimeRecoveryEnabled", False))
            },
        )
    _time_to_live(client, logical_id, name, properties.get("TimeToLiveSpecification"))
    return arn


def _capacity(logical_id: str, properties: Mapping[str, Any]) -> dict[str, Any]:
    """``BillingMode`` (and ``ProvisionedThroughput``) as ``CreateTable`` takes them.

    CloudFormation's rules: the default mode is ``PROVISIONED``, which needs both capacity
    units; ``PAY_PER_REQUEST`` takes none (AWS::DynamoDB::Table, ``BillingMode``)."""
    mode = str(properties.get("BillingMode", "PROVISIONED"))
    if mode not in _BILLING_MODES:
        raise UnsupportedTemplate(
            f"{logical_id}.BillingMode", f"{mode!r} is not one of {', '.join(_BILLING_MODES)}"
        )
    throughput = properties.get("ProvisionedThroughput")
    if mode == "PAY_PER_REQUEST":
        if throughput is not None:
            raise UnsupportedTemplate(
                f"{logical_id}.ProvisionedThroughput",
                "not allowed with BillingMode PAY_PER_REQUEST (CloudFormation refuses it)",
            )
        return {"BillingMode": mode}
    return {
        "BillingMode": mode,
        "ProvisionedThroughput": _throughput(f"{logical_id}.ProvisionedThroughput", throughput),
    }


def _throughput(where: str, throughput: Any) -> dict[str, int]:
    if not isinstance(throughput, Mapping):
        raise UnsupportedTemplate(where, "required when BillingMode is PROVISIONED (the default)")
    refuse_unknown(throughput, {"ReadCapacityUnits", "WriteCapacityUnits"}, where, TYPE)
    try:
        units = {key: int(throughput[key]) for key in ("ReadCapacityUnits", "WriteCapacityUnits")}
    except (KeyError, TypeError, ValueError):
        raise UnsupportedTemplate(
            where, "ReadCapacityUnits and WriteCapacityUnits must both be whole numbers"
        ) from None
    if min(units.values()) < 1:
        raise UnsupportedTemplate(where, "capacity units must be at least 1")
    return units


def _indexes(
    logical_id: str, declared: Sequence[Mapping[str, Any]] | None, kind: str, provisioned: bool
) -> list[dict[str, Any]]:
    """A table's ``GlobalSecondaryIndexes`` or ``LocalSecondaryIndexes`` as ``CreateTable``
    takes them; a global index of a provisioned table needs its own throughput."""
    made = []
    for position, index in enumerate(declared or ()):
        where = f"{logical_id}.{kind}SecondaryIndexes[{position}]"
        allowed = set(_INDEX_KEYS) if kind == "Global" else _INDEX_KEYS - {"ProvisionedThroughput"}
        refuse_unknown(index, allowed, where, TYPE)
        projection = dict(index.get("Projection", {}))
        refuse_unknown(
            projection, {"ProjectionType", "NonKeyAttributes"}, f"{where}.Projection", TYPE
        )
        one: dict[str, Any] = {
            "IndexName": str(index["IndexName"]),
            "KeySchema": list(index["KeySchema"]),
            "Projection": projection,
        }
        if provisioned:
            one["ProvisionedThroughput"] = _throughput(
                f"{where}.ProvisionedThroughput", index.get("ProvisionedThroughput")
            )
        made.append(one)
    return made


def _stream(logical_id: str, declared: Mapping[str, Any] | None) -> dict[str, Any] | None:
    if declared is None:
        return None
    where = f"{logical_id}.StreamSpecification"
    refuse_unknown(declared, {"StreamViewType"}, where, TYPE)
    return {"StreamEnabled": True, "StreamViewType": str(declared["StreamViewType"])}


def _time_to_live(client: Any, logical_id: str, name: str, declared: Any) -> None:
    """Bring the table's time to live to ``declared`` (none: off), changing it only when
    it differs, as DynamoDB refuses to enable what is enabled."""
    where = f"{logical_id}.TimeToLiveSpecification"
    wanted: str | None = None
    if declared is not None:
        refuse_unknown(declared, {"AttributeName", "Enabled"}, where, TYPE)
        if flag(declared.get("Enabled", False)):
            if not declared.get("AttributeName"):
                raise UnsupportedTemplate(where, "AttributeName is required when Enabled is true")
            wanted = str(declared["AttributeName"])
    now = client.describe_time_to_live(TableName=name)["TimeToLiveDescription"]
    current = now.get("AttributeName") if now.get("TimeToLiveStatus") == "ENABLED" else None
    if wanted == current:
        return
    if current is not None:
        client.update_time_to_live(
            TableName=name, TimeToLiveSpecification={"AttributeName": current, "Enabled": False}
        )
    if wanted is not None:
        client.update_time_to_live(
            TableName=name, TimeToLiveSpecification={"AttributeName": wanted, "Enabled": True}
        )


def _streams(
    client: Any, logical_id: str, name: str, declared: Any, table: Mapping[str, Any]
) -> None:
    """Bring the table's stream to ``declared`` (none: no stream)."""
    wanted = _stream(logical_id, declared)
    current = table.get("StreamSpecification") or {"StreamEnabled": False}
    if wanted is None:
        if current.get("StreamEnabled"):
            client.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
        return
    if current.get("StreamEnabled") and current.get("StreamViewType") == wanted["StreamViewType"]:
        return
    if current.get("StreamEnabled"):
        client.update_table(TableName=name, StreamSpecification={"StreamEnabled": False})
    client.update_table(TableName=name, StreamSpecification=wanted)


class TableProvider(Provider):
    TYPE = TYPE
    PROPERTIES = PROPERTIES
    KEPT = True
    NAME_PROPERTY = "TableName"
    NAME_LIMIT = 255

    def exists(self, stack: Deployment, name: str) -> bool:
        try:
            stack.client("dynamodb").describe_table(TableName=name)
        except ClientError:
            return False
        return True

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        dynamodb = stack.client("dynamodb")
        name = self.name(stack, logical_id, properties)
        arn = create_table(dynamodb, logical_id, name, properties)
        stack.refs[logical_id] = name  # only once created: a rollback deletes what is ours
        stack.attributes[(logical_id, "Arn")] = arn
        described = dynamodb.describe_table(TableName=name)["Table"]
        if "LatestStreamArn" in described:
            stack.attributes[(logical_id, "StreamArn")] = described["LatestStreamArn"]

    def update(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        """Deletion protection, billing mode and throughput, new or removed global
        indexes and time to live, in place (a changed key schema is CloudFormation's
        replacement, which the local cloud does not carry out for a table: refused)."""
        dynamodb = stack.client("dynamodb")
        name = stack.refs[logical_id]
        table = dynamodb.describe_table(TableName=name)["Table"]
        if list(properties["KeySchema"]) != table["KeySchema"]:
            raise UnsupportedTemplate(
                f"{logical_id}.KeySchema",
                "a changed key schema replaces the table: delete the stack and deploy again",
            )
        capacity = _capacity(logical_id, properties)
        dynamodb.update_table(
            TableName=name,
            DeletionProtectionEnabled=flag(properties.get("DeletionProtectionEnabled", False)),
            AttributeDefinitions=list(properties["AttributeDefinitions"]),
            **capacity,
        )
        provisioned = capacity["BillingMode"] == "PROVISIONED"
        wanted = {
            index["IndexName"]: index
            for index in _indexes(
                logical_id, properties.get("GlobalSecondaryIndexes"), "Global", provisioned
            )
        }
        present = {index["IndexName"] for index in table.get("GlobalSecondaryIndexes", [])}
        changes: list[dict[str, Any]] = [
            {"Delete": {"IndexName": gone}} for gone in sorted(present - set(wanted))
        ]
        changes += [{"Create": wanted[new]} for new in sorted(set(wanted) - present)]
        if changes:
            dynamodb.update_table(
                TableName=name,
                AttributeDefinitions=list(properties["AttributeDefinitions"]),
                GlobalSecondaryIndexUpdates=changes,
            )
        _streams(dynamodb, logical_id, name, properties.get("StreamSpecification"), table)
        _time_to_live(dynamodb, logical_id, name, properties.get("TimeToLiveSpecification"))
        described = dynamodb.describe_table(TableName=name)["Table"]
        stack.attributes.pop((logical_id, "StreamArn"), None)
        if described.get("StreamSpecification", {}).get("StreamEnabled"):
            stack.attributes[(logical_id, "StreamArn")] = described["LatestStreamArn"]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("dynamodb").delete_table(TableName=stack.refs[logical_id])


PROVIDERS: Final = (TableProvider(),)
