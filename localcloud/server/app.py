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
from werkzeug.serving import make_server
from werkzeug.wsgi import ClosingIterator

from localcloud.server.guard import Guard, Policy, PublicRoutes
from localcloud.server.hooks import Hooked
from localcloud.text import say

ANSWER_WAIT_S = 2.0
"""How long stopping waits for the answers in flight to be written (seconds)."""


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
            self._server = make_server(
                self._ip_address, self._port, app, True, request_handler=MotoRequestHandler
            )
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
