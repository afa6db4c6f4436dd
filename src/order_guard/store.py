"""The conditional write and its write decision: the core of the idempotent consumer.

One order is stored with exactly one ``PutItem`` per attempt::

    ConditionExpression                 attribute_not_exists(id)
    ReturnValuesOnConditionCheckFailure ALL_OLD

The order item itself is the guard: no separate lock record, no read before the write,
no second call to decide. When the condition fails, DynamoDB returns the existing item
in the error response under ``Item`` (low-level attribute-value form), and the decision
is made from it:

=========  ==========================================================================
accepted   the ``PutItem`` succeeded, and its answer shows DynamoDB stored the item (the
           ``ConsumedCapacity`` for this table that ``ReturnConsumedCapacity: TOTAL``
           asks for): no item had this business key (or the item found
           carries this call's own ``write_id``: the SDK retried a write DynamoDB had
           already committed, whose response was lost)
duplicate  the condition failed and the stored item has the same business details
conflict   the condition failed and the stored details differ
error      anything else: a transient failure (throttling, 5xx, a dropped connection,
           a timeout, or a ``200`` that does not show DynamoDB stored the item, such as an
           HTML page from a mistyped endpoint), raised as
           :class:`~order_guard.errors.TransientStoreError`; any
           other ``ClientError`` (access denied, validation), unchanged; and a condition
           failure whose response has no readable ``Item``
           (:class:`~order_guard.errors.UnreadableStoredOrder`), which is never guessed
           to be a duplicate
=========  ==========================================================================

``invalid`` is decided before any call, by :mod:`order_guard.orders`.

This is idempotency of the business write for the same request, not end-to-end
exactly-once: the write and the SQS delete (or the Step Functions state transition) are
still two operations, which is why a repeat must be recognised here.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from order_guard.errors import (
    InvalidOrder,
    OrderConflict,
    OrderNotFound,
    TransientStoreError,
    UnreadableStoredOrder,
)
from order_guard.failures import dynamodb_call
from order_guard.orders import (
    WRITE_ID,
    Order,
    StoredOrder,
    from_item,
    to_item,
    validate_order_id,
)

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

CONDITION_EXPRESSION = "attribute_not_exists(id)"


class Decision(StrEnum):
    """The write decision for one job (DESIGN.md, "The write decision")."""

    ACCEPTED = "accepted"
    DUPLICATE = "duplicate"
    CONFLICT = "conflict"
    INVALID = "invalid"
    ERROR = "error"

    @property
    def metric_name(self) -> str:
        """The CloudWatch metric counted per decision: ``OrdersAccepted`` …"""
        return f"Orders{self.value.title()}"


@dataclass(frozen=True, slots=True)
class WriteOutcome:
    """What one conditional write decided.

    ``previous`` is the item found under the business key (``None`` when accepted).
    """

    decision: Decision
    order: Order
    previous: StoredOrder | None

    @property
    def duplicate(self) -> bool:
        """The ``duplicate`` flag of a worker result: the same order was stored before."""
        return self.decision is Decision.DUPLICATE

    def raise_for_conflict(self) -> WriteOutcome:
        """Return ``self`` unless the decision is conflict.

        Raises:
            OrderConflict: naming the stored and the requested details.
        """
        if self.decision is Decision.CONFLICT:
            stored = _short(self.previous.details()) if self.previous else "unknown"
            raise OrderConflict(
                f"order {self.order.id!r} is already stored with different details: "
                f"stored {stored}, requested {_short(self.order.details())}"
            )
        return self

    def previous_details(self) -> dict[str, Any] | None:
        """The stored item's business details (duplicate and conflict), else ``None``."""
        return self.previous.details() if self.previous else None


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
            if not _condition_failed(exc):
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


def require_answer(response: Mapping[str, Any], operation: str, table_name: str) -> None:
    """Accept a successful call only if its answer shows DynamoDB handled it for this
    table: the ``ConsumedCapacity`` (with this ``TableName``) that
    ``ReturnConsumedCapacity: TOTAL`` asks for. It costs nothing and is always there in
    DynamoDB's answer; botocore parses any other HTTP 200 (an HTML page from a mistyped
    ``AWS_ENDPOINT_URL``, a proxy's answer) into an empty response, which would
    otherwise read as success (issue 18: three records acknowledged, nothing stored).

    Raises:
        TransientStoreError: the answer is not DynamoDB's (the error decision; the call
            is safe to repeat, and a repeat finds the item if it was stored after all).
    """
    capacity = response.get("ConsumedCapacity")
    if not isinstance(capacity, Mapping) or capacity.get("TableName") != table_name:
        raise TransientStoreError(
            f"DynamoDB {operation} on {table_name} answered without ConsumedCapacity for "
            "the table, so nothing shows the call was handled (is the endpoint DynamoDB?); "
            "treated as a failure, safe to retry"
        )


def _condition_failed(exc: ClientError) -> bool:
    return exc.response.get("Error", {}).get("Code") == "ConditionalCheckFailedException"


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
            its answer is not DynamoDB's (:func:`require_answer`).
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
            its answer holds no readable count (not DynamoDB's: :func:`require_answer`).
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
            if not _condition_failed(exc):
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


def provenance(source: str) -> dict[str, str]:
    """Provenance attributes for a new item: ``first_written_at`` (ISO 8601 UTC, ms)
    and ``first_written_by`` (``sqs:<messageId>`` or ``lambda:<request id>``)."""
    return {
        "first_written_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "first_written_by": source,
    }


def decision_for_error(exc: BaseException) -> Decision:
    """Classify a raised error for the RESULT log line (DESIGN.md, the write decision).

    ``InvalidOrder`` → invalid, ``OrderConflict`` → conflict, anything else → error.
    """
    if isinstance(exc, InvalidOrder):
        return Decision.INVALID
    if isinstance(exc, OrderConflict):
        return Decision.CONFLICT
    return Decision.ERROR


def _short(details: Mapping[str, Any]) -> str:
    shown = dict(details)
    if len(str(shown["id"])) > 80:
        shown["id"] = f"{str(shown['id'])[:80]}…"
    return ", ".join(f"{key}={value!r}" for key, value in shown.items())
