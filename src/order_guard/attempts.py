"""The attempts counter: how many times the workflow worker has tried an order.

Diagnostics, never part of a write decision: the workflow worker logs each invocation's
count as the ``attempt`` of its ``RESULT`` line, and the demonstration fault modes
(``after-write``, ``flaky``) read it to fail attempt 1 only
(:mod:`order_guard.fault_modes`). It lives in its own table so that counting never touches
the order item the conditional write guards.
"""

from __future__ import annotations

import uuid
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from order_guard.dynamodb_calls import condition_failed, dynamodb_call, require_answer
from order_guard.exceptions import TransientStoreError

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = ["count_attempt"]


def count_attempt(client: DynamoDBClient, table_name: str, order_id: str) -> int:
    """Add one to the diagnostic attempt counter of ``order_id`` and return the new count.

    One ``UpdateItem``: ``ADD attempts :one, attempt_tokens :token`` on condition
    ``NOT contains(attempt_tokens, :token)``, with a fresh token per call. If the
    response is lost and botocore resends the same request, the condition fails on the
    resend and the count is read from the ``ALL_OLD`` item: one call counts once. The
    counter is independent of the business write and never part of a decision; whether
    its failure matters is the caller's call (the fault modes need the count, an order
    without one does not).

    Raises:
        TransientStoreError: the call failed transiently after botocore's attempts, or
            its answer holds no readable count (not DynamoDB's:
            :func:`~order_guard.dynamodb_calls.require_answer`).
        botocore.exceptions.ClientError: any other DynamoDB error (access denied, a
            missing table), unchanged.
    """
    token = uuid.uuid4().hex
    with dynamodb_call("UpdateItem", table_name):
        try:
            response = client.update_item(
                TableName=table_name,
                Key={"id": {"S": order_id}},
                UpdateExpression="ADD attempts :one, attempt_tokens :tokens",
                ConditionExpression="NOT contains(attempt_tokens, :token)",
                ExpressionAttributeValues={
                    ":one": {"N": "1"},
                    ":tokens": {"SS": [token]},
                    ":token": {"S": token},
                },
                ReturnValues="UPDATED_NEW",
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
                ReturnConsumedCapacity="TOTAL",
            )
        except ClientError as exc:
            if not condition_failed(exc):
                raise
            # This call's own update, applied by an attempt whose response was lost.
            return _count(exc.response.get("Item"), table_name)
    require_answer(response, "UpdateItem", table_name)
    return _count(response.get("Attributes"), table_name)


def _count(item: Any, table_name: str) -> int:
    """The ``attempts`` number of an item in attribute-value form.

    Raises:
        TransientStoreError: no readable count (the answer is not what DynamoDB sends).
    """
    try:
        return int(item["attempts"]["N"])
    except (KeyError, TypeError, ValueError):
        raise TransientStoreError(
            f"DynamoDB UpdateItem on {table_name} answered without a readable attempts "
            "count; treated as a failure, safe to retry"
        ) from None
