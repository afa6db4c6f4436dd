"""Asynchronous invocations belong to the account that queued them: a retry still waiting
when its local cloud stops never runs in the next one, whose functions have the same
names (deterministic physical names of the same stack)."""

from __future__ import annotations

import time

import pytest

from localcloud.cloudformation.template import load
from localcloud.services.lambda_ import asynchronous
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import APPS
from localcloud.tests.test_eventbridge import logged

EVENTS_APP = APPS / "events_app"


@pytest.mark.slow  # two accounts, one after the other, and a retry's wait
def test_a_retry_waiting_when_its_account_stops_never_runs_in_the_next_one() -> None:
    template = load(EVENTS_APP / "template.yaml")
    with started(template=template, stack_name="events-again") as first:
        lam = first.client("lambda")
        name = first.function("TaskRefuser").name
        lam.invoke(FunctionName=name, InvocationType="Event", Payload=b'{"first": 1}')
        deadline = time.monotonic() + 10
        while not logged(first, "TaskRefuser", "refused") and time.monotonic() < deadline:
            time.sleep(0.1)
        assert logged(first, "TaskRefuser", "refused") == [{"first": 1}]  # its retry waits
    with started(template=template, stack_name="events-again") as second:
        time.sleep(sum(asynchronous.RETRY_DELAYS_S) + 1)
        second.settle_events(30)
        assert logged(second, "TaskRefuser", "refused") == []
