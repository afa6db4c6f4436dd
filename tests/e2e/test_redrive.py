"""DLQ recovery: redriving the dead-letter queue is safe because the worker is idempotent."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from localcloud.account import LocalCloud
from localcloud.services.sqs.redrive import move_messages
from localcloud.state import queue_depth
from order_guard_tools.reads import stored


@pytest.fixture
def cloud(make_cloud: Callable[..., LocalCloud]) -> LocalCloud:
    return make_cloud(visibility_timeout=1)


def test_a_redriven_duplicate_is_acknowledged_and_a_redriven_conflict_returns_to_the_dlq(
    cloud: LocalCloud,
) -> None:
    sqs = cloud.client("sqs")
    queue, dlq = cloud.outputs["JobsQueueUrl"], cloud.outputs["JobsDeadLetterQueueUrl"]
    original = json.dumps({"id": "redrive-order", "quantity": 3})
    conflicting = json.dumps({"id": "redrive-order", "quantity": 7})
    sqs.send_message(QueueUrl=queue, MessageBody=original)
    sqs.send_message(QueueUrl=queue, MessageBody=conflicting)
    cloud.drain()
    assert queue_depth(cloud, dlq) == (1, 0)
    # A copy of the stored order also sits in the DLQ, as if an earlier delivery had
    # exhausted its receives during a throttling burst before a later copy succeeded.
    sqs.send_message(QueueUrl=dlq, MessageBody=original)

    moved = move_messages(sqs, dlq, queue)
    outcomes = cloud.drain()

    assert moved == 2
    decisions = [
        json.loads(line)["decision"]
        for outcome in outcomes
        if outcome.invocation
        for line in outcome.invocation.log_lines
        if '"message":"RESULT"' in line
    ]
    assert sorted(set(decisions)) == ["conflict", "duplicate"]
    assert decisions.count("duplicate") == 1
    assert decisions.count("conflict") == 5  # maxReceiveCount receives, then redrive again
    (dead,) = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10)["Messages"]
    assert dead["Body"] == conflicting
    assert queue_depth(cloud, queue) == (0, 0)
    assert stored(cloud, "redrive-order") == {
        "id": "redrive-order",
        "quantity": 3,
        "total_cents": 850,
    }
