"""The local cloud knows no application: its source (code, docstrings, the view's
templates) and its package (``packaging/localcloud``) name none of Order Guard's
functions, tables, orders, log lines or labs, in a file or in a file's name.
lint-imports checks the imports; this checks the words (issue 31: the package leaves
this repository as it is)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import ROOT

NAMES = (
    "order_guard",
    "Order Guard",
    "order-guard",
    "OrderGuard",
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
SUFFIXES = (".py", ".html", ".js", ".css", ".md", ".json", ".yaml", ".toml", ".txt")
"""Text files: the names are case-sensitive (``RESULT`` is the application's result line,
``result`` a word)."""


def sources(*folders: Path) -> list[Path]:
    """Every text file under ``folders``, bytecode caches aside."""
    return sorted(
        path
        for folder in folders
        for path in folder.rglob("*")
        if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts
    )


def named(path: Path) -> list[str]:
    """The application's names in ``path``'s text or in its name."""
    text = path.read_text(errors="replace")
    return [name for name in NAMES if name in text or name in path.name]


SOURCES = sources(ROOT / "localcloud", ROOT / "packaging" / "localcloud")


def test_the_sources_are_found() -> None:
    assert len(SOURCES) > 60
    assert ROOT / "localcloud" / "services" / "lambda_" / "runtime" / "contract.py" in SOURCES


@pytest.mark.parametrize("path", SOURCES, ids=lambda path: str(path.relative_to(ROOT)))
def test_the_local_cloud_names_nothing_of_the_application(path: Path) -> None:
    assert named(path) == [], path


def test_a_name_planted_in_a_file_or_in_its_name_is_found(tmp_path: Path) -> None:
    (tmp_path / "view").mkdir()
    (tmp_path / "view" / "page.html").write_text("<p>the OrdersTable</p>\n")
    (tmp_path / "README.md").write_text("Works with OrderGuard.\n")
    (tmp_path / "order_guard_view.css").write_text("")
    (tmp_path / "module.pyc").write_bytes(b"RESULT")  # not a text file: not read
    found = {path.name: named(path) for path in sources(tmp_path)}
    assert found == {
        "README.md": ["OrderGuard"],
        "order_guard_view.css": ["order_guard"],
        "page.html": ["OrdersTable"],
    }
