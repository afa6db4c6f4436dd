"""The local server: moto's threaded server, with the live view mounted beside the AWS
APIs and the guard in front of both.

May import: :mod:`localcloud.server.guard`, :mod:`localcloud.text`.
"""

from __future__ import annotations

from typing import Any

from moto.moto_server.threaded_moto_server import ThreadedMotoServer
from moto.moto_server.werkzeug_app import (
    DomainDispatcherApplication,
    MotoRequestHandler,
    create_backend_app,
)
from werkzeug.middleware.dispatcher import DispatcherMiddleware
from werkzeug.serving import make_server

from localcloud.server.guard import VIEW_PREFIX, Guard, Policy
from localcloud.text import say


class LocalServer(ThreadedMotoServer):
    """moto's threaded server with the live view mounted at ``/_localcloud`` (the WSGI
    apps the local server already runs: moto's, and a Flask app beside it), both behind
    :class:`~localcloud.server.guard.Guard` (Host, origin and signature checks; moto's control
    API not served). A failure to listen is raised from :meth:`start` instead of leaving
    it waiting forever."""

    def __init__(self, ip_address: str, port: int, view: Any, policy: Policy) -> None:
        super().__init__(ip_address=ip_address, port=port, verbose=False)
        self._view = view
        self._policy = policy
        self._failure: OSError | None = None

    def _server_entry(self) -> None:
        app = Guard(
            DispatcherMiddleware(
                DomainDispatcherApplication(create_backend_app), {VIEW_PREFIX: self._view}
            ),
            self._policy,
            report=say,
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
        super().start()
        if self._failure is not None:
            raise self._failure
