"""A function the local cloud runs, and what the Lambda service does around every
invocation, whichever way the handler runs.

:class:`Function` is the service side, the same for both kinds of execution environment:
in-process, one invocation at a time in the process (the environment variables are
process-wide, so in-process functions behave like reserved concurrency 1), a new log
stream per execution environment, the ``START``, ``END`` and ``REPORT`` lines (``Init
Duration`` on a cold start), a timeout (``Sandbox.Timedout``), the lines delivered to the
function's log group (cut at ``\\n`` only), and every invocation handed to the listeners
(the live view's history). A subclass runs the handler:
:class:`~localcloud.services.lambda_.runtime.inprocess.InProcessFunction` in this process
(through :mod:`~localcloud.services.lambda_.runtime.contract`),
:class:`~localcloud.services.lambda_.runtime.environments.ProcessFunction` in execution
environments of its own (awslambdaric itself, fed by the Runtime API).
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar

from localcloud.services.lambda_.runtime import contract
from localcloud.services.lambda_.runtime.output import EnvironmentOutput
from localcloud.services.lambda_.runtime.payloads import (
    RESPONSE_LIMIT,
    RESPONSE_TOO_LARGE,
    event_body,
)

INVOCATION_LOCK = threading.RLock()
"""One invocation at a time in this process (see the module docstring)."""

LogSink = Callable[[str, str, list[tuple[int, str]]], None]
"""(log group, log stream, [(timestamp ms, message)]) → delivered."""


@dataclass(frozen=True)
class Invocation:
    """One invocation's outcome, as the invoker receives it.

    ``body`` is what the runtime posted (the response JSON, the raw bytes of a ``bytes``
    result, or the error envelope's JSON); ``payload`` is that read back (the JSON value,
    or the bytes); ``error`` means ``X-Amz-Function-Error: Unhandled``.
    """

    function_name: str
    request_id: str
    payload: Any
    error: bool
    log_lines: list[str]
    duration_ms: float
    body: bytes = b""
    init_ms: float | None = None

    @property
    def error_type(self) -> str | None:
        if not self.error or not isinstance(self.payload, dict):
            return None
        error_type = self.payload.get("errorType")
        return error_type if isinstance(error_type, str) else None

    def payload_bytes(self) -> bytes:
        """The invoke response body."""
        return self.body


@dataclass(frozen=True)
class Ran:
    """What an execution environment reports of one invocation: the runtime's outcome
    (or an error envelope of the init, the exit or the timeout), what the environment
    wrote, how long the init took on a cold start, and whether the environment is gone
    (a failed init, an exit, a timeout: the next invocation starts a new one)."""

    outcome: contract.Outcome
    output: str
    init_ms: float | None = None
    timed_out: bool = False
    gone: bool = False


class Throttled(Exception):
    """The invocation was not run: the concurrency it needs is in use (the Lambda API's
    429 ``TooManyRequestsException``, "Rate Exceeded."). ``reason`` is the API's
    ``Reason``: ``ReservedFunctionConcurrentInvocationLimitExceeded`` (the function's
    reserved concurrency) or ``ConcurrentInvocationLimitExceeded`` (the account's)."""

    def __init__(self, reason: str) -> None:
        super().__init__(f"Rate Exceeded. ({reason})")
        self.reason = reason


class Deleted(Exception):
    """The function was deleted (or its account stopped) before the invocation ran."""


InvocationListener = Callable[["Function", Any, Invocation], None]
"""(function, event, invocation) → called after every invocation (the live view)."""
LISTENERS: list[InvocationListener] = []


@dataclass(eq=False)
class Function:
    """One function: its configuration, its execution environment, its invocations."""

    ENFORCES_TIMEOUT: ClassVar[bool] = False
    """Whether an invocation is stopped at its timeout (else only reported as timed out)."""

    name: str
    arn: str
    code_uri: Path
    """The task root: ``CodeUri`` of a from-source deploy, or the extracted package."""
    handler: str
    environment: Mapping[str, str]
    timeout_s: int
    memory_mb: int
    log_group: str
    region: str
    log_sink: LogSink | None = None
    output: EnvironmentOutput = field(default_factory=EnvironmentOutput, repr=False)
    invoking: bool = field(default=False, repr=False)
    invocations: int = field(default=0, repr=False)
    log_stream: str = field(default="", repr=False)
    current: tuple[str, Any] | None = field(default=None, repr=False)
    """(request id, event) of the invocation in progress, if any."""
    runtime: str = "python3.13"
    """The function's ``Runtime`` (``python3.x``)."""
    version: str = "$LATEST"
    """The version this is: ``$LATEST``, or a number ``PublishVersion`` gave (its code and
    configuration as they were then): ``AWS_LAMBDA_FUNCTION_VERSION``, the log stream's
    ``[version]`` and the ``START`` line's ``Version:``."""
    reserved_concurrency: int | None = field(default=None, repr=False)
    """``PutFunctionConcurrency``'s reserved concurrency (``None``: unreserved; 0
    throttles every invocation)."""
    successor: Function | None = field(default=None, repr=False)
    """The function that replaced this one (``UpdateFunctionCode``, a redeploy): an
    invocation that reaches this one afterwards runs there, as on Lambda, where every
    invocation after an update runs the new code (an event source mapping may have looked
    the function up before the update and invoke after it)."""

    def invoke(self, event: Any) -> Invocation:
        """Run the handler on ``event`` (one invocation at a time in the process).

        A function that invokes itself from inside an invocation gets another execution
        environment for it, as on Lambda (an environment runs one invocation at a time):
        the outer invocation keeps its output and its state. A function replaced since it
        was looked up hands the invocation to its :attr:`successor`.

        Raises:
            RequestTooLarge: the event is over Lambda's 6 MB synchronous payload quota.
            Throttled: the function's reserved concurrency is 0.
        """
        with INVOCATION_LOCK:
            if self.successor is not None:
                return self.successor.invoke(event)
            if self.reserved_concurrency == 0:
                raise Throttled("ReservedFunctionConcurrentInvocationLimitExceeded")
            if self.invoking:
                sibling = self.sibling()
                try:
                    return sibling.invoke(event)
                finally:
                    sibling._discard()
            return self._invoke_locked(event)

    def sibling(self) -> Function:
        """The same function in a new execution environment of its own."""
        raise NotImplementedError

    def new_execution_environment(self) -> None:
        """Discard the execution environment: the next invocation is a cold start, as on
        Lambda after ``UpdateFunctionConfiguration`` or ``UpdateFunctionCode``. An
        invocation in progress finishes in the old environment first."""
        with INVOCATION_LOCK:
            self._discard()

    def close(self) -> None:
        """The function is deleted: its execution environment goes."""
        self.new_execution_environment()

    def abort(self) -> list[str]:
        """The account stops: every execution environment goes now, an invocation in
        progress included where it can be stopped. The request ids of those stopped."""
        self.close()
        return []

    # --- for the kinds of execution environment ------------------------------------------

    @property
    def warm(self) -> bool:
        """Whether an execution environment exists (the next invocation is warm)."""
        raise NotImplementedError

    def _run(self, event_body: bytes, request_id: str, deadline_ms: int) -> Ran:
        raise NotImplementedError

    def _discard(self) -> None:
        raise NotImplementedError

    def runtime_variables(self, *, traced: bool) -> dict[str, str]:
        """The variables the handler sees (:func:`~localcloud.services.lambda_.runtime.environment.
        runtime_variables`)."""
        from localcloud.services.lambda_.runtime.environment import runtime_variables

        return runtime_variables(
            name=self.name,
            version=self.version,
            memory_mb=self.memory_mb,
            log_group=self.log_group,
            log_stream=self.log_stream,
            region=self.region,
            task_root=str(self.code_uri),
            handler=self.handler,
            own=self.environment,
            traced=traced,
        )

    # --- the service side ----------------------------------------------------------------

    def _invoke_locked(self, event: Any) -> Invocation:
        body = event_body(event)
        request_id = str(uuid.uuid4())
        started = time.monotonic()
        if not self.warm:
            self.log_stream = f"{datetime.now(UTC):%Y/%m/%d}/[{self.version}]{uuid.uuid4().hex}"
        self.current = (request_id, event)
        try:
            ran = self._run(body, request_id, contract.deadline_ms(self.timeout_s))
        finally:
            self.current = None
        if ran.gone:
            self._discard()
        return self._record(event, request_id, started, ran, self.log_stream)

    def _record(
        self, event: Any, request_id: str, started: float, ran: Ran, log_stream: str
    ) -> Invocation:
        """What the service does once an invocation has run (``started``: its
        ``time.monotonic()``): the log lines delivered to ``log_stream``, the listeners
        told, the invoker's :class:`Invocation`."""
        duration_ms = (time.monotonic() - started) * 1000 - (ran.init_ms or 0.0)
        outcome = ran.outcome
        if not outcome.error and len(outcome.body) > RESPONSE_LIMIT:
            # what the Runtime API refuses of an environment's runtime, in-process too
            outcome = contract.error_outcome(dict(RESPONSE_TOO_LARGE))
        lines = [contract.start_line(request_id, self.version), *contract.log_lines(ran.output)]
        if ran.timed_out or (not self.ENFORCES_TIMEOUT and duration_ms > self.timeout_s * 1000):
            # In-process the timeout is reported, not enforced (a thread cannot be
            # stopped): the invocation failed, whatever the handler returned.
            if not self.ENFORCES_TIMEOUT:
                envelope = contract.timeout_error(request_id, self.timeout_s)
                outcome = contract.error_outcome(envelope)
            lines.append(contract.timeout_line(request_id, self.timeout_s))
        lines += [
            contract.end_line(request_id),
            contract.report_line(request_id, duration_ms, self.memory_mb, ran.init_ms),
        ]
        self.invocations += 1
        if self.log_sink is not None:
            now = int(time.time() * 1000)
            self.log_sink(self.log_group, log_stream, [(now, x) for x in lines if x.strip()])
        invocation = Invocation(
            function_name=self.name,
            request_id=request_id,
            payload=outcome.payload(),
            error=outcome.error,
            log_lines=lines,
            duration_ms=duration_ms,
            body=outcome.body,
            init_ms=ran.init_ms,
        )
        for listener in list(LISTENERS):
            listener(self, event, invocation)
        return invocation


def timed_out(invocation: Invocation, function: Function) -> Invocation:
    """``invocation`` as if it had outlived the function's timeout: its effects stay, its
    result becomes the service's ``Sandbox.Timedout`` error (for fault injection)."""
    envelope = contract.timeout_error(invocation.request_id, function.timeout_s)
    return Invocation(
        function_name=invocation.function_name,
        request_id=invocation.request_id,
        payload=envelope,
        error=True,
        log_lines=invocation.log_lines,
        duration_ms=invocation.duration_ms,
        body=json.dumps(envelope).encode(),
        init_ms=invocation.init_ms,
    )
