"""The fast loops need no browser and no ``sam build``, and ``make check`` no npm either
(issue 31): ``make -n -B`` (every target taken as out of date, nothing run) prints every
command a bare machine's ``make check`` or ``make check-localcloud`` would run, and the
tests each selects."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.paths import ROOT

HEAVY = ("npm ci", "chromium", "sam build", "playwright")


def commands(target: str) -> str:
    """What ``make target`` would run on a machine with nothing built."""
    return subprocess.run(  # noqa: S603 - make, the project's own Makefile
        ["make", "--no-print-directory", "-n", "-B", "-C", str(ROOT), target],  # noqa: S607
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.parametrize(
    ("target", "selection", "skipped"),
    [
        ("check", '-m "unit or template"', HEAVY),
        ("check-localcloud", '-m "not slow"', HEAVY[1:]),  # npm: the view's htmx
    ],
)
def test_a_fast_loop_runs_none_of_the_slow_set_ups(
    target: str, selection: str, skipped: tuple[str, ...]
) -> None:
    ran = commands(target)
    (pytest_line,) = [line for line in ran.splitlines() if line.startswith("pytest ")]
    assert selection in pytest_line
    if target == "check-localcloud":  # the local cloud's own suite, from the checkout
        assert pytest_line.startswith("pytest localcloud/tests ")
    assert [word for word in skipped if word in ran] == []


def test_the_whole_run_does_run_them() -> None:
    """The control: the same reading of ``make test`` finds each set-up the loops skip,
    and runs the repository's tests, whose tests/package runs the local cloud's own suite
    from its installed wheel (not a second time from the checkout)."""
    ran = commands("test")
    assert [word for word in ("npm ci", "chromium", "sam build") if word not in ran] == []
    (pytest_line,) = [line for line in ran.splitlines() if line.startswith("pytest ")]
    assert pytest_line.split()[:2] == ["pytest", "tests"]


def test_every_local_cloud_module_that_drives_a_browser_is_marked_slow() -> None:
    unmarked = [
        path.name
        for path in sorted((ROOT / "localcloud" / "tests").glob("test_*.py"))
        if "from playwright" in path.read_text()
        and "pytestmark = pytest.mark.slow" not in path.read_text()
    ]
    assert unmarked == []
