"""A server command in a subprocess, as a user starts it: its combined output read line
by line on a thread (``readline`` blocks), so a test waits for a line with a timeout and a
silent hang fails instead of stalling the suite."""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import localcloud

PACKAGE_ROOT = Path(localcloud.__file__).resolve().parents[1]
"""The folder this ``localcloud`` was imported from (a checkout, or site-packages)."""


def importable(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with ``env`` added and ``PYTHONPATH`` starting at
    :data:`PACKAGE_ROOT`: a ``python -m localcloud`` started with it runs the very package
    under test, from any folder, whether a checkout's or an installed wheel's."""
    merged = {**os.environ, **(env or {})}
    merged["PYTHONPATH"] = os.pathsep.join(
        part for part in (str(PACKAGE_ROOT), merged.get("PYTHONPATH", "")) if part
    )
    return merged


@dataclass
class Running:
    """A started ``python -m <module> …`` and the lines it printed, in order."""

    process: subprocess.Popen[str]
    lines: queue.Queue[str | None]

    def read_until(self, marker: str, timeout_s: float = 60) -> str:
        """Every line up to and including the first that starts with ``marker`` (or up to
        the end of the output).

        Raises:
            queue.Empty: no line for ``timeout_s`` seconds.
        """
        seen = []
        while (line := self.lines.get(timeout=timeout_s)) is not None:
            seen.append(line)
            if line.startswith(marker):
                break
        return "".join(seen)


@contextlib.contextmanager
def python_module(
    *arguments: str, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> Iterator[Running]:
    """``python -m <arguments>`` of this interpreter running for the block, in ``cwd``
    (default: this process's folder; ``env``: variables added to this process's); killed
    at its end if it still runs."""
    process = subprocess.Popen(
        [sys.executable, "-m", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=cwd,
        env=importable(env),
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    try:
        yield Running(process, lines)
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
