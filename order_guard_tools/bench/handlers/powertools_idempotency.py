"""Benchmark contestant: Powertools for AWS Lambda's idempotency utility
(``idempotent_function`` keyed on the order id, payload validation on the quantity) with
its SQS batch processor, storing the same order item as Order Guard."""

from __future__ import annotations

import json
import os
from typing import Any

import boto3
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.idempotency import (
    DynamoDBPersistenceLayer,
    IdempotencyConfig,
    idempotent_function,
)

DYNAMODB = boto3.client("dynamodb")
TABLE = os.environ["ORDERS_TABLE_NAME"]
PERSISTENCE = DynamoDBPersistenceLayer(table_name=os.environ["IDEMPOTENCY_TABLE_NAME"])
CONFIG = IdempotencyConfig(event_key_jmespath="id", payload_validation_jmespath="quantity")


@idempotent_function(  # type: ignore[untyped-decorator]
    data_keyword_argument="order", persistence_store=PERSISTENCE, config=CONFIG
)
def store(order: dict[str, Any]) -> dict[str, Any]:
    quantity = order["quantity"]
    DYNAMODB.put_item(
        TableName=TABLE,
        Item={
            "id": {"S": order["id"]},
            "quantity": {"N": str(quantity)},
            "total_cents": {"N": str(quantity * 250 + 100)},
        },
    )
    return {"id": order["id"], "quantity": quantity}


def record_handler(record: Any) -> Any:
    job = json.loads(record.body)
    quantity = job["quantity"]
    if not isinstance(quantity, int) or not 1 <= quantity <= 10 or not isinstance(job["id"], str):
        raise ValueError("invalid order")
    return store(order={"id": job["id"], "quantity": quantity})


def lambda_handler(event: dict[str, Any], context: Any) -> Any:
    CONFIG.register_lambda_context(context)
    processor = BatchProcessor(event_type=EventType.SQS)
    return process_partial_response(
        event=event, record_handler=record_handler, processor=processor, context=context
    )
