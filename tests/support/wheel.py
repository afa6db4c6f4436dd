"""The local cloud's wheel as ``make wheel`` installs it: alone (with its ``test`` extra)
in a virtual environment outside the repository, and the environment its commands run in
there, naming nothing of the repository (issue 31; built in a step of its own since issue
48)."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from tests.support.paths import ROOT

RUNTIMES = ROOT / ".venv" / "lambda-runtimes"
"""The machine's Lambda interpreters, as ``make setup`` sets them up: the installed
package finds them through ``LOCALCLOUD_LAMBDA_RUNTIMES``, as its README says."""


def run(*command: str | Path, **options: object) -> subprocess.CompletedProcess[str]:
    """``command`` to completion, its output captured; ``CalledProcessError`` if it fails."""
    return subprocess.run(  # noqa: S603 - the project's own make and the installed wheel
        [str(part) for part in command],
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
        **options,  # type: ignore[call-overload]
    )


@dataclass(frozen=True)
class Installed:
    """``make wheel``'s folder: ``dist/localcloud-*.whl`` and ``venv/`` holding it."""

    folder: Path

    @property
    def bin(self) -> Path:
        return self.folder / "venv" / "bin"

    @property
    def python(self) -> Path:
        return self.bin / "python"

    @property
    def site_packages(self) -> Path:
        (found,) = (self.folder / "venv" / "lib").glob("python*/site-packages")
        return found

    @property
    def wheel(self) -> Path:
        (found,) = (self.folder / "dist").glob("localcloud-*.whl")
        return found


def installed() -> Installed:
    """The wheel of this checkout, installed: ``make wheel`` (a no-op once the wheel is
    newer than every file it is built from; several workers calling it at once wait for
    one build). ``CalledProcessError`` if the build or install fails."""
    done = run("make", "--no-print-directory", "-s", "-C", ROOT, "wheel")
    folder = Path(done.stdout.strip().splitlines()[-1])
    assert ROOT not in folder.parents, folder  # nothing of the repository around it
    return Installed(folder)


def outside(folder: Path, installed: Installed) -> dict[str, str]:
    """An environment naming nothing of the repository: the installed environment's
    ``bin`` on ``PATH``, a ``HOME`` of its own (``folder``), no ``PYTHONPATH``; the
    machine's Lambda runtimes and download caches."""
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    return {
        "PATH": f"{installed.bin}:/usr/bin:/bin",
        "HOME": str(folder),
        # the machine's caches (pip's downloads, test-app's integration environments)
        "XDG_CACHE_HOME": str(cache),
        "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(cache / "pip")),
        "LOCALCLOUD_LAMBDA_RUNTIMES": str(RUNTIMES),
        "SAM_CLI_TELEMETRY": "0",
    }


BIN = Path(sys.executable).parent
"""This environment's ``bin``: its SAM CLI is the stock one a user's project has."""
