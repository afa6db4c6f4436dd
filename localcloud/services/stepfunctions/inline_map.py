"""An inline Map state runs at most 40 iterations at once, as Step Functions does.

moto 5.2.5 starts one thread per iteration when ``MaxConcurrency`` is 0 or absent (and
``MaxConcurrency`` threads otherwise): a Map of 2,000 items started 2,000 threads in the
server. Step Functions runs an inline Map's iterations "up to 40 concurrent iterations"
(Step Functions Developer Guide, "Using Map state in Inline mode"): ``MaxConcurrency`` 0
means as many as that allows, and a larger ``MaxConcurrency`` gets no more.

A Map's run has :func:`workers` workers, each taking the items one after another from the
run's job pool, as moto's do: the Map's own thread is one of them, the others run on
threads of the server-wide budget (:data:`.threads.WORKERS`) while it has some free. When
it has none the Map's thread takes every item itself: iterations of nested Maps never
multiply threads, and nothing waits for a thread (an outer iteration waiting for its
inner Map always has a worker running it). Once every item has ended the Map goes on (a
worker still finishing an item after another one failed the Map ends on its own). An
iteration aborted by StopExecution fails the Map in a form it can read (:func:`well_formed`).
A Distributed Map keeps moto's own run, its workers on the same budget (:mod:`.threads`).
"""

from __future__ import annotations

import copy
from typing import Any, Final

from moto.stepfunctions.parser.api import ExecutionFailedEventDetails, HistoryEventType
from moto.stepfunctions.parser.asl.component.common.error_name.failure_event import (
    FailureEventException,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.inline_iteration_component import (  # noqa: E501
    InlineIterationComponent,
)
from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.job import JobPool
from moto.stepfunctions.parser.asl.component.state.exec.state_map.max_concurrency import (
    DEFAULT_MAX_CONCURRENCY_VALUE,
)
from moto.stepfunctions.parser.asl.eval.environment import Environment

from localcloud.patches.registry import Method, Patch
from localcloud.services.stepfunctions.threads import WORKERS, on_a_thread

INLINE_CONCURRENCY: Final = 40
"""Iterations of one inline Map state that run at once, at most."""


def workers(max_concurrency: int, items: int) -> int:
    """How many iterations of an inline Map of ``items`` items run at once: what
    ``max_concurrency`` asks (0: no limit of its own), never more than there are items
    nor than :data:`INLINE_CONCURRENCY`."""
    asked = items if max_concurrency == DEFAULT_MAX_CONCURRENCY_VALUE else max_concurrency
    return max(0, min(asked, items, INLINE_CONCURRENCY))


def well_formed(failure: Exception) -> Exception:
    """``failure`` as the Map state can read it.

    moto's iteration aborted because its execution was stopped carries the stop's error (a
    string, or ``None``) where its failure's details belong: the Map state read them with
    ``.get`` and raised ``AttributeError``, the execution ended ``FAILED`` with
    ``States.Runtime`` and moto's error line on the terminal. Its details become
    ``{"error": <the stop's error>}`` (``{}`` without one), as any failure's.
    """
    if not isinstance(failure, FailureEventException):
        return failure
    event = failure.failure_event
    details: Any = event.event_details or {}
    spec = details.get("executionFailedEventDetails")
    if event.event_type != HistoryEventType.MapIterationAborted or isinstance(spec, dict):
        return failure
    details = ExecutionFailedEventDetails(error=spec) if spec else ExecutionFailedEventDetails()
    fixed = copy.copy(event)
    setattr(fixed, "event_details", {"executionFailedEventDetails": details})  # noqa: B010 - Final
    return FailureEventException(failure_event=fixed)


def _pooled(_original: Method) -> Method:
    def _eval_body(self: InlineIterationComponent, env: Environment) -> None:
        """moto's inline Map run on :func:`workers` workers: the Map's thread and as many
        threads of :data:`.threads.WORKERS` as are free."""
        eval_input: Any = env.stack.pop()
        items: list[Any] = eval_input.input_items
        job_pool = JobPool(job_program=self._get_iteration_program(), job_inputs=items)
        count = workers(int(eval_input.max_concurrency), len(items))
        if count:
            name = f"map {eval_input.state_name}"
            for _ in range(count - 1):
                worker = self._create_worker(env=env, eval_input=eval_input, job_pool=job_pool)
                if not on_a_thread(WORKERS, worker.eval, name):
                    break  # none free: this thread takes the items the others would have
            self._create_worker(env=env, eval_input=eval_input, job_pool=job_pool).eval()
            job_pool.await_jobs()
        failure = job_pool.get_worker_exception()
        if failure is not None:
            raise well_formed(failure)
        env.stack.append([closed.job_output for closed in job_pool.get_closed_jobs()])

    return _eval_body


PATCHES: Final = (
    Patch(
        InlineIterationComponent,
        "_eval_body",
        ("self", "env"),
        _pooled,
        "an inline Map runs at most 40 iterations at once, on its own thread and the "
        "server's interpreter threads",
    ),
)

__all__ = ["INLINE_CONCURRENCY", "PATCHES", "well_formed", "workers"]
