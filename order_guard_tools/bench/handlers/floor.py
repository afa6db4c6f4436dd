"""Benchmark contestant, the floor: a bare one-record-at-a-time consumer doing only the
conditional PutItem and the comparison (no validation, logging or metrics)."""

from __future__ import annotations

import json
import os
from typing import Any

import boto3
from botocore.exceptions import ClientError

DYNAMODB = boto3.client("dynamodb")
TABLE = os.environ["ORDERS_TABLE_NAME"]


def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    failures = []
    for record in event["Records"]:
        try:
            job = json.loads(record["body"])
            quantity = int(job["quantity"])
            if not 1 <= quantity <= 10:
                raise ValueError("quantity")
            item = {
                "id": {"S": str(job["id"])},
                "quantity": {"N": str(quantity)},
                "total_cents": {"N": str(quantity * 250 + 100)},
            }
            try:
                DYNAMODB.put_item(
                    TableName=TABLE,
                    Item=item,
                    ConditionExpression="attribute_not_exists(id)",
                    ReturnValuesOnConditionCheckFailure="ALL_OLD",
                )
            except ClientError as exc:
                if exc.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
                stored: Any = exc.response.get("Item", {})
                if stored["quantity"]["N"] != str(quantity):
                    raise ValueError("conflict") from exc
        except Exception:  # noqa: BLE001 - every failure lists the record
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
