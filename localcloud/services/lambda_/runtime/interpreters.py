"""Which CPython runs a ``python3.x`` function, and the runtime folder it sees.

On Lambda each ``python3.x`` runtime is that CPython with its own ``/var/runtime`` (boto3,
botocore and their dependencies, awslambdaric). Locally the function's own CPython runs it
when the machine has one with awslambdaric installed for it: a folder
``<runtimes>/python3.X/`` holding ``interpreter`` (a text file: the interpreter's path)
and ``site/`` (awslambdaric, its ``runtime_client`` extension and simplejson, built for
that version: ``pip install --target``), where ``<runtimes>`` is
``$LOCALCLOUD_LAMBDA_RUNTIMES``, else ``lambda-runtimes`` in this environment's prefix
(``.venv/lambda-runtimes``; this repository's ``make setup`` fills it for every CPython
3.10 to 3.14 the machine has). boto3, botocore and their pure-Python dependencies come from
this environment for every version. Without such a folder the function runs under this
interpreter (:func:`interpreter_for` says so, for one warning).
"""

from __future__ import annotations

import atexit
import importlib
import os
import shutil
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Final

SHARED_PACKAGES: Final = (
    "boto3",
    "botocore",
    "s3transfer",
    "jmespath",
    "dateutil",
    "six",
    "urllib3",
)
"""Pure Python: the same files serve every version."""
VERSIONED_PACKAGES: Final = ("awslambdaric", "runtime_client", "simplejson")
"""awslambdaric and what it needs, built for each version (``runtime_client`` is its C
extension)."""
THIS: Final = f"python{sys.version_info.major}.{sys.version_info.minor}"


@dataclass(frozen=True)
class Interpreter:
    """The CPython a function runs under, the runtime folder it sees, and its runtime
    name (``python3.12``: ``AWS_EXECUTION_ENV`` is ``AWS_Lambda_<runs>``)."""

    executable: str
    runtime_dir: Path
    runs: str


_LOCK = threading.Lock()
_FOLDERS: dict[str, Interpreter] = {}


def runtimes_home() -> Path:
    """Where the other versions' runtime folders are looked for."""
    configured = os.environ.get("LOCALCLOUD_LAMBDA_RUNTIMES")
    return Path(configured) if configured else Path(sys.prefix) / "lambda-runtimes"


def _link(directory: Path, source_file: str | None) -> None:
    source = Path(str(source_file))
    source = source.parent if source.name == "__init__.py" else source
    (directory / source.name).symlink_to(source)


def _installed(runtime: str) -> tuple[str, Path] | None:
    """(interpreter, site folder) of ``runtime`` under :func:`runtimes_home`, if there."""
    folder = runtimes_home() / runtime
    try:
        executable = (folder / "interpreter").read_text().strip()
    except OSError:
        return None
    site = folder / "site"
    if not os.access(executable, os.X_OK) or not (site / "awslambdaric").is_dir():
        return None
    return executable, site


def interpreter_for(runtime: str) -> tuple[Interpreter, str | None]:
    """The interpreter for ``runtime`` (``python3.x``), and a warning when it is not that
    version (none installed here: this interpreter runs it)."""
    with _LOCK:
        known = _FOLDERS.get(runtime)
        if known is not None:
            return known, _warning(runtime, known)
        installed = None if runtime == THIS else _installed(runtime)
        directory = Path(tempfile.mkdtemp(prefix="localcloud-runtime-"))
        atexit.register(shutil.rmtree, directory, True)
        for name in SHARED_PACKAGES:
            _link(directory, importlib.import_module(name).__file__)
        if installed is None:
            for name in VERSIONED_PACKAGES:
                _link(directory, importlib.import_module(name).__file__)
            chosen = Interpreter(sys.executable, directory, THIS)
        else:
            executable, site = installed
            for entry in site.iterdir():
                if entry.name.split(".")[0] in VERSIONED_PACKAGES or entry.name.startswith(
                    "snapshot_restore_py"
                ):
                    (directory / entry.name).symlink_to(entry)
            chosen = Interpreter(executable, directory, runtime)
        _FOLDERS[runtime] = chosen
        return chosen, _warning(runtime, chosen)


def _warning(runtime: str, chosen: Interpreter) -> str | None:
    if chosen.runs == runtime:
        return None
    return (
        f"[lambda] {runtime} functions run under {chosen.runs} here: no {runtime} runtime "
        f"is installed in {runtimes_home()} (make setup installs one for each CPython it finds)"
    )
