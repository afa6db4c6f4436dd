"""An inline Map state runs at most 40 iterations at once, as Step Functions does.

moto 5.2.5 starts one thread per iteration when ``MaxConcurrency`` is 0 or absent (and
``MaxConcurrency`` threads otherwise): a Map of 2,000 items started 2,000 threads in the
server. Step Functions runs an inline Map's iterations "up to 40 concurrent iterations"
(Step Functions Developer Guide, "Using Map state in Inline mode"): ``MaxConcurrency`` 0
means as many as that allows, and a larger ``MaxConcurrency`` gets no more.

Each Map state's run has a pool of its own (``concurrent.futures.ThreadPoolExecutor``,
:func:`workers` threads): the iterations of nested Maps run in their own pools, as each
inline Map on AWS has its own 40, and an outer iteration waiting for its inner Map holds
no thread an inner iteration needs. moto's workers take the items one after another from
the run's job pool, as before; the pool is shut down without waiting once every item has
ended (a worker still finishing an item after another one failed the Map ends on its own).
An iteration aborted by StopExecution fails the Map in a form it can read
(:func:`well_formed`). A Distributed Map keeps moto's own run.
"""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor
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
        """moto's inline Map run, its iterations on a pool of :func:`workers` threads."""
        eval_input: Any = env.stack.pop()
        items: list[Any] = eval_input.input_items
        job_pool = JobPool(job_program=self._get_iteration_program(), job_inputs=items)
        count = workers(int(eval_input.max_concurrency), len(items))
        if count:
            pool = ThreadPoolExecutor(
                max_workers=count, thread_name_prefix=f"map {eval_input.state_name}"
            )
            try:
                for _ in range(count):
                    worker = self._create_worker(env=env, eval_input=eval_input, job_pool=job_pool)
                    pool.submit(worker.eval)
                job_pool.await_jobs()
            finally:
                pool.shutdown(wait=False)
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
        "an inline Map runs at most 40 iterations at once, on a pool of its own",
    ),
)

__all__ = ["INLINE_CONCURRENCY", "PATCHES", "well_formed", "workers"]
