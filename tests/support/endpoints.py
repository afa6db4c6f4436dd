"""A scripted HTTP endpoint on 127.0.0.1 for real-socket failure tests.

Each request it receives gets the next action of its script (the last action repeats):

- ``"ok"``: HTTP 200 with the ``ConsumedCapacity`` of the table the request names (a
  successful DynamoDB ``PutItem`` asked with ``ReturnConsumedCapacity: TOTAL``);
- ``"hang"``: read the request and never answer (botocore's read timeout fires);
- ``"drop"``: read the request and close the connection (``ConnectionClosedError``);
- ``"503"``: HTTP 503 ``ServiceUnavailable`` in DynamoDB's JSON error form.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import BinaryIO

_RESPONSES = {
    "ok": (200, "OK", b'{"ConsumedCapacity": {"TableName": "%s", "CapacityUnits": 1.0}}'),
    "503": (
        503,
        "Service Unavailable",
        b'{"__type":"com.amazonaws.dynamodb.v20120810#ServiceUnavailable",'
        b'"message":"Service unavailable"}',
    ),
}


class ScriptedEndpoint:
    """Serve ``script`` on a free port until closed; ``requests`` counts what arrived."""

    def __init__(self, script: Sequence[str]) -> None:
        self.script = list(script)
        self.requests = 0
        self._lock = threading.Lock()
        self._closed = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _next_action(self) -> str:
        with self._lock:
            action = self.script[min(self.requests, len(self.script) - 1)]
            self.requests += 1
            return action

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self._connections.append(connection)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            reader = connection.makefile("rb")
            while not self._closed.is_set():
                try:
                    request = _read_request(reader)
                except OSError:
                    return
                if request is None:
                    return
                action = self._next_action()
                if action == "hang":
                    self._closed.wait()
                    return
                if action == "drop":
                    return
                status, reason, body = _RESPONSES[action]
                if action == "ok":
                    table = json.loads(request or b"{}").get("TableName", "")
                    body = body.replace(b"%s", table.encode())
                head = (
                    f"HTTP/1.1 {status} {reason}\r\n"
                    "Content-Type: application/x-amz-json-1.0\r\n"
                    f"Content-Length: {len(body)}\r\n"
                    "x-amzn-RequestId: scripted\r\n\r\n"
                )
                try:
                    connection.sendall(head.encode() + body)
                except OSError:
                    return

    def close(self) -> None:
        self._closed.set()
        self._listener.close()
        for connection in self._connections:
            with suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


def _read_request(reader: BinaryIO) -> bytes | None:
    """Read one HTTP request (headers and ``Content-Length`` body): its body, or ``None``
    at EOF."""
    length = 0
    while True:
        line = reader.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("latin-1").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value.strip())
    return reader.read(length) if length else b""


@contextmanager
def scripted_endpoint(script: Sequence[str]) -> Iterator[ScriptedEndpoint]:
    endpoint = ScriptedEndpoint(script)
    try:
        yield endpoint
    finally:
        endpoint.close()


def unused_port_url() -> str:
    """An http URL on 127.0.0.1 where nothing listens (connection refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}"


@contextmanager
def unaccepting_endpoint_url() -> Iterator[str]:
    """An http URL on 127.0.0.1 whose connections time out: its listen queue is full and
    nothing accepts, so Linux drops further SYNs (botocore's connect timeout fires)."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=0)
    port = listener.getsockname()[1]
    fillers = []
    try:
        for _ in range(3):
            filler = socket.socket()
            filler.setblocking(False)
            with suppress(BlockingIOError):
                filler.connect(("127.0.0.1", port))
            fillers.append(filler)
        yield f"http://127.0.0.1:{port}"
    finally:
        for filler in fillers:
            filler.close()
        listener.close()
