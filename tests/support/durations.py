"""Per-file test durations, written on every run (issue 48): a slowdown seen as the file
it is in, not only as a total.

Each run records the seconds of every test file it ran whole (setup, call and teardown of
each of its tests, summed) in ``test-artifacts/durations.json``: ``{"files": {path:
{"seconds": s, "before": s0}}}``, paths relative to the repository, ``before`` the file's
figure from the last run that ran it whole (``null`` the first time). A file some of whose
tests were deselected (``-k``, ``-m``) keeps its figures. A test that runs other test
files in a process of its own (the wheel suite's parts, ``tests/package``) reports their
seconds in its ``user_properties`` as ``(FILE_DURATIONS, {path: seconds})``; they are
recorded as files run whole. ``make durations`` (``python -m tests.support.durations``)
prints the slowest files and their change; ``make test`` orders its pool on these figures
(:mod:`tests.support.pool`).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import ROOT

DURATIONS = ROOT / "test-artifacts" / "durations.json"
COMMITTED = ROOT / "tests" / "durations.json"
"""The figures a fresh clone starts from (``make durations-commit`` copies the last run's
here): the pool is balanced on them where this checkout has recorded none of its own."""

FILE_DURATIONS = "file_durations"
"""The ``user_properties`` name of the seconds of files a test ran in a process of its own."""

DESELECTED = "order_guard_deselected_files"
"""The ``workeroutput`` key under which a pytest-xdist worker hands the controller the files
it deselected tests of (the controller sees no worker's deselection otherwise)."""
WORKER_FIGURES = "order_guard_durations"
"""The ``workerinput`` key of the figures the controller read once (:func:`use`), so that
every worker orders and splits the same collection on the same figures."""

Figures = dict[str, dict[str, Any]]
"""Per file: ``seconds`` (the last whole run), ``before`` (the one before it) and, for a
file another test ran in a process of its own, ``within`` (that test's file)."""

_snapshot: Figures | None = None


def _file(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def read(path: Path) -> Figures:
    """The figures ``path`` holds (none when it is absent or not this shape)."""
    try:
        files = json.loads(path.read_text())["files"]
        return {
            str(name): {"seconds": float(f["seconds"]), "before": f.get("before")}
            | ({"within": str(f["within"])} if f.get("within") else {})
            for name, f in dict(files).items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def known() -> Figures:
    """The figures to balance a run on: those :func:`use` was given, else this checkout's
    last runs' (:data:`DURATIONS`) and, for a file they do not hold, the committed ones
    (:data:`COMMITTED`)."""
    if _snapshot is not None:
        return _snapshot
    return {**read(COMMITTED), **read(DURATIONS)}


def use(figures: Figures) -> None:
    """Make :func:`known` answer ``figures`` for the rest of the process: the controller
    reads the files once and hands its workers what it read (:data:`WORKER_FIGURES`)."""
    global _snapshot  # noqa: PLW0603 - one process-wide reading, set at configure
    _snapshot = figures


class Deselections:
    """The worker's half of :class:`Durations`: the files it deselected tests of, handed to
    the controller in ``workeroutput``."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.files: set[str] = set()

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.files.update(_file(item.nodeid) for item in items)

    def pytest_sessionfinish(self) -> None:
        self.config.workeroutput[DESELECTED] = sorted(self.files)  # type: ignore[attr-defined]


class Durations:
    """The pytest plugin: sums each file's test durations, writes them at the session's
    end (the controller's, under pytest-xdist, which receives every worker's reports)."""

    def __init__(self) -> None:
        self.seconds: defaultdict[str, float] = defaultdict(float)
        self.partial: set[str] = set()
        self.within: dict[str, str] = {}

    def pytest_deselected(self, items: list[pytest.Item]) -> None:
        self.partial.update(_file(item.nodeid) for item in items)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        """A pytest-xdist worker's deselections (:class:`Deselections`)."""
        self.partial.update(getattr(node, "workeroutput", {}).get(DESELECTED, []))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.seconds[_file(report.nodeid)] += report.duration
        if report.when != "teardown":  # each phase's report carries them: count them once
            return
        for name, value in report.user_properties:
            if name == FILE_DURATIONS and isinstance(value, dict):
                for path, seconds in value.items():
                    self.seconds[str(path)] += float(seconds)
                    self.within[str(path)] = _file(report.nodeid)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        whole = {
            name: round(seconds, 3)
            for name, seconds in self.seconds.items()
            if name not in self.partial
        }
        if not whole or session.shouldfail or session.shouldstop:
            return  # nothing whole ran, or the run was cut short (-x)
        known = read(DURATIONS)
        for name, seconds in whole.items():
            last = known.get(name, {}).get("seconds")
            known[name] = {"seconds": seconds, "before": last}
            if name in self.within:
                known[name]["within"] = self.within[name]
        DURATIONS.parent.mkdir(parents=True, exist_ok=True)
        DURATIONS.write_text(json.dumps({"files": known}, indent=1, sort_keys=True))


def report(figures: Figures, count: int = 15) -> str:
    """The ``count`` slowest files of ``figures``, each with its change since the run
    before that ran it whole (seconds), and the total (a file run within another test's
    seconds, marked ``within``, counted once: in that test's)."""
    if not figures:
        return f"no durations yet: {DURATIONS.relative_to(ROOT)} is written by every test run"
    lines = [f"{'seconds':>8} {'change':>8}  file"]
    ranked = sorted(figures.items(), key=lambda item: -(item[1]["seconds"] or 0.0))
    for name, figure in ranked[:count]:
        seconds, before = figure["seconds"] or 0.0, figure["before"]
        change = f"{'new':>8}" if before is None else f"{seconds - before:+8.1f}"
        within = f" (within {figure['within']})" if figure.get("within") else ""
        lines.append(f"{seconds:8.1f} {change}  {name}{within}")
    total = sum(f["seconds"] or 0.0 for f in figures.values() if not f.get("within"))
    lines.append(f"{total:8.1f} {'':>8}  all {len(figures)} files (summed once)")
    return "\n".join(lines)


def commit(figures: Figures) -> int:
    """Write ``figures``' seconds to :data:`COMMITTED` (rounded to 0.1 s, each file's
    ``before`` left out: the committed file changes only where a figure did; files no
    longer in the checkout left out); the count of files written."""
    files = {
        name: {"seconds": round(f["seconds"] or 0.0, 1)}
        | ({"within": f["within"]} if f.get("within") else {})
        for name, f in figures.items()
        if (ROOT / name).is_file()  # a file deleted since is left out
    }
    COMMITTED.write_text(json.dumps({"files": files}, indent=1, sort_keys=True) + "\n")
    return len(files)


def main(argv: list[str] | None = None) -> int:
    """``python -m tests.support.durations [COUNT]``: print :func:`report`;
    ``python -m tests.support.durations --commit``: :func:`commit` the last runs' figures."""
    args: list[Any] = list(sys.argv[1:] if argv is None else argv)
    if args == ["--commit"]:
        figures = read(DURATIONS)
        if not figures:
            print(f"no durations yet: {DURATIONS} is written by every test run")
            return 1
        written = commit(figures)
        print(f"{COMMITTED}: {written} files' seconds from the last runs")
        return 0
    count = int(args[0]) if args else 15
    print(report(read(DURATIONS), count))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
