"""Connections the server holds (issue 47's held-back attacks: 1,500 connections sending
their headers slowly held 1,500 threads, and kept them): at most
:data:`~localcloud.server.app.CONNECTIONS` at once, a thread each, every one closed once it
has sent nothing for :data:`~localcloud.server.app.SOCKET_IDLE_S`. One empty account,
served."""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from localcloud.account import LocalCloud
from localcloud.server import app as server_app
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


def test_connections_past_the_bound_are_closed_and_hold_no_thread(cloud: LocalCloud) -> None:
    assert cloud.server_port is not None
    before = settled()
    opened = connections(cloud.server_port, server_app.CONNECTIONS + 20)
    try:
        threads = settled() - before
        with selectors.DefaultSelector() as selector:  # epoll: any number of sockets
            for connection in opened:
                selector.register(connection, selectors.EVENT_READ)
            ready = selector.select(timeout=5)  # readable: closed by the server
        closed = [key.fileobj for key, _ in ready if isinstance(key.fileobj, socket.socket)]
        refused = len([connection for connection in closed if connection.recv(1) == b""])
    finally:
        for connection in opened:
            connection.close()
    assert threads <= server_app.CONNECTIONS
    assert refused == 20


def test_a_connection_that_sends_nothing_is_closed_after_the_idle_bound(
    cloud: LocalCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert cloud.server_port is not None
    monkeypatch.setattr(server_app._Handler, "timeout", 0.2)
    (idle,) = connections(cloud.server_port, 1)
    with idle:
        idle.settimeout(30)  # a hang guard far above the bound
        assert idle.recv(1) == b""  # the server closed it


def test_the_server_still_answers_once_they_are_gone(cloud: LocalCloud) -> None:
    assert cloud.client("sqs").list_queues().get("QueueUrls", []) == []
