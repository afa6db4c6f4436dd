"""The local cloud names nothing of Order Guard (issue 31): no file of ``localcloud/``
holds an identifier of the application, its labs or its tooling, so the package can
leave this repository as it is."""

from __future__ import annotations

from pathlib import Path
from typing import Final

from tests.support.paths import ROOT

SOURCES = (ROOT / "localcloud", ROOT / "packaging" / "localcloud")
FORBIDDEN: Final = (
    "order_guard",
    "order-guard",
    "Order Guard",
    "OrderGuard",
    "OrdersTable",
    "AttemptsTable",
    "RESULT",
    "labex",
    "q05",
    "ev05",
    "total_cents",
    "dedup-order",
)
"""Case-sensitive: ``RESULT`` is the application's result line, ``result`` a word."""
TEXT_SUFFIXES: Final = frozenset(
    {".py", ".html", ".js", ".css", ".md", ".json", ".yaml", ".txt", ".toml"}
)


def named(folder: Path) -> list[str]:
    """``path:line: identifier`` for each forbidden identifier in the text files under
    ``folder`` (line 0: in a file's or folder's name)."""
    found = []
    for path in sorted(folder.rglob("*")):
        if "__pycache__" in path.parts:
            continue
        found += [f"{path}:0: {word}" for word in FORBIDDEN if word in path.name]
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            found += [f"{path}:{number}: {word}" for word in FORBIDDEN if word in line]
    return found


def test_the_local_clouds_source_names_nothing_of_order_guard() -> None:
    for source in SOURCES:
        assert source.is_dir(), source
        assert named(source) == [], source


def test_the_scan_finds_a_name_planted_in_any_text_file(tmp_path: Path) -> None:
    (tmp_path / "view").mkdir()
    (tmp_path / "view" / "page.html").write_text("<p>the OrdersTable</p>\n")
    (tmp_path / "module.py").write_text("import json\n\nprint('RESULT', 1)\n")
    (tmp_path / "module.pyc").write_bytes(b"RESULT")  # not a text file: not read
    (tmp_path / "order_guard_view.css").write_text("")
    assert named(tmp_path) == [
        f"{tmp_path / 'module.py'}:3: RESULT",
        f"{tmp_path / 'order_guard_view.css'}:0: order_guard",
        f"{tmp_path / 'view' / 'page.html'}:1: OrdersTable",
    ]
