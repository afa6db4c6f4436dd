"""The batch's critical-path probes (``make bench``, issue 21 part 4) measure what they
name: the SDK clock counts each PutItem once, on botocore's own events, and the client
without an SDK answers as the worker requires, so the worker stores every order."""

from __future__ import annotations

import io
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber

from order_guard import queue_worker
from order_guard_tools.bench.critical_path import AnsweringClient, SdkClock
from tests.support.environment import queue_settings

PUT = {
    "TableName": "orders",
    "Item": {"id": {"S": "o-1"}},
    "ConditionExpression": "attribute_not_exists(id)",
}


def stubbed_client() -> Any:
    """A DynamoDB client for a ``Stubber``: it sends nothing."""
    return boto3.client(
        "dynamodb",
        region_name="us-east-1",
        aws_access_key_id="test",
        aws_secret_access_key="test",  # noqa: S106 - a stubbed client sends nothing
    )


def test_the_sdk_clock_counts_each_put_item_once_and_nothing_else() -> None:
    client = stubbed_client()
    clock = SdkClock(client)
    with Stubber(client) as stub:
        stub.add_response("put_item", {}, PUT)
        stub.add_response("get_item", {}, {"TableName": "orders", "Key": {"id": {"S": "o-1"}}})
        stub.add_client_error("put_item", "ConditionalCheckFailedException", expected_params=PUT)
        client.put_item(**PUT)
        client.get_item(TableName="orders", Key={"id": {"S": "o-1"}})
        with pytest.raises(client.exceptions.ConditionalCheckFailedException):
            client.put_item(**PUT)

    assert len(clock.requests) == 2
    assert all(0 <= spent < 1 for spent in clock.requests)


def test_the_sdk_clock_counts_the_threads_cpu_not_its_waiting() -> None:
    client = stubbed_client()

    def work_then_wait(**_: object) -> None:
        started = time.thread_time()
        while time.thread_time() - started < 0.02:  # 20 ms of this thread's CPU
            pass
        time.sleep(0.1)  # 100 ms waiting, as on a socket

    client.meta.events.register("before-parameter-build.dynamodb.PutItem", work_then_wait)
    clock = SdkClock(client)
    with Stubber(client) as stub:
        stub.add_response("put_item", {}, PUT)
        client.put_item(**PUT)

    (spent,) = clock.requests
    assert 0.02 <= spent < 0.09


def test_with_the_answering_client_the_worker_stores_every_order_of_a_batch() -> None:
    threads = ThreadPoolExecutor(max_workers=10, thread_name_prefix="record")
    deps = queue_worker.Dependencies(
        dynamodb=AnsweringClient(0.001), settings=queue_settings("orders"), record_threads=threads
    )
    handler = queue_worker.logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    lines = io.StringIO()
    previous = handler.setStream(lines)
    try:
        event = {
            "Records": [
                {"messageId": f"m{n}", "body": f'{{"id":"o-{n}","quantity":1}}'} for n in range(10)
            ]
        }
        response = queue_worker.handle_batch(event, None, deps)
    finally:
        handler.setStream(previous)
        queue_worker.metrics.clear_metrics()
        threads.shutdown()

    assert response == {"batchItemFailures": []}
    assert lines.getvalue().count('"decision":"accepted"') == 10
