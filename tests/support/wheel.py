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
    """The wheel of this checkout, installed by ``make wheel`` (``make test`` runs it
    first). ``AssertionError`` naming ``make wheel`` if it is missing or older than a file
    it is built from: a test never rebuilds it under the tests running from it."""
    folder, stamp = run(
        "make", "--no-print-directory", "-s", "-C", ROOT, "wheel-env"
    ).stdout.split()
    fresh = subprocess.run(  # noqa: S603 - make's question mode: runs nothing
        ["make", "--no-print-directory", "-q", "-C", str(ROOT), stamp],
        capture_output=True,
        check=False,
    )
    assert fresh.returncode == 0, (
        f"the local cloud's wheel in {folder} is missing or out of date: run make wheel "
        "(make test does)"
    )
    assert ROOT not in Path(folder).parents, folder  # nothing of the repository around it
    return Installed(Path(folder))


def outside(folder: Path, installed: Installed) -> dict[str, str]:
    """An environment naming nothing of the repository's code: the installed
    environment's ``bin`` on ``PATH``, a ``HOME`` of its own (``folder``), no
    ``PYTHONPATH``; the machine's download caches, and its Lambda runtimes, the one path
    into the checkout (``.venv/lambda-runtimes``: interpreters and awslambdaric, as ``make
    setup`` installs them for every project on the machine)."""
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
