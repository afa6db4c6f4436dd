"""The Q05 lab's starter worker, as the lab machine provides it (deployed as ``app.py``,
handler ``app.handler``): it parses the job as the lab's code does and stores it with a
plain ``PutItem``, no condition, so a repeat with other details overwrites the order.
The learner replaces it with a guarded worker (``update-function-code``)."""

import json
import os
from typing import Any

import boto3


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    print("EVENT " + json.dumps(event, sort_keys=True))
    if set(event) != {"Records"} or len(event["Records"]) != 1:
        raise ValueError("Expected one SQS record")
    job = json.loads(event["Records"][0]["body"])
    print("JOB " + json.dumps(job, sort_keys=True))
    if set(job) != {"id", "quantity"} or not isinstance(job["id"], str):
        raise ValueError("Use an id and quantity")
    quantity = job["quantity"]
    if isinstance(quantity, bool) or not isinstance(quantity, int) or not 1 <= quantity <= 10:
        raise ValueError("Quantity must be an integer from 1 to 10")
    database = boto3.client("dynamodb")
    item = {
        "id": {"S": job["id"]},
        "quantity": {"N": str(quantity)},
        "total_cents": {"N": str(quantity * 250 + 100)},
    }
    database.put_item(TableName=os.environ["TABLE_NAME"], Item=item)  # no condition
    result = {"id": job["id"], "quantity": quantity, "processed": True, "duplicate": False}
    print("RESULT " + json.dumps(result, sort_keys=True))
    return result
