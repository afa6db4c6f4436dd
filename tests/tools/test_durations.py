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
    monkeypatch.setattr(durations, "COMMITTED", tmp_path / "committed.json")
    monkeypatch.setattr(durations, "_snapshot", None)  # this run's reading, set at configure
    monkeypatch.setattr(durations, "ROOT", tmp_path)  # commit keeps files that exist
    for name in ("a", "b"):
        (tmp_path / "tests").mkdir(exist_ok=True)
        (tmp_path / "tests" / f"{name}.py").write_text("")
    return tmp_path


def run(plugin: durations.Durations, reports: list[tuple[str, float]]) -> None:
    for nodeid, seconds in reports:
        plugin.pytest_runtest_logreport(
            SimpleNamespace(nodeid=nodeid, duration=seconds, when="call", user_properties=[])
        )
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
    run_report = SimpleNamespace(
        nodeid="tests/a.py::t", duration=1.0, when="call", user_properties=[]
    )
    plugin.pytest_runtest_logreport(run_report)
    plugin.pytest_sessionfinish(
        SimpleNamespace(shouldfail="stopping after 1 failure", shouldstop=False)
    )

    assert not durations.DURATIONS.exists()


def test_files_a_test_ran_in_a_process_of_its_own_are_recorded_once(files: Path) -> None:
    """The wheel suite's parts report their modules' seconds in ``user_properties``, which
    every phase's report carries: they count once, from the teardown's."""
    plugin = durations.Durations()
    inner = [(durations.FILE_DURATIONS, {"localcloud/tests/test_x.py": 4.0})]
    for when in ("setup", "call", "teardown"):
        plugin.pytest_runtest_logreport(
            SimpleNamespace(
                nodeid="tests/package/p.py::t[1]", duration=1.0, when=when, user_properties=inner
            )
        )
    plugin.pytest_sessionfinish(SimpleNamespace(shouldfail=False, shouldstop=False))
    assert durations.read(durations.DURATIONS) == {
        "tests/package/p.py": {"seconds": 3.0, "before": None},
        "localcloud/tests/test_x.py": {
            "seconds": 4.0,
            "before": None,
            "within": "tests/package/p.py",
        },
    }
    summed = durations.report(durations.read(durations.DURATIONS)).splitlines()[-1]
    assert summed.split()[0] == "3.0"  # test_x.py's seconds counted once, in p.py's


def test_a_workers_deselections_reach_the_controller(files: Path) -> None:
    """Under pytest-xdist the controller sees no worker's deselection: the worker hands
    over its files in ``workeroutput``, and a file run in part keeps its figures."""
    config = SimpleNamespace(workeroutput={})
    worker = durations.Deselections(config)  # type: ignore[arg-type]
    worker.pytest_deselected([SimpleNamespace(nodeid="tests/a.py::t2")])  # type: ignore[list-item]
    worker.pytest_sessionfinish()
    controller = durations.Durations()
    controller.pytest_testnodedown(SimpleNamespace(workeroutput=config.workeroutput), None)
    run(controller, [("tests/a.py::t1", 1.0), ("tests/b.py::t", 1.0)])
    assert set(durations.read(durations.DURATIONS)) == {"tests/b.py"}


def test_a_fresh_clone_balances_on_the_committed_figures_this_checkouts_own_win(
    files: Path,
) -> None:
    assert durations.main(["--commit"]) == 1  # nothing recorded yet: nothing committed
    run(durations.Durations(), [("tests/a.py::t", 2.04), ("tests/b.py::t", 1.0)])
    assert durations.main(["--commit"]) == 0
    assert json.loads(durations.COMMITTED.read_text()) == {
        "files": {"tests/a.py": {"seconds": 2.0}, "tests/b.py": {"seconds": 1.0}}
    }
    durations.DURATIONS.unlink()  # a fresh clone: the committed figures alone
    assert durations.known() == {
        "tests/a.py": {"seconds": 2.0, "before": None},
        "tests/b.py": {"seconds": 1.0, "before": None},
    }
    run(durations.Durations(), [("tests/a.py::t", 5.0)])
    assert durations.known()["tests/a.py"]["seconds"] == 5.0
    assert durations.known()["tests/b.py"]["seconds"] == 1.0
