"""The local server: moto's threaded server, with the live view and the APIs' routes beside
the AWS APIs, the guard in front of all three deciding which one a request reaches.

May import: :mod:`localcloud.server.guard`, :mod:`localcloud.text`.
"""

from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.serving import ThreadedWSGIServer
from werkzeug.wsgi import ClosingIterator

from localcloud.server.guard import Guard, PublicRoutes
from localcloud.server.hooks import Hooked
from localcloud.server.policy import Policy
from localcloud.text import say

ANSWER_WAIT_S = 2.0
"""How long stopping waits for the answers in flight to be written (seconds)."""
CONNECTIONS = 512
"""Connections served at once (a thread each); one more is closed at once. Far above what
a machine's functions, SDKs and browser open (each SDK client pools at most 10)."""
SOCKET_IDLE_S = 30.0
"""How long a connection may send nothing (its request line, a header, a body, the next
request of a kept-alive connection) before it is closed (seconds)."""


class _Handler(MotoRequestHandler):
    """moto's request handler, with :data:`SOCKET_IDLE_S` on every read and write of its
    socket (``StreamRequestHandler.timeout``): a client that opens a connection and
    sends nothing holds a thread for no longer."""

    timeout = SOCKET_IDLE_S


class _BoundedServer(ThreadedWSGIServer):
    """werkzeug's threaded server, serving at most :data:`CONNECTIONS` connections at once:
    1,500 connections sending their headers slowly held 1,500 threads, and kept them
    (issue 47's held-back attacks)."""

    def __init__(self, host: str, port: int, app: Any) -> None:
        super().__init__(host, port, app, _Handler)
        self._slots = threading.BoundedSemaphore(CONNECTIONS)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)  # refused: no thread for it
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()


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
        iterable's ``close``, which werkzeug calls after writing it)."""

        def done() -> None:
            with self._active_lock:
                self._active -= 1

        def counted(environ: Any, start_response: Any) -> Any:
            with self._active_lock:
                self._active += 1
            try:
                answer = app(environ, start_response)
            except BaseException:
                done()
                raise
            return ClosingIterator(answer, [done])

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
