"""The SQS queue worker: partial batch responses, the seed queue scenario, RESULT logs."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import replace
from threading import Thread, current_thread
from typing import Any

import pytest
from botocore.stub import Stubber

from order_guard import queue_worker
from order_guard.exceptions import InvalidBatchEvent
from tests.support.aws import (
    KeyedStubber,
    LambdaContext,
    Tables,
    scan_orders,
    shared_client,
    sqs_record,
    stored_answer,
)
from tests.support.environment import function_environment, queue_settings
from tests.support.logs import LogCapture

Event = dict[str, Any]


def failures(response: Any) -> list[str]:
    return [item["itemIdentifier"] for item in response["batchItemFailures"]]


def ids(event: Event) -> list[str]:
    return [record["messageId"] for record in event["Records"]]


def test_seed_queue_scenario_stores_two_orders_and_acknowledges_two_duplicates(
    load_event: Callable[[str], Event],
    queue_deps: queue_worker.Dependencies,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
    queue_logs: LogCapture,
) -> None:
    responses = [
        queue_worker.handle_batch(load_event(name), lambda_context, queue_deps)
        for name in ("sqs-first-order", "sqs-two-copies", "sqs-independent-order")
    ]

    assert [failures(response) for response in responses] == [[], [], []]
    decisions = [(line["id"], line["decision"]) for line in queue_logs.results()]
    assert decisions == [
        ("dedup-order", "accepted"),
        ("dedup-order", "duplicate"),
        ("dedup-order", "duplicate"),
        ("other-order", "accepted"),
    ]
    assert scan_orders(dynamodb, tables.orders) == {
        "dedup-order": (4, 1100),
        "other-order": (1, 350),
    }


def test_record_results_have_the_documented_shape(
    load_event: Callable[[str], Event], queue_deps: queue_worker.Dependencies
) -> None:
    event = load_event("sqs-two-copies")
    first, second = event["Records"]
    processor_results = [
        queue_worker.process_record(first, queue_deps),
        queue_worker.process_record(second, queue_deps),
    ]
    assert processor_results == [
        {"id": "dedup-order", "quantity": 4, "processed": True, "duplicate": False},
        {"id": "dedup-order", "quantity": 4, "processed": False, "duplicate": True},
    ]


def test_a_conflicting_copy_is_reported_and_the_stored_item_is_unchanged(
    load_event: Callable[[str], Event],
    queue_deps: queue_worker.Dependencies,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
    queue_logs: LogCapture,
) -> None:
    queue_worker.handle_batch(load_event("sqs-first-order"), lambda_context, queue_deps)
    conflicting = load_event("sqs-conflicting-copy")

    response = queue_worker.handle_batch(conflicting, lambda_context, queue_deps)

    assert failures(response) == ids(conflicting)
    assert scan_orders(dynamodb, tables.orders) == {"dedup-order": (4, 1100)}
    conflict = queue_logs.results()[-1]
    assert conflict["decision"] == "conflict"
    assert conflict["stored"] == {"id": "dedup-order", "quantity": 4, "total_cents": 1100}
    assert conflict["requested"] == {"id": "dedup-order", "quantity": 5, "total_cents": 1350}


def test_a_mixed_batch_lists_exactly_the_bad_records(
    load_event: Callable[[str], Event],
    queue_deps: queue_worker.Dependencies,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
    queue_logs: LogCapture,
) -> None:
    event = load_event("sqs-mixed-batch")
    good = {
        record["messageId"]
        for record in event["Records"]
        if record["body"]
        in ('{"id": "mixed-good-1", "quantity": 2}', '{"id": "mixed-good-2", "quantity": 3}')
    }
    assert len(good) == 2

    response = queue_worker.handle_batch(event, lambda_context, queue_deps)

    assert failures(response) == [mid for mid in ids(event) if mid not in good]
    assert scan_orders(dynamodb, tables.orders) == {
        "mixed-good-1": (2, 600),
        "mixed-good-2": (3, 850),
    }
    invalid = [line for line in queue_logs.results() if line["decision"] == "invalid"]
    assert len(invalid) == len(event["Records"]) - 2
    assert all(line["reason"] for line in invalid)


def test_a_batch_where_every_record_fails_returns_every_id_instead_of_raising(
    queue_deps: queue_worker.Dependencies, lambda_context: LambdaContext
) -> None:
    event = {"Records": [sqs_record("nope"), sqs_record("{}")]}
    response = queue_worker.handle_batch(event, lambda_context, queue_deps)
    assert failures(response) == ids(event)


def test_a_transient_dynamodb_error_lists_the_record_and_writes_nothing(
    lambda_context: LambdaContext, dynamodb: Any, tables: Tables, queue_logs: LogCapture
) -> None:
    stubbed = shared_client("dynamodb", region_name="us-east-1")
    stubber = Stubber(stubbed)
    stubber.add_client_error(
        "put_item", "ProvisionedThroughputExceededException", "Rate exceeded", http_status_code=400
    )
    deps = queue_worker.Dependencies(dynamodb=stubbed, settings=queue_settings(tables.orders))
    event = {"Records": [sqs_record(json.dumps({"id": "throttled", "quantity": 2}))]}

    with stubber:
        response = queue_worker.handle_batch(event, lambda_context, deps)

    assert failures(response) == ids(event)
    assert scan_orders(dynamodb, tables.orders) == {}
    (line,) = queue_logs.results()
    assert line["decision"] == "error"
    assert line["error_type"] == "TransientStoreError"
    assert line["cause_type"] == "ProvisionedThroughputExceededException"
    assert line["transient"] is True
    assert (line["id"], line["quantity"]) == ("throttled", 2)


def test_a_good_record_next_to_a_failing_one_is_still_acknowledged(
    lambda_context: LambdaContext, dynamodb: Any, tables: Tables
) -> None:
    stubbed = shared_client("dynamodb", region_name="us-east-1")
    stubber = KeyedStubber(stubbed)  # the two records call concurrently, in any order
    stubber.add_client_error_for(
        "first", "put_item", "ThrottlingException", "slow down", http_status_code=400
    )
    stubber.add_response_for("second", "put_item", stored_answer(tables.orders))
    deps = queue_worker.Dependencies(dynamodb=stubbed, settings=queue_settings(tables.orders))
    event = {
        "Records": [
            sqs_record(json.dumps({"id": "first", "quantity": 1})),
            sqs_record(json.dumps({"id": "second", "quantity": 1})),
        ]
    }
    with stubber:
        response = queue_worker.handle_batch(event, lambda_context, deps)
    stubber.assert_no_pending_responses()
    assert failures(response) == ids(event)[:1]


@pytest.mark.parametrize(
    ("event", "got"),
    [
        ({}, "no Records key"),
        ({"Records": None}, "Records as null"),
        ({"Records": []}, "an empty Records list"),
        ({"Records": "x"}, "Records as a string"),
        ([], "an array"),
    ],
)
def test_an_event_without_records_raises_naming_what_it_has(
    event: Event, got: str, queue_deps: queue_worker.Dependencies, lambda_context: LambdaContext
) -> None:
    with pytest.raises(InvalidBatchEvent) as raised:
        queue_worker.handle_batch(event, lambda_context, queue_deps)
    assert str(raised.value) == (
        f"an SQS event is an object with a non-empty Records list; got {got}"
    )
    assert isinstance(raised.value, ValueError)


def test_result_logs_carry_the_record_fields_and_never_the_receipt_handle(
    load_event: Callable[[str], Event],
    queue_deps: queue_worker.Dependencies,
    lambda_context: LambdaContext,
    queue_logs: LogCapture,
) -> None:
    event = load_event("sqs-first-order")
    queue_worker.handle_batch(event, lambda_context, queue_deps)

    (line,) = queue_logs.results()
    record = event["Records"][0]
    assert line["message_id"] == record["messageId"]
    assert line["receive_count"] == "1"
    assert (line["id"], line["quantity"], line["decision"]) == ("dedup-order", 4, "accepted")
    assert record["receiptHandle"] not in queue_logs.text


class ThreadNoting:
    """A DynamoDB client that stores every order at once and notes which thread asked."""

    def __init__(self) -> None:
        self.threads: list[Thread] = []

    def put_item(self, **request: Any) -> dict[str, Any]:
        self.threads.append(current_thread())
        time.sleep(0.002)
        return {"ConsumedCapacity": {"TableName": request["TableName"], "CapacityUnits": 1.0}}


def test_the_execution_environment_keeps_its_record_threads_from_batch_to_batch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    environment = function_environment("QueueWorkerFunction", orders_table="orders")
    for name, value in {**environment, "RECORD_CONCURRENCY": "4"}.items():
        monkeypatch.setenv(name, value)
    queue_worker.dependencies.cache_clear()
    try:
        deps = queue_worker.dependencies()
        assert queue_worker.dependencies() is deps  # built once per environment
        used = []
        for batch in range(2):
            client = ThreadNoting()
            bodies = [json.dumps({"id": f"{batch}-{n}", "quantity": 1}) for n in range(10)]
            event = {"Records": [sqs_record(body) for body in bodies]}
            response = queue_worker.handle_batch(event, None, replace(deps, dynamodb=client))
            assert response == {"batchItemFailures": []}
            used.append(set(client.threads))
    finally:
        queue_worker.dependencies.cache_clear()
        queue_worker.metrics.clear_metrics()
    assert 1 < len(used[0]) <= 4  # up to RECORD_CONCURRENCY threads, not the caller
    assert current_thread() not in used[0]
    assert used[1] <= used[0]  # the second batch ran on the threads the first one started
