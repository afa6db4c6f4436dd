"""Where the repository's files are, for the tests."""

from __future__ import annotations

from pathlib import Path
from typing import Final

ROOT: Final = Path(__file__).resolve().parents[2]
EVENTS: Final = ROOT / "events"
SRC: Final = ROOT / "src"
"""The deployed package, the functions' ``CodeUri``."""
TESTS: Final = ROOT / "tests"
FIXTURES: Final = TESTS / "fixtures"
SUPPORT: Final = TESTS / "support"
