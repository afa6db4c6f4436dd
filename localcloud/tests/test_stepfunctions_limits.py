"""Step Functions' quotas on the local cloud, as AWS applies them: StartExecution refuses
input over 262,144 bytes; a Standard execution's history holds at most 25,000 events and
the execution fails at the 25,000th unless it is its success; GetExecutionHistory answers
one page of ``maxResults`` events (100 by default, at most 1,000) with a ``nextToken``,
oldest or newest first; an inline Map runs at most 40 iterations at once, whatever its
``MaxConcurrency`` asks (``localcloud.services.stepfunctions.quotas``, ``.history``,
``.inline_map``).

One account for the module (moto in-process, the local cloud's patches installed); its
never-ending execution reaches the history quota once (a ``Wait`` of 0 seconds in a loop:
two events a state, the cheapest loop moto runs) and the paging tests read its history.
The Map's iterations hold their worker (a ``Wait`` of 600 s) until the test stops them, so
that the ones that started can be counted while none can end.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from localcloud.services.stepfunctions import quotas
from localcloud.services.stepfunctions.inline_map import INLINE_CONCURRENCY
from localcloud.services.stepfunctions.quotas import admits
from localcloud.tests.support.states import (
    account,
    ended,
    full_history,
    kinds,
    machine,
    until,
)

HISTORY_QUOTA = 25_000
INPUT_QUOTA = 262_144
HISTORY_CAUSE = "The execution reached the maximum number of history events (25000)."
ONE_PASS = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}
NEVER_ENDING = {
    "StartAt": "Again",
    "States": {"Again": {"Type": "Wait", "Seconds": 0, "Next": "Again"}},
}


@pytest.fixture(scope="module")
def sfn() -> Iterator[Any]:
    """A Step Functions client of one in-process account with the local cloud's patches."""
    with account() as client:
        yield client


@pytest.fixture(scope="module")
def never_ending(sfn: Any) -> str:
    """The ARN of a never-ending loop's execution, ended by the history quota."""
    arn = machine(sfn, "never-ending", NEVER_ENDING)
    execution: str = sfn.start_execution(stateMachineArn=arn, name="forever")["executionArn"]
    ended(sfn, execution)
    return execution


# --- StartExecution: input ---------------------------------------------------------------


def test_an_input_over_262144_bytes_is_refused_with_a_validation_error(sfn: Any) -> None:
    arn = machine(sfn, "input-over", ONE_PASS)
    too_big = json.dumps("a" * (INPUT_QUOTA - 1))  # 262,145 bytes with its quotes

    with pytest.raises(ClientError) as refused:
        sfn.start_execution(stateMachineArn=arn, name="big", input=too_big)

    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "1 validation error detected: Value at 'input' failed to satisfy constraint: "
        "Member must have size less than or equal to 262144 bytes in UTF-8 encoding",
    }
    assert sfn.list_executions(stateMachineArn=arn)["executions"] == []


def test_an_input_of_262144_bytes_starts(sfn: Any) -> None:
    arn = machine(sfn, "input-at", ONE_PASS)
    at_quota = json.dumps("a" * (INPUT_QUOTA - 2))

    started = sfn.start_execution(stateMachineArn=arn, name="at", input=at_quota)

    assert ended(sfn, started["executionArn"])["status"] == "SUCCEEDED"


def test_the_input_quota_counts_utf8_bytes_not_characters(sfn: Any) -> None:
    arn = machine(sfn, "input-utf8", ONE_PASS)
    accented = json.dumps("é" * (INPUT_QUOTA // 2), ensure_ascii=False)  # 131,074 characters

    with pytest.raises(ClientError, match="ValidationException"):
        sfn.start_execution(stateMachineArn=arn, name="accented", input=accented)


def test_a_long_name_and_a_large_input_are_both_named_in_one_validation_error(sfn: Any) -> None:
    arn = machine(sfn, "input-and-name", ONE_PASS)
    name = "n" * 81

    with pytest.raises(ClientError) as refused:
        sfn.start_execution(stateMachineArn=arn, name=name, input=json.dumps("a" * INPUT_QUOTA))

    assert refused.value.response["Error"]["Message"] == (
        f"2 validation errors detected: Value '{name}' at 'name' failed to satisfy constraint: "
        "Member must have length less than or equal to 80; Value at 'input' failed to satisfy "
        "constraint: Member must have size less than or equal to 262144 bytes in UTF-8 encoding"
    )


# --- the history quota ------------------------------------------------------------------


def test_a_never_ending_execution_fails_with_states_runtime_at_the_history_quota(
    sfn: Any, never_ending: str
) -> None:
    described = sfn.describe_execution(executionArn=never_ending)

    assert (described["status"], described["error"]) == ("FAILED", "States.Runtime")
    assert described["cause"] == HISTORY_CAUSE


def test_the_25000th_event_is_the_failure_and_nothing_follows_it(
    sfn: Any, never_ending: str
) -> None:
    newest = sfn.get_execution_history(executionArn=never_ending, reverseOrder=True, maxResults=2)

    failed, before = newest["events"]
    assert (failed["id"], failed["previousEventId"], failed["type"]) == (
        HISTORY_QUOTA,
        HISTORY_QUOTA - 1,
        "ExecutionFailed",
    )
    assert failed["executionFailedEventDetails"] == {
        "error": "States.Runtime",
        "cause": HISTORY_CAUSE,
    }
    assert (before["id"], before["type"]) == (HISTORY_QUOTA - 1, "WaitStateExited")


def test_the_last_event_the_quota_admits_is_only_the_executions_success() -> None:
    assert admits(HISTORY_QUOTA - 1, "WaitStateExited")
    assert admits(HISTORY_QUOTA, "ExecutionSucceeded")
    assert not admits(HISTORY_QUOTA, "WaitStateExited")
    assert not admits(HISTORY_QUOTA, "ExecutionFailed")


# --- GetExecutionHistory: pages -----------------------------------------------------------


def test_max_results_answers_that_many_events_and_a_token_for_the_rest(
    sfn: Any, never_ending: str
) -> None:
    page = sfn.get_execution_history(executionArn=never_ending, maxResults=10)

    assert [event["id"] for event in page["events"]] == list(range(1, 11))
    assert page["nextToken"]


def test_without_max_results_a_page_holds_100_events(sfn: Any, never_ending: str) -> None:
    page = sfn.get_execution_history(executionArn=never_ending)

    assert [event["id"] for event in page["events"]] == list(range(1, 101))


def test_the_token_continues_where_the_page_ended_in_either_order(
    sfn: Any, never_ending: str
) -> None:
    for reverse, expected in ((False, range(11, 21)), (True, range(24_990, 24_980, -1))):
        first = sfn.get_execution_history(
            executionArn=never_ending, maxResults=10, reverseOrder=reverse
        )
        second = sfn.get_execution_history(
            executionArn=never_ending,
            maxResults=10,
            reverseOrder=reverse,
            nextToken=first["nextToken"],
        )

        assert [event["id"] for event in second["events"]] == list(expected)


def test_the_pages_of_a_short_history_end_without_a_token(sfn: Any) -> None:
    three = {
        "StartAt": "One",
        "States": {
            "One": {"Type": "Pass", "Next": "Two"},
            "Two": {"Type": "Pass", "Next": "Three"},
            "Three": {"Type": "Pass", "End": True},
        },
    }
    arn = machine(sfn, "three-steps", three)
    execution = sfn.start_execution(stateMachineArn=arn, name="short")["executionArn"]
    ended(sfn, execution)
    read: list[int] = []
    arguments: dict[str, Any] = {"executionArn": execution, "maxResults": 3}

    while True:
        page = sfn.get_execution_history(**arguments)
        read.extend(event["id"] for event in page["events"])
        if "nextToken" not in page:
            break
        arguments["nextToken"] = page["nextToken"]

    assert read == list(range(1, 9))  # started, 3 × (entered, exited), succeeded


def test_max_results_over_1000_is_refused_with_a_validation_error(
    sfn: Any, never_ending: str
) -> None:
    with pytest.raises(ClientError) as refused:
        sfn.get_execution_history(executionArn=never_ending, maxResults=1001)

    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "1 validation error detected: Value '1001' at 'maxResults' failed to "
        "satisfy constraint: Member must have value less than or equal to 1000",
    }


def test_a_token_that_is_not_one_is_refused_as_invalid(sfn: Any, never_ending: str) -> None:
    with pytest.raises(ClientError) as refused:
        sfn.get_execution_history(executionArn=never_ending, nextToken="not-a-token")

    assert refused.value.response["Error"]["Code"] == "InvalidToken"


# --- inline Map: at most 40 iterations at once ----------------------------------------------

HOLD = {"StartAt": "Hold", "States": {"Hold": {"Type": "Wait", "Seconds": 600, "End": True}}}
"""An iteration that holds its worker until its execution is stopped."""


def each(processor: dict[str, Any], max_concurrency: int | None = None) -> dict[str, Any]:
    state: dict[str, Any] = {
        "Type": "Map",
        "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, **processor},
        "End": True,
    }
    if max_concurrency is not None:
        state["MaxConcurrency"] = max_concurrency
    return {"StartAt": "Each", "States": {"Each": state}}


@pytest.mark.parametrize("asked", [None, 100])
def test_an_inline_map_runs_at_most_40_iterations_at_once(sfn: Any, asked: int | None) -> None:
    arn = machine(sfn, f"map-{asked}", each(HOLD, asked))
    execution = sfn.start_execution(stateMachineArn=arn, name="items", input=json.dumps([0] * 50))[
        "executionArn"
    ]
    try:
        # the iterations that start never end: once 40 wait, a 41st could only be one more
        # worker than the cap
        until(
            lambda: kinds(full_history(sfn, execution)).count("WaitStateEntered") >= 40,
            "40 iterations waiting",
        )

        started = kinds(full_history(sfn, execution)).count("MapIterationStarted")
        assert started == INLINE_CONCURRENCY == 40
    finally:
        sfn.stop_execution(executionArn=execution)
        ended(sfn, execution)


def test_an_inline_maps_output_holds_every_items_result_in_order(sfn: Any) -> None:
    arn = machine(
        sfn, "map-output", each({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
    )
    items = list(range(50))

    execution = sfn.start_execution(stateMachineArn=arn, name="items", input=json.dumps(items))

    described = ended(sfn, execution["executionArn"])
    assert described["status"] == "SUCCEEDED"
    assert json.loads(described["output"]) == items


def test_an_inline_map_stopped_while_its_iterations_run_is_aborted_not_failed(
    sfn: Any, caplog: pytest.LogCaptureFixture
) -> None:
    arn = machine(sfn, "map-stopped", each(HOLD))
    execution = sfn.start_execution(
        stateMachineArn=arn, name="stopped", input=json.dumps(list(range(3)))
    )["executionArn"]
    until(lambda: "WaitStateEntered" in kinds(full_history(sfn, execution)), "an iteration waiting")

    sfn.stop_execution(executionArn=execution, error="Operator.Cancelled", cause="not needed")

    until(
        lambda: bool(
            {"ExecutionAborted", "ExecutionFailed"} & set(kinds(full_history(sfn, execution)))
        ),
        "ended after the stop",
    )
    described = sfn.describe_execution(executionArn=execution)
    assert (described["status"], described["error"], described["cause"]) == (
        "ABORTED",
        "Operator.Cancelled",
        "not needed",
    )
    assert "ExecutionFailed" not in kinds(full_history(sfn, execution))
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR] == []


# --- what a history holds -------------------------------------------------------------------

BIG_LOOP = {
    "StartAt": "Grow",
    "States": {
        "Grow": {
            "Type": "Pass",
            "Parameters": {"big.$": "$.big", "n.$": "States.MathAdd($.n, 1)"},
            "Next": "Done?",
        },
        "Done?": {
            "Type": "Choice",
            "Choices": [{"Variable": "$.n", "NumericGreaterThanEquals": 12, "Next": "End"}],
            "Default": "Grow",
        },
        "End": {"Type": "Succeed"},
    },
}
"""Twelve turns of a loop on a 20,000-character state: about 50 events carrying it."""


def test_a_historys_data_past_its_budget_is_kept_truncated_as_aws_marks_it(
    sfn: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Found by the held-back attacks: a loop on a 100 KB state kept every event's copy of it
    and took the server past 1.5 GB in 10 s."""
    monkeypatch.setattr(quotas, "HISTORY_DATA_CHARACTERS", 200_000)
    arn = machine(sfn, "big-loop", BIG_LOOP)
    execution = sfn.start_execution(
        stateMachineArn=arn, name="big", input=json.dumps({"big": "x" * 20_000, "n": 0})
    )["executionArn"]
    assert ended(sfn, execution)["status"] == "SUCCEEDED"
    details = [
        detail
        for event in full_history(sfn, execution)
        for key, detail in event.items()
        if key.endswith("EventDetails") and isinstance(detail, dict)
    ]
    carried = sum(len(d.get("input", "")) + len(d.get("output", "")) for d in details)
    truncated = [d for d in details if d.get("inputDetails") == {"truncated": True}]
    assert carried <= 200_000
    assert truncated
    assert all(d["input"] == "" for d in truncated)
