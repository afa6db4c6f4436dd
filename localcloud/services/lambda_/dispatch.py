"""Every event source mapping of a served account (a queue's, a stream's), polled by one
thread.

Lambda's pollers long-poll their sources: an idle mapping costs nothing. A thread per
mapping that receives every 0.2 s does not scale (100 idle SQS mappings burnt a whole core
and about 190 threads), so one :class:`Dispatcher` asks every mapping whether its source
has something to give (:meth:`Polled.ready`: a look at moto's memory, no request made)
every ``tick_s`` seconds, and only a ready mapping is polled, on a pool of at most
:data:`POLL_WORKERS` threads. A mapping has one poll in flight at a time and is polled
again at once after a poll that invoked its function; after a poll that failed it waits
:data:`PROBLEM_BACKOFF_S`, or whatever its poll says (a throttled one backs off). The
threads do not grow with the number of mappings, only with the polls in flight.

Mappings cannot starve each other: Lambda scales pollers per mapping, so a mapping whose
function is busy delays no other. A poll holds a thread while its function runs, and a
running function holds one of the account's concurrency
(:data:`~localcloud.services.lambda_.runtime.environments.ACCOUNT_CONCURRENCY`), so the
pool has as many threads: a ready mapping waits for a thread only while every one of the
account's executions is a mapping's, when Lambda would throttle its invocation too (a
pool of 16 let 16 busy mappings hold back every other one). The SQS poller
(:mod:`localcloud.services.sqs.poller`) and the stream pollers
(:mod:`.stream_mappings`) share it.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from dataclasses import dataclass, field
from typing import Final, Protocol

from localcloud.services.lambda_.runtime.environments import ACCOUNT_CONCURRENCY

POLL_WORKERS: Final = ACCOUNT_CONCURRENCY
"""Polls in flight at once, all mappings together: one per execution the account can run
at once (each poll invokes a function and waits for it)."""
PROBLEM_BACKOFF_S: Final = 5.0
"""How long a mapping waits after a poll that raised (a deleted queue, say)."""


def problem_code(exc: BaseException) -> str:
    """What a failed poll says is wrong: the AWS error code of a botocore ``ClientError``
    (``AWS.SimpleQueueService.NonExistentQueue``, ``ResourceNotFoundException``), else
    the exception's class name (a ``response`` of ``None``, as moto's own errors carry,
    counts as none)."""
    response = getattr(exc, "response", None) or {}
    error = response.get("Error") if isinstance(response, dict) else None
    code = error.get("Code") if isinstance(error, dict) else None
    return str(code) if code else type(exc).__name__


class Polled(Protocol):
    """A mapping, as the dispatcher polls it."""

    def ready(self) -> bool:
        """Whether its source has something to give now (no request made)."""
        ...

    def poll_in_dispatcher(self) -> float:
        """One poll; how long to wait before the next (0: at once)."""
        ...


@dataclass
class _Entry:
    mapping: Polled
    busy: bool = False
    not_before: float = 0.0
    done: threading.Event = field(default_factory=threading.Event)


class Dispatcher:
    """The one thread that decides which mapping polls, and the pool that polls."""

    def __init__(self, tick_s: float = 0.2) -> None:
        self.tick_s = tick_s
        self._entries: dict[int, _Entry] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._pool = concurrent.futures.ThreadPoolExecutor(
            max_workers=POLL_WORKERS, thread_name_prefix="esm-poll"
        )
        self._thread = threading.Thread(target=self._run, name="esm-dispatch", daemon=True)
        self._thread.start()

    def add(self, mapping: Polled) -> None:
        with self._lock:
            self._entries.setdefault(id(mapping), _Entry(mapping))
        self._wake.set()

    def remove(self, mapping: Polled, wait_s: float = 10.0) -> None:
        """Stop polling ``mapping``; wait (up to ``wait_s``) for its poll in flight."""
        with self._lock:
            entry = self._entries.pop(id(mapping), None)
        if entry is not None and entry.busy:
            entry.done.wait(wait_s)

    def _run(self) -> None:
        while True:
            now = time.monotonic()
            with self._lock:
                due = [e for e in self._entries.values() if not e.busy and e.not_before <= now]
            for entry in due:
                try:
                    ready = entry.mapping.ready()
                except Exception:  # noqa: BLE001 - the poll itself says what is wrong
                    ready = True
                if ready:
                    self._submit(entry)
            self._wake.wait(self.tick_s)
            self._wake.clear()

    def _submit(self, entry: _Entry) -> None:
        entry.busy = True
        entry.done.clear()
        try:
            self._pool.submit(self._poll, entry)
        except RuntimeError:  # the interpreter is exiting: no new poll
            entry.busy = False
            entry.done.set()

    def _poll(self, entry: _Entry) -> None:
        try:
            wait_s = entry.mapping.poll_in_dispatcher()
        except Exception:  # noqa: BLE001 - poll_in_dispatcher reports its own problems
            wait_s = PROBLEM_BACKOFF_S
        entry.not_before = time.monotonic() + wait_s
        entry.busy = False
        entry.done.set()
        if wait_s == 0:
            self._wake.set()


_DISPATCHER: Dispatcher | None = None
"""One per process, idle (a tick over no mapping) while no account serves."""
_DISPATCHER_LOCK = threading.Lock()


def dispatcher(tick_s: float | None = None) -> Dispatcher:
    """The account's dispatcher, started on first use; ``tick_s``, if given and shorter,
    becomes how often it looks at the sources (seconds; 0.2 at first)."""
    global _DISPATCHER
    with _DISPATCHER_LOCK:
        if _DISPATCHER is None:
            _DISPATCHER = Dispatcher(tick_s if tick_s is not None else 0.2)
        elif tick_s is not None and tick_s < _DISPATCHER.tick_s:
            _DISPATCHER.tick_s = tick_s
        return _DISPATCHER
