"""Connections waiting for their request's head (the request line and headers), read by one
thread for all of them: a connection gets a thread of its own only once its head is in.

Issue 47's held-back attacks held 1,500 connections open, each sending half its headers
and waiting: with a thread per connection the server either started 1,500 threads or,
bounded, had none left for anyone else (a request sent meanwhile went unanswered for 23 s).
A connection still sending its head costs here a socket and what it has sent, within
:data:`HEAD_BYTES`; at most :data:`WAITING` wait at once, and one that sends nothing for
its ``idle_s`` is closed.

May import: nothing of the local cloud.
"""

from __future__ import annotations

import collections
import contextlib
import io
import itertools
import logging
import resource
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["BODY_GRACE_S", "BODY_RATE", "HEAD_BYTES", "HEAD_S", "WAITING", "HeadReader", "Prefixed"]

HEAD_BYTES: Final = 64 * 1024 + 4
"""The most read of a head (bytes): a request line and headers of http.server's 65,536-byte
lines; a connection whose head has not ended within it is closed."""
WAITING: Final = 4096
"""Connections waiting for their head, or for a thread, at once (and at most a quarter of
the process's open-file limit); past it the one that has waited longest is closed, so that
a request that sends its head at once is still read while slow ones hold the rest."""
HEAD_S: Final = 60.0
"""How long a head may take to arrive, however it trickles (seconds)."""
BODY_GRACE_S: Final = 30.0
BODY_RATE: Final = 64 * 1024
"""A body must arrive within :data:`BODY_GRACE_S` seconds plus one second per
:data:`BODY_RATE` bytes of it received, however it trickles (a 50 MB zip on loopback takes
well under a second)."""
_LOG: Final = logging.getLogger(__name__)
_TICK_S: Final = 0.5
"""How often waiting connections are checked for idleness (seconds)."""


@dataclass
class _Waiting:
    connection: socket.socket
    address: Any
    head: bytearray = field(default_factory=bytearray)
    last: float = field(default_factory=time.monotonic)
    since: float = field(default_factory=time.monotonic)


class HeadReader:
    """Reads each connection :meth:`add` is given until its head is in, then hands it to
    ``ready(connection, address, head)`` (``head``: every byte read, maybe the start of
    the body too) once ``may_start()`` says a thread may serve it; until then it waits.

    ``idle_s``: how long a connection may send nothing before it is closed (seconds)."""

    def __init__(
        self,
        ready: Callable[[socket.socket, Any, bytes], None],
        may_start: Callable[[], bool],
        *,
        idle_s: float,
        capacity: int = WAITING,
    ) -> None:
        self._ready = ready
        self._may_start = may_start
        self._idle_s = idle_s
        self._capacity = min(capacity, resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 4)
        self._selector = selectors.DefaultSelector()
        self._reading: dict[socket.socket, _Waiting] = {}
        self._complete: collections.deque[_Waiting] = collections.deque()
        self._added: collections.deque[_Waiting] = collections.deque()
        self._lock = threading.Lock()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._wake_write.setblocking(False)
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="localcloud-heads", daemon=True)
        self._thread.start()

    def add(self, connection: socket.socket, address: Any) -> bool:
        """Read ``connection``'s head; ``False`` (and nothing taken) once stopping."""
        with self._lock:
            if self._stopping:
                return False
            self._added.append(_Waiting(connection, address))
        self.wake()
        return True

    def wake(self) -> None:
        """Have the reader look again (a connection added, a thread freed)."""
        with contextlib.suppress(OSError):  # already woken (the buffer full), or stopped
            self._wake_write.send(b"\0")

    def close(self) -> None:
        """Stop reading and close every connection still waiting."""
        with self._lock:
            self._stopping = True
        self.wake()
        self._thread.join(timeout=5)
        for waiting in [*self._reading.values(), *self._complete, *self._added]:
            waiting.connection.close()
        self._selector.close()
        self._wake_read.close()
        self._wake_write.close()

    def _run(self) -> None:
        while not self._stopping:
            for key, _ in self._selector.select(timeout=_TICK_S):
                if key.fileobj is self._wake_read:
                    self._drain_wakes()
                elif (waiting := self._reading.get(key.fileobj)) is not None:  # type: ignore[call-overload]
                    self._read(waiting)
            self._take_added()
            self._close_idle()
            self._start_complete()
            self._close_oldest()

    def _drain_wakes(self) -> None:
        with contextlib.suppress(OSError):
            while self._wake_read.recv(4096):
                pass

    def _take_added(self) -> None:
        with self._lock:
            added, self._added = self._added, collections.deque()
        for waiting in added:
            waiting.connection.setblocking(False)
            self._reading[waiting.connection] = waiting
            self._selector.register(waiting.connection, selectors.EVENT_READ)

    def _read(self, waiting: _Waiting) -> None:
        try:
            part = waiting.connection.recv(HEAD_BYTES - len(waiting.head))
        except BlockingIOError:
            return
        except OSError:
            part = b""
        if not part:  # closed (or half-closed) by the client
            if waiting.head:
                self._complete_head(waiting)  # http.server answers what it can of it
            else:
                self._forget(waiting)
            return
        seen = len(waiting.head)
        waiting.head += part
        waiting.last = time.monotonic()
        tail = bytes(waiting.head[max(0, seen - 3) :])  # the new bytes and the 3 before
        if b"\n\r\n" in tail or b"\n\n" in tail:
            self._complete_head(waiting)
        elif len(waiting.head) >= HEAD_BYTES:  # no end within the bound: not a head
            self._forget(waiting)

    def _complete_head(self, waiting: _Waiting) -> None:
        self._selector.unregister(waiting.connection)
        del self._reading[waiting.connection]
        self._complete.append(waiting)

    def _close_idle(self) -> None:
        now = time.monotonic()
        for waiting in [
            w
            for w in self._reading.values()
            if now - w.last > self._idle_s or now - w.since > HEAD_S
        ]:
            self._forget(waiting)

    def _start_complete(self) -> None:
        while self._complete and self._may_start():
            waiting = self._complete.popleft()
            try:
                waiting.connection.setblocking(True)
                self._ready(waiting.connection, waiting.address, bytes(waiting.head))
            except Exception:  # noqa: BLE001 - this connection's failure only, not the reader's
                _LOG.exception("a request could not be started; its connection closed")
                waiting.connection.close()

    def _close_oldest(self) -> None:
        """Past the capacity, close the connections that have waited longest for their head
        (the first read: a dict keeps the order they came in), then those waiting longest
        for a thread."""
        excess = len(self._reading) + len(self._complete) - self._capacity
        for waiting in list(itertools.islice(self._reading.values(), max(0, excess))):
            self._forget(waiting)
            excess -= 1
        while excess > 0 and self._complete:
            self._complete.popleft().connection.close()
            excess -= 1

    def _forget(self, waiting: _Waiting) -> None:
        self._selector.unregister(waiting.connection)
        del self._reading[waiting.connection]
        waiting.connection.close()


class Prefixed(io.RawIOBase):
    """A connection's bytes as a raw stream: ``head`` (what :class:`HeadReader` read of
    it) first, then what the socket receives, within :data:`BODY_GRACE_S` and
    :data:`BODY_RATE`: past them a read raises :class:`TimeoutError`, as one that waited
    the socket's own timeout does (a body sent slowly held a thread as long as it liked).
    """

    def __init__(self, connection: socket.socket, head: bytes) -> None:
        super().__init__()
        self._head = memoryview(head)
        self._connection = connection
        self._socket = socket.SocketIO(connection, "rb")
        self._started = time.monotonic()
        self._received = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        if self._head:
            count = min(len(buffer), len(self._head))
            buffer[:count] = self._head[:count]
            self._head = self._head[count:]
            return count
        left = self._started + BODY_GRACE_S + self._received / BODY_RATE - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request's body arrived too slowly")
        timeout = self._connection.gettimeout()
        self._connection.settimeout(left if timeout is None else min(timeout, left))
        try:
            received = self._socket.readinto(buffer)
        finally:
            self._connection.settimeout(timeout)
        self._received += received or 0
        return received

    def close(self) -> None:
        self._socket.close()
        super().close()
