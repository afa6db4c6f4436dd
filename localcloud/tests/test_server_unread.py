"""What the server does with a body it answered without reading (issue 47's held-back
attacks: forty concurrent 10 MB bodies, 39 refused with 429, took the server 400 MB up,
and each client that waited for the end of its answer waited 30 s): it discards what is
left, 64 KB at a time, up to the declared length, and closes."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.server import app as server_app
from localcloud.server.bodies import DEFAULT_SERVICE_BODY_BYTES
from localcloud.tests.support.cloud import started


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(server=True, template=None) as running:
        yield running


class Recorded:
    """A socket's reader, recording the size of every read asked of it."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.asked: list[int] = []

    def read1(self, size: int) -> bytes:
        self.asked.append(size)
        return bytes(self.stream.read1(size))


def test_what_is_left_of_an_answered_body_is_discarded_in_small_reads_up_to_its_length() -> None:
    server, client = socket.socketpair()
    with server, client:
        declared, after = 300_000, b"the next bytes"
        sender = threading.Thread(target=client.sendall, args=(b"x" * declared + after,))
        sender.start()
        reader = Recorded(server.makefile("rb"))
        handler = SimpleNamespace(
            environ={"CONTENT_LENGTH": str(declared), server_app._ANSWERED: True},
            connection=server,
        )
        unread = server_app._Unread(reader, handler)

        assert unread.read(10_000_000) == b""  # werkzeug's read of what is left
        sender.join()
        assert max(reader.asked) <= 64 * 1024
        assert reader.stream.read1(100) == after  # nothing read past the declared length
        assert unread.read(10_000_000) == b""  # discarded once


def test_a_refused_body_sent_whole_gets_its_answer_and_the_connection_closes(
    cloud: LocalCloud,
) -> None:
    """A client that sends a body over its service's bound and then reads its answer to
    the end (``Connection: close``) reads 413 and the end of the connection, without
    waiting for the server's idle timeout."""
    assert cloud.server_port is not None
    size = DEFAULT_SERVICE_BODY_BYTES + 1024 * 1024
    head = (
        f"POST / HTTP/1.1\r\nHost: 127.0.0.1:{cloud.server_port}\r\n"
        "Authorization: AWS4-HMAC-SHA256 Credential=x/20261201/us-east-1/sqs/aws4_request, "
        "SignedHeaders=host, Signature=0\r\nContent-Type: application/x-amz-json-1.0\r\n"
        f"Content-Length: {size}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection(("127.0.0.1", cloud.server_port)) as connection:
        # half the idle timeout: past it, the server's drain waits for bytes never sent
        connection.settimeout(server_app.SOCKET_IDLE_S / 2)
        sender = threading.Thread(target=connection.sendall, args=(head + b"x" * size,))
        sender.start()
        answer = b""
        while part := connection.recv(65536):
            answer += part
        sender.join()
    assert answer.startswith(b"HTTP/1.1 413 ")
    assert b"RequestEntityTooLarge" in answer
