"""One execution environment: a supervised process tree, and the Runtime API endpoint its
runtime fetches its invocations from (Lambda Developer Guide, "Lambda execution
environment lifecycle").

An environment is a supervisor process (:mod:`~localcloud.services.lambda_.runtime.
supervisor_main`) and the runtime it starts, awslambdaric's own client, in the CPython of
the function's runtime (:mod:`~localcloud.services.lambda_.runtime.interpreters`), with
the task root first on its path and the runtime folder next. It lives on the Runtime
API's event loop: the init phase (module scope, up to the first ``next``) may take up to
:data:`INIT_LIMIT_S`; the invocation's clock starts when the runtime fetches it, and at
its timeout the whole tree is killed before the invocation fails with
``Sandbox.Timedout``; a runtime that exits mid-invocation fails it with
``Runtime.ExitError``; every byte the tree writes to stdout or stderr is the function's
log stream, and belongs to the invocation whose answer follows it (read as it comes, a
bounded share per turn of the loop, into a bounded buffer:
:class:`~localcloud.services.lambda_.runtime.output.EnvironmentOutput`).
"""

from __future__ import annotations

import asyncio
import atexit
import codecs
import concurrent.futures
import contextlib
import fcntl
import os
import signal
import sys
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Final, Protocol

from localcloud.services.lambda_.runtime import contract, runtime_api
from localcloud.services.lambda_.runtime.functions import Ran
from localcloud.services.lambda_.runtime.interpreters import interpreter_for
from localcloud.services.lambda_.runtime.output import EnvironmentOutput

SUPERVISOR: Final = Path(__file__).with_name("supervisor_main.py")
INIT_LIMIT_S: Final = 10.0
"""Lambda's limit on the init phase of an on-demand environment (seconds)."""
_UNSET_VARIABLES: Final = frozenset({"AWS_LAMBDA_MAX_CONCURRENCY"})
"""Never handed to the runtime: it switches awslambdaric 4.2 into its multi-concurrency
mode (Lambda Managed Instances), which one-at-a-time environments do not have."""


TAG: Final = "_LOCALCLOUD_ENVIRONMENT"
"""A variable every process of an environment starts with (its value the environment's
own): what :func:`sweep` finds when the supervisor is gone."""
FORCE_AFTER_S: Final = 1.0
"""How long a supervisor may take to end its environment before it is killed itself."""
READ_BYTES: Final = 65_536
"""One read of the environment's output pipe (a Linux pipe's capacity)."""
READS_PER_TURN: Final = 16
"""Reads of one environment's output per turn of the event loop (1 MiB)."""


SWEEP_PASSES: Final = 20
"""At most this many passes over ``/proc`` per sweep (each after the first finds only what
forked while the one before it ran)."""


def _started(pid: str) -> str:
    """When process ``pid`` started (``/proc/<pid>/stat``'s ``starttime``, clock ticks
    since boot): with the pid, a process's identity, since pids are reused (32,768 of them
    by default, cycled through quickly when a function forks in a loop)."""
    with open(f"/proc/{pid}/stat") as stat:
        return stat.read().rsplit(")", 1)[1].split()[19]


def sweep(tag: str) -> list[int]:
    """``SIGKILL`` every process whose environment carries ``TAG=tag``: the processes of an
    environment whose supervisor the function killed (``SIGKILL`` cannot be ignored, and
    its orphans went to init) or stopped. A process that exec'd with an environment of
    its own, without the variable, is not found. A process forked while a pass reads
    ``/proc`` may be missed by it, so passes repeat until one finds no process it has not
    killed (a process being its pid and start time: a pid freed by one killed may be
    taken by a new one), at most :data:`SWEEP_PASSES`. The pids killed."""
    marker = f"{TAG}={tag}".encode()
    killed: set[tuple[int, str]] = set()
    for _ in range(SWEEP_PASSES):
        found = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as variables:
                    if marker not in variables.read().split(b"\0"):
                        continue
                identity = (int(entry), _started(entry))
                if identity in killed:
                    continue
                os.kill(int(entry), signal.SIGKILL)
                killed.add(identity)
                found = True
            except (OSError, IndexError):
                continue
        if not found:
            break
    return sorted({pid for pid, _ in killed})


_LIVE: dict[str, int] = {}
"""Tag → supervisor pid of every environment whose supervisor has not exited."""
_LIVE_LOCK = threading.Lock()


def _end_all_at_exit() -> None:
    """At interpreter exit: every live environment's supervisor killed and its processes
    swept (a supervisor the function stopped would never see its control pipe close)."""
    with _LIVE_LOCK:
        live = dict(_LIVE)
        _LIVE.clear()
    for tag, pid in live.items():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        sweep(tag)


atexit.register(_end_all_at_exit)  # after the Runtime API's loop's: atexit runs it first


class Owner(Protocol):
    """The function an environment runs: what starting its runtime needs."""

    arn: str
    runtime: str
    code_uri: Path
    handler: str
    extra_paths: tuple[str, ...]
    layer_paths: tuple[str, ...]
    version: str

    def runtime_variables(self, *, traced: bool) -> Mapping[str, str]: ...


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

    def __init__(self, function: Owner) -> None:
        self.function = function
        self.log_stream = (
            f"{time.strftime('%Y/%m/%d', time.gmtime())}/[{function.version}]{uuid.uuid4().hex}"
        )
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
        self._tag = uuid.uuid4().hex
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
            pending.done.set_exception(Unstarted())
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
            TAG: self._tag,
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
                str(len(self.function.layer_paths)),
                *self.function.layer_paths,
                *self.function.extra_paths,
                stdin=asyncio.subprocess.PIPE,
                stdout=write_fd,
                stderr=write_fd,
                env=variables,
                start_new_session=True,
            )
        finally:
            os.close(write_fd)
        with _LIVE_LOCK:
            _LIVE[self._tag] = self._process.pid
        asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        assert self._process is not None
        status = await self._process.wait()
        with _LIVE_LOCK:
            _LIVE.pop(self._tag, None)
        self._exit_status = status
        sweep(self._tag)  # what outlived its supervisor (one the function killed or stopped)
        self._read_logs()
        self._ended()

    def _read_logs(self) -> None:
        """What the environment's processes wrote so far (non-blocking), at most
        :data:`READS_PER_TURN` reads: a process that writes without end holds the event
        loop, which every environment shares, no longer than that; the rest is read on
        the loop's next turn, into a bounded buffer (:class:`EnvironmentOutput`)."""
        for _ in range(READS_PER_TURN):
            if self._log_fd < 0:
                return
            try:
                chunk = os.read(self._log_fd, READ_BYTES)
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
            pending.done.set_exception(Unstarted())
            return
        init_ms = self._take_init() if self._init_ms is not None else self._since_start()
        self._init_reported = True
        if self._init_error is not None:
            ran = Ran(_outcome(self._init_error), self.output.take(), init_ms=init_ms, gone=True)
        else:
            ran = replace(
                exit_ran(pending.work.request_id, self._exit_status),
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
            # a supervisor the function stopped (SIGSTOP) cannot act: killed after a second
            asyncio.get_running_loop().call_later(FORCE_AFTER_S, self._force, process)

    def _force(self, process: asyncio.subprocess.Process) -> None:
        if process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                process.kill()

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


class Unstarted(Exception):
    """The environment ended before its runtime fetched the invocation."""


def _outcome(answer: runtime_api.Answer) -> contract.Outcome:
    if not answer.error:
        return contract.Outcome(answer.body, answer.content_type, False)
    return contract.Outcome(answer.body, "application/json", True)


def exit_ran(request_id: str, status: int | None) -> Ran:
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
