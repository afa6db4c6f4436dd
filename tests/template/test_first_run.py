"""The Makefile's first-run set-ups (``.venv``, ``.venv-awscli``, ``.venv-scan``,
``node_modules``) started twice at once: each is built once, the second make waits for the
first and then succeeds without building again (issue 28, finding 9).

The Makefile runs in a copy of the repository's own in a temporary folder, with slow
stand-ins for the installers it calls: CPython 3.13 (``PYTHON313=``, the variable the
Makefile already takes) and ``npm``, ``jq`` and ``zip`` (first on ``PATH``). The stand-in
interpreter creates a venv the way ``python -m venv`` does (the interpreter first, pip
last) and its ``-m pip install`` fails with ``No module named pip`` in a venv whose pip is
not there yet, the error two makes racing on one venv met. Each installing run appends a
line to a log, then holds its environment until the test releases it: the test starts the
second make only once the first is inside the installer, and releases it only once the
second says it is waiting (or has gone ahead on its own), so no timing decides the outcome.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.paths import ROOT

COPIED = (
    "Makefile",
    "requirements-dev.txt",
    "requirements-runtime.txt",
    "requirements-scan.txt",
    "requirements-awscli.txt",
    "src/requirements.txt",
    "package.json",
    "package-lock.json",
)
"""What the Makefile reads: itself and the files its stamps' names are made from."""

STAND_IN = r"""#!/usr/bin/env bash
# A slow stand-in for CPython 3.13 (as python3.13 or a venv's python) and for npm.
set -euo pipefail
log=@LOG@
released=@RELEASED@
installs() {  # one installing run in environment $2: logged, then held until released
  echo "$1 $2" >> "$log"
  for _ in $(seq 400); do [ -e "$released/$2" ] && return; sleep 0.05; done
  echo "stand-in: $2 was never released" >&2; exit 1
}
case "$(basename "$0") $*" in
  "npm ci "*)
    rm -rf node_modules; mkdir node_modules; installs npm node_modules
    touch node_modules/.package-lock.json;;
  "npm "*) echo "stand-in npm: unexpected $*" >&2; exit 2;;
  *" -m venv "*)  # like python -m venv: the interpreter first, pip (ensurepip) last
    mkdir -p "$3/bin"; cp "$0" "$3/bin/python3.13"; ln -sf python3.13 "$3/bin/python"
    installs venv "$3"; touch "$3/pip";;
  *" -m pip "*)
    venv=$(cd "$(dirname "$0")/.." && pwd)
    [ -e "$venv/pip" ] || { echo "$0: No module named pip" >&2; exit 1; }
    if [ "$3" = install ]; then
      installs pip "$(basename "$venv")"
      echo "Successfully installed everything (the stand-in pip's own stdout)"
    fi;;
  *" -m order_guard_tools lab-env "*) echo "the lab-env command's output";;
  *) echo "stand-in python: unexpected $*" >&2; exit 2;;
esac
"""

RUNS = {
    ".venv": ["venv .venv", "pip .venv"],
    ".venv-awscli": ["venv .venv-awscli", "pip .venv-awscli"],
    ".venv-scan": ["venv .venv-scan", "pip .venv-scan"],
    "node_modules": ["npm node_modules"],
}
"""What building each environment runs, once."""

STAMPS = {
    ".venv": "STAMP",
    ".venv-awscli": "AWSCLI_STAMP",
    ".venv-scan": "SCAN_STAMP",
    "node_modules": "VIEW_STAMP",
}
"""The Makefile's variable naming each environment's stamp, the target that builds it."""


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Race:
    first: Finished
    second: Finished
    second_waited: bool
    """The second make was still running when the held environment was released."""
    runs: Counter[str]
    """The installers' runs, from the stand-ins' log."""


class Project:
    """A copy of the Makefile, with the stand-ins, in a temporary folder."""

    def __init__(self, root: Path) -> None:
        self.root = root / "project"
        for name in COPIED:
            (self.root / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(ROOT / name, self.root / name)
        self.bin = root / "stand-ins"
        self.bin.mkdir()
        self.log = root / "runs.log"
        self.log.touch()
        self.released = root / "released"
        self.released.mkdir()
        script = STAND_IN.replace("@LOG@", str(self.log)).replace("@RELEASED@", str(self.released))
        for name in ("python3.13", "npm"):
            (self.bin / name).write_text(script)
            (self.bin / name).chmod(0o755)
        for name in ("jq", "zip"):  # lab-tools only checks that they are there
            (self.bin / name).write_text("#!/bin/sh\nexit 0\n")
            (self.bin / name).chmod(0o755)
        self.env = {
            name: value
            for name, value in os.environ.items()
            if name not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL"}  # not the make running pytest
        }
        self.env["PATH"] = f"{self.bin}:{os.environ['PATH']}"
        self.outputs = root / "outputs"
        self.outputs.mkdir()

    def stamp(self, environment: str) -> str:
        """The target that builds ``environment``, as the Makefile names it."""
        return subprocess.run(
            ["make", "-s", "--eval", "print-%: ; @echo $($*)", f"print-{STAMPS[environment]}"],
            cwd=self.root,
            env=self.env,
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()

    def start(self, name: str, args: Sequence[str]) -> tuple[subprocess.Popen[bytes], Path, Path]:
        out, err = self.outputs / f"{name}.out", self.outputs / f"{name}.err"
        with out.open("wb") as stdout, err.open("wb") as stderr:
            process = subprocess.Popen(
                ["make", "--no-print-directory", *args, f"PYTHON313={self.bin / 'python3.13'}"],
                cwd=self.root,
                env=self.env,
                stdout=stdout,
                stderr=stderr,
            )
        return process, out, err

    def runs(self) -> Counter[str]:
        return Counter(self.log.read_text().splitlines())

    def race(self, first: Sequence[str], second: Sequence[str], held: str) -> Race:
        """``make *first``, then, once it is inside the installer of ``held``,
        ``make *second``; ``held`` is released once the second make waits for it, has
        started its installer too, or has ended. Every other environment builds at once."""
        for environment in RUNS:
            if environment != held:
                (self.released / environment).touch()
        a, a_out, a_err = self.start("first", first)
        started = [(a, a_out, a_err)]
        try:
            until(lambda: self.runs()[RUNS[held][0]] > 0 or a.poll() is not None)
            b, b_out, b_err = self.start("second", second)
            started.append((b, b_out, b_err))
            until(
                lambda: (
                    "waiting" in b_err.read_text()
                    or self.runs()[RUNS[held][0]] > 1
                    or b.poll() is not None
                )
            )
            second_waited = b.poll() is None
        finally:
            (self.released / held).touch()
            finished = []
            for process, out, err in started:
                try:
                    process.wait(timeout=60)
                finally:
                    if process.poll() is None:
                        process.kill()
                finished.append(Finished(process.returncode, out.read_text(), err.read_text()))
        return Race(finished[0], finished[1], second_waited, self.runs())


def until(condition: Callable[[], bool], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


@pytest.mark.parametrize("environment", list(RUNS))
def test_a_set_up_started_twice_at_once_is_built_once(project: Project, environment: str) -> None:
    stamp = project.stamp(environment)
    race = project.race([stamp], [stamp], held=environment)
    assert race.first.returncode == 0, race.first.stderr
    assert race.second.returncode == 0, race.second.stderr
    assert race.runs == Counter(RUNS[environment])
    assert race.second_waited
    assert "waiting for it" in race.second.stderr
    assert f"({environment}.lock is held)" in race.second.stderr
    assert (project.root / stamp).exists()


def test_lab_env_waits_for_the_aws_cli_another_make_is_installing(project: Project) -> None:
    """The issue's own race: ``make lab`` installing ``.venv-awscli`` in one terminal and
    ``eval "$(make -s lab-env)"`` in another. lab-env builds ``.venv`` itself meanwhile
    (the stand-in pip writes on stdout there), waits for the AWS CLI, and its stdout is only
    what the lab-env command prints."""
    race = project.race(["lab-tools"], ["-s", "lab-env"], held=".venv-awscli")
    assert race.first.returncode == 0, race.first.stderr
    assert race.second.returncode == 0, race.second.stderr
    assert race.runs == Counter(RUNS[".venv"] + RUNS[".venv-awscli"])
    assert race.second_waited
    assert "(.venv-awscli.lock is held): waiting for it" in race.second.stderr
    assert race.second.stdout == "the lab-env command's output\n"
