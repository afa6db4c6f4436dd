"""Event source mappings cannot starve each other (issue 47): sixteen mappings whose
functions were busy froze every other mapping (an unrelated queue's message waited
15.7 s), as every poll ran on one pool of 16 threads. Lambda scales pollers per mapping:
a mapping whose function is busy delays no other. The same holds for asynchronous
invocation (EventBridge, SNS, S3, ``InvocationType=Event``), whose events ran on a pool
of 8 threads for every function together.

Seventeen queues each feed a function that waits until the test lets it go; one more
queue feeds a function that leaves a marker. The marker must appear while all seventeen
still run. The functions signal through files (no SDK to import: seventeen execution
environments start cheaply).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.tests.support.aws import handler_zip
from localcloud.tests.support.cloud import started

BUSY_MAPPINGS = 17
"""One more than the pool that every mapping's polls shared."""
BUSY_EVENTS = 9
"""One more than the pool every function's asynchronous events shared."""
ROLE = "arn:aws:iam::123456789012:role/mapped"
BUSY = """
import os, time

def handler(event, context):
    deadline = time.monotonic() + 60  # a hang guard, far above the test's wait
    while not os.path.exists(os.environ["RELEASE"]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return {}
"""
MARK = """
import os

def handler(event, context):
    with open(os.environ["MARKER"], "w") as marker:
        marker.write(event["Records"][0]["body"])
    return {}
"""


@pytest.fixture(scope="module")
def signals(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("signals")


@pytest.fixture(scope="module")
def cloud(signals: Path) -> Iterator[LocalCloud]:
    with started(server=True, template=None) as running:
        running.client("iam").create_role(RoleName="mapped", AssumeRolePolicyDocument="{}")
        running.start_event_sources(idle_wait_seconds=0.05)
        try:
            yield running
        finally:  # the busy functions end before the cloud stops
            (signals / "release").write_text("go")
            (signals / "release-async").write_text("go")
            eventually(lambda: finished(running, "busy") >= BUSY_MAPPINGS, timeout_s=10)
            eventually(lambda: finished(running, "busy-async") >= BUSY_EVENTS, timeout_s=10)


def finished(cloud: LocalCloud, name: str) -> int:
    """How many invocations of a busy function have ended (as many as it could have if it
    was never made)."""
    try:
        return cloud.function(name).invocations
    except KeyError:
        return max(BUSY_MAPPINGS, BUSY_EVENTS)


def create(cloud: LocalCloud, name: str, source: str, variables: dict[str, str]) -> None:
    cloud.client("lambda").create_function(
        FunctionName=name,
        Runtime="python3.13",
        Role=ROLE,
        Handler="app.handler",
        Code={"ZipFile": handler_zip(source)},
        Timeout=120,
        Environment={"Variables": variables},
    )


def mapped_queue(cloud: LocalCloud, name: str, function: str) -> str:
    sqs = cloud.client("sqs")
    url: str = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]
    cloud.client("lambda").create_event_source_mapping(
        EventSourceArn=arn["QueueArn"], FunctionName=function, BatchSize=1
    )
    return url


def eventually(found: Callable[[], Any], timeout_s: float) -> Any:
    """``found()`` once it is truthy, or its last value after ``timeout_s`` (a hang guard)."""
    deadline = time.monotonic() + timeout_s
    while not (value := found()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return value


def test_a_mapping_is_delivered_while_seventeen_others_functions_are_busy(
    cloud: LocalCloud, signals: Path
) -> None:
    create(cloud, "busy", BUSY, {"RELEASE": str(signals / "release")})
    create(cloud, "mark", MARK, {"MARKER": str(signals / "marker")})
    busy_queues = [mapped_queue(cloud, f"busy-{i}", "busy") for i in range(BUSY_MAPPINGS)]
    marker_queue = mapped_queue(cloud, "unrelated", "mark")
    busy = cloud.function("busy")
    sqs = cloud.client("sqs")
    for url in busy_queues:
        sqs.send_message(QueueUrl=url, MessageBody="wait")
    running = eventually(lambda: busy.environments() >= BUSY_MAPPINGS, timeout_s=30)

    sqs.send_message(QueueUrl=marker_queue, MessageBody="delivered")
    marked = eventually(lambda: (signals / "marker").exists(), timeout_s=20)

    assert running, f"{busy.environments()} of {BUSY_MAPPINGS} busy mappings' functions ran"
    assert marked, "the unrelated queue's message was not delivered"
    assert (signals / "marker").read_text() == "delivered"
    assert busy.invocations == 0  # every busy function was still running meanwhile


def test_an_asynchronous_event_runs_while_nine_of_another_functions_are_busy(
    cloud: LocalCloud, signals: Path
) -> None:
    create(cloud, "busy-async", BUSY, {"RELEASE": str(signals / "release-async")})
    create(cloud, "mark-async", MARK, {"MARKER": str(signals / "async-marker")})
    lambda_ = cloud.client("lambda")
    for _ in range(BUSY_EVENTS):
        lambda_.invoke(FunctionName="busy-async", InvocationType="Event", Payload=b"{}")
    busy = cloud.function("busy-async")
    running = eventually(lambda: busy.environments() >= BUSY_EVENTS, timeout_s=30)

    event = {"Records": [{"body": "delivered"}]}
    lambda_.invoke(FunctionName="mark-async", InvocationType="Event", Payload=json.dumps(event))
    marked = eventually(lambda: (signals / "async-marker").exists(), timeout_s=20)

    assert running, f"{busy.environments()} of {BUSY_EVENTS} busy events ran"
    assert marked, "the other function's event did not run"
    assert (signals / "async-marker").read_text() == "delivered"
    assert busy.invocations == 0  # every busy event was still running meanwhile
