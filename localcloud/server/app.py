"""The local server: moto's threaded server, with the live view and the APIs' routes beside
the AWS APIs, the guard in front of all three deciding which one a request reaches.

May import: :mod:`localcloud.server.guard`, :mod:`localcloud.server.heads`,
:mod:`localcloud.text`.
"""

from __future__ import annotations

import io
import logging
import socket
import threading
import time
from typing import Any, Final

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import ThreadedWSGIServer
from werkzeug.wsgi import ClosingIterator

from localcloud.server.guard import Guard, PublicRoutes
from localcloud.server.heads import HeadReader, Prefixed
from localcloud.server.hooks import Hooked
from localcloud.server.policy import Policy
from localcloud.text import say

ANSWER_WAIT_S = 2.0
"""How long stopping waits for the answers in flight to be written (seconds)."""
CONNECTIONS = 512
"""Requests served at once (a thread each, once its head is in); the next waits for a
thread. Far above what a machine's functions, SDKs and browser open (each SDK client pools
at most 10)."""
SOCKET_IDLE_S = 30.0
"""How long a connection may send nothing (its request line, a header, a body, the next
request of a kept-alive connection) before it is closed (seconds)."""


DISCARD_BYTES = 80 * 1024 * 1024
"""The most the server reads and discards of a body left unread once its answer is written
(bytes): above Lambda's 70 MB, the largest body a service refuses whole (413), so that its
client reads the answer instead of a reset connection."""
DISCARD_S = 10.0
"""How long the server keeps discarding such a body (seconds)."""
DISCARD_QUIET_S = 1.0
"""How long it waits for more of it (seconds)."""
_ANSWERED: Final = "localcloud.answer_written"
"""The environ key set once a request's answer is written."""


class _Unread:
    """A handler's ``rfile`` that, once the request's answer is written, discards what is
    left of its body, 64 KB at a time, and then reads as empty: up to its declared
    ``Content-Length``, the client's closing or :data:`DISCARD_QUIET_S` of silence, and at
    most :data:`DISCARD_BYTES` and :data:`DISCARD_S`.

    werkzeug's server discards a body the application left unread (a request refused
    before its body was read: 413, 429) in reads of 10,000,000 bytes, each waiting until
    it is full: every such connection held 10 MB for as long as its client took to send
    them, and a client that sends its whole body and then waits for the answer, as most
    do, waited the 30 s of :data:`SOCKET_IDLE_S` for it (issue 47's held-back attacks:
    forty concurrent 10 MB bodies, 39 refused with 429, took the server 400 MB up)."""

    def __init__(self, stream: Any, handler: Any) -> None:
        self._stream = stream
        self._handler = handler
        self._body_read = 0
        self._discarded = False

    def _environ(self) -> dict[str, Any]:
        return getattr(self._handler, "environ", None) or {}

    def read(self, size: int = -1) -> bytes:
        environ = self._environ()
        if environ.get(_ANSWERED):
            if not self._discarded:
                self._discarded = True
                self._discard(environ)
            return b""
        data = bytes(self._stream.read(size))
        self._body_read += len(data) if environ else 0
        return data

    def readinto(self, buffer: Any) -> int:
        count = int(self._stream.readinto(buffer) or 0)
        self._body_read += count if self._environ() else 0
        return count

    def _discard(self, environ: dict[str, Any]) -> None:
        declared = str(environ.get("CONTENT_LENGTH") or "")
        chunked = "chunked" in str(environ.get("HTTP_TRANSFER_ENCODING", "")).lower()
        left = DISCARD_BYTES
        if declared.isdigit() and not chunked:
            left = min(left, int(declared) - self._body_read)
        deadline = time.monotonic() + DISCARD_S
        try:
            while left > 0 and (wait := deadline - time.monotonic()) > 0:
                self._handler.connection.settimeout(min(wait, DISCARD_QUIET_S))
                part = self._stream.read1(min(64 * 1024, left))
                if not part:
                    return
                left -= len(part)
        except OSError:  # the client closed, reset or went quiet
            return

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _Handler(MotoRequestHandler):
    """moto's request handler, reading first what :class:`~localcloud.server.heads.HeadReader`
    read of its connection, with :data:`SOCKET_IDLE_S` on every read and write of its
    socket (``StreamRequestHandler.timeout``); what is left unread of a body is discarded a
    little at a time (:class:`_Unread`)."""

    timeout = SOCKET_IDLE_S
    server: _BoundedServer

    def setup(self) -> None:
        super().setup()
        head = self.server.head_of(self.connection)
        if head:
            self.rfile.close()
            self.rfile = io.BufferedReader(Prefixed(self.connection, head))
        self.rfile = _Unread(self.rfile, self)  # type: ignore[assignment]


class _BoundedServer(ThreadedWSGIServer):
    """werkzeug's threaded server, reading the heads of the requests on one thread
    (:class:`~localcloud.server.heads.HeadReader`) and serving at most
    :data:`CONNECTIONS` of them at once, a thread each: 1,500 connections sending their
    headers slowly held 1,500 threads, and kept them; bounded, they left none for a
    request sent meanwhile (issue 47's held-back attacks)."""

    def __init__(self, host: str, port: int, app: Any) -> None:
        super().__init__(host, port, app, _Handler)
        self._slots = threading.BoundedSemaphore(CONNECTIONS)
        self._heads: dict[socket.socket, bytes] = {}
        self._reader = HeadReader(
            self._serve, lambda: self._slots.acquire(blocking=False), idle_s=SOCKET_IDLE_S
        )

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._reader.add(request, client_address):
            self.shutdown_request(request)  # refused: WAITING connections wait already

    def _serve(self, request: socket.socket, client_address: Any, head: bytes) -> None:
        """Serve a request whose head is in, on a thread of its own (its slot taken)."""
        self._heads[request] = head
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._heads.pop(request, None)
            self._slots.release()
            raise

    def head_of(self, request: socket.socket) -> bytes:
        """What the head reader read of ``request``'s connection (once)."""
        return self._heads.pop(request, b"")

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()
            self._reader.wake()

    def shutdown(self) -> None:
        super().shutdown()
        self._reader.close()


def free_port(host: str = "127.0.0.1") -> int:
    """A port of ``host`` that nothing listens on now (the system's choice), for a server
    only the account's own functions reach (an in-process account, ``make demo``)."""
    with socket.create_server((host, 0)) as probe:
        return int(probe.getsockname()[1])


class LocalServer(ThreadedMotoServer):
    """moto's threaded server with the live view mounted at ``/_localcloud`` (a Flask app
    beside moto's) and the APIs' routes (``public``), all three behind
    :class:`~localcloud.server.guard.Guard` (Host, path, origin and signature checks; moto's
    control API not served), which hands each request to one of them; the AWS APIs through
    the hook of :mod:`~localcloud.server.hooks`. A failure to listen is raised from
    :meth:`start` instead of leaving it waiting forever."""

    def __init__(
        self,
        ip_address: str,
        port: int,
        view: Any,
        policy: Policy,
        *,
        public: PublicRoutes | None = None,
    ) -> None:
        super().__init__(ip_address=ip_address, port=port, verbose=False)
        self._view = view
        self._policy = policy
        self._public = public
        self._failure: OSError | None = None
        self._active = 0
        self._active_lock = threading.Lock()

    def _counted(self, app: Any) -> Any:
        """``app``, counting the requests in flight until their answer is written (the
        iterable's ``close``, which werkzeug calls after writing it), and marking the
        answer written once its last part is (:class:`_Unread`)."""

        def done() -> None:
            with self._active_lock:
                self._active -= 1

        def written(environ: Any, answer: Any) -> Any:
            try:
                yield from answer
            finally:
                environ[_ANSWERED] = True

        def counted(environ: Any, start_response: Any) -> Any:
            with self._active_lock:
                self._active += 1
            try:
                answer = app(environ, start_response)
            except BaseException:  # werkzeug answers 500 and discards the rest of the body
                environ[_ANSWERED] = True
                done()
                raise
            closes = [answer.close] if hasattr(answer, "close") else []
            return ClosingIterator(written(environ, answer), [*closes, done])

        return counted

    def stop(self) -> None:
        """Stop serving, once the answers in flight are written (at most
        :data:`ANSWER_WAIT_S`): a caller whose invocation the stop ended gets its error."""
        deadline = time.monotonic() + ANSWER_WAIT_S
        while time.monotonic() < deadline:
            with self._active_lock:
                if self._active == 0:
                    break
            time.sleep(0.01)
        super().stop()

    def _server_entry(self) -> None:
        app = self._counted(
            Guard(
                Hooked(DomainDispatcherApplication(create_backend_app)),
                self._policy,
                report=say,
                view=self._view,
                public=self._public,
            )
        )
        try:
            self._server = _BoundedServer(self._ip_address, self._port, app)
        except OSError as exc:  # address in use, or not ours: raised by start()
            self._failure = exc
            self._server_ready_event.set()
            return
        self._server_ready_event.set()
        self._server.serve_forever()

    def start(self) -> None:
        logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per HTTP request
        super().start()
        if self._failure is not None:
            raise self._failure
