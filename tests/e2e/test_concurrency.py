"""Concurrent deliveries against the local cloud's server mode: one winner per order.

64 threads call the queue worker's handler at once, each with its own one-record SQS
batch and its own DynamoDB client pointed at the local cloud's endpoint, so the
conditional writes race for real over HTTP. (The local cloud's own Lambda runtime runs
one invocation at a time; calling the handler directly is what lets 64 run together.)

What this shows about Order Guard: with a store that makes conditional writes atomic,
as DynamoDB does, the worker's decision (one PutItem, no read-before-write) yields
exactly one accepted write. The store's part is made certain to be tested: every write
is held between the emulator's read of the current item and its store
(:func:`~localcloud.tests.support.races.widened_check_to_write`), so a store without the
guarantee would give every writer of a round the win (the local cloud's own test shows
it, ``localcloud/tests/test_dynamodb_writes.py``). A worker that read before writing (a
``GetItem``, then a ``PutItem`` without the condition) failed the first round: not one of
its 64 deliveries was found a duplicate.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest

from localcloud import services
from localcloud.account import FAKE_CREDENTIALS, LocalCloud
from localcloud.tests.support.races import widened_check_to_write
from order_guard import queue_worker
from tests.support.aws import LambdaContext, scan_orders, sqs_record
from tests.support.environment import queue_settings
from tests.support.logs import LogCapture
from tests.support.order_guard import started

WRITERS = 64
ROUNDS = 5


@pytest.fixture(scope="module")
def server() -> Iterator[LocalCloud]:
    with started(server=True) as running:
        yield running


@pytest.fixture(autouse=True)
def held_between_read_and_store(server: LocalCloud) -> Iterator[None]:
    with widened_check_to_write(server.outputs["OrdersTableName"], gap_s=0.01):
        yield


def test_the_local_cloud_makes_dynamodb_writes_atomic(server: LocalCloud) -> None:
    assert services.patch_registry().installed()


def _deps(server: LocalCloud) -> queue_worker.Dependencies:
    client = boto3.client(
        "dynamodb",
        region_name=server.region,
        endpoint_url=server.endpoint_url,
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
    )
    return queue_worker.Dependencies(client, queue_settings(server.outputs["OrdersTableName"]))


@pytest.fixture(scope="module")
def writers(server: LocalCloud) -> list[queue_worker.Dependencies]:
    """One client per writer, reused across rounds (clients are costly to build)."""
    return [_deps(server) for _ in range(WRITERS)]


def _deliver_all(deps: list[queue_worker.Dependencies], bodies: list[str]) -> list[dict[str, Any]]:
    """Deliver each body in its own batch, all at once; return each batch's response."""
    barrier = threading.Barrier(len(bodies))

    def deliver(i: int) -> dict[str, Any]:
        event = {"Records": [sqs_record(bodies[i])]}
        barrier.wait()
        return dict(queue_worker.handle_batch(event, LambdaContext(), deps[i]))

    with ThreadPoolExecutor(max_workers=len(bodies)) as pool:
        return list(pool.map(deliver, range(len(bodies))))


def test_64_concurrent_deliveries_of_one_order_give_one_accepted_write_per_round(
    server: LocalCloud, writers: list[queue_worker.Dependencies], queue_logs: LogCapture
) -> None:
    winners_per_round = []
    for round_number in range(ROUNDS):
        body = json.dumps({"id": f"race-{round_number}", "quantity": 4})
        responses = _deliver_all(writers, [body] * WRITERS)
        assert all(response == {"batchItemFailures": []} for response in responses)
        decisions = [
            line["decision"]
            for line in queue_logs.results()
            if line["id"] == f"race-{round_number}"
        ]
        winners_per_round.append(decisions.count("accepted"))
        assert len(decisions) == WRITERS
        assert decisions.count("duplicate") == WRITERS - 1
    assert winners_per_round == [1] * ROUNDS
    dynamodb = _deps(server).dynamodb
    races = {
        k: v
        for k, v in scan_orders(dynamodb, server.outputs["OrdersTableName"]).items()
        if k.startswith("race-")
    }
    assert races == {f"race-{n}": (4, 1100) for n in range(ROUNDS)}


def test_64_concurrent_different_orders_are_all_accepted(
    server: LocalCloud, writers: list[queue_worker.Dependencies], queue_logs: LogCapture
) -> None:
    bodies = [json.dumps({"id": f"parallel-{i}", "quantity": i % 10 + 1}) for i in range(WRITERS)]

    responses = _deliver_all(writers, bodies)

    assert all(response == {"batchItemFailures": []} for response in responses)
    decisions = [
        line["decision"] for line in queue_logs.results() if line["id"].startswith("parallel-")
    ]
    assert decisions == ["accepted"] * WRITERS
    dynamodb = _deps(server).dynamodb
    stored = {
        k: v
        for k, v in scan_orders(dynamodb, server.outputs["OrdersTableName"]).items()
        if k.startswith("parallel-")
    }
    assert stored == {
        f"parallel-{i}": (i % 10 + 1, (i % 10 + 1) * 250 + 100) for i in range(WRITERS)
    }
