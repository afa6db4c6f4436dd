"""Shrunk histories from ``tests/proofs/test_histories.py``, kept as ordinary tests.

Each one is the history Hypothesis shrank a failure to, replayed step by step on the
same state machine (its invariants checked after every step, as Hypothesis does). No
history has failed on the code as it is; these two are the ones that caught the
mutants docs/proofs.md names (acknowledging a conflict; ``PutItem`` without its condition),
so each guards that rule on the real code.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.support.histories import Histories


def replay(*steps: Callable[[Histories], Any]) -> None:
    """Run ``steps`` on a fresh state machine, with every invariant after each step."""
    machine = Histories()
    try:
        for step in (lambda _: None, *steps):
            step(machine)
            machine.stored_items_are_the_first_orders()
            machine.the_dead_letter_queue_holds_exactly_the_redriven_bodies()
            machine.nothing_acknowledged_without_its_order_stored()
    finally:
        machine.teardown()


@pytest.mark.usefixtures("cloud")
def test_a_conflicting_copy_in_the_same_batch_is_listed_until_the_dlq() -> None:
    """Caught ``return`` in place of ``raise_for_conflict()`` in the queue worker: the
    conflicting copy was deleted instead of listed (5 receives, then the DLQ)."""
    replay(
        lambda m: m.send_orders(orders=[("a", 1), ("a", 2)]),
        lambda m: m.drain(),
    )


@pytest.mark.usefixtures("cloud")
def test_an_identical_copy_in_the_same_batch_is_a_duplicate() -> None:
    """Caught ``PutItem`` without ``attribute_not_exists(id)``: the copy was accepted
    as a second write instead of found as a duplicate."""
    replay(
        lambda m: m.send_orders(orders=[("a", 1), ("a", 1)]),
        lambda m: m.drain(),
    )
