"""The bad-input catalogue through the local cloud: every invalid body reaches the DLQ
after maxReceiveCount receives, intact, and every good body beside it is stored."""

from __future__ import annotations

import json
from collections import Counter

from localcloud.state import queue_depth
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.reads import max_receive_count, scan_ids
from tests.support.catalogue import ACCEPTED, INVALID

# SQS refuses an empty message body (MessageBody: minimum length 1), so that case can
# only reach the worker directly (tests/unit/test_bad_input.py covers it there).
SENDABLE_INVALID = [case for case in INVALID if case.body]


def test_invalid_bodies_reach_the_dlq_intact_and_good_neighbours_are_stored() -> None:
    with OrderGuardCloud(visibility_timeout=1) as cloud:
        sqs = cloud.client("sqs")
        queue = cloud.outputs["JobsQueueUrl"]
        for case in SENDABLE_INVALID + ACCEPTED:
            sqs.send_message(QueueUrl=queue, MessageBody=case.body)

        outcomes = cloud.drain(timeout_s=300)

        receives = max_receive_count(cloud)
        results = [
            json.loads(line)
            for outcome in outcomes
            if outcome.invocation
            for line in outcome.invocation.log_lines
            if '"message":"RESULT"' in line
        ]
        decisions = Counter(line["decision"] for line in results)
        assert decisions == {"invalid": receives * len(SENDABLE_INVALID), "accepted": len(ACCEPTED)}

        dead: list[str] = []
        dlq = cloud.outputs["JobsDeadLetterQueueUrl"]
        while page := sqs.receive_message(
            QueueUrl=dlq, MaxNumberOfMessages=10, VisibilityTimeout=60
        ).get("Messages"):
            dead.extend(message["Body"] for message in page)
        assert Counter(dead) == Counter(case.body for case in SENDABLE_INVALID)
        assert queue_depth(cloud, queue) == (0, 0)
        stored_ids = {case.stored_id for case in ACCEPTED if case.stored_id}
        assert set(scan_ids(cloud, stored_ids)) == stored_ids
