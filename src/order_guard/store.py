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

``invalid`` is decided before any call, by :mod:`order_guard.orders`. The order item's
encoding (:func:`to_item`, :func:`from_item`) is here too: what the write stores and the
decision reads back are one contract.

This is idempotency of the business write for the same request, not end-to-end
exactly-once: the write and the SQS delete (or the Step Functions state transition) are
still two operations, which is why a repeat must be recognised here.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
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
from order_guard.orders import Order, StoredOrder, json_type, validate_order_id

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.client import DynamoDBClient

CONDITION_EXPRESSION = "attribute_not_exists(id)"
WRITE_ID = "write_id"  # the token of the PutItem that created the item (not a detail)
# DynamoDB returns numbers in this canonical text form; anything else is not trusted.
_DYNAMODB_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


class Decision(StrEnum):
    """The write decision for one job (docs/design.md, "The write decision")."""

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


# --- the item: an order in DynamoDB's attribute-value form ----------------------------


def to_item(order: Order, extra: Mapping[str, str] | None = None) -> dict[str, dict[str, str]]:
    """Encode an order as a low-level DynamoDB item ``{"id": {"S"}, "quantity": {"N"}, …}``.

    ``extra`` adds string attributes (provenance such as ``first_written_by``); they are
    stored but never take part in the duplicate comparison.

    Raises:
        ValueError: an ``extra`` name would overwrite ``id``, ``quantity`` or
            ``total_cents``.
    """
    item = {
        "id": {"S": order.id},
        "quantity": {"N": str(order.quantity)},
        "total_cents": {"N": str(order.total_cents)},
    }
    for name, text in (extra or {}).items():
        if name in item:
            raise ValueError(f"extra attribute {name!r} would overwrite a business detail")
        item[name] = {"S": text}
    return item


def from_item(item: object) -> StoredOrder:
    """Decode the business details of a low-level DynamoDB item.

    Numbers are parsed with ``Decimal(str)``, which is exact for every number DynamoDB
    can hold; boto3's ``TypeDeserializer`` is avoided because its context can raise
    ``decimal.Rounded`` on large numbers with many trailing zeros.

    Raises:
        UnreadableStoredOrder: the item is not a mapping, lacks ``id``, ``quantity`` or
            ``total_cents``, has another attribute type than ``S``/``N``/``N``, or holds
            a number that is not in DynamoDB's number form (ASCII digits, optional
            ``-``, fraction and exponent).
    """
    if not isinstance(item, Mapping):
        raise UnreadableStoredOrder(f"stored item is {json_type(item)}, not a map")
    write_id = item.get(WRITE_ID)
    return StoredOrder(
        id=_attribute(item, "id", "S"),
        quantity=_number(item, "quantity"),
        total_cents=_number(item, "total_cents"),
        write_id=write_id.get("S") if isinstance(write_id, Mapping) else None,
    )


def _attribute(item: Mapping[str, Any], name: str, type_code: str) -> str:
    attribute = item.get(name)
    if not isinstance(attribute, Mapping) or set(attribute) != {type_code}:
        shown = sorted(attribute) if isinstance(attribute, Mapping) else attribute
        raise UnreadableStoredOrder(
            f"stored attribute {name!r} must be of type {type_code}, got {shown!r}"
        )
    text = attribute[type_code]
    if not isinstance(text, str):
        raise UnreadableStoredOrder(f"stored attribute {name!r} has a non-string {type_code} value")
    return text


def _number(item: Mapping[str, Any], name: str) -> Decimal:
    text = _attribute(item, name, "N")
    # Decimal() alone would also take " 4 ", "1_100", "+4" or non-ASCII digits ("４").
    if not _DYNAMODB_NUMBER.fullmatch(text):
        raise UnreadableStoredOrder(f"stored attribute {name!r} is not a number: {text[:40]!r}")
    try:
        number = Decimal(text)
    except InvalidOperation as exc:
        raise UnreadableStoredOrder(
            f"stored attribute {name!r} is not a number: {text[:40]!r}"
        ) from exc
    if not number.is_finite():
        raise UnreadableStoredOrder(f"stored attribute {name!r} is not a finite number")
    return number


# --- the conditional write ----------------------------------------------------------------


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


def condition_failed(exc: ClientError) -> bool:
    """Whether ``exc`` is DynamoDB's ``ConditionalCheckFailedException``."""
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


def provenance(source: str) -> dict[str, str]:
    """Provenance attributes for a new item: ``first_written_at`` (ISO 8601 UTC, ms)
    and ``first_written_by`` (``sqs:<messageId>`` or ``lambda:<request id>``)."""
    return {
        "first_written_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "first_written_by": source,
    }


def decision_for_error(exc: BaseException) -> Decision:
    """Classify a raised error for the RESULT log line (docs/design.md, "The write decision").

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
