"""The fast loops need no npm, no browser, no ``sam build`` and no local cloud (issue 31):
``make -n -B`` (every target taken as out of date, nothing run) prints every command a
bare machine's ``make check`` or ``make check-localcloud`` would run."""

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


@pytest.mark.parametrize("target", ["check", "check-localcloud"])
def test_a_fast_loop_runs_none_of_the_slow_set_ups(target: str) -> None:
    ran = commands(target)
    assert "pytest" in ran
    assert [word for word in HEAVY if word in ran] == []


def test_the_whole_run_does_run_them() -> None:
    """The control: the same reading of ``make test`` finds each set-up the loops skip."""
    ran = commands("test")
    assert [word for word in ("npm ci", "chromium", "sam build") if word not in ran] == []
