"""Nothing lost end to end: a soak through the local cloud (small in the default run;
``make soak`` runs 5,000 messages)."""

from __future__ import annotations

import os

import pytest

from order_guard_tools import soak
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.scenarios import Report


def _failed(report: Report) -> list[str]:
    return [f"{c.label}: {c.detail}" for c in report.checks if not c.ok]


def test_every_message_of_a_small_soak_is_accounted_for() -> None:
    with OrderGuardCloud(visibility_timeout=1) as cloud:
        report, figures = soak.run(cloud, messages=300, seed=11)
    assert _failed(report) == []
    assert figures["messages sent"] == 300
    assert figures["accepted writes"] == figures["distinct valid ids"]
    assert figures["dead letters (invalid)"] == figures["invalid bodies sent"] > 0
    assert figures["conflicting copies sent"] > 0


@pytest.mark.soak
def test_every_message_of_a_full_soak_is_accounted_for() -> None:
    messages = int(os.environ.get("SOAK_MESSAGES", "5000"))
    with OrderGuardCloud(visibility_timeout=1) as cloud:
        report, figures = soak.run(cloud, messages=messages, seed=7)
    assert _failed(report) == []
    assert figures["messages sent"] == messages


def test_the_plan_mixes_every_kind_of_message() -> None:
    kinds = {kind for kind, _ in soak.plan(1000, seed=3).bodies}
    assert kinds == {"new", "duplicate", "conflict", "invalid"}
