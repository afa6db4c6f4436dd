"""The demonstration of the retry path: the workflow worker's fault modes.

Loaded by the workflow worker only for a job whose ``mode`` is not ``normal``, which it
accepts only when its environment enables fault modes (``FAULT_MODES_ENABLED=true``, the
template's ``FaultModesEnabled``): the deployed store stage never imports this module.

=============  ===================================================================
after-write    attempt 1 raises ``TransientOrderError`` *after* the write decision:
               the retry finds the order it wrote and reports ``duplicate: true``
flaky          attempt 1 raises ``TransientOrderError`` *before* the write
permanent      raises ``InvalidOrder`` on every attempt
=============  ===================================================================

The attempt is the workflow worker's count of StoreOrder invocations for the business
key (:func:`order_guard.attempts.count_attempt`), so a new execution of the same order
sees attempt 3, 4, … and no longer faults. Source: the seed workflow's after-write
scenario, reproduced by ``events/workflow-after-write.json``, ``workflow-flaky.json`` and
``workflow-permanent.json`` (docs/deploy.md, the sample events).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from order_guard.decision import WriteOutcome
from order_guard.exceptions import (
    AttemptsCounterUnavailable,
    InvalidOrder,
    OrderGuardError,
    TransientOrderError,
)
from order_guard.orders import Order
from order_guard.transient import describe, is_transient

__all__ = ["COUNTED_MODES", "FAULT_MODES", "FaultMode"]

FAULT_MODES: Final = ("after-write", "flaky", "permanent")
COUNTED_MODES: Final = frozenset({"after-write", "flaky"})
"""The fault modes whose fault depends on the attempt count."""


@dataclass(frozen=True, slots=True)
class FaultMode:
    """One fault mode, by its name (one of :data:`FAULT_MODES`).

    Raises:
        ValueError: ``name`` is not a fault mode.
    """

    name: str

    def __post_init__(self) -> None:
        if self.name not in FAULT_MODES:
            raise ValueError(f"not a fault mode: {self.name!r}")

    @property
    def needs_count(self) -> bool:
        """Whether the fault depends on the attempt count (:data:`COUNTED_MODES`)."""
        return self.name in COUNTED_MODES

    def counter_failure(self, order: Order, exc: Exception) -> Exception:
        """The error this mode's attempt fails with when the attempts counter failed
        (the caller asks only when :attr:`needs_count`).

        Returns:
            ``exc`` itself when it is transient (``TransientStoreError``: the state
            machine retries the attempt), else an ``AttemptsCounterUnavailable`` naming
            it, which no retrier or catcher lists: the execution fails under that name.
        """
        if is_transient(exc):
            return exc
        return AttemptsCounterUnavailable(
            f"order {order.id!r}: mode {self.name!r} needs the attempts count and the "
            f"counter failed permanently: {describe(exc)}"
        )

    def before_write(self, order: Order, attempt: int | None) -> OrderGuardError | None:
        """The fault to raise before the conditional write: ``InvalidOrder`` for
        ``permanent`` (every attempt), ``TransientOrderError`` for ``flaky`` on attempt
        1, else ``None``."""
        if self.name == "permanent":
            return InvalidOrder(
                f"order {order.id!r}: mode 'permanent' rejects the order on every attempt"
            )
        if self.name == "flaky" and attempt == 1:
            return TransientOrderError(
                f"order {order.id!r}: mode 'flaky' fails attempt 1 before the write"
            )
        return None

    def after_write(self, outcome: WriteOutcome, attempt: int | None) -> OrderGuardError | None:
        """The fault to raise after the write decision: ``TransientOrderError`` for
        ``after-write`` on attempt 1 (naming the decision), else ``None``."""
        if self.name == "after-write" and attempt == 1:
            return TransientOrderError(
                f"order {outcome.order.id!r}: mode 'after-write' fails attempt 1 after the "
                f"write (decision: {outcome.decision.value})"
            )
        return None
