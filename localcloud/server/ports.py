"""A server command's start: the error that stops it in one line, and the check that its
port is free before anything starts (every server command shares them: ``serve``,
``test-app``, a project's own)."""

from __future__ import annotations

import socket


class ServeError(Exception):
    """A server cannot start as asked; the message says what to do (one line, exit 2)."""


def check_port(host: str, port: int, retry: str) -> None:
    """Fail at once on a busy port, before anything starts.

    Raises:
        ServeError: naming the address, the system's reason and ``retry`` (what to run
            instead).
    """
    try:
        socket.create_server((host, port)).close()
    except OSError as exc:
        raise ServeError(f"cannot listen on {host}:{port}: {exc.strerror}; {retry}") from None
