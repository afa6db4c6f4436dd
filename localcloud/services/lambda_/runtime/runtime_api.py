"""The Lambda Runtime API, as Lambda serves it to an execution environment.

Lambda Developer Guide, "Using the Lambda runtime API for custom runtimes": the runtime in
an execution environment fetches each invocation with ``GET
/2018-06-01/runtime/invocation/next`` (a long poll; the event is the body, the request id,
deadline, function ARN and trace id are headers) and answers it at
``POST /2018-06-01/runtime/invocation/{request-id}/response`` or ``…/error``; a failed
init is posted to ``/2018-06-01/runtime/init/error``. ``AWS_LAMBDA_RUNTIME_API`` holds the
endpoint's ``host:port``.

One :class:`Endpoint` per execution environment, on a loopback port of its own, all served
by one event loop (:func:`loop`) in one thread of the local cloud, never a thread per
environment. HTTP/1.1 is parsed by ``h11``. The rules an endpoint keeps, whatever the
processes of the environment send:

- the first answer for the request id in flight wins (202); a second answer, or one for a
  request id not in flight, is refused with Lambda's 403 ``InvalidStateTransition`` and
  changes nothing: no invocation receives another's result or two results (a forked
  child may answer, as on Lambda);
- malformed HTTP closes that connection and answers nothing; a half-written request holds
  only its own connection;
- an answer over 6 MB (Lambda's synchronous response quota, 6,291,556 bytes) fails the
  invocation with ``Function.ResponseSizeTooLarge``, as on Lambda;
- a connection from a process that is not the environment's own (another function's,
  which could read the address from ``/proc/<pid>/environ``) is closed unanswered: the
  peer's socket is looked up in ``/proc/net/tcp`` and among the environment's processes'
  descriptors, as Lambda's isolation would have it;
- a request that carries a browser's ``Origin`` or ``Sec-Fetch-*`` headers, or a ``Host``
  that is not the endpoint's own address, is refused (403) before it is read: a web page
  must not fetch or answer an invocation (a local server is still a server).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import re
import socket
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final, Protocol

import h11

from localcloud.services.lambda_.runtime.payloads import RESPONSE_LIMIT, RESPONSE_TOO_LARGE

VERSION: Final = "2018-06-01"
MAX_RESPONSE_BYTES: Final = RESPONSE_LIMIT
"""Lambda's quota for a synchronous invocation's response payload (bytes)."""
TOO_LARGE: Final = RESPONSE_TOO_LARGE
_ANSWER: Final = re.compile(rf"^/{VERSION}/runtime/invocation/([^/]+)/(response|error)$")
_BROWSER_HEADERS: Final = (b"origin", b"sec-fetch-site", b"sec-fetch-mode", b"sec-fetch-dest")


@dataclass(frozen=True)
class Work:
    """One invocation handed to the runtime by ``next``.

    ``deadline_ms`` is epoch milliseconds (``Lambda-Runtime-Deadline-Ms``)."""

    request_id: str
    event: bytes
    function_arn: str
    deadline_ms: int
    trace_id: str


@dataclass(frozen=True)
class Answer:
    """What the runtime posted for one invocation: the body and its content type; for an
    error, ``error`` is true and ``error_type`` is the body's ``errorType`` (awslambdaric
    sends the ``Lambda-Runtime-Function-Error-Type`` header only for init errors)."""

    body: bytes
    content_type: str
    error: bool
    error_type: str | None = None


class Environment(Protocol):
    """The execution environment an endpoint serves (called on the event loop)."""

    async def next_work(self) -> Work:
        """The next invocation for the runtime; waits until there is one."""
        ...

    def answered(self, request_id: str, answer: Answer) -> bool:
        """The runtime answered ``request_id``: ``False`` if that id is not in flight or
        was answered already (the endpoint then refuses it)."""
        ...

    def init_failed(self, answer: Answer) -> bool:
        """The runtime posted an init error: ``False`` if one was posted already."""
        ...

    def process_ids(self) -> set[int]:
        """Every process of the environment now (its supervisor and all below it)."""
        ...

    def requeue(self, work: Work) -> None:
        """``work`` was fetched but never reached the runtime (its connection closed):
        hand it to the next ``next``."""
        ...


_LOOP: asyncio.AbstractEventLoop | None = None
_THREAD: threading.Thread | None = None
_LOOP_LOCK = threading.Lock()


def loop() -> asyncio.AbstractEventLoop:
    """The Runtime API's event loop, started in a daemon thread on first use (and
    stopped when the interpreter exits: :func:`shutdown`)."""
    global _LOOP, _THREAD
    with _LOOP_LOCK:
        if _LOOP is None:
            created = asyncio.new_event_loop()
            _THREAD = threading.Thread(
                target=created.run_forever, name="lambda-runtime-api", daemon=True
            )
            _THREAD.start()
            _LOOP = created
            atexit.register(shutdown)
        return _LOOP


def shutdown() -> None:
    """Cancel every task of the loop and stop it (every environment's supervisor then
    sees its control pipe close and kills its process tree)."""
    global _LOOP, _THREAD
    with _LOOP_LOCK:
        running, thread, _LOOP, _THREAD = _LOOP, _THREAD, None, None
    if running is None or thread is None:
        return

    async def cancel_all() -> None:
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        running.stop()

    running.call_soon_threadsafe(lambda: running.create_task(cancel_all()))
    thread.join(timeout=2)


def call(coroutine: Callable[[], Awaitable[object]]) -> object:
    """Run ``coroutine()`` on the Runtime API's loop and wait for its result (from
    another thread)."""
    return asyncio.run_coroutine_threadsafe(_wrap(coroutine), loop()).result()


async def _wrap(coroutine: Callable[[], Awaitable[object]]) -> object:
    return await coroutine()


class Endpoint:
    """One execution environment's Runtime API, on ``127.0.0.1`` and a port of its own.

    Made and closed on the event loop (:meth:`open`, :meth:`close`)."""

    def __init__(self, environment: Environment) -> None:
        self._environment = environment
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()
        self.address = ""
        """``host:port``, the value of ``AWS_LAMBDA_RUNTIME_API``."""

    async def open(self) -> str:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        host, port = self._server.sockets[0].getsockname()[:2]
        self.address = f"{host}:{port}"
        return self.address

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        for writer in list(self._writers):
            writer.close()
        self._writers.clear()
        for task in list(self._tasks):
            task.cancel()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if not self._from_environment(writer):
            writer.close()
            return
        self._writers.add(writer)
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        connection = h11.Connection(h11.SERVER, max_incomplete_event_size=64 * 1024)
        try:
            while True:
                event = await self._event(connection, reader)
                if isinstance(event, h11.ConnectionClosed):
                    return
                if not isinstance(event, h11.Request):
                    return
                refusal = self._refusal(event)
                if refusal is not None:
                    await self._send(connection, writer, 403, refusal, close=True)
                    return
                if connection.they_are_waiting_for_100_continue:
                    writer.write(
                        connection.send(h11.InformationalResponse(status_code=100, headers=[]))
                        or b""
                    )
                body, complete = await self._body(connection, reader)
                if self._is_next(event):
                    work = await self._next_or_closed(reader)
                    if work is None:
                        return  # the runtime went while it waited: nothing was handed out
                    try:
                        await self._send(connection, writer, 200, work, close=False)
                    except ConnectionError:
                        self._environment.requeue(work)
                        raise
                    connection.start_next_cycle()
                    continue
                status, payload = await self._route(event, body, complete)
                await self._send(connection, writer, status, payload, close=not complete)
                if not complete or connection.our_state is h11.MUST_CLOSE:
                    return
                connection.start_next_cycle()
        except (h11.RemoteProtocolError, h11.LocalProtocolError, ConnectionError):
            return  # malformed HTTP, or the process went: close, answer nothing
        finally:
            self._writers.discard(writer)
            if task is not None:
                self._tasks.discard(task)
            writer.close()

    @staticmethod
    def _is_next(request: h11.Request) -> bool:
        return (
            request.method == b"GET"
            and request.target == f"/{VERSION}/runtime/invocation/next".encode()
        )

    async def _next_or_closed(self, reader: asyncio.StreamReader) -> Work | None:
        """The next invocation, or ``None`` if the connection closes (or sends anything)
        first: a runtime waits on ``next`` without writing, so an abandoned long poll must
        not take an invocation with it."""
        work = asyncio.ensure_future(self._environment.next_work())
        closed = asyncio.ensure_future(reader.read(1))
        try:
            await asyncio.wait({work, closed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (closed, work):
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await task  # the reader is free again before the next read
        if closed.done() and not closed.cancelled():
            if work.done() and not work.cancelled():
                self._environment.requeue(work.result())
            return None
        return work.result() if work.done() and not work.cancelled() else None

    @staticmethod
    async def _event(connection: h11.Connection, reader: asyncio.StreamReader) -> object:
        while True:
            event = connection.next_event()
            if event is not h11.NEED_DATA:
                return event
            connection.receive_data(await reader.read(65536))

    async def _body(
        self, connection: h11.Connection, reader: asyncio.StreamReader
    ) -> tuple[bytes, bool]:
        """The request body, and whether it was within the size limit (a larger body is
        not read to its end: the connection closes after the answer)."""
        chunks: list[bytes] = []
        size = 0
        while True:
            event = await self._event(connection, reader)
            if isinstance(event, h11.EndOfMessage):
                return b"".join(chunks), True
            if isinstance(event, h11.Data):
                size += len(event.data)
                if size > MAX_RESPONSE_BYTES:
                    return b"", False
                chunks.append(event.data)
            elif isinstance(event, h11.ConnectionClosed):
                raise ConnectionError("closed mid-request")

    def _from_environment(self, writer: asyncio.StreamWriter) -> bool:
        """Whether the peer of this connection is a process of the environment."""
        peer = writer.get_extra_info("peername")
        own = writer.get_extra_info("sockname")
        if not peer or not own or peer[0] != "127.0.0.1":  # the runtime connects from it
            return False
        inode = _socket_inode((str(peer[0]), int(peer[1])), (str(own[0]), int(own[1])))
        if inode is None:
            return False
        link = f"socket:[{inode}]"
        for pid in self._environment.process_ids():
            try:
                descriptors = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                continue
            for descriptor in descriptors:
                try:
                    if os.readlink(f"/proc/{pid}/fd/{descriptor}") == link:
                        return True
                except OSError:
                    continue
        return False

    def _refusal(self, request: h11.Request) -> dict[str, str] | None:
        names = {name for name, _ in request.headers}
        host = dict(request.headers).get(b"host", b"").decode("latin-1")
        if any(name in names for name in _BROWSER_HEADERS) or host != self.address:
            return {
                "errorMessage": "the Runtime API answers the function's own runtime only",
                "errorType": "Forbidden",
            }
        return None

    async def _route(
        self, request: h11.Request, body: bytes, complete: bool
    ) -> tuple[int, dict[str, str] | Work]:
        path = request.target.decode("latin-1")
        method = request.method.decode("latin-1")
        headers = {
            name.decode("latin-1"): value.decode("latin-1") for name, value in request.headers
        }
        matched = _ANSWER.match(path)
        if method == "POST" and matched is not None:
            request_id, kind = matched.groups()
            answer = _answer(body, headers, kind == "error") if complete else _too_large()
            if self._environment.answered(request_id, answer):
                return (202, {"status": "OK"}) if complete else (413, TOO_LARGE)
            return 403, _invalid_transition(request_id)
        if method == "POST" and path == f"/{VERSION}/runtime/init/error":
            answer = _answer(body, headers, True) if complete else _too_large()
            if self._environment.init_failed(answer):
                return 202, {"status": "OK"}
            return 403, _invalid_transition(None)
        return 404, {"errorMessage": f"no route {method} {path}", "errorType": "NotFound"}

    @staticmethod
    async def _send(
        connection: h11.Connection,
        writer: asyncio.StreamWriter,
        status: int,
        payload: dict[str, str] | Work,
        *,
        close: bool,
    ) -> None:
        headers = [(b"content-type", b"application/json")]
        if isinstance(payload, Work):
            body = payload.event
            headers += [
                (b"lambda-runtime-aws-request-id", payload.request_id.encode()),
                (b"lambda-runtime-deadline-ms", str(payload.deadline_ms).encode()),
                (b"lambda-runtime-invoked-function-arn", payload.function_arn.encode()),
                (b"lambda-runtime-trace-id", payload.trace_id.encode()),
            ]
        else:
            body = json.dumps(payload).encode()
        headers.append((b"content-length", str(len(body)).encode()))
        if close:
            headers.append((b"connection", b"close"))
        writer.write(connection.send(h11.Response(status_code=status, headers=headers)) or b"")
        writer.write(connection.send(h11.Data(data=body)) or b"")
        writer.write(connection.send(h11.EndOfMessage()) or b"")
        await writer.drain()


def _answer(body: bytes, headers: dict[str, str], error: bool) -> Answer:
    content_type = headers.get("content-type", "application/json")
    if not error:
        return Answer(body, content_type, False)
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):  # a runtime may post anything
        parsed = None
    error_type = parsed.get("errorType") if isinstance(parsed, dict) else None
    if not isinstance(error_type, str):
        error_type = headers.get("lambda-runtime-function-error-type")
    return Answer(body, "application/json", True, error_type)


def _socket_inode(peer: tuple[str, int], own: tuple[str, int]) -> int | None:
    """The inode of the TCP socket whose local end is ``peer`` and remote end ``own``
    (IPv4 address, port), as ``/proc/net/tcp`` lists it (or ``tcp6``, as an IPv4-mapped
    address): every address and port compared, never ports alone."""
    local, remote = _proc_address(*peer), _proc_address(*own)
    mapped_local = _proc_address(*peer, mapped=True)
    mapped_remote = _proc_address(*own, mapped=True)
    for table, wanted in (
        ("/proc/net/tcp", (local, remote)),
        ("/proc/net/tcp6", (mapped_local, mapped_remote)),
    ):
        try:
            with open(table) as listed:
                rows = listed.readlines()[1:]
        except OSError:
            continue
        for row in rows:
            fields = row.split()
            if len(fields) >= 10 and (fields[1], fields[2]) == wanted:
                return int(fields[9])
    return None


def _proc_address(address: str, port: int, *, mapped: bool = False) -> str:
    """``address:port`` as ``/proc/net/tcp`` writes it: each 32-bit word of the address in
    the kernel's (little-endian) byte order, in hex; ``mapped``: as ``::ffff:<address>`` in
    ``tcp6``."""
    word = socket.inet_aton(address)[::-1].hex().upper()
    prefix = "0000000000000000FFFF0000" if mapped else ""
    return f"{prefix}{word}:{port:04X}"


def _too_large() -> Answer:
    return Answer(json.dumps(TOO_LARGE).encode(), "application/json", True, TOO_LARGE["errorType"])


def _invalid_transition(request_id: str | None) -> dict[str, str]:
    about = f"request {request_id}" if request_id is not None else "init"
    return {
        "errorMessage": f"State transition is not allowed: {about} is not awaiting an answer",
        "errorType": "InvalidStateTransition",
    }
