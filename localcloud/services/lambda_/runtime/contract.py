"""The Lambda Python runtime's contract, taken from the runtime's own client library.

``awslambdaric`` is the runtime interface client that the ``python3.13`` managed runtime
runs (PyPI ``awslambdaric``; the same code is under ``/var/runtime`` on Lambda). This
module calls it rather than copying its rules, so that a function run in-process
(:mod:`~localcloud.services.lambda_.runtime.inprocess`) answers the same JSON, the same
error envelope and the same log lines as in an execution environment of its own
(:mod:`~localcloud.services.lambda_.runtime.environments`), where awslambdaric's own
``bootstrap.run`` runs it against the Runtime API.

========================  ================================================================
rule                      awslambdaric's code that applies it
========================  ================================================================
loading the handler       ``bootstrap._get_handler``: ``Runtime.MalformedHandlerName``,
                          ``Runtime.BuiltInModuleConflict``, ``Runtime.ImportModuleError``,
                          ``Runtime.UserCodeSyntaxError``, ``Runtime.HandlerNotFound``; any
                          other error at import keeps its own class name
                          (``bootstrap.build_fault_result``)
one invocation            ``bootstrap.handle_event_request``: the event unmarshalled, the
                          handler called, the result marshalled by ``LambdaMarshaller``
                          (``Decimal`` as its number, ``bytes`` as they are, a set or an
                          object ``Runtime.MarshalError``), an exception's envelope
                          ``{errorMessage, errorType, requestId, stackTrace}`` with the
                          unqualified class name, its ``[ERROR]`` log line
                          (``bootstrap.log_error`` through a ``StandardLogSink``)
the context object        ``lambda_context.LambdaContext`` (read from the environment the
                          invocation runs in, the deadline in epoch milliseconds)
========================  ================================================================

What the Lambda *service* adds around the runtime is here too, the same for both: the
``START``, ``END`` and ``REPORT`` lines, a timeout (``Sandbox.Timedout``, "Task timed out
after N seconds") and a runtime that exits (``Runtime.ExitError``). Log events are cut
at ``\\n`` only, and a line past a log event's size into several (:func:`log_lines`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from awslambdaric import bootstrap  # type: ignore[import-untyped]
from awslambdaric.lambda_runtime_exception import FaultException  # type: ignore[import-untyped]
from awslambdaric.lambda_runtime_marshaller import LambdaMarshaller  # type: ignore[import-untyped]

from localcloud.services.lambda_.runtime.output import split_at, utf8_size

Handler = Callable[[Any, Any], Any]
LOG_EVENT_BYTES: Final = 1_048_550
"""The longest log event Lambda writes (UTF-8 bytes): CloudWatch Logs takes an event of at
most 1 MB, counted with its 26 bytes of overhead (PutLogEvents: "Each log event can be no
larger than 1 MB", a batch "the sum of all event messages in UTF-8, plus 26 bytes for each
log event"); Lambda cuts a longer line into several events (observed at 262,118 bytes when
the event quota was 256 KB)."""

__all__ = [
    "FaultException",
    "Handler",
    "Outcome",
    "end_line",
    "exit_error",
    "init_error",
    "Step",
    "error_outcome",
    "exit_status",
    "invoke",
    "load_handler",
    "run",
    "setup_logging",
    "log_lines",
    "report_line",
    "start_line",
    "timeout_error",
    "timeout_line",
    "deadline_ms",
]


@dataclass(frozen=True)
class Outcome:
    """What the runtime posted for one invocation: the response body and its content type
    (``application/json``, or ``application/unknown`` for a ``bytes`` result), or the
    error envelope (``error`` true; ``body`` is its JSON)."""

    body: bytes
    content_type: str
    error: bool

    def payload(self) -> Any:
        """The invoker's view: the JSON read back, or the bytes of a non-JSON response."""
        if self.content_type != "application/json":
            return self.body
        try:
            return json.loads(self.body)
        except ValueError:  # a runtime may post anything: the invoker gets the bytes
            return self.body


class _RuntimeClient:
    """The runtime API as ``handle_event_request`` posts to it: one invocation's result.

    The marshaller is made per invocation, in the invocation's environment: awslambdaric's
    encoder reads ``AWS_EXECUTION_ENV`` when it is made (``ensure_ascii=False`` on
    ``AWS_Lambda_python3.13``)."""

    def __init__(self) -> None:
        self.marshaller = LambdaMarshaller()
        self.outcome: Outcome | None = None

    def post_invocation_result(
        self, invoke_id: str, result: Any, content_type: str = "application/json", *_: Any
    ) -> None:
        body = result if isinstance(result, bytes) else str(result).encode("utf-8")
        self.outcome = Outcome(body, content_type, error=False)

    def post_invocation_error(
        self, invoke_id: str, error_response: str, xray_fault: str, *_: Any
    ) -> None:
        self.outcome = Outcome(error_response.encode("utf-8"), "application/json", error=True)


def load_handler(name: str) -> Handler:
    """The handler ``name`` (``module.function``) names, imported as the runtime imports it.

    Raises:
        FaultException: the runtime's own error (its ``exception_type`` and ``msg``).
        Exception: anything else the module raised at import, unchanged.
    """
    handler: Handler = bootstrap._get_handler(name)
    return handler


def setup_logging() -> None:
    """The root logger as ``bootstrap.run`` sets it up in an execution environment of its
    own (``[LEVEL]\ttimestamp\trequest id\tmessage`` lines, or JSON with
    ``AWS_LAMBDA_LOG_FORMAT=JSON``). Not in-process: it would take over the host's logging."""
    bootstrap._setup_logging(
        bootstrap._AWS_LAMBDA_LOG_FORMAT,
        bootstrap._AWS_LAMBDA_LOG_LEVEL,
        bootstrap.StandardLogSink(),
    )


def init_error(exc: BaseException, request_id: str) -> dict[str, Any]:
    """The error envelope of a failed init, as ``bootstrap.run`` builds it (a
    ``FaultException`` under its runtime name, anything else under its class name with
    the stack trace of its frames), carrying the invocation's request id, and its
    ``[ERROR]`` line written to ``sys.stdout``."""
    if isinstance(exc, FaultException):
        envelope: dict[str, Any] = bootstrap.make_error(exc.msg, exc.exception_type, exc.trace)
    else:
        # On Lambda the caller is bootstrap.run, whose frames build_fault_result drops;
        # here the callers are the local cloud's: start from the runtime's own frame.
        trace = exc.__traceback__
        while trace is not None and not trace.tb_frame.f_code.co_filename.endswith("/bootstrap.py"):
            trace = trace.tb_next
        envelope = bootstrap.build_fault_result((type(exc), exc, trace or exc.__traceback__), None)
    envelope["requestId"] = request_id
    bootstrap.log_error(envelope, bootstrap.StandardLogSink())
    return envelope


def invoke(
    handler: Handler,
    event_body: bytes,
    *,
    request_id: str,
    function_arn: str,
    deadline_ms: int,
) -> Outcome:
    """Run one invocation as the runtime does (``bootstrap.handle_event_request``): the
    event JSON unmarshalled, the handler called with awslambdaric's ``LambdaContext``,
    the result marshalled, or the error envelope and its ``[ERROR]`` line.

    Args:
        event_body: the event as the invoker sent it (JSON bytes).
        deadline_ms: the invocation's deadline, epoch milliseconds.

    Raises:
        SystemExit: the handler exited (the caller reports :func:`exit_error`); the
            runtime does not catch it either.
    """
    client = _RuntimeClient()
    bootstrap._GLOBAL_AWS_REQUEST_ID = request_id  # as bootstrap.run sets it per invocation
    bootstrap.handle_event_request(
        client,
        handler,
        request_id,
        event_body,
        "application/json",
        None,
        None,
        function_arn,
        deadline_ms,
        None,
        bootstrap.StandardLogSink(),
    )
    assert client.outcome is not None, "handle_event_request posts a result or an error"
    return client.outcome


@dataclass(frozen=True)
class Step:
    """One invocation as the runtime's bootstrap ran it: the outcome, the handler to keep
    for the next invocation (``None``: none loaded, or the environment ended), the init
    duration of a cold start (milliseconds), and whether the environment ended (an init
    error, or ``sys.exit``)."""

    outcome: Outcome
    handler: Handler | None
    init_ms: float | None
    exiting: bool


def run(
    handler: Handler | None,
    load: Callable[[], Handler],
    event_body: bytes,
    *,
    request_id: str,
    function_arn: str,
    deadline_ms: int,
) -> Step:
    """One invocation in an execution environment, in-process or in a worker: on a cold
    start (``handler`` is ``None``) ``load`` imports the handler, and an init error or
    ``sys.exit`` ends the environment (``Runtime.ExitError`` / the init error envelope,
    as ``bootstrap.run`` reports them); then :func:`invoke`, where ``sys.exit`` ends the
    environment too (the runtime does not catch it)."""
    init_ms: float | None = None
    if handler is None:
        started = time.monotonic()
        try:
            handler = load()
        except SystemExit as exc:
            envelope = exit_error(request_id, exit_status(exc))
            return Step(error_outcome(envelope), None, _since(started), True)
        except Exception as exc:  # noqa: BLE001 - the runtime reports every init error
            return Step(error_outcome(init_error(exc, request_id)), None, _since(started), True)
        init_ms = _since(started)
    try:
        outcome = invoke(
            handler,
            event_body,
            request_id=request_id,
            function_arn=function_arn,
            deadline_ms=deadline_ms,
        )
    except SystemExit as exc:
        return Step(error_outcome(exit_error(request_id, exit_status(exc))), None, init_ms, True)
    return Step(outcome, handler, init_ms, False)


def _since(started: float) -> float:
    return (time.monotonic() - started) * 1000


def error_outcome(envelope: dict[str, Any]) -> Outcome:
    """An error envelope as the runtime posts it."""
    return Outcome(json.dumps(envelope).encode(), "application/json", True)


def exit_status(exc: SystemExit) -> int:
    """The process exit status ``sys.exit`` asks for."""
    if exc.code is None:
        return 0
    return exc.code if isinstance(exc.code, int) else 1


def exit_error(request_id: str, status: object) -> dict[str, Any]:
    """``Runtime.ExitError``: the runtime process exited during the invocation (the
    handler called ``sys.exit``), as the service reports it."""
    return {
        "errorMessage": f"RequestId: {request_id} Error: Runtime exited with error: exit "
        f"status {status}",
        "errorType": "Runtime.ExitError",
    }


def timeout_error(request_id: str, timeout_s: float) -> dict[str, Any]:
    """The service's error for an invocation that outlived the function's timeout."""
    return {
        "errorMessage": f"RequestId: {request_id} Error: Task timed out after {timeout_s:.2f} "
        "seconds",
        "errorType": "Sandbox.Timedout",
    }


def timeout_line(request_id: str, timeout_s: float) -> str:
    """The log line the service writes for a timed-out invocation."""
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    return f"{stamp}Z {request_id} Task timed out after {timeout_s:.2f} seconds"


def start_line(request_id: str, version: str = "$LATEST") -> str:
    """The ``START`` line of an invocation of ``version`` (``$LATEST`` or a number)."""
    return f"START RequestId: {request_id} Version: {version}"


def end_line(request_id: str) -> str:
    return f"END RequestId: {request_id}"


def report_line(
    request_id: str, duration_ms: float, memory_mb: int, init_ms: float | None = None
) -> str:
    """The service's ``REPORT`` line (tab separated); ``Init Duration`` on a cold start."""
    line = (
        f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
        f"Billed Duration: {max(1, int(-(-duration_ms // 1)))} ms\tMemory Size: {memory_mb} MB"
    )
    if init_ms is not None:
        line += f"\tInit Duration: {init_ms:.2f} ms"
    return line


def log_lines(text: str) -> list[str]:
    """A function's output as Lambda cuts it into log events: at ``\\n`` only, and a line
    longer than a log event can be (:data:`LOG_EVENT_BYTES`) into several.

    Not ``str.splitlines``, which also cuts at ``\\r``, ``\\v``, ``\\f``, ``\\x1c``–``\\x1e``,
    ``\\x85``, ``\\u2028`` and ``\\u2029``: Powertools writes JSON with
    ``ensure_ascii=False``, so a logged value holding one of them would cut its JSON
    line in two; and the runtime joins the lines of one ``[ERROR]`` entry with ``\\r``."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    events: list[str] = []
    for line in lines:
        while len(line) > LOG_EVENT_BYTES // 4 and utf8_size(line) > LOG_EVENT_BYTES:
            piece, line = split_at(line, LOG_EVENT_BYTES)
            events.append(piece)
        events.append(line)
    return events


def deadline_ms(timeout_s: float) -> int:
    """The epoch-millisecond deadline of an invocation starting now."""
    return int((time.time() + timeout_s) * 1000)
