"""Execution environments as Lambda keeps them: a process tree each, fed through the
Runtime API, as many per function as invocations overlap.

Used for every function deployed from a zip (``sam deploy``, ``aws lambda
create-function`` and ``update-function-code``): the zip must be all the function sees. An
environment is a supervisor process
(:mod:`~localcloud.services.lambda_.runtime.supervisor_main`) and the runtime it starts,
awslambdaric's own client in an interpreter that sees only the task root, the runtime
folder (Lambda's ``/var/runtime``: boto3, botocore and their dependencies, awslambdaric)
and the standard library, in the CPython of the function's runtime where the machine has
it (:mod:`~localcloud.services.lambda_.runtime.interpreters`), so a packaging mistake
fails as ``Runtime.ImportModuleError``, as on Lambda. The runtime fetches its invocations
from an :class:`~localcloud.services.lambda_.runtime.runtime_api.Endpoint` of its own.

What the service does, as the Lambda Developer Guide describes it ("Lambda execution
environment lifecycle", "Lambda function scaling"):

- an environment runs one invocation at a time and is reused while warm; an invocation
  that finds none idle gets a new one, up to the function's reserved concurrency
  (``PutFunctionConcurrency``; 0 throttles every invocation) and the account's
  concurrency (:data:`ACCOUNT_CONCURRENCY`, a local default; Lambda's is 1,000), else it
  is throttled (:class:`Throttled`, the API's 429 ``TooManyRequestsException``);
- the init phase (module scope, up to the first ``next``) may take up to
  :data:`INIT_LIMIT_S`; the invocation's own clock starts when the runtime fetches it,
  and at the function's ``Timeout`` the environment and every process it started are
  killed, the invocation fails with ``Sandbox.Timedout`` ("Task timed out after N.NN
  seconds") and the next one gets a new environment;
- a runtime that exits mid-invocation fails it with ``Runtime.ExitError``;
- an environment idle for :data:`IDLE_LIMIT_S` is reaped; a code or configuration change
  retires every environment (those running finish first);
- every byte the environment's processes write to stdout or stderr is the function's log
  stream, and belongs to the invocation whose answer follows it (Lambda's rule: a line
  written between invocations comes out with the next).
"""

from __future__ import annotations

import asyncio
import codecs
import concurrent.futures
import contextlib
import fcntl
import json
import os
import shutil
import signal
import sys
import threading
import time
import uuid
import weakref
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Final

from localcloud.services.lambda_.runtime import contract, runtime_api
from localcloud.services.lambda_.runtime.functions import (
    Deleted,
    Function,
    Invocation,
    Ran,
    Throttled,
)
from localcloud.services.lambda_.runtime.interpreters import interpreter_for
from localcloud.services.lambda_.runtime.output import EnvironmentOutput

SUPERVISOR: Final = Path(__file__).with_name("supervisor_main.py")
ACCOUNT_CONCURRENCY: Final = int(os.environ.get("LOCALCLOUD_LAMBDA_CONCURRENCY") or 64)
"""The local account's concurrency: environments running at once, all functions together;
64 unless ``LOCALCLOUD_LAMBDA_CONCURRENCY`` says otherwise when the local cloud starts.
Lambda's default quota is 1,000; each local environment is two processes (about 40 MB)."""
INIT_LIMIT_S: Final = 10.0
"""Lambda's limit on the init phase of an on-demand environment (seconds)."""
ABORT_WAIT_S: Final = 2.0
"""How long stopping the account waits for the invocations it ended to be answered."""
IDLE_LIMIT_S: Final = 300.0
"""How long an idle environment is kept (seconds): Lambda keeps them for minutes, without
a documented figure."""
_UNSET_VARIABLES: Final = frozenset({"AWS_LAMBDA_MAX_CONCURRENCY"})
"""Never handed to the runtime: it switches awslambdaric 4.2 into its multi-concurrency
mode (Lambda Managed Instances), which one-at-a-time environments do not have."""

_BUSY_LOCK = threading.Lock()
_busy_in_account = 0
_BUSY_BY_NAME: dict[str, int] = {}


@dataclass
class _Pending:
    """One invocation on its way through an environment (event loop side)."""

    work: runtime_api.Work
    timeout_s: float
    done: concurrent.futures.Future[Ran]
    fetched: bool = False
    answer: runtime_api.Answer | None = None


class ExecutionEnvironment:
    """One execution environment: a supervised process tree and its Runtime API endpoint.

    Lives on the Runtime API's event loop; the invoking threads reach it through
    :meth:`run` and :meth:`retire`."""

    def __init__(self, function: ProcessFunction) -> None:
        self.function = function
        self.log_stream = f"{time.strftime('%Y/%m/%d', time.gmtime())}/[$LATEST]{uuid.uuid4().hex}"
        self.output = EnvironmentOutput()
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self.gone = False
        self.idle_since = time.monotonic()
        self.generation = 0
        self._endpoint = runtime_api.Endpoint(self)
        self._process: asyncio.subprocess.Process | None = None
        self._log_fd = -1
        self._started = 0.0
        self._init_ms: float | None = None
        self._init_reported = False
        self._init_error: runtime_api.Answer | None = None
        self._pending: _Pending | None = None
        self._queue: asyncio.Queue[_Pending] = asyncio.Queue()
        self._answered: set[str] = set()
        self._timer: asyncio.TimerHandle | None = None
        self._exited = asyncio.Event()
        self._exit_status: int | None = None

    @property
    def exit_status(self) -> int | None:
        """The supervisor's exit status, once it has exited."""
        return self._exit_status

    # --- from the invoking thread --------------------------------------------------------

    def run(self, event_body: bytes, request_id: str, timeout_s: float, trace_id: str) -> Ran:
        """Run one invocation here and wait for its end (an answer, a timeout, an exit).

        ``timeout_s`` is the function's ``Timeout``; the deadline handed to the runtime
        is that many seconds after it fetches the invocation."""
        done: concurrent.futures.Future[Ran] = concurrent.futures.Future()
        work = runtime_api.Work(request_id, event_body, self.function.arn, 0, trace_id)
        pending = _Pending(work, timeout_s, done)
        runtime_api.loop().call_soon_threadsafe(self._submit, pending)
        try:  # the loop ends it (an answer, an exit, the timeout's kill); this guards a bug,
            # or a process tree that takes longer than this to kill
            return done.result(timeout=INIT_LIMIT_S + timeout_s + 30)
        except concurrent.futures.TimeoutError:
            self.retire()
            envelope = contract.timeout_error(request_id, timeout_s)
            return Ran(contract.error_outcome(envelope), "", timed_out=True, gone=True)

    def retire(self) -> None:
        """End the environment (its process tree killed); returns at once."""
        runtime_api.loop().call_soon_threadsafe(self._kill)

    # --- on the event loop ---------------------------------------------------------------

    def _submit(self, pending: _Pending) -> None:
        if self.gone:
            pending.done.set_exception(_Unstarted())
            return
        self._pending = pending
        self._queue.put_nowait(pending)
        if self._process is None:
            asyncio.ensure_future(self._start())
            self._timer = asyncio.get_running_loop().call_later(INIT_LIMIT_S, self._init_timeout)

    async def _start(self) -> None:
        address = await self._endpoint.open()
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        fcntl.fcntl(read_fd, fcntl.F_SETFD, fcntl.FD_CLOEXEC)
        self._log_fd = read_fd
        loop = asyncio.get_running_loop()
        loop.add_reader(read_fd, self._read_logs)
        interpreter, _ = interpreter_for(self.function.runtime)
        base = {k: os.environ[k] for k in ("PATH", "LANG", "TZ") if k in os.environ}
        variables = {
            **base,
            **self.function.runtime_variables(traced=False),
            "AWS_EXECUTION_ENV": f"AWS_Lambda_{interpreter.runs}",
            "AWS_LAMBDA_RUNTIME_API": address,
            "LAMBDA_RUNTIME_DIR": str(interpreter.runtime_dir),
        }
        for name in _UNSET_VARIABLES:
            variables.pop(name, None)
        self._started = time.monotonic()
        try:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-I",
                "-S",
                str(SUPERVISOR),
                str(self.function.code_uri),
                str(interpreter.runtime_dir),
                self.function.handler,
                interpreter.executable,
                *self.function.extra_paths,
                stdin=asyncio.subprocess.PIPE,
                stdout=write_fd,
                stderr=write_fd,
                env=variables,
                start_new_session=True,
            )
        finally:
            os.close(write_fd)
        asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        assert self._process is not None
        status = await self._process.wait()
        self._exit_status = status
        self._read_logs()
        self._ended()

    def _read_logs(self) -> None:
        """Everything the environment's processes wrote so far (non-blocking)."""
        while self._log_fd >= 0:
            try:
                chunk = os.read(self._log_fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                asyncio.get_running_loop().remove_reader(self._log_fd)
                os.close(self._log_fd)
                self._log_fd = -1
                self.output.write(self._decoder.decode(b"", final=True))
                return
            # incrementally: a character cut between two reads is decoded whole
            self.output.write(self._decoder.decode(chunk))

    async def next_work(self) -> runtime_api.Work:
        """``GET …/invocation/next``: the init is over; the invocation's clock starts."""
        pending = await self._queue.get()
        if self._init_ms is None:
            self._init_ms = (time.monotonic() - self._started) * 1000
        self._cancel_timer()
        pending.fetched = True
        pending.work = replace(pending.work, deadline_ms=contract.deadline_ms(pending.timeout_s))
        self._timer = asyncio.get_running_loop().call_later(
            pending.timeout_s, self._time_out, pending
        )
        return pending.work

    def answered(self, request_id: str, answer: runtime_api.Answer) -> bool:
        pending = self._pending
        if (
            pending is None
            or not pending.fetched
            or pending.work.request_id != request_id
            or request_id in self._answered
        ):
            return False
        self._answered.add(request_id)
        self._cancel_timer()
        self._read_logs()
        self._finish(pending, Ran(_outcome(answer), self.output.take(), init_ms=self._take_init()))
        return True

    def process_ids(self) -> set[int]:
        process = self._process
        if process is None:
            return set()
        found: set[int] = set()
        frontier = {process.pid}
        while frontier:
            found |= frontier
            frontier = {child for pid in frontier for child in _children(pid)} - found
        return found

    def requeue(self, work: runtime_api.Work) -> None:
        pending = self._pending
        if pending is None or pending.work.request_id != work.request_id or pending.done.done():
            return
        self._cancel_timer()
        pending.fetched = False
        self._queue.put_nowait(pending)

    def init_failed(self, answer: runtime_api.Answer) -> bool:
        if self._init_error is not None or self._init_ms is not None:
            return False
        self._init_error = answer
        return True  # the runtime exits next (awslambdaric: sys.exit(1)); see _ended

    def _ended(self) -> None:
        """The supervisor exited: the whole process tree is gone."""
        self.gone = True
        self._cancel_timer()
        self._endpoint.close()
        self._exited.set()
        pending = self._pending
        if pending is None or pending.done.done():
            return
        if self._init_ms is not None and not pending.fetched:
            # A warm environment that ended before its runtime fetched the invocation:
            # no code saw it, so it runs in another environment.
            pending.done.set_exception(_Unstarted())
            return
        init_ms = self._take_init() if self._init_ms is not None else self._since_start()
        self._init_reported = True
        if self._init_error is not None:
            ran = Ran(_outcome(self._init_error), self.output.take(), init_ms=init_ms, gone=True)
        else:
            ran = replace(
                _exit_ran(pending.work.request_id, self._exit_status),
                output=self.output.take(),
                init_ms=init_ms,
            )
        self._finish(pending, ran)

    def _time_out(self, pending: _Pending) -> None:
        if pending is not self._pending or pending.done.done():
            return
        asyncio.ensure_future(self._end_timed_out(pending, pending.timeout_s, self._take_init()))

    def _init_timeout(self) -> None:
        pending = self._pending
        if pending is None or pending.fetched or pending.done.done():
            return
        asyncio.ensure_future(self._end_timed_out(pending, INIT_LIMIT_S, self._since_start()))

    async def _end_timed_out(
        self, pending: _Pending, after_s: float, init_ms: float | None
    ) -> None:
        """Kill the tree and wait until it is gone, then fail the invocation."""
        self._pending = None  # an exit now is the timeout's, not Runtime.ExitError
        self._kill()
        await self._exited.wait()
        envelope = contract.timeout_error(pending.work.request_id, after_s)
        ran = Ran(
            contract.error_outcome(envelope),
            self.output.take(),
            init_ms=init_ms,
            timed_out=True,
            gone=True,
        )
        if not pending.done.done():
            pending.done.set_result(ran)

    def _kill(self) -> None:
        self.gone = True
        process = self._process
        if process is None:
            if not self._exited.is_set():
                self._endpoint.close()
                self._exited.set()
            return
        if process.stdin is not None and not process.stdin.is_closing():
            with contextlib.suppress(ConnectionError, RuntimeError):
                process.stdin.write(b"x")
                process.stdin.close()

    def _finish(self, pending: _Pending, ran: Ran) -> None:
        self._pending = None
        if not pending.done.done():
            pending.done.set_result(ran)

    def _take_init(self) -> float | None:
        """The init duration, for the first invocation only (its ``Init Duration``)."""
        if self._init_reported:
            return None
        self._init_reported = True
        return self._init_ms

    def _since_start(self) -> float:
        return (time.monotonic() - self._started) * 1000 if self._started else 0.0

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _children(pid: int) -> set[int]:
    """The children of ``pid``, as ``/proc/<pid>/task/*/children`` list them."""
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as listed:
                found.update(int(child) for child in listed.read().split())
        except OSError:
            continue
    return found


class _Unstarted(Exception):
    """The environment ended before its runtime fetched the invocation."""


def _outcome(answer: runtime_api.Answer) -> contract.Outcome:
    if not answer.error:
        return contract.Outcome(answer.body, answer.content_type, False)
    return contract.Outcome(answer.body, "application/json", True)


def _exit_ran(request_id: str, status: int | None) -> Ran:
    signum = status - 128 if status is not None and status > 128 else None
    if status is not None and status < 0:  # the supervisor itself was killed
        signum = -status
    if signum is not None:
        described = f"signal: {(signal.strsignal(signum) or str(signum)).lower()}"
    else:
        described = f"exit status {status}"
    envelope = {
        "errorMessage": f"RequestId: {request_id} Error: Runtime exited with error: {described}",
        "errorType": "Runtime.ExitError",
    }
    return Ran(contract.error_outcome(envelope), "", gone=True)


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
            Throttled: the function's reserved concurrency, or the account's, is in use.
            Deleted: the function was deleted (or replaced, with no successor) meanwhile.
        """
        if self.successor is not None:
            return self.successor.invoke(event)
        request_id = str(uuid.uuid4())
        started = time.monotonic()
        body = json.dumps(event).encode()
        attempts = 0
        while True:
            attempts += 1
            environment = self._acquire(request_id, event)
            ran: Ran | None = None
            try:
                ran = environment.run(body, request_id, float(self.timeout_s), trace_id())
            except _Unstarted:
                if attempts == 3:  # three environments ended unused: say so
                    ran = _exit_ran(request_id, environment.exit_status)
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
