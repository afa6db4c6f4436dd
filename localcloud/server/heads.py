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
import selectors
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["HEAD_BYTES", "WAITING", "HeadReader", "Prefixed"]

HEAD_BYTES: Final = 64 * 1024 + 4
"""The most read of a head before it is handed on whole or not (bytes): a request line and
headers of http.server's 65,536-byte lines, which answers a longer one 414 or 431 itself."""
WAITING: Final = 4096
"""Connections waiting for their head, or for a thread, at once; one more is closed."""
_TICK_S: Final = 0.5
"""How often waiting connections are checked for idleness (seconds)."""


@dataclass
class _Waiting:
    connection: socket.socket
    address: Any
    head: bytearray = field(default_factory=bytearray)
    last: float = field(default_factory=time.monotonic)


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
        self._capacity = capacity
        self._selector = selectors.DefaultSelector()
        self._reading: dict[socket.socket, _Waiting] = {}
        self._complete: collections.deque[_Waiting] = collections.deque()
        self._added: collections.deque[_Waiting] = collections.deque()
        self._count = 0
        self._lock = threading.Lock()
        self._wake_read, self._wake_write = socket.socketpair()
        self._wake_read.setblocking(False)
        self._wake_write.setblocking(False)
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name="localcloud-heads", daemon=True)
        self._thread.start()

    def add(self, connection: socket.socket, address: Any) -> bool:
        """Read ``connection``'s head; ``False`` (and nothing taken) when :data:`WAITING`
        connections wait already."""
        with self._lock:
            if self._stopping or self._count >= self._capacity:
                return False
            self._count += 1
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
                else:
                    self._read(self._reading[key.fileobj])  # type: ignore[index]
            self._take_added()
            self._close_idle()
            self._start_complete()

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
        if not part:  # closed (or reset) before its head was in
            self._forget(waiting)
            return
        waiting.head += part
        waiting.last = time.monotonic()
        head = bytes(waiting.head)
        if b"\r\n\r\n" in head or b"\n\n" in head or len(head) >= HEAD_BYTES:
            self._selector.unregister(waiting.connection)
            del self._reading[waiting.connection]
            self._complete.append(waiting)

    def _close_idle(self) -> None:
        now = time.monotonic()
        for waiting in [w for w in self._reading.values() if now - w.last > self._idle_s]:
            self._forget(waiting)

    def _start_complete(self) -> None:
        while self._complete and self._may_start():
            waiting = self._complete.popleft()
            with self._lock:
                self._count -= 1
            waiting.connection.setblocking(True)
            self._ready(waiting.connection, waiting.address, bytes(waiting.head))

    def _forget(self, waiting: _Waiting) -> None:
        self._selector.unregister(waiting.connection)
        del self._reading[waiting.connection]
        with self._lock:
            self._count -= 1
        waiting.connection.close()


class Prefixed(io.RawIOBase):
    """A connection's bytes as a raw stream: ``head`` (what :class:`HeadReader` read of
    it) first, then what the socket receives."""

    def __init__(self, connection: socket.socket, head: bytes) -> None:
        super().__init__()
        self._head = memoryview(head)
        self._socket = socket.SocketIO(connection, "rb")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        if self._head:
            count = min(len(buffer), len(self._head))
            buffer[:count] = self._head[:count]
            self._head = self._head[count:]
            return count
        return self._socket.readinto(buffer)

    def close(self) -> None:
        self._socket.close()
        super().close()
