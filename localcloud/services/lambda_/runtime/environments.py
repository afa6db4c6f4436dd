"""A function's execution environments as Lambda keeps them: as many as its invocations
overlap, each a process tree fed through the Runtime API
(:mod:`~localcloud.services.lambda_.runtime.execution_environment`).

Used for every function deployed from a zip (``sam deploy``, ``aws lambda
create-function`` and ``update-function-code``), and for a from-source one in a served
account. What the service does, as the Lambda Developer Guide describes it ("Lambda
function scaling", "Lambda execution environment lifecycle"):

- an environment runs one invocation at a time and is reused while warm; an invocation
  that finds none idle gets a new one, up to the function's reserved concurrency
  (``PutFunctionConcurrency``, counted over every version of the function; 0 throttles
  every invocation) and the account's concurrency (:data:`ACCOUNT_CONCURRENCY`, a local
  default; Lambda's is 1,000), else it is throttled (:class:`Throttled`, the API's 429
  ``TooManyRequestsException``);
- a code or configuration change retires every environment: those running finish their
  invocation first, in the code they started with; the next invocation gets a new one;
- an environment idle for :data:`IDLE_LIMIT_S` is reaped; one that ends before its
  runtime fetched the invocation hands it to another (no code saw it).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Final

from localcloud.services.lambda_.runtime import runtime_api
from localcloud.services.lambda_.runtime.execution_environment import (
    ExecutionEnvironment,
    Unstarted,
    exit_ran,
)
from localcloud.services.lambda_.runtime.functions import (
    Deleted,
    Function,
    Invocation,
    Ran,
    Throttled,
)
from localcloud.services.lambda_.runtime.payloads import event_body

ACCOUNT_CONCURRENCY: Final = int(os.environ.get("LOCALCLOUD_LAMBDA_CONCURRENCY") or 64)
"""The local account's concurrency: environments running at once, all functions together;
64 unless ``LOCALCLOUD_LAMBDA_CONCURRENCY`` says otherwise when the local cloud starts.
Lambda's default quota is 1,000; each local environment is two processes (about 40 MB)."""
ABORT_WAIT_S: Final = 2.0
"""How long stopping the account waits for the invocations it ended to be answered."""
IDLE_LIMIT_S: Final = 300.0
"""How long an idle environment is kept (seconds): Lambda keeps them for minutes, without
a documented figure."""

_BUSY_LOCK = threading.Lock()
_busy_in_account = 0
_BUSY_BY_NAME: dict[str, int] = {}


def _take_slots(name: str, reserved: int | None) -> bool:
    """One more environment busy for ``name`` and the account, if both have room: the
    function's reserved concurrency counts every version of it (an update's old and new
    code together), as on Lambda."""
    global _busy_in_account
    with _BUSY_LOCK:
        busy = _BUSY_BY_NAME.get(name, 0)
        if reserved is not None and busy >= reserved:
            return False
        if _busy_in_account >= ACCOUNT_CONCURRENCY:
            return False
        _busy_in_account += 1
        _BUSY_BY_NAME[name] = busy + 1
        return True


def _last_refusal(name: str, reserved: int | None) -> str:
    """The throttle's ``Reason`` for a refused :func:`_take_slots`."""
    with _BUSY_LOCK:
        if reserved is not None and _BUSY_BY_NAME.get(name, 0) >= reserved:
            return "ReservedFunctionConcurrentInvocationLimitExceeded"
    return "ConcurrentInvocationLimitExceeded"


def _give_slots(name: str) -> None:
    global _busy_in_account
    with _BUSY_LOCK:
        _busy_in_account -= 1
        left = _BUSY_BY_NAME.get(name, 1) - 1
        if left > 0:
            _BUSY_BY_NAME[name] = left
        else:
            _BUSY_BY_NAME.pop(name, None)


@dataclass(eq=False)
class ProcessFunction(Function):
    """A function run from its extracted deployment package, in execution environments of
    its own (see the module docstring)."""

    ENFORCES_TIMEOUT: ClassVar[bool] = True
    extra_paths: tuple[str, ...] = ()
    """Folders after the runtime's on ``sys.path`` (a from-source function's
    dependencies: this environment's site-packages)."""
    owns_code: bool = True
    """Whether the task root is the local cloud's to remove (an extracted package)."""
    layer_paths: tuple[str, ...] = ()
    """The layers' Python folders, on ``sys.path`` after the task root and before the
    runtime's (:func:`~localcloud.services.lambda_.runtime.packages.layer_paths`)."""
    layers_root: Path | None = None
    """The folder the layers were unzipped into (Lambda's ``/opt``), removed with the code."""
    _idle: list[ExecutionEnvironment] = field(default_factory=list, repr=False)
    _busy: dict[ExecutionEnvironment, tuple[str, Any]] = field(default_factory=dict, repr=False)
    _pool_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _closed: bool = field(default=False, repr=False)
    _generation: int = field(default=0, repr=False)
    """Bumped by a configuration change: an environment of an older generation is retired
    when its invocation ends, never reused."""

    @property
    def warm(self) -> bool:
        with self._pool_lock:
            return any(not environment.gone for environment in self._idle)

    def environments(self) -> int:
        """How many execution environments the function has now (idle and busy)."""
        with self._pool_lock:
            return len([e for e in self._idle if not e.gone]) + len(self._busy)

    def invoke(self, event: Any) -> Invocation:
        """Run the handler on ``event`` in an idle environment, or a new one.

        Raises:
            RequestTooLarge: the event is over Lambda's 6 MB synchronous payload quota.
            Throttled: the function's reserved concurrency, or the account's, is in use.
            Deleted: the function was deleted (or replaced, with no successor) meanwhile.
        """
        if self.successor is not None:
            return self.successor.invoke(event)
        body = event_body(event)
        request_id = str(uuid.uuid4())
        started = time.monotonic()
        attempts = 0
        while True:
            attempts += 1
            environment = self._acquire(request_id, event)
            ran: Ran | None = None
            try:
                ran = environment.run(body, request_id, float(self.timeout_s), trace_id())
            except Unstarted:
                if attempts == 3:  # three environments ended unused: say so
                    ran = exit_ran(request_id, environment.exit_status)
            finally:
                self._release(environment)
            if ran is not None:
                return self._record(event, request_id, started, ran, environment.log_stream)

    def _acquire(self, request_id: str, event: Any) -> ExecutionEnvironment:
        with self._pool_lock:
            if self._closed:
                raise Deleted(self.name)
            if not _take_slots(self.name, self.reserved_concurrency):
                raise Throttled(_last_refusal(self.name, self.reserved_concurrency))
            while self._idle:
                environment = self._idle.pop()
                if not environment.gone:
                    break
            else:
                environment = ExecutionEnvironment(self)
                environment.generation = self._generation
            self._busy[environment] = (request_id, event)
            self.current = next(iter(self._busy.values())) if len(self._busy) == 1 else None
        return environment

    def _release(self, environment: ExecutionEnvironment) -> None:
        with self._pool_lock:
            self._busy.pop(environment, None)
            self.current = next(iter(self._busy.values())) if len(self._busy) == 1 else None
            keep = (
                not environment.gone
                and not self._closed
                and environment.generation == self._generation
            )
            if keep:
                environment.idle_since = time.monotonic()
                self._idle.append(environment)
            remove = self._closed and not self._busy
        _give_slots(self.name)
        if not keep:
            environment.retire()
        else:
            reap = weakref.WeakMethod(self._reap_idle)
            runtime_api.loop().call_soon_threadsafe(
                lambda: asyncio.get_running_loop().call_later(IDLE_LIMIT_S + 0.1, _call, reap)
            )
        if remove:
            self._remove_code()

    def _reap_idle(self) -> None:
        now = time.monotonic()
        with self._pool_lock:
            stale = [e for e in self._idle if now - e.idle_since >= IDLE_LIMIT_S]
            self._idle = [e for e in self._idle if e not in stale]
        for environment in stale:
            environment.retire()

    def _discard(self) -> None:
        """Retire every idle environment; a busy one is retired when its invocation ends."""
        with self._pool_lock:
            idle, self._idle = self._idle, []
            self._generation += 1
        for environment in idle:
            environment.retire()

    def new_execution_environment(self) -> None:
        """A configuration change: the next invocation, and every later one, runs in a new
        environment (those running finish in theirs)."""
        self._discard()

    def abort(self) -> list[str]:
        """Retire every environment now, busy ones included: their invocations end with
        ``Runtime.ExitError`` (the request ids returned)."""
        with self._pool_lock:
            self._closed = True
            busy = dict(self._busy)
        self._discard()
        for environment in busy:
            environment.retire()
        deadline = time.monotonic() + ABORT_WAIT_S
        while time.monotonic() < deadline:  # their callers get their error answers first
            with self._pool_lock:
                if not self._busy:
                    break
            time.sleep(0.01)
        self._remove_code()
        return [request_id for request_id, _ in busy.values()]

    def close(self) -> None:
        """The function is deleted or replaced: idle environments retire now, busy ones
        when their invocation ends (in the code they started with, as on Lambda), and the
        extracted package goes once none runs."""
        with self._pool_lock:
            self._closed = True
            remove = not self._busy
        self._discard()
        if remove:
            self._remove_code()

    def _remove_code(self) -> None:
        if self.owns_code:
            shutil.rmtree(self.code_uri, ignore_errors=True)
        if self.layers_root is not None:
            shutil.rmtree(self.layers_root, ignore_errors=True)

    def _run(self, event_body: bytes, request_id: str, deadline_ms: int) -> Ran:
        raise NotImplementedError("a process function runs through invoke()")


def _call(method: weakref.WeakMethod[Any]) -> None:
    """Call ``method`` unless its object is gone (an idle timer keeps no function alive)."""
    bound = method()
    if bound is not None:
        bound()


def trace_id() -> str:
    """A new X-Ray trace header, as Lambda hands it in ``Lambda-Runtime-Trace-Id``."""
    return f"Root=1-{uuid.uuid4().hex[:8]}-{uuid.uuid4().hex[:24]};Sampled=0"
