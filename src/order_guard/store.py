"""The order store: the conditional write that decides, and the consistent read.

One order is stored with exactly one ``PutItem`` per attempt::

    ConditionExpression                 attribute_not_exists(id)
    ReturnValuesOnConditionCheckFailure ALL_OLD
    ReturnConsumedCapacity              TOTAL

The order item itself is the guard: no separate lock record, no read before the write,
no second call to decide. When the condition fails, DynamoDB returns the existing item
in the error response under ``Item`` (low-level attribute-value form), and the write
decision (:mod:`order_guard.decision`) is made from it: the same business details are a
duplicate, others a conflict, an item carrying this call's own ``write_id`` this call's
own committed write (accepted). A condition failure without a readable ``Item`` is the
error decision (:class:`~order_guard.exceptions.UnreadableStoredOrder`), never guessed to
be a duplicate.

This is idempotency of the business write for the same request, not end-to-end
exactly-once: the write and the SQS delete (or the Step Functions state transition) are
still two operations, which is why a repeat must be recognised here.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from botocore.exceptions import ClientError

from order_guard.decision import Decision, WriteOutcome
from order_guard.dynamodb_calls import condition_failed, dynamodb_call, require_answer
from order_guard.exceptions import OrderNotFound, UnreadableStoredOrder
from order_guard.item import WRITE_ID, from_item, to_item
from order_guard.orders import Order, StoredOrder, validate_order_id

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

__all__ = ["CONDITION_EXPRESSION", "put_order_once", "read_order"]

CONDITION_EXPRESSION: Final = "attribute_not_exists(id)"
"""The conditional write's condition: no item has this business key yet."""


def put_order_once(
    client: DynamoDBClient,
    table_name: str,
    order: Order,
    *,
    provenance: Mapping[str, str] | None = None,
) -> WriteOutcome:
    """Store ``order`` unless its business key exists, and decide what happened.

    Args:
        client: a low-level DynamoDB client.
        table_name: the orders table (partition key ``id``, type S).
        order: a validated order.
        provenance: extra string attributes written with a new item only (for example
            ``first_written_by``); they never take part in the duplicate comparison.
            A fresh ``write_id`` token is added to every call's item, so that an SDK
            retry of this call that meets its own committed item is still *accepted*.

    Returns:
        A :class:`WriteOutcome` whose decision is accepted, duplicate or conflict.

    Raises:
        UnreadableStoredOrder: the condition failed but the response had no usable
            ``Item`` (the error decision; never treated as a duplicate).
        TransientStoreError: the call failed transiently after botocore's attempts
            (the error decision; safe to retry: a retry finds this write if it committed).
        botocore.exceptions.ClientError: any other DynamoDB error, unchanged
            (the error decision).
    """
    write_id = uuid.uuid4().hex
    with dynamodb_call("PutItem", table_name):
        try:
            response = client.put_item(
                TableName=table_name,
                Item=to_item(order, {**(provenance or {}), WRITE_ID: write_id}),
                ConditionExpression=CONDITION_EXPRESSION,
                ReturnValuesOnConditionCheckFailure="ALL_OLD",
                ReturnConsumedCapacity="TOTAL",
            )
        except ClientError as exc:
            if not condition_failed(exc):
                raise
            previous = _previous_order(exc, order)
            if previous.write_id == write_id:
                # Our own item: DynamoDB committed an earlier attempt of this very call
                # whose response was lost, and botocore's retry met it: this call's write.
                return WriteOutcome(decision=Decision.ACCEPTED, order=order, previous=None)
            decision = Decision.DUPLICATE if previous.same_details_as(order) else Decision.CONFLICT
            return WriteOutcome(decision=decision, order=order, previous=previous)
    require_answer(response, "PutItem", table_name)
    return WriteOutcome(decision=Decision.ACCEPTED, order=order, previous=None)


def _previous_order(exc: ClientError, order: Order) -> StoredOrder:
    response: Mapping[str, Any] = exc.response
    if "Item" not in response:
        raise UnreadableStoredOrder(
            f"conditional check failed for {order.id!r} but the response has no Item "
            "(ReturnValuesOnConditionCheckFailure=ALL_OLD expected one)"
        ) from exc
    try:
        previous = from_item(response["Item"])
    except UnreadableStoredOrder as unreadable:
        raise UnreadableStoredOrder(f"order {order.id!r}: {unreadable}") from exc
    if previous.id != order.id:
        raise UnreadableStoredOrder(
            f"conditional check failed for {order.id!r} but the returned Item has "
            f"id {previous.id!r}"
        ) from exc
    return previous


def read_order(client: DynamoDBClient, table_name: str, order_id: str) -> StoredOrder:
    """Read one order with a strongly consistent ``GetItem``.

    Raises:
        InvalidOrder: ``order_id`` is not a valid business key.
        OrderNotFound: no item has this business key.
        UnreadableStoredOrder: the item lacks a business attribute or has a wrong type.
        TransientStoreError: the call failed transiently after botocore's attempts, or
            its answer is not DynamoDB's (:func:`~order_guard.dynamodb_calls.require_answer`).
        botocore.exceptions.ClientError: any other DynamoDB error, unchanged.
    """
    validate_order_id(order_id)
    with dynamodb_call("GetItem", table_name):
        response = client.get_item(
            TableName=table_name,
            Key={"id": {"S": order_id}},
            ConsistentRead=True,
            ReturnConsumedCapacity="TOTAL",
        )
    require_answer(response, "GetItem", table_name)
    if "Item" not in response:
        raise OrderNotFound(f"no order is stored under id {order_id!r}")
    return from_item(response["Item"])
