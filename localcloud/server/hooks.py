"""A hook around the server's answer to every AWS API request: how a project simulates the
network between the account's functions and the services (a request delayed, answered
with an error, or its connection closed before or after the service handled it) when
the functions run in processes of their own and reach the account over HTTP.

The server-side twin of :func:`localcloud.patches.botocore.around_requests` (which only
sees clients in the server's own process). The hook is called in the request's server
thread with the request as it arrived (:class:`ServedRequest`) and ``handle``, which runs
moto's answer to it and returns that answer (:class:`Answer`); it returns the answer the
caller gets, or raises :class:`DropConnection` to close the connection unanswered (the
caller's SDK sees the connection drop, as on a network that lost it). The live view's
pages never pass through it.

May import: nothing of the local cloud.
"""

from __future__ import annotations

import contextlib
import io
import socket
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["Answer", "AroundServed", "DropConnection", "Hooked", "ServedRequest", "around_served"]


@dataclass(frozen=True)
class ServedRequest:
    """One AWS API request as the server received it.

    ``headers`` are as sent (their case folded); ``body`` is the whole body (bytes).
    """

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes

    @property
    def access_key(self) -> str | None:
        """The access key id of the SigV4 ``Authorization`` header (``Credential=<key>/…``),
        if there is one: who signed the call."""
        authorization = self.headers.get("authorization", "")
        _, found, rest = authorization.partition("Credential=")
        key = rest.split("/", 1)[0].strip() if found else ""
        return key or None

    @property
    def target(self) -> str:
        """The ``X-Amz-Target`` header (``DynamoDB_20120810.PutItem``), or ``""``."""
        return self.headers.get("x-amz-target", "")


@dataclass(frozen=True)
class Answer:
    """An answer: HTTP status, headers, the whole body."""

    status: int
    headers: list[tuple[str, str]]
    body: bytes


class DropConnection(Exception):  # noqa: N818 - an instruction to the server, not a failure
    """Raised by a hook: close the request's connection without answering."""


AroundServed = Callable[[ServedRequest, Callable[[], Answer]], Answer]
"""(request, moto's answer to it) → the answer the caller gets."""
_AROUND: AroundServed | None = None


def around_served(handler: AroundServed | None) -> None:
    """Run every AWS API request the server answers through ``handler`` (``None``: none)."""
    global _AROUND
    _AROUND = handler


_REASONS = {200: "OK", 400: "Bad Request", 429: "Too Many Requests", 500: "Internal Server Error"}


class Hooked:
    """WSGI middleware: ``app``'s answers through the hook set with :func:`around_served`,
    or ``app`` directly while none is set."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        around = _AROUND
        if around is None:
            return self.app(environ, start_response)
        length = int(environ.get("CONTENT_LENGTH") or 0)
        body = environ["wsgi.input"].read(length) if length > 0 else b""
        environ["wsgi.input"] = io.BytesIO(body)
        headers = {
            key[5:].replace("_", "-").lower(): str(value)
            for key, value in environ.items()
            if key.startswith("HTTP_")
        }
        request = ServedRequest(
            environ.get("REQUEST_METHOD", ""), environ.get("PATH_INFO", ""), headers, body
        )

        def handle() -> Answer:
            answered: dict[str, Any] = {}

            def start(
                status: str, answer_headers: list[tuple[str, str]], exc_info: Any = None
            ) -> Any:
                answered["status"] = int(status.split(" ", 1)[0])
                answered["headers"] = list(answer_headers)
                return lambda data: None

            chunks = self.app(environ, start)
            try:
                content = b"".join(chunks)
            finally:
                close = getattr(chunks, "close", None)
                if close is not None:
                    close()
            return Answer(answered["status"], answered["headers"], content)

        try:
            answer = around(request, handle)
        except DropConnection:
            connection = environ.get("werkzeug.socket")
            if connection is not None:
                with contextlib.suppress(OSError):  # the caller closed it first (gave up)
                    connection.shutdown(socket.SHUT_RDWR)
            start_response("500 Internal Server Error", [("Content-Length", "0")])
            return []
        reason = _REASONS.get(answer.status, "")
        start_response(f"{answer.status} {reason}".strip(), answer.headers)
        return [answer.body]
