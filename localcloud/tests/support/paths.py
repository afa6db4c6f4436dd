"""Where the suite's own files are: next to its modules, in a checkout and in an installed
wheel alike (the suite names no file of the repository it was developed in)."""

from __future__ import annotations

from pathlib import Path
from typing import Final

TESTS: Final = Path(__file__).resolve().parents[1]
FIXTURES: Final = TESTS / "fixtures"
APPS: Final = FIXTURES / "apps"
"""The SAM applications the suite deploys, one folder each (``template.yaml`` and code)."""
JOBS_APP: Final = APPS / "jobs_app"
"""The suite's default application: a queue with a dead-letter queue, a function on it
(partial batch responses), a workflow function behind a state machine and two tables."""
SUPPORT: Final = TESTS / "support"
