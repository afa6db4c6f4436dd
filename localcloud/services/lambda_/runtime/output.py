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

What an environment writes is kept within bounds (:class:`EnvironmentOutput`): the first
:data:`HEAD_BYTES` and the last :data:`TAIL_BYTES` of each invocation's output, and a line
saying how much was dropped between them, so no function can fill the local cloud's
memory by printing (issue 47: 400 MB printed had cost the server 894 MB).
"""

from __future__ import annotations

import collections
import contextlib
import io
import sys
import threading
from collections.abc import Iterator
from typing import Any, Final, Protocol

MIB: Final = 1_048_576
HEAD_BYTES: Final = 3 * MIB
"""How much of what an invocation prints, from its start, the local cloud keeps for the
log (UTF-8 bytes). Lambda keeps everything in CloudWatch Logs; a local account keeps its
logs in memory, so it keeps this much of each invocation and says what it dropped."""
TAIL_BYTES: Final = 1 * MIB
"""How much of what an invocation prints, up to its end, the local cloud keeps (UTF-8
bytes): the last lines, a traceback and ``LogType=Tail``'s last 4 KB stay whole."""
OWNER: Final = "_localcloud_environment"
"""The attribute a thread carries while it belongs to an execution environment."""


class Owner(Protocol):
    """An execution environment: where its threads' output goes, and whether it runs an
    invocation now."""

    output: EnvironmentOutput
    invoking: bool


class EnvironmentOutput:
    """What one execution environment's threads have written since it was last taken,
    within :data:`HEAD_BYTES` and :data:`TAIL_BYTES` (UTF-8 bytes): the first and the last
    of it are kept, what lies between is counted and dropped, so a function that prints
    without end costs the local cloud no more memory than that (the supervised process
    writes into a pipe the local cloud reads as it fills)."""

    def __init__(self, head_bytes: int | None = None, tail_bytes: int | None = None) -> None:
        self._lock = threading.Lock()
        self._head_limit = HEAD_BYTES if head_bytes is None else head_bytes
        self._tail_limit = TAIL_BYTES if tail_bytes is None else tail_bytes
        self._head: list[str] = []
        self._head_size = 0
        self._tail: collections.deque[str] = collections.deque()
        self._tail_size = 0
        self._dropped = 0

    def write(self, text: str) -> int:
        with self._lock:
            rest = text
            room = self._head_limit - self._head_size
            if room > 0 and not self._tail:
                first, rest = split_at(text, room)
                self._head.append(first)
                self._head_size += utf8_size(first)
            if rest:
                self._tail.append(rest)
                self._tail_size += utf8_size(rest)
                self._trim_tail()
        return len(text)

    def _trim_tail(self) -> None:
        while self._tail_size > self._tail_limit:
            excess = self._tail_size - self._tail_limit
            oldest = self._tail[0]
            oldest_size = utf8_size(oldest)
            if oldest_size <= excess:
                self._tail.popleft()
                cut, kept = oldest_size, ""
            else:
                cut_text, kept = split_at(oldest, excess)
                cut = utf8_size(cut_text)
                if not cut:  # a character longer than the excess: drop it whole
                    cut_text, kept = oldest[:1], oldest[1:]
                    cut = utf8_size(cut_text)
                self._tail[0] = kept
            self._tail_size -= cut
            self._dropped += cut

    def take(self) -> str:
        """Everything kept since the last take (and forget it): the first bytes, a line
        saying how many bytes were dropped if any were, and the last bytes."""
        with self._lock:
            head, tail, dropped = "".join(self._head), "".join(self._tail), self._dropped
            self._head, self._head_size = [], 0
            self._tail, self._tail_size, self._dropped = collections.deque(), 0, 0
        if not dropped:
            return head + tail
        gap = "" if head.endswith("\n") or not head else "\n"
        return f"{head}{gap}{self.dropped_line(dropped)}\n{tail}"

    def dropped_line(self, dropped: int) -> str:
        """The log line that stands for ``dropped`` bytes of output not kept."""
        return (
            f"[localcloud] {dropped:,} bytes of this invocation's output are not kept: the "
            f"local cloud keeps the first {_amount(self._head_limit)} and the last "
            f"{_amount(self._tail_limit)} of what an invocation prints (docs/local-cloud.md)"
        )


def _amount(size: int) -> str:
    return f"{size // MIB} MiB" if size % MIB == 0 else f"{size:,} bytes"


def utf8_size(text: str) -> int:
    """``text``'s length in UTF-8 (a lone surrogate counts as the 3 bytes it would take)."""
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def split_at(text: str, limit: int) -> tuple[str, str]:
    """``text`` cut after at most ``limit`` UTF-8 bytes, at a character's end (the first
    part is empty when its first character is longer than ``limit``)."""
    if utf8_size(text) <= limit:
        return text, ""
    if text.isascii():
        return text[:limit], text[limit:]
    first = _whole_characters(text.encode("utf-8", "surrogatepass")[:limit])
    return first, text[len(first) :]


def _whole_characters(encoded: bytes) -> str:
    """The characters ``encoded`` holds whole (a character cut at its end is left out)."""
    for end in range(len(encoded), max(len(encoded) - 4, 0) - 1, -1):
        try:
            return encoded[:end].decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            continue
    return ""


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
        fallback = self._fallback()
        written = int(fallback.write(text))
        if "\n" in text:  # a whole line: out now, as a terminal would show it, not when a
            fallback.flush()  # file's buffer fills (a server's log, a test's capture)
        return written

    def flush(self) -> None:
        if getattr(threading.current_thread(), OWNER, None) is None:
            self._fallback().flush()

    def close(self) -> None:
        """Never closed: a router, bound for the process's life (``io.IOBase`` closes,
        and so flushes, a stream when it is collected, at interpreter exit too)."""

    def _fallback(self) -> Any:
        """Where a thread of no environment writes: the process's own stream."""
        stream = getattr(sys, f"__{self.name_}__")
        assert stream is not None
        return stream


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
