"""Faults never become duplicates and are never silently acknowledged.

DynamoDB errors moto cannot produce come from botocore's Stubber; the crash test wraps
the moto client so that the worker dies part-way through a batch.
"""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from botocore.stub import Stubber

from order_guard import queue_worker, workflow_worker
from order_guard.exceptions import UnreadableStoredOrder
from tests.support.aws import (
    KeyedStubber,
    LambdaContext,
    Tables,
    scan_orders,
    shared_client,
    sqs_record,
    stored_answer,
)
from tests.support.environment import queue_settings, workflow_settings_for
from tests.support.logs import LogCapture

CONDITION_FAILED = ("ConditionalCheckFailedException", "The conditional request failed", 400)


def _item(
    quantity: dict[str, Any], total: dict[str, Any] | None = None, **extra: Any
) -> dict[str, Any]:
    item = {"id": {"S": "faulty"}, "quantity": quantity, "total_cents": total or {"N": "1100"}}
    item.update(extra)
    return item


# (label, error code, message, HTTP status, Item returned with the error or None)
FAULTS: list[tuple[str, str, str, int, dict[str, Any] | None]] = [
    (
        "throttled (provisioned throughput)",
        "ProvisionedThroughputExceededException",
        "Rate exceeded",
        400,
        None,
    ),
    (
        "throttled (request rate)",
        "ThrottlingException",
        "Rate of requests exceeds the allowed throughput",
        400,
        None,
    ),
    (
        "request limit exceeded",
        "RequestLimitExceeded",
        "Throughput exceeds the account limit",
        400,
        None,
    ),
    ("5xx internal server error", "InternalServerError", "Internal server error", 500, None),
    ("5xx service unavailable", "ServiceUnavailable", "Service unavailable", 503, None),
    (
        "access denied",
        "AccessDeniedException",
        "not authorized to perform dynamodb:PutItem",
        400,
        None,
    ),
    (
        "validation exception",
        "ValidationException",
        "One or more parameter values were invalid",
        400,
        None,
    ),
    ("resource not found", "ResourceNotFoundException", "Requested resource not found", 400, None),
    ("condition failed, no Item", *CONDITION_FAILED, None),
    ("condition failed, quantity of type S", *CONDITION_FAILED, _item({"S": "4"})),
    (
        "condition failed, quantity missing",
        *CONDITION_FAILED,
        {"id": {"S": "faulty"}, "total_cents": {"N": "1100"}},
    ),
    ("condition failed, total of type BOOL", *CONDITION_FAILED, _item({"N": "4"}, {"BOOL": True})),
    ("condition failed, quantity not a number", *CONDITION_FAILED, _item({"N": "four"})),
    (
        "condition failed, id of another order",
        *CONDITION_FAILED,
        {**_item({"N": "4"}), "id": {"S": "other"}},
    ),
    ("condition failed, very large quantity", *CONDITION_FAILED, _item({"N": "4" + "0" * 37})),
    ("condition failed, very large total", *CONDITION_FAILED, _item({"N": "4"}, {"N": "1.1E+125"})),
    ("condition failed, huge exponent", *CONDITION_FAILED, _item({"N": "9.9999E+125"})),
]


def stubbed_deps(
    tables: Tables, fault: tuple[str, str, str, int, dict[str, Any] | None]
) -> tuple[queue_worker.Dependencies, Stubber]:
    client = shared_client("dynamodb", region_name="us-east-1")
    stubber = Stubber(client)
    _, code, message, status, item = fault
    modeled = {"Item": item} if item is not None else None
    stubber.add_client_error(
        "put_item", code, message, http_status_code=status, modeled_fields=modeled
    )
    return queue_worker.Dependencies(
        dynamodb=client, settings=queue_settings(tables.orders)
    ), stubber


@pytest.mark.parametrize("fault", FAULTS, ids=[fault[0] for fault in FAULTS])
def test_a_fault_is_reported_as_a_failure_never_as_a_duplicate(
    fault: tuple[str, str, str, int, dict[str, Any] | None],
    tables: Tables,
    lambda_context: LambdaContext,
    queue_logs: LogCapture,
) -> None:
    deps, stubber = stubbed_deps(tables, fault)
    record = sqs_record(json.dumps({"id": "faulty", "quantity": 4}))

    with stubber:
        response = queue_worker.handle_batch({"Records": [record]}, lambda_context, deps)

    stubber.assert_no_pending_responses()
    assert response == {"batchItemFailures": [{"itemIdentifier": record["messageId"]}]}
    (line,) = queue_logs.results()
    assert line["decision"] in ("error", "conflict")
    assert line["decision"] != "duplicate"


@pytest.mark.parametrize("fault", FAULTS, ids=[fault[0] for fault in FAULTS])
def test_a_fault_in_the_middle_of_a_batch_lists_exactly_that_record(
    fault: tuple[str, str, str, int, dict[str, Any] | None],
    tables: Tables,
    lambda_context: LambdaContext,
) -> None:
    client = shared_client("dynamodb", region_name="us-east-1")
    deps = queue_worker.Dependencies(dynamodb=client, settings=queue_settings(tables.orders))
    stubber = KeyedStubber(client)  # the three records call concurrently, in any order
    _, code, message, status, item = fault
    stubber.add_response_for("order-0", "put_item", stored_answer(tables.orders))  # succeeds
    stubber.add_client_error_for(
        "order-1",
        "put_item",
        code,
        message,
        http_status_code=status,
        modeled_fields={"Item": item} if item else None,
    )
    stubber.add_response_for("order-2", "put_item", stored_answer(tables.orders))  # succeeds
    records = [sqs_record(json.dumps({"id": f"order-{i}", "quantity": 4})) for i in range(3)]

    with stubber:
        response = queue_worker.handle_batch({"Records": records}, lambda_context, deps)

    stubber.assert_no_pending_responses()
    assert response == {"batchItemFailures": [{"itemIdentifier": records[1]["messageId"]}]}
    assert response["batchItemFailures"], "never an empty failure list while a record failed"


def test_unreadable_stored_items_are_the_error_decision_in_the_workflow_too(
    tables: Tables, lambda_context: LambdaContext
) -> None:
    client = shared_client("dynamodb", region_name="us-east-1")
    stubber = Stubber(client)
    stubber.add_response(
        "update_item",
        {"Attributes": {"attempts": {"N": "1"}}, **stored_answer(tables.attempts, 0.5)},
    )
    stubber.add_client_error("put_item", *CONDITION_FAILED[:2], http_status_code=400)
    deps = workflow_worker.Dependencies(
        dynamodb=client,
        settings=workflow_settings_for(tables.orders, tables.attempts),
    )
    with stubber, pytest.raises(UnreadableStoredOrder, match="has no Item"):
        workflow_worker.handle({"id": "faulty", "quantity": 4}, lambda_context, deps)


class WorkerCrashed(BaseException):
    """Stands for the process dying (timeout, out of memory): nothing catches it."""


class CrashAfter:
    """A DynamoDB client that lets ``writes`` PutItems through, then crashes."""

    def __init__(self, client: Any, writes: int) -> None:
        self._client = client
        self._left = writes
        self._lock = threading.Lock()  # records of a batch run in parallel threads

    def put_item(self, **kwargs: Any) -> Any:
        with self._lock:
            if self._left == 0:
                raise WorkerCrashed("the execution environment died mid-batch")
            self._left -= 1
        return self._client.put_item(**kwargs)


def test_a_crash_after_some_writes_then_redelivery_gives_duplicates_and_accepts_not_conflicts(
    dynamodb: Any, tables: Tables, lambda_context: LambdaContext, queue_logs: LogCapture
) -> None:
    records = [sqs_record(json.dumps({"id": f"crash-{i}", "quantity": i + 1})) for i in range(10)]
    event = {"Records": records}
    crashing = queue_worker.Dependencies(
        dynamodb=CrashAfter(dynamodb, writes=4), settings=queue_settings(tables.orders)
    )

    with pytest.raises(WorkerCrashed):
        queue_worker.handle_batch(event, lambda_context, crashing)
    assert len(scan_orders(dynamodb, tables.orders)) == 4

    # The invocation failed, so SQS redelivers the whole batch.
    healthy = queue_worker.Dependencies(dynamodb=dynamodb, settings=queue_settings(tables.orders))
    response = queue_worker.handle_batch(event, lambda_context, healthy)

    assert response == {"batchItemFailures": []}
    redelivered = [line["decision"] for line in queue_logs.results()[-10:]]
    assert sorted(redelivered) == ["accepted"] * 6 + ["duplicate"] * 4  # never a conflict
    assert scan_orders(dynamodb, tables.orders) == {
        f"crash-{i}": (i + 1, (i + 1) * 250 + 100) for i in range(10)
    }
