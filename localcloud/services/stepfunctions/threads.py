"""The threads Step Functions' interpreter runs, bounded server-wide whatever the nesting,
the number of items and the number of executions.

moto 5.2.5's interpreter starts a thread for each execution, each Parallel branch and each
Map worker, and a helper thread, which its caller only waits for, for every program run
(``Program.eval``: an execution, a Map iteration, a branch) and every attempt of a Task,
Map or Parallel state (``ExecutionState._evaluate_with_timeout``). Maps nested in Maps
multiplied them: six items of forty measured 502 threads, three levels of forty about
130,000; each execution added its own. Here:

* **Executions**: at most :data:`RUNNING_EXECUTIONS_MAX` run at once, on a thread each.
  StartExecution past it answers :class:`ExecutionLimitExceeded`, the error Step Functions
  answers past its quota of open executions (1,000,000 per account and Region: "Step
  Functions service quotas", Maximum open executions per account; StartExecution API
  reference, Errors), the local cloud's quota being lower. A refusal, never a queue: a
  parent execution waiting for a nested one (``.sync``) would wait for ever for a child
  queued behind it.
* **Map iterations and Parallel branches**: at most :data:`INTERPRETER_THREADS` threads
  run them, server-wide (:data:`WORKERS`). When none is free, the iteration or branch runs
  in the thread that asked for it (its Map's or its Parallel's own), one after another:
  nothing waits for a thread, so nothing can deadlock, and an inline Map still runs at
  most 40 iterations at once (:mod:`.inline_map`).
* **Helper threads**: a program without ``TimeoutSeconds``, and a state without
  ``TimeoutSeconds``/``TimeoutSecondsPath``, runs in its caller's thread (moto's helper
  and the caller's wait did the same work one after the other). With a timeout, moto's
  own helper thread runs it, so that the timeout still cuts it short: one more thread per
  such state on the way down, while it runs.

So the interpreter runs at most ``RUNNING_EXECUTIONS_MAX + INTERPRETER_THREADS`` threads,
plus one per state with a timeout being waited on. A Map worker takes its items one after
another (moto's worker called itself once per item and died past Python's recursion limit:
a Map of 1,000 items with ``MaxConcurrency`` 1 never ended).
"""

from __future__ import annotations

import contextlib
import copy
import threading
from collections.abc import Callable, Iterator
from typing import Any, Final

from moto.core.exceptions import AWSError
from moto.stepfunctions.parser.asl.component.eval_component import EvalComponent
from moto.stepfunctions.parser.asl.component.program.program import Program
from moto.stepfunctions.parser.asl.component.state.exec.execute_state import ExecutionState
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.inline_iteration_component import (  # noqa: E501
    InlineIterationComponent,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor.distributed_item_processor_worker import (  # noqa: E501
    DistributedItemProcessorWorker,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.iteration_worker import (  # noqa: E501
    IterationWorker,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.iterator.distributed_iterator_worker import (  # noqa: E501
    DistributedIteratorWorker,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_parallel.branch_worker import (
    BranchWorker,
)
from moto.stepfunctions.parser.asl.eval.environment import Environment
from moto.stepfunctions.parser.backend.execution_worker import ExecutionWorker
from moto.stepfunctions.parser.utils import TMP_THREADS

from localcloud.patches.registry import Method, Patch

RUNNING_EXECUTIONS_MAX: Final = 1_000
"""Executions running at once in the local cloud (AWS: 1,000,000 open executions)."""
INTERPRETER_THREADS: Final = 200
"""Threads running Map iterations and Parallel branches at once, server-wide: five inline
Maps at their 40."""


class ExecutionLimitExceeded(AWSError):
    """400 ``ExecutionLimitExceeded``: StartExecution while the most executions the account
    may run are running (the message is the StartExecution API reference's)."""

    TYPE = "ExecutionLimitExceeded"
    STATUS = 400

    def __init__(self) -> None:
        super().__init__(
            "The maximum number of running executions has been reached. Running executions "
            "must end or be stopped before a new execution can be started."
        )


class Budget:
    """A number of threads that may run at once, taken without ever waiting."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._lock = threading.Lock()
        self._in_use = 0
        self.peak = 0
        """The most ever in use at once."""

    @property
    def in_use(self) -> int:
        with self._lock:
            return self._in_use

    def take(self) -> bool:
        """One thread of the budget if one is free (``True``), else ``False``."""
        with self._lock:
            if self._in_use >= self.size:
                return False
            self._in_use += 1
            self.peak = max(self.peak, self._in_use)
            return True

    def give(self) -> None:
        """Give back one thread :meth:`take` gave."""
        with self._lock:
            self._in_use = max(0, self._in_use - 1)


EXECUTIONS: Final = Budget(RUNNING_EXECUTIONS_MAX)
"""The executions running now, server-wide."""
WORKERS: Final = Budget(INTERPRETER_THREADS)
"""The threads running Map iterations and Parallel branches now, server-wide."""

_SLOT = threading.local()
"""``held``: this thread's StartExecution holds an execution slot not yet taken over."""


def on_a_thread(budget: Budget, work: Callable[[], None], name: str) -> bool:
    """Start ``work`` on a thread of its own if ``budget`` has one free (``True``; the
    thread goes back to the budget when ``work`` ends), else do nothing (``False``: the
    caller runs ``work`` itself)."""
    if not budget.take():
        return False

    def run() -> None:
        try:
            work()
        finally:
            budget.give()

    try:
        threading.Thread(target=run, name=name, daemon=True).start()
    except RuntimeError:  # the system has no thread to give: the caller runs it
        budget.give()
        return False
    return True


def on_a_thread_or_here(budget: Budget, work: Callable[[], None], name: str) -> None:
    """``work`` on a thread of ``budget`` if one is free, else in this thread now."""
    if not on_a_thread(budget, work, name):
        work()


@contextlib.contextmanager
def execution_slot() -> Iterator[None]:
    """Hold one of the :data:`RUNNING_EXECUTIONS_MAX` slots for the StartExecution this
    thread runs; the execution it starts takes the slot over, and the slot is given back if
    it starts none (the same name and input again, a refusal).

    Raises:
        ExecutionLimitExceeded: every slot is taken.
    """
    if not EXECUTIONS.take():
        raise ExecutionLimitExceeded()
    _SLOT.held = True
    try:
        yield
    finally:
        if getattr(_SLOT, "held", False):
            _SLOT.held = False
            EXECUTIONS.give()


def _execution_thread(_original: Method) -> Method:
    def start(self: ExecutionWorker) -> None:
        """moto's execution thread, holding its StartExecution's slot until it ends."""
        counted = getattr(_SLOT, "held", False)
        if counted:
            _SLOT.held = False
        else:  # started some other way than StartExecution: counted if a slot is free
            counted = EXECUTIONS.take()
        # moto keeps every thread it starts in a list, for ever: the ended ones go.
        TMP_THREADS[:] = [thread for thread in TMP_THREADS if thread.is_alive()]

        logic: Callable[[], None] = self._execution_logic  # moto's, untyped

        def run() -> None:
            try:
                logic()
            finally:
                if counted:
                    EXECUTIONS.give()

        threading.Thread(target=run, name="execution", daemon=True).start()

    return start


def _program_here(original: Method) -> Method:
    def eval(self: Program, env: Environment) -> None:  # noqa: A001 - moto's name
        """moto's program run, in the caller's thread unless it has a ``TimeoutSeconds``."""
        if self.timeout_seconds is not None:
            original(self, env)
            return
        try:
            env.next_state_name = self.start_at.start_at_name
        except RuntimeError:  # moto's answer for an environment no longer running
            if env.is_running():
                raise
            return  # stopped before it began (a branch run after its Parallel stopped)
        EvalComponent.eval(self, env)

    return eval


def _attempt_here(original: Method) -> Method:
    def _evaluate_with_timeout(self: ExecutionState, env: Environment) -> None:
        """moto's attempt of a Task, Map or Parallel state, the same steps in the caller's
        thread unless the state has a timeout of its own."""
        if not self.timeout.is_default_value():
            original(self, env)
            return
        self.timeout.eval(env=env)
        env.stack.pop()  # the default timeout, 99,999,999 s: longer than any execution
        frame: Environment = env.open_frame()
        frame.states.reset(input_value=env.states.get_input())
        frame.stack = copy.deepcopy(env.stack)
        try:
            self._eval_execution(frame)
            outputs = list(frame.stack)
        finally:
            frame.set_ended()
            env.close_frame(frame)
        output: Any = outputs.pop()  # none when the frame was stopped: moto's IndexError
        env.stack.append(output)
        if not self._is_language_query_jsonpath():
            env.states.set_result(output)
        if self.assign_decl:
            self.assign_decl.eval(env=env)
        if self.result_selector:
            self.result_selector.eval(env=env)
        if self.result_path:
            self.result_path.eval(env)
        else:
            env.states.reset(input_value=env.stack.pop())

    return _evaluate_with_timeout


def _branch_on_budget(_original: Method) -> Method:
    def start(self: BranchWorker) -> None:
        """A Parallel branch on a thread of :data:`WORKERS`, or in its Parallel's thread
        (not at all once another branch has failed the Parallel); its end always told."""
        pool: Any = self._branch_worker_comm
        failed = getattr(pool, "_termination_event", None)

        def branch() -> None:
            try:
                if failed is None or not failed.is_set():
                    self._program.eval(self.env)
            finally:
                pool.on_terminated(env=self.env)

        on_a_thread_or_here(WORKERS, branch, "parallel branch")

    return start


def _worker_on_budget(_original: Method) -> Method:
    def _launch_worker(
        self: InlineIterationComponent, env: Environment, eval_input: Any, job_pool: Any
    ) -> IterationWorker:
        """A Map worker (a Distributed Map's: :mod:`.inline_map` runs the inline one's) on a
        thread of :data:`WORKERS`, or in its Map's thread."""
        worker = self._create_worker(env=env, eval_input=eval_input, job_pool=job_pool)
        on_a_thread_or_here(WORKERS, worker.eval, f"map {eval_input.state_name}")
        return worker

    return _launch_worker


_NEXT: Final = "_localcloud_next_job"


def _one_item_after_another(original: Method) -> Method:
    def _eval_pool(self: IterationWorker, job: Any, worker_frame: Environment) -> None:
        """moto's worker loop, which calls itself for the next item as its last step: that
        call is noted and made here once the one before has returned, so a worker takes
        any number of items in one frame of the stack."""
        if hasattr(self, _NEXT):  # the call moto makes last: taken in the loop below
            setattr(self, _NEXT, (job, worker_frame))
            return
        pending: tuple[Any, Environment] | None = (job, worker_frame)
        try:
            while pending is not None:
                setattr(self, _NEXT, None)
                original(self, *pending)
                pending = getattr(self, _NEXT)
        finally:
            delattr(self, _NEXT)

    return _eval_pool


PATCHES: Final = (
    Patch(
        ExecutionWorker,
        "start",
        ("self",),
        _execution_thread,
        "an execution holds one of the 1,000 running-execution slots while it runs",
    ),
    Patch(
        Program,
        "eval",
        ("self", "env"),
        _program_here,
        "a program without TimeoutSeconds runs in its caller's thread",
    ),
    Patch(
        ExecutionState,
        "_evaluate_with_timeout",
        ("self", "env"),
        _attempt_here,
        "a state without a timeout of its own runs in its caller's thread",
    ),
    Patch(
        BranchWorker,
        "start",
        ("self",),
        _branch_on_budget,
        "a Parallel branch runs on one of the server's 200 interpreter threads, or in its "
        "Parallel's",
    ),
    Patch(
        InlineIterationComponent,
        "_launch_worker",
        ("self", "env", "eval_input", "job_pool"),
        _worker_on_budget,
        "a Map worker runs on one of the server's 200 interpreter threads, or in its Map's",
    ),
    *(
        Patch(
            owner,
            "_eval_pool",
            ("self", "job", "worker_frame"),
            _one_item_after_another,
            "a Map worker takes its items one after another, not one call deeper each",
        )
        for owner in (IterationWorker, DistributedItemProcessorWorker, DistributedIteratorWorker)
    ),
)

__all__ = [
    "EXECUTIONS",
    "INTERPRETER_THREADS",
    "PATCHES",
    "RUNNING_EXECUTIONS_MAX",
    "WORKERS",
    "Budget",
    "ExecutionLimitExceeded",
    "execution_slot",
    "on_a_thread",
    "on_a_thread_or_here",
]
