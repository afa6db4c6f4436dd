"""The conditional write and its decision, against moto and botocore's Stubber."""

from __future__ import annotations

from typing import Any

import boto3
import pytest
from botocore.exceptions import ClientError
from botocore.stub import ANY, Stubber

from order_guard.errors import OrderConflict, OrderNotFound, UnreadableStoredOrder
from order_guard.orders import Order
from order_guard.store import Decision, count_attempt, put_order_once, read_order
from tests.conftest import Tables, scan_orders

EXPECTED_PUT = {
    "TableName": "orders",
    "Item": ANY,
    "ConditionExpression": "attribute_not_exists(id)",
    "ReturnValuesOnConditionCheckFailure": "ALL_OLD",
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
    client = boto3.client("dynamodb", region_name="us-east-1")
    return client, Stubber(client)


def test_exactly_one_put_item_with_the_condition_is_sent() -> None:
    client, stubber = _stubbed()
    stubber.add_response("put_item", {}, EXPECTED_PUT)
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
        ("ProvisionedThroughputExceededException", 400),
        ("ThrottlingException", 400),
        ("AccessDeniedException", 400),
        ("ValidationException", 400),
        ("InternalServerError", 500),
    ],
)
def test_other_client_errors_propagate_unchanged(code: str, status: int) -> None:
    client, stubber = _stubbed()
    stubber.add_client_error(
        "put_item", code, "boom", http_status_code=status, expected_params=EXPECTED_PUT
    )
    with stubber, pytest.raises(ClientError) as raised:
        put_order_once(client, "orders", Order("a", 1))
    assert raised.value.response["Error"]["Code"] == code


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
