"""The write decision: what one conditional write of an order decided, and the decision
an error stands for.

=========  ==========================================================================
accepted   the ``PutItem`` stored the item: no item had this business key (or the item
           found carries this call's own ``write_id``: the SDK retried a write DynamoDB
           had already committed, whose response was lost)
duplicate  the condition failed and the stored item has the same business details
conflict   the condition failed and the stored details differ
invalid    the job breaks the order contract; decided before any call
           (:mod:`order_guard.orders`)
error      anything else: a transient failure, any other ``ClientError``, or a stored
           item that cannot be read (never guessed to be a duplicate)
=========  ==========================================================================

Source: docs/design.md, "The write decision"; the conditional write that makes the first
three is :func:`order_guard.store.put_order_once`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from order_guard.exceptions import InvalidOrder, OrderConflict
from order_guard.orders import Order, StoredOrder

__all__ = ["Decision", "WriteOutcome", "decision_for_error"]


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

    ``decision`` is accepted, duplicate or conflict; ``previous`` is the item found under
    the business key (``None`` when accepted).
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


def decision_for_error(exc: BaseException) -> Decision:
    """The decision a raised error stands for in the ``RESULT`` line.

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
