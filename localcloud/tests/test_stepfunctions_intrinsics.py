"""What a state builds stays within Step Functions' bounds on the local cloud, checked before
it is built: ``States.ArrayRange`` counts its (at most 1,000) items first; ``States.Format``
fills each ``{}`` with an argument and nothing else; a text an intrinsic writes, an input
after ``Parameters`` and an item after ``ItemSelector`` stop at the 256 KiB payload quota,
``States.DataLimitExceeded`` (``localcloud.services.stepfunctions.intrinsics``,
``.payload``).

One in-process account for the module. The attacks are the reviewer's: each made the server
build hundreds of megabytes (or a gigabyte) before it failed; ``grown_mb`` is how much the
process's peak memory grew meanwhile.
"""

from __future__ import annotations

import json
import resource
from collections.abc import Iterator
from typing import Any

import pytest

from localcloud.services.stepfunctions.payload import PAYLOAD_MAX_BYTES, payload_size
from localcloud.tests.support.states import account, ended, machine

BIG = "a" * 200_000
"""A string within the payload quota that a state can name many times."""
REPEATED = 250
"""How many times the attacks name :data:`BIG`: 50 MB of text from 4 KB of definition
(the server wrote it whole, and more: 100 to 150 MB; the reviewer's 1,000 took 400 to
580 MB)."""
GROWN_MB_MAX = 25
"""What the peak memory may grow by while a state fails on its size: far below the text."""
DATA_LIMIT = "States.DataLimitExceeded"


@pytest.fixture(scope="module")
def sfn() -> Iterator[Any]:
    with account() as client:
        yield client


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def passing(sfn: Any, name: str, parameters: Any, state_input: Any = None) -> dict[str, Any]:
    """DescribeExecution of a Pass state with ``parameters``, run on ``state_input``."""
    arn = machine(
        sfn,
        name,
        {"StartAt": "P", "States": {"P": {"Type": "Pass", "Parameters": parameters, "End": True}}},
    )
    execution = sfn.start_execution(
        stateMachineArn=arn, name="n", input=json.dumps(state_input or {})
    )
    return ended(sfn, execution["executionArn"])


def output(described: dict[str, Any]) -> Any:
    assert described["status"] == "SUCCEEDED", described
    return json.loads(described["output"])


# --- States.ArrayRange --------------------------------------------------------------------


def test_array_range_counts_its_items_before_it_makes_them(sfn: Any) -> None:
    before = peak_mb()

    # the reviewer's attack: 30,000,001 items took 1.15 GB before they were counted
    described = passing(sfn, "range", {"r.$": "States.ArrayRange(0, 30000000, 1)"})

    assert peak_mb() - before < GROWN_MB_MAX
    assert (described["status"], described["error"]) == ("FAILED", "States.Runtime")
    assert "Arrays cannot contain more than 1000 items, size: 30000001." in described["cause"]


def test_array_range_makes_up_to_1000_items(sfn: Any) -> None:
    described = passing(sfn, "range-1000", {"r.$": "States.ArrayRange(1, 1000, 1)"})

    assert output(described)["r"] == list(range(1, 1001))


def test_array_range_steps_to_its_last_item(sfn: Any) -> None:
    described = passing(sfn, "range-step", {"r.$": "States.ArrayRange(1, 9, 2)"})

    assert output(described)["r"] == [1, 3, 5, 7, 9]


# --- States.Format ------------------------------------------------------------------------


def test_format_fills_each_placeholder_with_the_next_argument(sfn: Any) -> None:
    described = passing(
        sfn,
        "format",
        {"f.$": "States.Format('{} ordered {} of {}', $.who, $.quantity, $.items)"},
        {"who": "Arnav", "quantity": 2, "items": [{"id": "a"}]},
    )

    assert output(described)["f"] == "Arnav ordered 2 of [{id=a}]"


def test_format_takes_any_other_brace_as_text(sfn: Any) -> None:
    # Python's str.format read "{0.__class__}" as an attribute and "{:>999999999}" as a
    # gigabyte of padding
    template = "{0.__class__} {:>999999999} {}"

    described = passing(
        sfn, "format-braces", {"f.$": "States.Format($.t, $.x)"}, {"t": template, "x": "x"}
    )

    assert output(described)["f"] == "{0.__class__} {:>999999999} x"


def test_format_with_more_arguments_than_placeholders_fails(sfn: Any) -> None:
    described = passing(sfn, "format-count", {"f.$": "States.Format('{}', $.a, $.a)"}, {"a": "x"})

    assert (described["status"], described["error"]) == ("FAILED", "States.Runtime")
    assert "template holds 1 '{}' and 2 argument(s) follow it" in described["cause"]


def test_format_text_past_the_payload_quota_fails_before_it_is_written(sfn: Any) -> None:
    intrinsic = f"States.Format('{'{}' * REPEATED}', {', '.join(['$.big'] * REPEATED)})"
    before = peak_mb()

    described = passing(sfn, "format-big", {"f.$": intrinsic}, {"big": BIG})

    assert peak_mb() - before < GROWN_MB_MAX
    assert (described["status"], described["error"]) == ("FAILED", DATA_LIMIT)
    assert described["cause"] == (
        "The state/task 'P' has a States.Format result with a size exceeding the maximum "
        "number of bytes service limit."
    )


# --- States.JsonToString, Parameters, ItemSelector ------------------------------------------


def test_json_to_string_past_the_payload_quota_fails_before_it_is_written(sfn: Any) -> None:
    intrinsic = f"States.JsonToString(States.Array({', '.join(['$.big'] * REPEATED)}))"
    before = peak_mb()

    described = passing(sfn, "json-big", {"j.$": intrinsic}, {"big": BIG})

    assert peak_mb() - before < GROWN_MB_MAX
    assert (described["status"], described["error"]) == ("FAILED", DATA_LIMIT)
    assert "has a States.JsonToString result with a size exceeding" in described["cause"]


def test_parameters_past_the_payload_quota_fail_the_state_before_it_is_written(
    sfn: Any,
) -> None:
    parameters = {f"k{index}.$": "$.big" for index in range(REPEATED)}
    before = peak_mb()

    described = passing(sfn, "parameters-big", parameters, {"big": BIG})

    assert peak_mb() - before < GROWN_MB_MAX
    assert (described["status"], described["error"]) == ("FAILED", DATA_LIMIT)
    assert described["cause"] == (
        "The state/task 'P' has an input after Parameters processing with a size exceeding "
        "the maximum number of bytes service limit."
    )


def test_an_item_past_the_payload_quota_after_item_selector_fails_the_map(sfn: Any) -> None:
    selector = {"first.$": "$.big", "second.$": "$.big"}  # 400 KB for each item
    arn = machine(
        sfn,
        "item-selector",
        {
            "StartAt": "Each",
            "States": {
                "Each": {
                    "Type": "Map",
                    "ItemsPath": "$.items",
                    "ItemSelector": selector,
                    "ItemProcessor": {
                        "StartAt": "P",
                        "States": {"P": {"Type": "Pass", "End": True}},
                    },
                    "End": True,
                }
            },
        },
    )

    execution = sfn.start_execution(
        stateMachineArn=arn, name="n", input=json.dumps({"big": BIG, "items": [0]})
    )

    described = ended(sfn, execution["executionArn"])
    assert (described["status"], described["error"]) == ("FAILED", DATA_LIMIT)
    assert "has an item after ItemSelector processing with a size exceeding" in described["cause"]


# --- the measure --------------------------------------------------------------------------


def test_a_payload_is_measured_no_further_than_the_quota() -> None:
    named_many_times = [BIG] * REPEATED

    assert payload_size(named_many_times) == PAYLOAD_MAX_BYTES + 1


def test_a_payload_is_measured_in_bytes_of_compact_utf8_json() -> None:
    assert payload_size({"é": [1, "x"]}) == len('{"é":[1,"x"]}'.encode())
    assert payload_size("é" * 10) == 20
