"""The server's head reader (:mod:`localcloud.server.heads`, issue 47's held-back attacks:
connections sending their headers slowly held a thread each): a connection is handed on
once its head is in, with every byte read of it, when a thread is free; one that sends
nothing for its idle bound is closed; past its capacity a connection is refused."""

from __future__ import annotations

import contextlib
import io
import queue
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from localcloud.server import heads
from localcloud.server.heads import HeadReader, Prefixed

WAIT_S = 30
"""A hang guard far above anything awaited here (seconds)."""


class Reader:
    """A head reader whose hand-offs land in ``ready``; ``free`` says whether a thread is."""

    def __init__(self, *, idle_s: float = 30, capacity: int = 16) -> None:
        self.ready: queue.Queue[tuple[socket.socket, bytes]] = queue.Queue()
        self.free = threading.Event()
        self.free.set()
        self.heads = HeadReader(
            lambda connection, address, head: self.ready.put((connection, head)),
            self.free.is_set,
            idle_s=idle_s,
            capacity=capacity,
        )

    def connect(self) -> socket.socket:
        """A connection handed to the reader; the client's end returned."""
        server, client = socket.socketpair()
        assert self.heads.add(server, "peer")
        return client


@pytest.fixture
def reader() -> Iterator[Reader]:
    made = Reader()
    yield made
    made.heads.close()


def test_a_head_sent_in_pieces_is_handed_on_once_whole_with_the_start_of_its_body(
    reader: Reader,
) -> None:
    with reader.connect() as client:
        client.sendall(b"POST / HTTP/1.1\r\nHost: x\r\n")
        with pytest.raises(queue.Empty):
            reader.ready.get(timeout=0.3)
        client.sendall(b"Content-Length: 4\r\n\r\nbo")
        connection, head = reader.ready.get(timeout=WAIT_S)
        with connection:
            assert head == b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n\r\nbo"
            client.sendall(b"dy")
            stream = io.BufferedReader(Prefixed(connection, head))
            assert stream.readline() == b"POST / HTTP/1.1\r\n"
            assert stream.read(len(b"Host: x\r\nContent-Length: 4\r\n\r\n") + 4).endswith(
                b"\r\n\r\nbody"
            )


def test_a_whole_head_waits_for_a_free_thread(reader: Reader) -> None:
    reader.free.clear()
    with reader.connect() as client:
        client.sendall(b"GET / HTTP/1.1\r\n\r\n")
        with pytest.raises(queue.Empty):
            reader.ready.get(timeout=0.3)
        reader.free.set()
        reader.heads.wake()  # as the server does when a thread ends
        connection, head = reader.ready.get(timeout=WAIT_S)
        connection.close()
    assert head == b"GET / HTTP/1.1\r\n\r\n"


def test_a_connection_that_sends_nothing_is_closed_after_the_idle_bound() -> None:
    made = Reader(idle_s=0.2)
    try:
        with made.connect() as client:
            client.sendall(b"GET / HT")
            client.settimeout(WAIT_S)
            assert client.recv(1) == b""  # closed by the reader
    finally:
        made.heads.close()
    assert made.ready.empty()


def test_past_its_capacity_the_connection_waiting_longest_is_closed() -> None:
    """Slow connections filling the capacity do not keep out one that sends its head at
    once (issue 47's held-back attacks: 1,500 slow connections on a server whose open-file
    limit let 1,024 wait)."""
    made = Reader(capacity=2)
    pairs: list[Any] = [socket.socketpair() for _ in range(3)]
    try:
        for server, _ in pairs:
            assert made.heads.add(server, "peer")
            threading.Event().wait(0.05)  # in this order
        oldest = pairs[0][1]
        oldest.settimeout(WAIT_S)
        assert oldest.recv(1) == b""  # closed to make room
        pairs[2][1].sendall(b"GET / HTTP/1.1\r\n\r\n")
        connection, head = made.ready.get(timeout=WAIT_S)
        connection.close()
        assert head == b"GET / HTTP/1.1\r\n\r\n"
    finally:
        made.heads.close()
        for server, client in pairs:
            server.close()
            client.close()


@pytest.mark.parametrize(
    "head",
    [b"GET / HTTP/1.1\nHost: x\n\r\n", b"GET / HTTP/1.1\nHost: x\n\n", b"GET / HTTP/1.1\r\n\r\n"],
    ids=["LF then CRLF", "LF LF", "CRLF CRLF"],
)
def test_a_head_ends_at_its_first_empty_line_however_written(reader: Reader, head: bytes) -> None:
    with reader.connect() as client:
        for byte in head:  # one byte at a time: the end is found across reads
            client.sendall(bytes([byte]))
        connection, read = reader.ready.get(timeout=WAIT_S)
        connection.close()
    assert read == head


def test_a_head_cut_short_by_a_half_close_is_handed_on_as_it_is(reader: Reader) -> None:
    with reader.connect() as client:
        client.sendall(b"GET / HTTP/1.0\r\nHost: x\r\n")
        client.shutdown(socket.SHUT_WR)
        connection, head = reader.ready.get(timeout=WAIT_S)
        connection.close()
    assert head == b"GET / HTTP/1.0\r\nHost: x\r\n"  # http.server answers what it can


def test_a_head_that_does_not_end_within_its_bound_is_closed(reader: Reader) -> None:
    with reader.connect() as client:
        client.settimeout(WAIT_S)
        with contextlib.suppress(OSError):  # the reader may close before all is sent
            client.sendall(b"GET / HTTP/1.1\r\n" + b"X: " + b"y" * heads.HEAD_BYTES)
        try:
            end = client.recv(1)
        except ConnectionResetError:  # closed with bytes unread: a reset
            end = b""
        assert end == b""
    assert reader.ready.empty()


def test_a_connection_that_cannot_be_started_is_closed_and_the_reader_goes_on() -> None:
    started: list[bytes] = []

    def ready(connection: socket.socket, address: Any, head: bytes) -> None:
        if not started:
            started.append(b"refused")
            raise RuntimeError("can't start new thread")
        started.append(head)
        connection.close()

    made = HeadReader(ready, lambda: True, idle_s=30)
    pairs = [socket.socketpair() for _ in range(2)]
    try:
        for server, client in pairs:
            assert made.add(server, "peer")
            client.sendall(b"GET / HTTP/1.1\r\n\r\n")
            client.settimeout(WAIT_S)
            assert client.recv(1) == b""  # closed: the first refused, the second answered
    finally:
        made.close()
        for server, client in pairs:
            server.close()
            client.close()
    assert started == [b"refused", b"GET / HTTP/1.1\r\n\r\n"]


def test_a_body_sent_more_slowly_than_its_bound_times_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(heads, "BODY_GRACE_S", 0.2)
    server, client = socket.socketpair()
    with server, client:
        server.settimeout(WAIT_S)
        stream = Prefixed(server, b"")
        client.sendall(b"a")
        assert stream.read(1) == b"a"
        threading.Event().wait(0.3)  # past the grace, having sent 1 byte of 64 KB a second
        client.sendall(b"b")
        with pytest.raises(TimeoutError):
            stream.read(1)
        assert server.gettimeout() == WAIT_S  # the socket's own timeout kept
