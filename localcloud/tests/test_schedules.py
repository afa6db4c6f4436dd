"""Schedules on the local cloud, as the scheduled app (``fixtures/apps/scheduled_app``)
writes them: SAM's ``Schedule`` (an EventBridge rule) and ``ScheduleV2`` (EventBridge
Scheduler) and a hand-written ``AWS::Scheduler::Schedule`` fire on their schedule (the
clock asked about a later moment) and at once when fired by name; expressions are read
as EventBridge writes them and refused by name otherwise."""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.template import from_body, load
from localcloud.services.events.schedules import ScheduleError, parse
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import APPS

UTC = datetime.UTC
STACK = "scheduled-app"


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    template = load(APPS / "scheduled_app" / "template.yaml")
    with started(template=template, stack_name=STACK) as running:
        yield running


def ticks(cloud: LocalCloud) -> list[Any]:
    function = cloud.function("Ticker")
    logs = cloud.client("logs")
    try:
        streams = logs.describe_log_streams(logGroupName=function.log_group)["logStreams"]
    except logs.exceptions.ResourceNotFoundException:
        return []
    found = []
    for stream in streams:
        for event in logs.get_log_events(
            logGroupName=function.log_group, logStreamName=stream["logStreamName"]
        )["events"]:
            if event["message"].startswith("{"):
                found.append(json.loads(event["message"])["received"])
    return found


def daily_messages(cloud: LocalCloud) -> list[str]:
    sqs = cloud.client("sqs")
    url = cloud.outputs["DailyQueueUrl"]
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10).get("Messages", [])
    for message in messages:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return [message["Body"] for message in messages]


def test_each_schedule_fires_now_when_fired_by_name(cloud: LocalCloud) -> None:
    before = ticks(cloud)
    assert cloud.fire_schedule(f"{STACK}-every-five-minutes").endswith(
        f":rule/{STACK}-every-five-minutes"
    )
    assert ":schedule/default/" in cloud.fire_schedule(f"{STACK}-weekday-noon")
    cloud.fire_schedule(f"{STACK}-daily")
    cloud.settle_events(30)
    fired = [t for t in ticks(cloud) if t not in before]
    assert ticks(cloud).count({"tick": "rate"}) == before.count({"tick": "rate"}) + 1
    (cron,) = [t for t in fired if t.get("tick") == "cron"]
    assert datetime.datetime.strptime(cron["at"], "%Y-%m-%dT%H:%M:%SZ")  # filled in
    assert daily_messages(cloud) == ["daily message"]
    with pytest.raises(KeyError, match="no enabled schedule"):
        cloud.fire_schedule("no-such-schedule")


def test_the_clock_fires_each_schedule_when_it_is_due(cloud: LocalCloud) -> None:
    assert cloud.clock is not None
    now = datetime.datetime.now(UTC)
    cloud.clock.tick(now)  # every schedule seen, none due yet
    rates = ticks(cloud).count({"tick": "rate"})
    assert cloud.clock.tick(now + datetime.timedelta(minutes=4)) == 0
    assert cloud.clock.tick(now + datetime.timedelta(minutes=5, seconds=1)) == 1  # the rate
    cloud.settle_events(30)
    assert ticks(cloud).count({"tick": "rate"}) == rates + 1
    # a day and more later: the rate again, the daily message, and the next weekday
    # noon in Paris (whatever today is, within 4 days)
    assert cloud.clock.tick(now + datetime.timedelta(days=4)) == 3
    cloud.settle_events(30)
    assert daily_messages(cloud) == ["daily message"]


@pytest.mark.parametrize(
    ("expression", "after", "expected"),
    [
        ("rate(1 minute)", "2026-12-03T10:00:00", "2026-12-03T10:01:00"),
        ("rate(2 hours)", "2026-12-03T10:00:00", "2026-12-03T12:00:00"),
        ("rate(7 days)", "2026-12-03T10:00:00", "2026-12-10T10:00:00"),
        ("cron(15 10 * * ? *)", "2026-12-03T10:00:00", "2026-12-03T10:15:00"),
        ("cron(0 18 ? * MON-FRI *)", "2026-12-04T19:00:00", "2026-12-07T18:00:00"),
        # day-of-week 1 is Sunday in EventBridge (0 in cron's usual reading)
        ("cron(0 8 ? * 1 *)", "2026-12-03T10:00:00", "2026-12-06T08:00:00"),
        ("cron(0 0 1 * ? *)", "2026-12-03T10:00:00", "2027-01-01T00:00:00"),
        ("cron(0/30 * * * ? *)", "2026-12-03T10:05:00", "2026-12-03T10:30:00"),
        ("cron(0 9 L * ? *)", "2026-12-03T10:00:00", "2026-12-31T09:00:00"),
        ("cron(0 9 ? * 6#3 *)", "2026-12-03T10:00:00", "2026-12-18T09:00:00"),
        ("cron(0 0 1 1 ? 2028)", "2026-12-03T10:00:00", "2028-01-01T00:00:00"),
        ("cron(0 10 ? * 6L *)", "2026-12-03T10:00:00", "2026-12-25T10:00:00"),  # last Friday
        ("cron(0 * * * ? 2027)", "2026-01-02T10:00:00", "2027-01-01T00:00:00"),
        ("cron(0 0 1 1 ? */2)", "2026-12-03T10:00:00", "2028-01-01T00:00:00"),
        ("cron(0 0 1 1 ? 2026-2027)", "2027-06-03T10:00:00", None),
        ("at(2026-12-24T18:00:00)", "2026-12-03T10:00:00", "2026-12-24T18:00:00"),
        ("at(2026-12-01T18:00:00)", "2026-12-03T10:00:00", None),
    ],
)
def test_an_expression_fires_when_eventbridge_would(
    expression: str, after: str, expected: str | None
) -> None:
    moment = datetime.datetime.fromisoformat(after).replace(tzinfo=UTC)
    found = parse(expression).next_after(moment)
    assert (found.strftime("%Y-%m-%dT%H:%M:%S") if found else None) == expected


def test_a_schedule_in_a_time_zone_fires_at_its_local_time() -> None:
    moment = datetime.datetime(2026, 7, 1, 0, 0, tzinfo=UTC)
    found = parse("cron(0 12 * * ? *)").next_after(moment, "Europe/Paris")
    assert found == datetime.datetime(2026, 7, 1, 10, 0, tzinfo=UTC)  # summer time


@pytest.mark.parametrize(
    ("expression", "reason"),
    [
        ("rate(1 minutes)", "singular"),
        ("rate(5 minute)", "plural"),
        ("rate(0 minutes)", "positive"),
        ("cron(0 12 * * *)", "6 fields"),
        ("cron(0 12 * * * *)", "exactly one of day-of-month and day-of-week is ?"),
        ("cron(0 12 15W * ? *)", "W (nearest weekday)"),
        ("cron(0 12 ? * 8 *)", "day-of-week 8 is not 1-7"),
        ("every 5 minutes", "is not rate"),
        ("cron(0 12 ? * MON next)", "the year field"),
    ],
)
def test_an_expression_eventbridge_refuses_is_refused_by_name(expression: str, reason: str) -> None:
    with pytest.raises(ScheduleError, match=reason.replace("(", r"\(").replace(")", r"\)")):
        parse(expression)


def test_a_template_with_a_bad_schedule_is_refused_at_deploy(make_cloud: Any) -> None:
    cloud = make_cloud(template=None)
    template = from_body(
        {
            "Resources": {
                "Nightly": {
                    "Type": "AWS::Events::Rule",
                    "Properties": {"ScheduleExpression": "rate(1 hours)"},
                }
            }
        },
        {},
    )
    with pytest.raises(UnsupportedTemplate, match=r"^Nightly\.ScheduleExpression: .*singular"):
        cloud.deploy(template, stack_name="bad-schedule")
