"""Step Functions' threads on the local cloud are bounded server-wide: Map iterations and
Parallel branches, however nested, run on at most the interpreter's 200 threads (the rest in
the thread of the Map or Parallel that holds them), a Map worker takes any number of items,
and StartExecution past the 1,000 running executions answers ExecutionLimitExceeded
(``localcloud.services.stepfunctions.threads``).

One in-process account for the module; each test's executions wait (a ``Wait`` of 600 s,
ended by StopExecution) so that the threads they hold can be counted while they hold them.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from localcloud.services.stepfunctions.threads import (
    EXECUTIONS,
    INTERPRETER_THREADS,
    RUNNING_EXECUTIONS_MAX,
    WORKERS,
)
from localcloud.tests.support.states import account, ended, full_history, kinds, machine, until

HOLD = {"StartAt": "Hold", "States": {"Hold": {"Type": "Wait", "Seconds": 600, "End": True}}}
"""An iteration or branch that holds its thread until its execution is stopped."""


def each(processor: dict[str, Any], items_path: str = "$") -> dict[str, Any]:
    """A program of one inline Map over ``items_path`` running ``processor`` per item."""
    return {
        "StartAt": "Each",
        "States": {
            "Each": {
                "Type": "Map",
                "ItemsPath": items_path,
                "ItemProcessor": processor,
                "End": True,
            }
        },
    }


@pytest.fixture(scope="module")
def sfn() -> Iterator[Any]:
    with account() as client:
        yield client


def holds(sfn: Any, execution: str) -> int:
    """How many iterations or branches of ``execution`` wait in :data:`HOLD` now."""
    return kinds(full_history(sfn, execution)).count("WaitStateEntered")


def stop_and_settle(sfn: Any, execution: str, held_before: int) -> None:
    """Stop ``execution`` and wait until every interpreter thread it held is back."""
    sfn.stop_execution(executionArn=execution)
    assert ended(sfn, execution)["status"] == "ABORTED"
    until(lambda: WORKERS.in_use <= held_before, "the interpreter threads given back")


def test_three_levels_of_nested_maps_run_on_at_most_the_interpreter_threads(sfn: Any) -> None:
    levels = each(each(each(HOLD, "$.inner"), "$.middle"))
    arn = machine(sfn, "nested", levels)
    items = [{"middle": [{"inner": [0] * 40}] * 40}] * 6  # 9,600 iterations at the bottom
    before, held_before = threading.active_count(), WORKERS.in_use

    execution = sfn.start_execution(stateMachineArn=arn, name="n", input=json.dumps(items))
    try:
        # every thread running it ends up in a Wait at the bottom: the execution's own and
        # the interpreter's 200 (those no earlier test holds); none starts once they wait
        until(
            lambda: holds(sfn, execution["executionArn"]) >= 1 + INTERPRETER_THREADS - held_before,
            "an iteration waiting on each interpreter thread",
        )

        assert threading.active_count() <= before + 1 + INTERPRETER_THREADS
    finally:
        stop_and_settle(sfn, execution["executionArn"], held_before)


def test_parallel_branches_share_the_interpreter_threads_with_map_iterations(sfn: Any) -> None:
    parallel = {
        "StartAt": "Both",
        "States": {"Both": {"Type": "Parallel", "Branches": [HOLD] * 10, "End": True}},
    }
    arn = machine(sfn, "branches", each(parallel))
    before, held_before = threading.active_count(), WORKERS.in_use

    execution = sfn.start_execution(stateMachineArn=arn, name="n", input=json.dumps([0] * 40))
    try:
        until(lambda: WORKERS.in_use == INTERPRETER_THREADS, "every interpreter thread taken")

        assert threading.active_count() <= before + 1 + INTERPRETER_THREADS
    finally:
        stop_and_settle(sfn, execution["executionArn"], held_before)


def test_a_map_worker_takes_1000_items_one_after_another(sfn: Any) -> None:
    one_at_a_time = each({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
    one_at_a_time["States"]["Each"]["MaxConcurrency"] = 1
    arn = machine(sfn, "one-at-a-time", one_at_a_time)
    items = list(range(1000))

    execution = sfn.start_execution(stateMachineArn=arn, name="n", input=json.dumps(items))

    described = ended(sfn, execution["executionArn"])
    assert described["status"] == "SUCCEEDED"
    assert json.loads(described["output"]) == items


def test_an_execution_holds_a_running_slot_only_while_it_runs(sfn: Any) -> None:
    arn = machine(sfn, "short", {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
    before = EXECUTIONS.in_use

    execution = sfn.start_execution(stateMachineArn=arn, name="n")
    ended(sfn, execution["executionArn"])

    until(lambda: EXECUTIONS.in_use <= before, "the execution's slot given back")


def test_start_execution_past_the_running_executions_is_refused_as_aws_refuses_it(
    sfn: Any,
) -> None:
    arn = machine(sfn, "one-too-many", HOLD)
    taken = 0
    try:
        while EXECUTIONS.take():  # the other 1,000 running
            taken += 1

        with pytest.raises(ClientError) as refused:
            sfn.start_execution(stateMachineArn=arn, name="one-too-many")
    finally:
        for _ in range(taken):
            EXECUTIONS.give()

    assert EXECUTIONS.size == RUNNING_EXECUTIONS_MAX == 1_000
    assert refused.value.response["Error"] == {
        "Code": "ExecutionLimitExceeded",
        "Message": "The maximum number of running executions has been reached. Running "
        "executions must end or be stopped before a new execution can be started.",
    }
    assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert sfn.list_executions(stateMachineArn=arn)["executions"] == []
