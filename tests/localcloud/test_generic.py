"""The local cloud knows no application: its source (code, docstrings, the view's
templates) names none of Order Guard's functions, tables, orders, log lines or labs.
lint-imports checks the imports; this checks the words."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import ROOT

NAMES = (
    "order_guard",
    "Order Guard",
    "order-guard",
    "OrdersTable",
    "AttemptsTable",
    "JobsQueue",
    "QueueWorker",
    "WorkflowWorker",
    "OrdersStateMachine",
    "RESULT",
    "labex",
    "q05",
    "ev05",
    "total_cents",
    "dedup-order",
)
SOURCES = sorted(
    path
    for pattern in ("*.py", "*.html")
    for path in (ROOT / "localcloud").rglob(pattern)
    if "__pycache__" not in path.parts
)


def test_the_sources_are_found() -> None:
    assert len(SOURCES) > 60
    assert ROOT / "localcloud" / "services" / "lambda_" / "runtime" / "contract.py" in SOURCES


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_the_local_cloud_names_nothing_of_the_application(path: Path) -> None:
    text = path.read_text()
    found = [name for name in NAMES if name in text]
    assert found == [], f"{path} names {found}"
