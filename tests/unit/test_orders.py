"""The order contract: validation, pricing, item encoding and decoding."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest

from order_guard.exceptions import InvalidOrder, UnreadableStoredOrder
from order_guard.item import from_item, to_item
from order_guard.orders import Order, parse_job_body, validate_job


@pytest.mark.parametrize(("quantity", "total_cents"), [(1, 350), (4, 1100), (10, 2600)])
def test_total_is_quantity_times_250_plus_100(quantity: int, total_cents: int) -> None:
    assert Order("o", quantity).total_cents == total_cents


def test_a_valid_body_becomes_an_order() -> None:
    assert parse_job_body('{"id": "dedup-order", "quantity": 4}') == Order("dedup-order", 4)


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("not json", "body is not valid JSON"),
        ("[]", "job must be a JSON object, got an array"),
        ('{"id": "a"}', "missing the key(s) quantity"),
        ('{"id": "a", "quantity": 1, "extra": 1}', "unexpected key(s) extra"),
        ('{"id": "", "quantity": 1}', "id must not be empty"),
        ('{"id": 7, "quantity": 1}', "id must be a string, got an integer"),
        ('{"id": "a", "quantity": true}', "quantity must be a JSON integer, got a boolean"),
        ('{"id": "a", "quantity": 4.0}', "quantity must be a JSON integer, got a number"),
        ('{"id": "a", "quantity": "4"}', "quantity must be a JSON integer, got a string"),
        ('{"id": "a", "quantity": null}', "quantity must be a JSON integer, got null"),
        ('{"id": "a", "quantity": 0}', "quantity must be from 1 to 10, got 0"),
        ('{"id": "a", "quantity": 11}', "quantity must be from 1 to 10, got 11"),
        ('{"id": "a", "id": "b", "quantity": 1}', "key 'id' more than once"),
    ],
)
def test_invalid_bodies_name_the_field_and_rule(body: str, message: str) -> None:
    with pytest.raises(InvalidOrder) as raised:
        parse_job_body(body)
    assert message in str(raised.value)


def test_id_limit_is_2048_bytes_of_utf8_not_characters() -> None:
    at_limit = "é" * 1024  # 2 bytes each: 2048 bytes, 1024 characters
    assert parse_job_body(json.dumps({"id": at_limit, "quantity": 1})).id == at_limit
    with pytest.raises(InvalidOrder, match="2049 bytes in UTF-8; the limit is 2048"):
        parse_job_body(json.dumps({"id": at_limit + "x", "quantity": 1}))


def test_id_is_kept_exactly_without_unicode_normalisation() -> None:
    composed, decomposed = "caf\u00e9", "cafe\u0301"
    assert parse_job_body(json.dumps({"id": composed, "quantity": 1})).id == composed
    assert parse_job_body(json.dumps({"id": decomposed, "quantity": 1})).id == decomposed


def test_lone_surrogate_id_is_invalid() -> None:
    with pytest.raises(InvalidOrder, match="id is not valid Unicode"):
        parse_job_body('{"id": "\\ud800", "quantity": 1}')


def test_workflow_jobs_may_carry_mode_only_when_allowed() -> None:
    job = {"id": "a", "quantity": 1, "mode": "normal"}
    assert validate_job(job, optional_keys={"mode"}) == Order("a", 1)
    with pytest.raises(InvalidOrder, match="unexpected key"):
        validate_job(job)


def test_item_round_trip_keeps_business_details_and_extra_attributes_apart() -> None:
    item = to_item(Order("a", 4), {"first_written_by": "sqs:1"})
    assert item == {
        "id": {"S": "a"},
        "quantity": {"N": "4"},
        "total_cents": {"N": "1100"},
        "first_written_by": {"S": "sqs:1"},
    }
    stored = from_item(item)
    assert stored.same_details_as(Order("a", 4))
    assert stored.details() == {"id": "a", "quantity": 4, "total_cents": 1100}


def test_numbers_compare_as_numbers() -> None:
    stored = from_item(
        {"id": {"S": "a"}, "quantity": {"N": "4.00"}, "total_cents": {"N": "1.1E+3"}}
    )
    assert stored.quantity == Decimal(4)
    assert stored.same_details_as(Order("a", 4))


def test_a_huge_stored_number_decodes_exactly_and_differs() -> None:
    stored = from_item(
        {"id": {"S": "a"}, "quantity": {"N": "4" + "0" * 37}, "total_cents": {"N": "1100"}}
    )
    assert not stored.same_details_as(Order("a", 4))


@pytest.mark.parametrize(
    "item",
    [
        None,
        {},
        {"id": {"S": "a"}, "quantity": {"S": "4"}, "total_cents": {"N": "1100"}},
        {"id": {"S": "a"}, "quantity": {"N": "4"}},
        {"id": {"S": "a"}, "quantity": {"N": "four"}, "total_cents": {"N": "1100"}},
        {"id": {"N": "1"}, "quantity": {"N": "4"}, "total_cents": {"N": "1100"}},
        # Decimal() accepts these; DynamoDB never returns them, so they are not trusted.
        {"id": {"S": "a"}, "quantity": {"N": " 4 "}, "total_cents": {"N": "1100"}},
        {"id": {"S": "a"}, "quantity": {"N": "4"}, "total_cents": {"N": "1_100"}},
        {"id": {"S": "a"}, "quantity": {"N": "+4"}, "total_cents": {"N": "1100"}},
        {"id": {"S": "a"}, "quantity": {"N": "\uff14"}, "total_cents": {"N": "1100"}},
        {"id": {"S": "a"}, "quantity": {"N": "\u0664"}, "total_cents": {"N": "1100"}},
        {"id": {"S": "a"}, "quantity": {"N": "NaN"}, "total_cents": {"N": "1100"}},
    ],
)
def test_unreadable_stored_items_raise(item: object) -> None:
    with pytest.raises(UnreadableStoredOrder):
        from_item(item)


def test_hostile_keys_are_clipped_in_the_error_message() -> None:
    with pytest.raises(InvalidOrder) as raised:
        validate_job({"id": "a", "quantity": 1, "k" * 100_000: 1})
    assert len(str(raised.value)) < 300
