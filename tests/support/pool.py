"""The pool ``make test`` runs the suite in (issue 48): pytest-xdist's workers, each taking
one work unit at a time, longest first, on the per-file durations the last runs recorded
(:mod:`tests.support.durations`).

- A work unit is a test file (``--dist loadfile``: a file's module fixtures, such as a
  started local cloud, are set up once), except in a file of :data:`SPLIT`, where each test
  is a unit of its own: the parts of the local cloud's suite run from its wheel
  (``tests/package/test_wheel_suite.py``), so that they spread over the workers.
- Units start longest first (the longest-processing-time rule: the last unit to start is
  a short one, so no worker finishes far behind the others). A file with no recorded
  duration starts first of all: it is new, and a long one must not start last.
- :func:`balanced` splits weighted items into parts of about equal weight, by the same
  rule: the local cloud's modules into the wheel suite's parts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest
from xdist.scheduler import LoadFileScheduling

from tests.support.durations import Figures

SPLIT = frozenset({"tests/package/test_wheel_suite.py"})
"""Files whose every test is a work unit of its own."""


def file_of(nodeid: str) -> str:
    return nodeid.split("::", 1)[0]


def unit_of(nodeid: str) -> str:
    """The work unit ``nodeid`` belongs to: its file, or itself in a file of :data:`SPLIT`."""
    file = file_of(nodeid)
    return nodeid if file in SPLIT else file


class FilePool(LoadFileScheduling):
    """pytest-xdist's ``loadfile`` scheduling with :func:`unit_of`'s units; the units go out
    in collection order, which :func:`longest_first` sets (``loadscope_reorder`` off)."""

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)


def longest_first(items: list[pytest.Item], figures: Figures) -> None:
    """Sort ``items`` in place: units with no recorded duration first, then by recorded
    seconds, longest first (a unit of a :data:`SPLIT` file: the file's seconds shared
    equally among its tests); items of one unit keep their order (a stable sort)."""
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(unit_of(item.nodeid), []).append(item)
    per_file: dict[str, int] = {}
    for unit in units:
        per_file[file_of(unit)] = per_file.get(file_of(unit), 0) + 1

    def seconds(unit: str) -> float:
        recorded = figures.get(file_of(unit), {}).get("seconds")
        return float("inf") if recorded is None else recorded / per_file[file_of(unit)]

    ranked = sorted(units, key=lambda unit: -seconds(unit))
    items[:] = [item for unit in ranked for item in units[unit]]


def balanced(weights: Mapping[str, float], count: int) -> list[list[str]]:
    """``weights``' names in ``count`` parts of about equal total weight: the heaviest name
    first, each into the lightest part so far (ties: the lower part, then the name's
    order), each part's names sorted. Deterministic: every worker computes the same."""
    if count < 1:
        raise ValueError(f"count must be at least 1, not {count}")
    parts: list[list[str]] = [[] for _ in range(count)]
    loads = [0.0] * count
    for name in sorted(weights, key=lambda n: (-weights[n], n)):
        lightest = min(range(count), key=lambda i: (loads[i], i))
        parts[lightest].append(name)
        loads[lightest] += weights[name]
    return [sorted(part) for part in parts if part]


def shares(parts: Sequence[Sequence[str]], weights: Mapping[str, float]) -> list[float]:
    """Each part's total weight."""
    return [sum(weights[name] for name in part) for part in parts]
