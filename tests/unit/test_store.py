"""The conditional write and its decision, against moto and botocore's Stubber."""

from __future__ import annotations

from typing import Any

import pytest
from botocore.exceptions import ClientError
from botocore.stub import ANY, Stubber

from order_guard import workflow_worker
from order_guard.attempts import count_attempt
from order_guard.config import DYNAMODB_CLIENT_CONFIG, TOTAL_MAX_ATTEMPTS
from order_guard.decision import Decision
from order_guard.exceptions import (
    OrderConflict,
    OrderNotFound,
    TransientOrderError,
    TransientStoreError,
    UnreadableStoredOrder,
)
from order_guard.orders import Order
from order_guard.store import put_order_once, read_order
from tests.support import faults
from tests.support.aws import Tables, scan_orders, shared_client, stored_answer
from tests.support.environment import workflow_settings_for
from tests.support.faults import Fault, Kind
from tests.support.logs import LogCapture

EXPECTED_PUT = {
    "TableName": "orders",
    "Item": ANY,
    "ConditionExpression": "attribute_not_exists(id)",
    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
    "ReturnConsumedCapacity": "TOTAL",
}


def test_first_write_is_accepted(dynamodb: Any, tables: Tables) -> None:
    outcome = put_order_once(dynamodb, tables.orders, Order("dedup-order", 4))

    assert outcome.decision is Decision.ACCEPTED
    assert outcome.previous is None
    assert scan_orders(dynamodb, tables.orders) == {"dedup-order": (4, 1100)}


def test_same_details_again_is_a_duplicate_and_writes_nothing(
    dynamodb: Any, tables: Tables
) -> None:
    put_order_once(
        dynamodb, tables.orders, Order("dedup-order", 4), provenance={"first_written_by": "first"}
    )

    outcome = put_order_once(
        dynamodb, tables.orders, Order("dedup-order", 4), provenance={"first_written_by": "second"}
    )

    assert outcome.decision is Decision.DUPLICATE
    assert outcome.previous is not None
    assert outcome.previous.details() == {"id": "dedup-order", "quantity": 4, "total_cents": 1100}
    item = dynamodb.get_item(TableName=tables.orders, Key={"id": {"S": "dedup-order"}})["Item"]
    assert item["first_written_by"] == {"S": "first"}


def test_different_details_are_a_conflict_and_the_stored_item_stands(
    dynamodb: Any, tables: Tables
) -> None:
    put_order_once(dynamodb, tables.orders, Order("dedup-order", 4))

    outcome = put_order_once(dynamodb, tables.orders, Order("dedup-order", 5))

    assert outcome.decision is Decision.CONFLICT
    with pytest.raises(
        OrderConflict, match="stored id='dedup-order', quantity=4, total_cents=1100"
    ):
        outcome.raise_for_conflict()
    assert scan_orders(dynamodb, tables.orders) == {"dedup-order": (4, 1100)}


def _stubbed() -> tuple[Any, Stubber]:
    client = shared_client("dynamodb", region_name="us-east-1")
    return client, Stubber(client)


def test_exactly_one_put_item_with_the_condition_is_sent() -> None:
    client, stubber = _stubbed()
    stubber.add_response("put_item", stored_answer("orders"), EXPECTED_PUT)
    with stubber:
        put_order_once(client, "orders", Order("a", 1))
    stubber.assert_no_pending_responses()


def test_condition_failure_without_item_is_an_error_not_a_duplicate() -> None:
    client, stubber = _stubbed()
    stubber.add_client_error(
        "put_item",
        "ConditionalCheckFailedException",
        "The conditional request failed",
        http_status_code=400,
        expected_params=EXPECTED_PUT,
    )
    with stubber, pytest.raises(UnreadableStoredOrder, match="has no Item"):
        put_order_once(client, "orders", Order("a", 1))


def test_condition_failure_with_an_unreadable_item_is_an_error() -> None:
    client, stubber = _stubbed()
    stubber.add_client_error(
        "put_item",
        "ConditionalCheckFailedException",
        "The conditional request failed",
        http_status_code=400,
        expected_params=EXPECTED_PUT,
        modeled_fields={
            "Item": {"id": {"S": "a"}, "quantity": {"S": "1"}, "total_cents": {"N": "350"}}
        },
    )
    with stubber, pytest.raises(UnreadableStoredOrder, match="'quantity' must be of type N"):
        put_order_once(client, "orders", Order("a", 1))


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("AccessDeniedException", 400),
        ("ValidationException", 400),
        ("ResourceNotFoundException", 400),
    ],
)
def test_permanent_client_errors_propagate_unchanged(code: str, status: int) -> None:
    client, stubber = _stubbed()
    stubber.add_client_error(
        "put_item", code, "boom", http_status_code=status, expected_params=EXPECTED_PUT
    )
    with stubber, pytest.raises(ClientError) as raised:
        put_order_once(client, "orders", Order("a", 1))
    assert raised.value.response["Error"]["Code"] == code


@pytest.mark.parametrize(
    ("code", "status"),
    [
        ("ProvisionedThroughputExceededException", 400),
        ("ThrottlingException", 400),
        ("InternalServerError", 500),
        ("ServiceUnavailable", 503),
        ("SomethingBotocoreDoesNotModel", 502),
    ],
)
def test_transient_client_errors_become_transient_store_errors_with_the_cause(
    code: str, status: int
) -> None:
    client, stubber = _stubbed()
    stubber.add_client_error(
        "put_item", code, "boom", http_status_code=status, expected_params=EXPECTED_PUT
    )
    with stubber, pytest.raises(TransientStoreError, match=f"PutItem on orders.*{code}") as raised:
        put_order_once(client, "orders", Order("a", 1))
    assert isinstance(raised.value.__cause__, ClientError)
    assert raised.value.__cause__.response["Error"]["Code"] == code


def test_read_order_is_consistent_and_names_a_missing_order(dynamodb: Any, tables: Tables) -> None:
    put_order_once(dynamodb, tables.orders, Order("a", 2))
    assert read_order(dynamodb, tables.orders, "a").details() == {
        "id": "a",
        "quantity": 2,
        "total_cents": 600,
    }
    with pytest.raises(OrderNotFound, match="no order is stored under id 'b'"):
        read_order(dynamodb, tables.orders, "b")


def test_attempts_count_up_per_business_key(dynamodb: Any, tables: Tables) -> None:
    assert [count_attempt(dynamodb, tables.attempts, "a") for _ in range(3)] == [1, 2, 3]
    assert count_attempt(dynamodb, tables.attempts, "b") == 1


def test_a_counter_update_whose_response_is_lost_and_resent_counts_once(
    tables: Tables, workflow_logs: LogCapture
) -> None:
    """The first UpdateItem is applied, its response is lost, botocore resends the same
    request: the token condition fails on the resend and the count stays one per call,
    so the flaky mode still faults on attempt 1."""
    client = shared_client("dynamodb", region_name="us-east-1", config=DYNAMODB_CLIENT_CONFIG)
    lost = Fault(Kind.RESPONSE_LOST, "flaky-order", "UpdateItem", times=1)
    flaky = {"id": "flaky-order", "quantity": 1, "mode": "flaky"}
    deps = workflow_worker.Dependencies(
        client, workflow_settings_for(tables.orders, tables.attempts)
    )

    with (
        faults.injected(client, lost),
        pytest.raises(TransientOrderError, match="fails attempt 1 before the write"),
    ):
        workflow_worker.handle(flaky, None, deps)
    retried = workflow_worker.handle(flaky, None, deps)

    assert lost.fired == 1
    assert retried["duplicate"] is False
    assert [(r["decision"], r.get("attempt")) for r in workflow_logs.results()] == [
        ("error", 1),
        ("accepted", 2),
    ]


def test_a_transient_counter_failure_fails_an_attempt_whose_fault_mode_needs_the_count(
    tables: Tables, workflow_logs: LogCapture
) -> None:
    client = shared_client("dynamodb", region_name="us-east-1", config=DYNAMODB_CLIENT_CONFIG)
    deps = workflow_worker.Dependencies(
        client, workflow_settings_for(tables.orders, tables.attempts)
    )
    throttled = Fault(Kind.THROTTLING, "counted", "UpdateItem", times=TOTAL_MAX_ATTEMPTS)

    with (
        faults.injected(client, throttled),
        pytest.raises(TransientStoreError, match="UpdateItem.*ThrottlingException"),
    ):
        workflow_worker.handle({"id": "counted", "quantity": 1, "mode": "after-write"}, None, deps)

    (line,) = workflow_logs.results()
    assert (line["decision"], line["error_type"], line["cause_type"], line["transient"]) == (
        "error",
        "TransientStoreError",
        "ThrottlingException",  # botocore models DynamoDB's code as its own class
        True,
    )
    assert scan_orders(client, tables.orders) == {}  # the write waits for the retry


@pytest.mark.parametrize("code", ["AccessDeniedException", "ResourceNotFoundException"])
def test_a_permanent_attempts_table_failure_leaves_the_counter_unchanged(code: str) -> None:
    """Issue 18: whether a counter failure matters is the worker's call (it depends on
    the mode), so the counter no longer renames access denied as transient."""
    client, stubber = _stubbed()
    stubber.add_client_error("update_item", code, http_status_code=400)
    with stubber, pytest.raises(ClientError) as raised:
        count_attempt(client, "attempts", "a")
    assert raised.value.response["Error"]["Code"] == code


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ({}, None),  # a 200 that is not DynamoDB's: no ConsumedCapacity
        ({"ConsumedCapacity": {"TableName": "attempts", "CapacityUnits": 1.0}}, None),
        (
            {"ConsumedCapacity": {"TableName": "other", "CapacityUnits": 1.0}, "Attributes": {}},
            None,
        ),
        (None, {"id": {"S": "a"}}),  # a resent update's condition failure, no count
        (None, {"id": {"S": "a"}, "attempts": {"S": "x"}}),
    ],
)
def test_an_attempts_counter_answer_without_a_readable_count_is_transient(
    answer: dict[str, Any] | None, error: dict[str, Any] | None
) -> None:
    """Issue 18: a response without ``Attributes`` escaped as a ``KeyError``."""
    client, stubber = _stubbed()
    if answer is not None:
        stubber.add_response("update_item", answer)
    else:
        stubber.add_client_error(
            "update_item",
            "ConditionalCheckFailedException",
            http_status_code=400,
            modeled_fields={"Item": error},
        )
    with stubber, pytest.raises(TransientStoreError, match="UpdateItem on attempts"):
        count_attempt(client, "attempts", "a")


def test_an_sdk_retry_that_meets_this_calls_own_committed_write_is_accepted(
    dynamodb: Any, tables: Tables
) -> None:
    """DynamoDB commits the PutItem, the response is lost (timeout, 500 after commit),
    and botocore re-sends the identical request: the condition fails on our own item."""
    sends: list[int] = []

    def lose_first_response(attempts: int, caught_exception: Any, **_: Any) -> int | None:
        sends.append(attempts)
        return 0 if attempts == 1 and caught_exception is None else None

    dynamodb.meta.events.register_first("needs-retry.dynamodb.PutItem", lose_first_response)

    outcome = put_order_once(dynamodb, tables.orders, Order("retried-order", 4))

    assert sends == [1, 2], "the SDK sent the PutItem twice"
    assert outcome.decision is Decision.ACCEPTED
    assert scan_orders(dynamodb, tables.orders) == {"retried-order": (4, 1100)}


def test_a_write_by_another_call_with_the_same_details_stays_a_duplicate(
    dynamodb: Any, tables: Tables
) -> None:
    put_order_once(dynamodb, tables.orders, Order("a", 1))
    item = dynamodb.get_item(TableName=tables.orders, Key={"id": {"S": "a"}})["Item"]
    assert len(item["write_id"]["S"]) == 32
    assert put_order_once(dynamodb, tables.orders, Order("a", 1)).decision is Decision.DUPLICATE
