"""Connections the server holds (issue 47's held-back attacks: 1,500 connections sending
their headers slowly held 1,500 threads, and kept them; bounded, they left no thread for
anyone else): a connection still sending its head holds no thread
(:mod:`localcloud.server.heads`, whose own tests are in test_server_heads.py). One empty
account, served."""

from __future__ import annotations

import resource
import selectors
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from localcloud.account import LocalCloud
from localcloud.server import app as server_app
from localcloud.server import heads
from localcloud.tests.support.cloud import started

pytestmark = pytest.mark.slow  # hundreds of sockets and threads


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(server=True, template=None) as running:
        yield running


def connections(port: int, count: int) -> list[socket.socket]:
    """``count`` connections to the server that send nothing."""
    opened = []
    for _ in range(count):
        connection = socket.create_connection(("127.0.0.1", port), timeout=30)
        opened.append(connection)
    return opened


def settled(timeout_s: float = 30) -> int:
    """The number of this process's threads once it stops changing (the same twice, 0.2 s
    apart), or the last count after ``timeout_s`` (a hang guard)."""
    deadline = time.monotonic() + timeout_s
    last = threading.active_count()
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = threading.active_count()
        if now == last:
            return now
        last = now
    return last


def test_connections_sending_their_heads_slowly_hold_no_thread_and_others_are_answered(
    cloud: LocalCloud,
) -> None:
    """More connections than the server serves at once, each having sent half a head, hold
    no thread, and a request sent meanwhile is answered (the held-back attack's criterion:
    with a thread per connection, bounded, it went unanswered for 23 s)."""
    assert cloud.server_port is not None
    before = settled()
    opened = connections(cloud.server_port, server_app.CONNECTIONS + 20)
    try:
        for connection in opened:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        threads = settled() - before
        queues = cloud.client("sqs").list_queues().get("QueueUrls", [])
        with selectors.DefaultSelector() as selector:  # epoll: any number of sockets
            for connection in opened:
                selector.register(connection, selectors.EVENT_READ)
            closed = selector.select(timeout=0.5)  # readable: closed by the server
    finally:
        for connection in opened:
            connection.close()
    capacity = min(heads.WAITING, resource.getrlimit(resource.RLIMIT_NOFILE)[0] // 4)
    assert threads < 10
    assert queues == []
    # still waiting within the idle bound, but those the capacity closed, longest first, to
    # make room for them and the SDK's own connection
    assert len(closed) == max(0, len(opened) + 1 - capacity)


def test_the_server_still_answers_once_they_are_gone(cloud: LocalCloud) -> None:
    assert cloud.client("sqs").list_queues().get("QueueUrls", []) == []
