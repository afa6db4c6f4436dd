"""``make inventory``: how many tests each suite collects, and how many carry each marker
(issue 48: a faster suite keeps every test, shown by these counts before and after).

``python -m tests.support.inventory`` collects ``tests/`` (``make test``'s run, with its
default ``-m 'not soak'`` lifted) and ``localcloud/tests`` (the local cloud's own suite,
which ``make test`` runs from the installed wheel) and prints one line per suite: the
count, then each marker's. Nothing is run.
"""

from __future__ import annotations

import contextlib
import io
from collections import Counter

import pytest

SUITES = ("tests", "localcloud/tests")
IGNORED = frozenset({"parametrize", "usefixtures", "filterwarnings", "skip", "skipif", "xfail"})


class _Count:
    def __init__(self) -> None:
        self.total = 0
        self.markers: Counter[str] = Counter()
        self.deselected = 0

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.deselected += len(items)  # an input from outside the repository is absent

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        self.total = len(session.items)
        for item in session.items:
            names = {mark.name for mark in item.iter_markers()} - IGNORED
            self.markers.update(names)


def count(suite: str) -> _Count:
    """The tests ``suite`` collects and their markers (``UsageError`` if it cannot be
    collected)."""
    counted = _Count()
    arguments = [suite, "--collect-only", "-q", "-m", "", "-p", "no:cacheprovider"]
    with contextlib.redirect_stdout(io.StringIO()):  # the node ids, thousands of lines
        code = pytest.main([*arguments, "-p", "no:xdist"], plugins=[counted])
    if code not in (pytest.ExitCode.OK, pytest.ExitCode.NO_TESTS_COLLECTED):
        raise pytest.UsageError(f"collecting {suite} failed: exit {code}")
    return counted


def main() -> int:
    lines = []
    for suite in SUITES:
        counted = count(suite)
        marks = ", ".join(f"{name} {n}" for name, n in sorted(counted.markers.items()))
        absent = (
            f"; {counted.deselected} not run here: see the run's header"
            if counted.deselected
            else ""
        )
        lines.append(f"{suite}: {counted.total} tests ({marks}){absent}")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
