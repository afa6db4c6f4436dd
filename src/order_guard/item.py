"""The order item: an order in DynamoDB's low-level attribute-value form, both ways.

What the conditional write stores (:func:`to_item`) and what the write decision reads
back from a failed condition's ``ALL_OLD`` item or a ``GetItem`` (:func:`from_item`) are
one contract, listed attribute by attribute in docs/design.md, "Stored attributes".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any, Final

from order_guard.exceptions import UnreadableStoredOrder
from order_guard.orders import Order, StoredOrder, json_type

__all__ = ["WRITE_ID", "from_item", "provenance", "to_item"]

WRITE_ID: Final = "write_id"
"""The attribute holding the token of the ``PutItem`` that created the item (not a detail)."""
# DynamoDB returns numbers in this canonical text form; anything else is not trusted.
_DYNAMODB_NUMBER = re.compile(r"-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")


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


def provenance(source: str) -> dict[str, str]:
    """Provenance attributes for a new item: ``first_written_at`` (ISO 8601 UTC, ms)
    and ``first_written_by`` (``sqs:<messageId>`` or ``lambda:<request id>``)."""
    return {
        "first_written_at": datetime.now(UTC).isoformat(timespec="milliseconds"),
        "first_written_by": source,
    }


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
