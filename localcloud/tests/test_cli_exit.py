"""How ``python -m localcloud serve`` ends when its orderly stop cannot: at
``STOP_DEADLINE_S`` after the signal whatever still runs, and at once whatever is printing
or however blocked its output is (``localcloud.cli.run``, ``_exit_now``).

``os._exit`` is replaced by a recorder for each test (the process under test is pytest's);
each test waits for every exit it sets off, so none fires after its recorder is gone.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from localcloud import cli

STDOUT = 1
"""The standard output's file descriptor."""
GUARD_S = 10
"""A hang guard far above any wait here."""


class Exits:
    """What ``os._exit`` was called with, in order."""

    def __init__(self) -> None:
        self.statuses: list[int] = []
        self.called = threading.Event()

    def __call__(self, status: int) -> None:
        self.statuses.append(status)
        self.called.set()


@pytest.fixture
def exits(monkeypatch: pytest.MonkeyPatch) -> Iterator[Exits]:
    recorder = Exits()
    monkeypatch.setattr(os, "_exit", recorder)
    saved = {number: signal.getsignal(number) for number in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield recorder
    finally:
        for number, handler in saved.items():
            signal.signal(number, handler)
        gc.unfreeze()  # run() freezes the heap of the process it ends


class StopThatHangs:
    """A cloud whose stop does not end until the process exits (or the guard)."""

    def __init__(self, exits: Exits) -> None:
        self.exits = exits

    def __enter__(self) -> StopThatHangs:
        return self

    def __exit__(self, *exc: object) -> None:
        self.exits.called.wait(GUARD_S)

    def start_event_sources(self) -> None:
        pass

    def watch(self) -> None:
        pass


def sigterm(_cloud: Any) -> None:
    os.kill(os.getpid(), signal.SIGTERM)


def test_a_stop_that_hangs_ends_the_process_at_the_deadline(
    exits: Exits, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(cli, "STOP_DEADLINE_S", 0.05)

    cli.run(StopThatHangs(exits), sigterm)  # type: ignore[arg-type]

    assert exits.statuses == [1]
    assert capfd.readouterr().out.endswith("not stopped after 0.05 s: exiting now\n")


def test_the_exit_line_does_not_go_through_print(
    exits: Exits, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    class PrintingAlready:  # a signal that arrives while the stop's lines print
        def write(self, _text: str) -> int:
            raise RuntimeError("reentrant call inside <_io.BufferedWriter name='<stdout>'>")

        def flush(self) -> None:
            raise RuntimeError("reentrant call inside <_io.BufferedWriter name='<stdout>'>")

    monkeypatch.setattr(sys, "stdout", PrintingAlready())

    cli._exit_now("a second signal")

    assert exits.statuses == [1]
    assert capfd.readouterr().out == "a second signal: exiting now\n"


def test_an_output_nobody_reads_does_not_keep_the_process_from_exiting(
    exits: Exits, monkeypatch: pytest.MonkeyPatch
) -> None:
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    try:
        while True:
            os.write(write_end, b"x" * 65536)
    except BlockingIOError:
        os.set_blocking(write_end, True)  # full: the next write waits for a reader
    saved_stdout = os.dup(STDOUT)
    os.dup2(write_end, STDOUT)
    blocked = os.fdopen(os.dup(write_end), "w")
    monkeypatch.setattr(sys, "stdout", blocked)
    try:
        threading.Thread(target=cli._exit_now, args=("a second signal",), daemon=True).start()

        exited = exits.called.wait(GUARD_S)
    finally:
        os.dup2(saved_stdout, STDOUT)
        for descriptor in (saved_stdout, read_end, write_end):
            os.close(descriptor)  # the blocked write ends with a broken pipe
        with contextlib.suppress(OSError):
            blocked.close()

    assert exited
    assert exits.statuses == [1]
