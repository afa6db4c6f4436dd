"""Benchmark contestant: read, then write (GetItem, then PutItem when nothing is stored),
one record at a time: the common hand-written idempotency check."""

from __future__ import annotations

import json
import os
from typing import Any

import boto3

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
            key = {"id": {"S": str(job["id"])}}
            stored = DYNAMODB.get_item(TableName=TABLE, Key=key, ConsistentRead=True).get("Item")
            if stored is None:
                DYNAMODB.put_item(
                    TableName=TABLE,
                    Item={
                        **key,
                        "quantity": {"N": str(quantity)},
                        "total_cents": {"N": str(quantity * 250 + 100)},
                    },
                )
            elif stored["quantity"]["N"] != str(quantity):
                raise ValueError("conflict")
        except Exception:  # noqa: BLE001 - every failure lists the record
            failures.append({"itemIdentifier": record["messageId"]})
    return {"batchItemFailures": failures}
