"""Per-file durations (tests/support/durations.py, issue 48): summed by file, written at
the end of a run over what was known, a partly run file keeping its last whole figure."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.support import durations


@pytest.fixture
def files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setattr(durations, "DURATIONS", tmp_path / "durations.json")
    return tmp_path


def run(plugin: durations.Durations, reports: list[tuple[str, float]]) -> None:
    for nodeid, seconds in reports:
        plugin.pytest_runtest_logreport(SimpleNamespace(nodeid=nodeid, duration=seconds))
    plugin.pytest_sessionfinish(SimpleNamespace(shouldfail=False, shouldstop=False))


def test_a_files_phases_and_tests_are_summed_and_its_run_before_kept(files: Path) -> None:
    first = durations.Durations()
    run(first, [("tests/a.py::t1", 1.0), ("tests/a.py::t1", 0.5), ("tests/b.py::t", 2.0)])
    second = durations.Durations()
    run(second, [("tests/a.py::t1", 3.0)])
    third = durations.Durations()
    run(third, [("tests/c.py::t", 0.5)])  # a run of another file leaves a.py's change

    figures = durations.read(durations.DURATIONS)
    assert figures == {
        "tests/a.py": {"seconds": 3.0, "before": 1.5},
        "tests/b.py": {"seconds": 2.0, "before": None},
        "tests/c.py": {"seconds": 0.5, "before": None},
    }
    printed = durations.report(figures).splitlines()
    assert printed[1].split() == ["3.0", "+1.5", "tests/a.py"]
    assert printed[2].split() == ["2.0", "new", "tests/b.py"]
    assert printed[-1].split()[:2] == ["5.5", "all"]


def test_a_file_run_in_part_keeps_its_last_whole_figures(files: Path) -> None:
    durations.DURATIONS.write_text(
        json.dumps({"files": {"tests/a.py": {"seconds": 9.0, "before": 8.0}}})
    )
    plugin = durations.Durations()
    plugin.pytest_deselected([SimpleNamespace(nodeid="tests/a.py::t2")])
    run(plugin, [("tests/a.py::t1", 0.1), ("tests/b.py::t", 1.0)])

    assert durations.read(durations.DURATIONS) == {
        "tests/a.py": {"seconds": 9.0, "before": 8.0},
        "tests/b.py": {"seconds": 1.0, "before": None},
    }


def test_a_run_cut_short_writes_nothing(files: Path) -> None:
    plugin = durations.Durations()
    plugin.pytest_runtest_logreport(SimpleNamespace(nodeid="tests/a.py::t", duration=1.0))
    plugin.pytest_sessionfinish(
        SimpleNamespace(shouldfail="stopping after 1 failure", shouldstop=False)
    )

    assert not durations.DURATIONS.exists()
