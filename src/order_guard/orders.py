"""The order contract: parse and validate a job, and price it.

A job is a JSON object with exactly the keys ``id`` and ``quantity``:

- ``id``: the business key, a non-empty string of at most 2048 bytes in UTF-8 (the
  DynamoDB partition-key limit). It is stored exactly as received: no trimming, no case
  folding and no Unicode normalisation, so ``"é"`` (U+00E9) and ``"é"`` (U+0065 U+0301)
  are two different orders.
- ``quantity``: a JSON integer from 1 to 10. Booleans, floats (``4.0``), strings
  (``"4"``) and ``null`` are invalid.

The business details of an order are ``id``, ``quantity`` and ``total_cents``
(``quantity × 250 + 100``); they alone decide whether a repeat is a duplicate.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from order_guard.exceptions import InvalidOrder

__all__ = [
    "JOB_KEYS",
    "MAX_ID_BYTES",
    "MAX_QUANTITY",
    "MIN_QUANTITY",
    "ORDER_FEE_CENTS",
    "UNIT_PRICE_CENTS",
    "Order",
    "StoredOrder",
    "json_type",
    "parse_job_body",
    "validate_job",
    "validate_order_id",
]

UNIT_PRICE_CENTS = 250
ORDER_FEE_CENTS = 100
MIN_QUANTITY = 1
MAX_QUANTITY = 10
MAX_ID_BYTES = 2048  # DynamoDB partition key: 1 to 2048 bytes of UTF-8.
JOB_KEYS = frozenset({"id", "quantity"})


@dataclass(frozen=True, slots=True)
class Order:
    """One order's business details; ``total_cents`` is derived, never supplied."""

    id: str
    quantity: int

    @property
    def total_cents(self) -> int:
        """Price in US cents: ``quantity × 250 + 100`` (4 → 1100, 1 → 350)."""
        return self.quantity * UNIT_PRICE_CENTS + ORDER_FEE_CENTS

    def details(self) -> dict[str, Any]:
        """The business details as a JSON-ready dict ``{id, quantity, total_cents}``."""
        return {"id": self.id, "quantity": self.quantity, "total_cents": self.total_cents}


@dataclass(frozen=True, slots=True)
class StoredOrder:
    """The business details read back from a stored item, numbers kept exact.

    ``quantity`` and ``total_cents`` are ``Decimal`` because a stored item is not bound
    by the job contract: it may hold ``4.0``, ``1E+400`` or ``-3``, and the comparison
    with a requested order must be numeric and exact for all of them.
    """

    id: str
    quantity: Decimal
    total_cents: Decimal
    write_id: str | None = None

    def same_details_as(self, order: Order) -> bool:
        """True when id, quantity and total_cents are equal, numbers compared as numbers."""
        return (
            self.id == order.id
            and self.quantity == order.quantity
            and self.total_cents == order.total_cents
        )

    def details(self) -> dict[str, Any]:
        """JSON-ready details; integral numbers become ``int``, others their exact string."""
        return {
            "id": self.id,
            "quantity": _json_number(self.quantity),
            "total_cents": _json_number(self.total_cents),
        }


def parse_job_body(body: object) -> Order:
    """Parse an SQS message body (JSON text) into an :class:`Order`.

    Raises:
        InvalidOrder: the body is not a string, not JSON (including an integer literal
            past Python's 4300-digit conversion limit and nesting too deep to decode),
            has a duplicated key, or the decoded value breaks the job contract (see
            :func:`validate_job`).
    """
    if not isinstance(body, str):
        raise InvalidOrder(f"body must be a JSON string, got {json_type(body)}")
    try:
        value = json.loads(body, object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as exc:
        raise InvalidOrder(f"body is not valid JSON: {exc.msg} at position {exc.pos}") from exc
    except _DuplicateKey as exc:
        raise InvalidOrder(f"body has the key {_clip(repr(exc.key))} more than once") from exc
    except ValueError as exc:  # e.g. an integer literal past Python's 4300-digit limit
        raise InvalidOrder(f"body is not a usable JSON document: {exc}") from exc
    except RecursionError as exc:
        raise InvalidOrder("body nests arrays or objects too deeply to decode") from exc
    return validate_job(value)


def validate_job(value: object, *, optional_keys: Iterable[str] = ()) -> Order:
    """Validate a decoded job and return the :class:`Order` it describes.

    Args:
        value: the decoded JSON value.
        optional_keys: keys the caller accepts beside ``id`` and ``quantity`` and checks
            itself (the workflow worker passes ``{"mode"}``).

    Raises:
        InvalidOrder: with a message naming the field and the rule it breaks.
    """
    if not isinstance(value, Mapping):
        raise InvalidOrder(f"job must be a JSON object, got {json_type(value)}")
    keys = set(value)
    missing = sorted(JOB_KEYS - keys)
    extra = sorted(str(key) for key in keys - JOB_KEYS - set(optional_keys))
    if missing:
        raise InvalidOrder(f"job is missing the key(s) {', '.join(missing)}")
    if extra:
        raise InvalidOrder(f"job has unexpected key(s) {_clip(', '.join(extra))}")
    return Order(id=validate_order_id(value["id"]), quantity=_validate_quantity(value["quantity"]))


def validate_order_id(value: object) -> str:
    """Check a business key: a non-empty string of at most 2048 UTF-8 bytes.

    Raises:
        InvalidOrder: not a string, empty, not encodable as UTF-8 (a lone surrogate
            such as ``"\\ud800"``), or longer than 2048 bytes (counted in bytes, not
            characters; the DynamoDB partition-key limit).
    """
    if not isinstance(value, str):
        raise InvalidOrder(f"id must be a string, got {json_type(value)}")
    if not value:
        raise InvalidOrder("id must not be empty")
    try:
        size = len(value.encode("utf-8"))
    except UnicodeEncodeError as exc:
        raise InvalidOrder(f"id is not valid Unicode: {exc.reason} at index {exc.start}") from exc
    if size > MAX_ID_BYTES:
        raise InvalidOrder(f"id is {size} bytes in UTF-8; the limit is {MAX_ID_BYTES} bytes")
    return value


def _validate_quantity(value: object) -> int:
    # bool is a subclass of int in Python; JSON true/false are not quantities.
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidOrder(f"quantity must be a JSON integer, got {json_type(value)}")
    if not MIN_QUANTITY <= value <= MAX_QUANTITY:
        shown = _clip(str(value), 20)
        raise InvalidOrder(f"quantity must be from {MIN_QUANTITY} to {MAX_QUANTITY}, got {shown}")
    return value


def _json_number(number: Decimal) -> int | str:
    if number == number.to_integral_value() and abs(number.adjusted()) < 30:
        return int(number)
    return str(number)


def _clip(text: str, limit: int = 200) -> str:
    """Keep error messages (and the log lines that carry them) short: input is hostile."""
    return text if len(text) <= limit else f"{text[:limit]}…"


def json_type(value: object) -> str:
    """How an error message names a JSON value's type: ``null``, ``a boolean``, ``an
    integer``, ``a string``, ``an object``, ``an array`` …"""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int):
        return "an integer"
    if isinstance(value, float):
        return f"a number with a fraction or exponent ({value!r})"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, list | tuple):
        return "an array"
    return type(value).__name__


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result
