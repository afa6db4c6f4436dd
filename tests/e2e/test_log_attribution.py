"""Every line a function writes belongs to its invocation, whichever thread wrote it.

Issue 18, finding 2: with 4 concurrent senders of 10-message batches, all 600 orders were
stored but 47 RESULT lines were missing from the log group (printed on the server's
terminal instead): output was attributed by thread id, and the id of a server thread
that was alive when an invocation started was reused by that invocation's record threads.
Each execution environment is a process of its own now (issue 27): what it writes to
stdout and stderr is its log stream, and a line belongs to the invocation whose answer
follows it, whichever of its threads wrote it. (How the local cloud's in-process runtime,
kept for its own unit tests, attributes lines by thread is tested in
``localcloud/tests/test_lambda_runtime.py``.)
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Iterator

import boto3
import pytest
import requests

from localcloud.account import LocalCloud
from localcloud.server.guard import VIEW_PREFIX
from localcloud.services.lambda_ import ProcessFunction
from localcloud.state import queue_empty
from localcloud.tests.support.paths import FIXTURES as LOCALCLOUD_FIXTURES
from order_guard_tools.cloud import OrderGuardCloud
from tests.support.order_guard import started
from tests.support.paths import ROOT

RUNTIME_PROBES = LOCALCLOUD_FIXTURES / "runtime_probes"
SENDERS = int(os.environ.get("ORDER_GUARD_ATTRIBUTION_SENDERS", "4"))
BATCHES = int(os.environ.get("ORDER_GUARD_ATTRIBUTION_BATCHES", "5"))
"""Per sender, per client kind (boto3 threads and AWS SDK for JavaScript senders): the
suite sends 2 × 4 × 5 batches of 10; ``make attribution`` sends 2 × 4 × 15 (moto's SQS scans
the whole queue on every call, so a deeper queue costs quadratic time, not coverage)."""


def function(handler: str) -> ProcessFunction:
    name = f"threads-{handler}-{uuid.uuid4().hex[:6]}"
    return ProcessFunction(
        name=name,
        arn=f"arn:aws:lambda:us-east-1:123456789012:function:{name}",
        code_uri=RUNTIME_PROBES,
        owns_code=False,  # the fixtures folder: never removed
        handler=f"threads.{handler}",
        environment={},
        timeout_s=10,
        memory_mb=128,
        log_group="/aws/lambda/threads",
        region="us-east-1",
    )


def test_lines_from_a_handlers_thread_pool_are_its_invocations() -> None:
    handler = function("pool")
    try:
        invocation = handler.invoke({})
    finally:
        handler.close()
    printed = [line for line in invocation.log_lines if line.startswith("record ")]
    assert sorted(printed) == sorted(f"record {n} of {invocation.request_id}" for n in range(10))


def test_a_line_written_between_invocations_comes_out_with_the_next_one() -> None:
    handler = function("background")
    try:
        first = handler.invoke({})
        second = handler.invoke({})
    finally:
        handler.close()
    assert first.payload == "started"
    assert second.payload == "told"
    assert "from a thread started by an earlier invocation" in second.log_lines
    assert "from a thread started by an earlier invocation" not in first.log_lines


# --- the finding itself: concurrent multi-record batches from several clients ----------


@pytest.fixture(scope="module")
def server() -> Iterator[LocalCloud]:
    with started(server=True, visibility_timeout=5) as running:
        running.start_event_sources(idle_wait_seconds=0.05)
        yield running


def boto3_senders(server: LocalCloud, prefix: str) -> list[str]:
    """``SENDERS`` threads, each with its own boto3 client, each sending ``BATCHES``
    batches of 10."""
    sent: list[list[str]] = [[] for _ in range(SENDERS)]

    def send(n: int) -> None:
        sqs = boto3.client(
            "sqs",
            endpoint_url=server.endpoint_url,
            region_name="us-east-1",
            aws_access_key_id="localcloud",
            aws_secret_access_key="localcloud",
        )
        for batch in range(BATCHES):
            ids = [f"{prefix}-py{n}-{batch}-{i}" for i in range(10)]
            sqs.send_message_batch(
                QueueUrl=server.outputs["JobsQueueUrl"],
                Entries=[
                    {"Id": str(i), "MessageBody": json.dumps({"id": order_id, "quantity": 2})}
                    for i, order_id in enumerate(ids)
                ],
            )
            sent[n] += ids

    threads = [threading.Thread(target=send, args=(n,)) for n in range(SENDERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [order_id for ids in sent for order_id in ids]


def js_senders(server: LocalCloud, prefix: str) -> subprocess.Popen[str]:
    """``SENDERS`` concurrent senders through the AWS SDK for JavaScript, in Node.js."""
    return subprocess.Popen(
        [
            "node",
            str(ROOT / "tests" / "support" / "send_batches.mjs"),
            str(server.endpoint_url),
            server.outputs["JobsQueueUrl"],
            str(SENDERS),
            str(BATCHES),
            prefix,
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )


Receives = dict[str, list[int]]
"""Per order id, the receive count of each write decision, in the order found."""


def result_lines(server: LocalCloud) -> Receives:
    """The queue worker's RESULT lines in its log group, per order id."""
    logs = server.client("logs")
    seen: Receives = defaultdict(list)
    kwargs = {"logGroupName": server.outputs["QueueWorkerLogGroupName"]}
    while True:
        page = logs.filter_log_events(**kwargs, filterPattern='"RESULT"')
        for event in page["events"]:
            for line in event["message"].splitlines():
                parsed = json.loads(line) if line.startswith("{") else {}
                if parsed.get("message") == "RESULT":
                    seen[parsed["id"]].append(int(parsed["receive_count"]))
        if not page.get("nextToken"):
            return seen
        kwargs["nextToken"] = page["nextToken"]


def decisions_in_the_view(server: LocalCloud) -> Receives:
    """The write decisions the live view lists, page by page, per order id."""
    seen: Receives = defaultdict(list)
    page = 1
    while True:
        state = requests.get(
            f"{server.endpoint_url}{VIEW_PREFIX}/state.json",
            params={"decisions": page},
            timeout=30,
        ).json()
        for decision in state["decisions"]:
            seen[decision["order_id"]].append(int(decision["detail"].removeprefix("receive ")))
        if page >= state["pages"]["decisions"]["count"]:
            return seen
        page += 1


def once_per_receive(found: Receives, sent: list[str]) -> dict[str, list[int]]:
    """The order ids whose decisions are not exactly one per receive (1, 2, … n), with
    what was found. A record is received again when its first attempt failed (an
    overloaded emulator can time a write out): each receive is one RESULT line."""
    return {
        order_id: found.get(order_id, [])
        for order_id in sent
        if sorted(found.get(order_id, [])) != list(range(1, len(found.get(order_id, [])) + 1))
        or not found.get(order_id)
    }


def test_every_message_of_concurrent_batches_from_several_clients_has_one_result_line(
    server: LocalCloud,
) -> None:
    prefix = f"attr-{uuid.uuid4().hex[:6]}"
    javascript = js_senders(server, prefix)
    sent = boto3_senders(server, prefix)
    out, _ = javascript.communicate(timeout=300)
    assert javascript.returncode == 0
    sent += json.loads(out)
    assert len(sent) == len(set(sent)) == 2 * SENDERS * BATCHES * 10
    while not queue_empty(server, server.outputs["JobsQueueUrl"]):
        time.sleep(0.5)  # each look scans the whole queue in moto

    stored = server.client("dynamodb").scan(
        TableName=server.outputs["OrdersTableName"], Select="COUNT"
    )["Count"]
    assert stored == len(sent)
    assert once_per_receive(result_lines(server), sent) == {}
    assert once_per_receive(decisions_in_the_view(server), sent) == {}


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85", "\x1c", "\x0b", "\r"])
def test_a_result_line_whose_id_holds_a_line_separator_is_one_log_event(separator: str) -> None:
    order_id = f"before{separator}after"
    with OrderGuardCloud(visibility_timeout=1) as cloud:
        cloud.client("sqs").send_message(
            QueueUrl=cloud.outputs["JobsQueueUrl"],
            MessageBody=json.dumps({"id": order_id, "quantity": 1}),
        )
        cloud.drain(timeout_s=30)
        events = cloud.client("logs").filter_log_events(
            logGroupName=cloud.outputs["QueueWorkerLogGroupName"], filterPattern='"RESULT"'
        )["events"]
        decisions = cloud.decisions.pages()["decisions"]

    (line,) = [json.loads(e["message"]) for e in events if e["message"].startswith("{")]
    assert (line["id"], line["decision"]) == (order_id, "accepted")
    assert [(d["order_id"], d["decision"]) for d in decisions] == [(order_id, "accepted")]
