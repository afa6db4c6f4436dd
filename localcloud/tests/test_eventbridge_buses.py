"""An event routed from one bus to another is delivered there and goes no further bus:
EventBridge does not route an event received from a sender bus to a third bus, nor back
(``localcloud.services.events.delivery``). A bus loop therefore ends after one hop.

The buses ``first``, ``second`` and ``third`` of one in-process account; a rule on each
matches ``app.loop`` events and sends them to a queue of its own; ``first`` also sends
them to ``second``, and ``second`` to ``first`` and ``third``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from localcloud.services.events import delivery
from localcloud.tests.support.aws import REGION

PATTERN = json.dumps({"source": ["app.loop"]})
FORWARDS = {"first": ["second"], "second": ["first", "third"], "third": []}


@pytest.fixture
def received(patched: None, capsys: pytest.CaptureFixture[str]) -> Iterator[dict[str, Any]]:
    """Two events put on ``first``, every delivery ended: each bus's queue's messages, and
    what the local cloud printed."""
    with mock_aws():
        events = boto3.client("events", region_name=REGION)
        sqs = boto3.client("sqs", region_name=REGION)
        queues = {}
        for bus in FORWARDS:
            events.create_event_bus(Name=bus)
            queues[bus] = sqs.create_queue(QueueName=f"{bus}-seen")["QueueUrl"]
        for bus, onward in FORWARDS.items():
            queue_arn = sqs.get_queue_attributes(QueueUrl=queues[bus], AttributeNames=["QueueArn"])
            targets = [{"Id": "seen", "Arn": queue_arn["Attributes"]["QueueArn"]}]
            targets += [
                {"Id": to, "Arn": events.describe_event_bus(Name=to)["Arn"]} for to in onward
            ]
            events.put_rule(Name=f"{bus}-loop", EventBusName=bus, EventPattern=PATTERN)
            events.put_targets(Rule=f"{bus}-loop", EventBusName=bus, Targets=targets)

        events.put_events(
            Entries=[
                {
                    "Source": "app.loop",
                    "DetailType": "round",
                    "Detail": json.dumps({"n": n}),
                    "EventBusName": "first",
                }
                for n in (1, 2)
            ]
        )
        settled = delivery.wait_delivered(10)  # a loop would still deliver: a hang guard

        yield {
            "settled": settled,
            "printed": capsys.readouterr().out,
            **{
                bus: sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
                for bus, url in queues.items()
            },
        }


def details(messages: list[dict[str, Any]]) -> list[Any]:
    return sorted((json.loads(m["Body"])["detail"]["n"] for m in messages), key=int)


def test_a_bus_loop_ends_after_one_hop(received: dict[str, Any]) -> None:
    assert received["settled"]
    assert details(received["first"]) == [1, 2]  # the events put there; they never come back


def test_the_bus_an_event_was_forwarded_to_delivers_it_to_its_other_targets(
    received: dict[str, Any],
) -> None:
    assert details(received["second"]) == [1, 2]


def test_an_event_forwarded_once_reaches_no_third_bus(received: dict[str, Any]) -> None:
    assert received["third"] == []


def test_the_dropped_forwards_are_said_once_naming_the_rule_and_the_buses(
    received: dict[str, Any],
) -> None:
    lines = [line for line in received["printed"].splitlines() if "not forwarded" in line]

    assert len(lines) == 1
    assert "second-loop" in lines[0]
    assert "event-bus/first" in lines[0]
    assert "event-bus/third" in lines[0]
