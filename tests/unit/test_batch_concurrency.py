"""A batch processed concurrently decides exactly as the same batch processed one record
at a time: the sequential path is the reference, on generated batches of new, repeated,
conflicting, invalid and failing records (Hypothesis)."""

from __future__ import annotations

import io
import json
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from moto import mock_aws

from order_guard import queue_worker
from order_guard.config import QueueWorkerSettings
from order_guard.exceptions import ConfigurationError
from tests.support.aws import create_table, scan_orders, shared_client, sqs_record
from tests.support.environment import function_environment, queue_settings

KEYS = ["a", "b", "c"]
INVALID = ["not json", '{"id": "a", "quantity": 0}', '{"id": 5, "quantity": 1}', "[1]"]
BODIES = st.one_of(
    st.builds(
        lambda key, quantity: json.dumps({"id": key, "quantity": quantity}),
        st.sampled_from(KEYS),
        st.sampled_from([1, 2]),
    ),
    st.sampled_from(INVALID),
)


class FailingFor:
    """A DynamoDB client whose PutItem is throttled for some order ids (after botocore's
    retries), and which counts the PutItems in flight at once."""

    def __init__(self, client: Any, failing: set[str]) -> None:
        self._client = client
        self._failing = failing
        self._lock = threading.Lock()
        self.in_flight = 0
        self.most_in_flight = 0

    def put_item(self, **kwargs: Any) -> Any:
        with self._lock:
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
        try:
            time.sleep(0.002)  # long enough for other records to start meanwhile
            if kwargs["Item"]["id"]["S"] in self._failing:
                raise ClientError(
                    {
                        "Error": {"Code": "ThrottlingException", "Message": "slow down"},
                        "ResponseMetadata": {"HTTPStatusCode": 400},
                    },
                    "PutItem",
                )
            return self._client.put_item(**kwargs)
        finally:
            with self._lock:
                self.in_flight -= 1


THREADS = {10: ThreadPoolExecutor(max_workers=10, thread_name_prefix="record")}
"""Record threads kept across every batch of this module, as an execution environment
keeps them between invocations (``queue_worker.dependencies``)."""


def run(
    bodies: list[str], failing: set[str], stored: dict[str, int], concurrency: int
) -> tuple[list[str], dict[str, tuple[int, int]], dict[str, str], int]:
    """(listed message ids in order, the table, each message's decision, most in flight)."""
    dynamodb = shared_client("dynamodb", region_name="us-east-1")
    table = f"orders-{uuid.uuid4().hex[:8]}"
    create_table(
        dynamodb,
        table,
        {
            "BillingMode": "PAY_PER_REQUEST",
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
        },
    )
    for order_id, quantity in stored.items():
        dynamodb.put_item(
            TableName=table,
            Item={
                "id": {"S": order_id},
                "quantity": {"N": str(quantity)},
                "total_cents": {"N": str(quantity * 250 + 100)},
            },
        )
    client = FailingFor(dynamodb, failing)
    settings_ = replace(queue_settings(table), record_concurrency=concurrency)
    records = [sqs_record(body, message_id=f"m{i:02d}") for i, body in enumerate(bodies)]
    stream = io.StringIO()
    previous = queue_worker.logger.registered_handler.setStream(stream)
    try:
        response = queue_worker.handle_batch(
            {"Records": records},
            None,
            queue_worker.Dependencies(client, settings_, record_threads=THREADS.get(concurrency)),
        )
    finally:
        queue_worker.logger.registered_handler.setStream(previous)
    decisions = {
        line["message_id"]: line["decision"]
        for line in map(json.loads, stream.getvalue().splitlines())
        if line.get("message") == "RESULT"
    }
    listed = [failure["itemIdentifier"] for failure in response["batchItemFailures"]]
    return listed, scan_orders(dynamodb, table), decisions, client.most_in_flight


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    bodies=st.lists(BODIES, min_size=1, max_size=10),
    failing=st.sets(st.sampled_from(KEYS), max_size=1),
    stored=st.dictionaries(st.sampled_from(KEYS), st.sampled_from([1, 2]), max_size=2),
)
def test_a_concurrent_batch_decides_exactly_as_a_sequential_one(
    bodies: list[str], failing: set[str], stored: dict[str, int]
) -> None:
    with mock_aws():
        sequential = run(bodies, failing, stored, concurrency=1)
        concurrent = run(bodies, failing, stored, concurrency=10)
    assert concurrent[:3] == sequential[:3]  # listed records, the table, every decision
    assert len(concurrent[2]) == len(bodies)  # one RESULT line per record
    assert sequential[3] <= 1  # the reference runs one record at a time


def test_different_keys_run_at_once_and_repeats_of_one_key_one_after_another() -> None:
    with mock_aws():
        spread = run([json.dumps({"id": f"k{i}", "quantity": 1}) for i in range(10)], set(), {}, 10)
        same = run([json.dumps({"id": "k", "quantity": 1})] * 10, set(), {}, 10)
    assert spread[3] > 1
    assert same[3] == 1
    assert list(same[2].values()) == ["accepted"] + ["duplicate"] * 9


@pytest.mark.parametrize("value", ["0", "11", "ten", "", "2.5"])
def test_the_concurrency_setting_is_validated_at_cold_start(value: str) -> None:
    environment = function_environment("QueueWorkerFunction", orders_table="t")
    environment["RECORD_CONCURRENCY"] = value
    with pytest.raises(ConfigurationError, match="RECORD_CONCURRENCY"):
        QueueWorkerSettings.from_environ(environment)
