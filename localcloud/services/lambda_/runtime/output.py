"""Whose output a line is: the execution environment of the thread that writes it.

Lambda's rule: an execution environment runs one invocation at a time, and every line
its process writes, from any thread, belongs to that invocation (a line written between
invocations comes out with the next one, when Lambda thaws the environment). In-process
the streams are shared with the server, the pollers and the tests, so the local cloud
keeps the rule by *thread lineage*, never by thread id (ids are reused, and issue 18 lost
47 of 600 log lines of one test to that):

- the invoking thread belongs to the environment for the length of the invocation
  (:func:`captured`);
- a thread started from a thread that belongs to an environment belongs to it too, at
  any depth, whenever it runs: CPython announces every ``threading.Thread.start`` to the
  audit hooks (PEP 578, event ``_thread.start_joinable_thread``, raised in the starting
  thread with the new thread's bootstrap method), and :func:`_hand_down` gives the new
  thread its parent's environment; nothing of ``threading`` is replaced;
- everything else writes where it would have written anyway.
"""

from __future__ import annotations

import contextlib
import io
import sys
import threading
from collections.abc import Iterator
from typing import Any, Final, Protocol

OWNER: Final = "_localcloud_environment"
"""The attribute a thread carries while it belongs to an execution environment."""


class Owner(Protocol):
    """An execution environment: where its threads' output goes, and whether it runs an
    invocation now."""

    output: EnvironmentOutput
    invoking: bool


class EnvironmentOutput:
    """What one execution environment's threads have written since it was last taken."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._buffer = io.StringIO()

    def write(self, text: str) -> int:
        with self._lock:
            return self._buffer.write(text)

    def take(self) -> str:
        with self._lock:
            text, self._buffer = self._buffer.getvalue(), io.StringIO()
        return text


class _RoutedStream(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` during in-process invocations: a write goes to the
    writing thread's environment, or where it would have gone. Kept by whoever binds it
    (Powertools' ``Logger`` binds ``sys.stdout`` when it is made, at import), so it stays
    routed after the invocation."""

    def __init__(self, name: str) -> None:
        self.name_ = name

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        owner: Owner | None = getattr(threading.current_thread(), OWNER, None)
        if owner is not None:
            return owner.output.write(text)
        fallback = getattr(sys, f"__{self.name_}__")
        assert fallback is not None
        return int(fallback.write(text))

    def flush(self) -> None:
        return None


STDOUT: Final = _RoutedStream("stdout")
STDERR: Final = _RoutedStream("stderr")
THREAD_START_EVENT: Final = "_thread.start_joinable_thread"
"""The audit event ``threading.Thread.start`` raises (CPython 3.13) in the starting thread;
its first argument is the new thread's bound ``_bootstrap`` method."""


def _hand_down(event: str, args: tuple[Any, ...]) -> None:
    """The audit hook: a new thread gets the starting thread's execution environment."""
    if event != THREAD_START_EVENT:
        return
    owner = getattr(threading.current_thread(), OWNER, None)
    thread = getattr(args[0], "__self__", None) if args else None
    if (
        owner is not None
        and isinstance(thread, threading.Thread)
        and getattr(thread, OWNER, None) is None
    ):
        setattr(thread, OWNER, owner)


sys.addaudithook(_hand_down)  # once per process, at import: audit hooks cannot be removed


@contextlib.contextmanager
def captured(environment: Owner) -> Iterator[None]:
    """Make the calling thread, and every thread it starts, ``environment``'s for the
    invocation, with the streams routed."""
    thread = threading.current_thread()
    previous = getattr(thread, OWNER, None)  # an invocation made from inside another
    setattr(thread, OWNER, environment)
    environment.invoking = True
    try:
        with contextlib.redirect_stdout(STDOUT), contextlib.redirect_stderr(STDERR):
            yield
    finally:
        environment.invoking = False
        if previous is None:
            delattr(thread, OWNER)
        else:
            setattr(thread, OWNER, previous)


def invoking() -> Any:
    """The environment whose invocation the calling thread belongs to, else ``None``
    (a thread of no environment, or of one that is not invoking now)."""
    owner: Owner | None = getattr(threading.current_thread(), OWNER, None)
    return owner if owner is not None and owner.invoking else None
