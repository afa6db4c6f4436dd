"""The RESULT line: one contract for both workers (order_guard.result)."""

from __future__ import annotations

import io
import json
import logging
import uuid
from decimal import Decimal
from typing import Any

import pytest
from aws_lambda_powertools import Logger

from order_guard.decision import Decision, WriteOutcome
from order_guard.exceptions import InvalidOrder, TransientStoreError
from order_guard.orders import Order, StoredOrder
from order_guard.result import RESULT, log_decision, log_summary


@pytest.fixture
def lines() -> tuple[Logger, io.StringIO]:
    stream = io.StringIO()
    # A service of its own: Powertools keeps one handler per service name.
    service = f"test-result-{uuid.uuid4().hex}"
    logger = Logger(service=service, logger_handler=logging.StreamHandler(stream))
    return logger, stream


def _read(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def _stored(quantity: int) -> StoredOrder:
    return StoredOrder(
        id="o-1",
        quantity=Decimal(quantity),
        total_cents=Decimal(quantity * 250 + 100),
        write_id=None,
    )


def test_accepted_is_an_info_line_with_the_business_key(lines: tuple[Logger, io.StringIO]) -> None:
    logger, stream = lines
    order = Order("o-1", 4)
    outcome = WriteOutcome(Decision.ACCEPTED, order, None)
    log_decision(logger, Decision.ACCEPTED, order, outcome=outcome, stage="queue", attempt=1)
    (line,) = _read(stream)
    assert line["message"] == RESULT == "RESULT"
    assert line["level"] == "INFO"
    assert (line["decision"], line["id"], line["quantity"]) == ("accepted", "o-1", 4)
    assert (line["stage"], line["attempt"]) == ("queue", 1)
    assert not {"reason", "error_type", "previous", "stored", "requested"} & set(line)


def test_duplicate_carries_the_stored_details(lines: tuple[Logger, io.StringIO]) -> None:
    logger, stream = lines
    order = Order("o-1", 4)
    log_decision(
        logger,
        Decision.DUPLICATE,
        order,
        outcome=WriteOutcome(Decision.DUPLICATE, order, _stored(4)),
    )
    (line,) = _read(stream)
    assert line["level"] == "INFO"
    assert line["previous"] == {"id": "o-1", "quantity": 4, "total_cents": 1100}


def test_conflict_names_stored_and_requested(lines: tuple[Logger, io.StringIO]) -> None:
    logger, stream = lines
    order = Order("o-1", 5)
    log_decision(
        logger, Decision.CONFLICT, order, outcome=WriteOutcome(Decision.CONFLICT, order, _stored(4))
    )
    (line,) = _read(stream)
    assert line["level"] == "WARNING"
    assert line["stored"] == {"id": "o-1", "quantity": 4, "total_cents": 1100}
    assert line["requested"] == {"id": "o-1", "quantity": 5, "total_cents": 1350}
    assert "previous" not in line


def test_an_error_gives_its_reason_and_kind(lines: tuple[Logger, io.StringIO]) -> None:
    logger, stream = lines
    cause = ConnectionError("reset")
    try:
        raise TransientStoreError("PutItem failed transiently") from cause
    except TransientStoreError as exc:
        log_decision(logger, Decision.ERROR, Order("o-1", 4), error=exc, traceback=True)
    (line,) = _read(stream)
    assert line["level"] == "ERROR"
    assert "TransientStoreError" in line["exception"]
    assert line["reason"] == "PutItem failed transiently"
    assert (line["error_type"], line["transient"], line["cause_type"]) == (
        "TransientStoreError",
        True,
        "ConnectionError",
    )


def test_an_unparsed_job_has_no_business_fields_and_a_given_reason_wins(
    lines: tuple[Logger, io.StringIO],
) -> None:
    logger, stream = lines
    log_decision(
        logger, Decision.INVALID, None, error=InvalidOrder("id missing"), reason="job: id missing"
    )
    (line,) = _read(stream)
    assert line["level"] == "WARNING"
    assert "id" not in line  # Powertools leaves out keys whose value is None
    assert "quantity" not in line
    assert (line["reason"], line["error_type"], line["transient"]) == (
        "job: id missing",
        "InvalidOrder",
        False,
    )


def test_summary_lines(lines: tuple[Logger, io.StringIO]) -> None:
    logger, stream = lines
    log_summary(logger, "found", "o-1", total_cents=1100)
    log_summary(logger, "error", "o-2", error=InvalidOrder("no such order"))
    found, error = _read(stream)
    assert (found["level"], found["stage"], found["outcome"], found["total_cents"]) == (
        "INFO",
        "summary",
        "found",
        1100,
    )
    assert "decision" not in found
    assert (error["level"], error["outcome"], error["reason"], error["error_type"]) == (
        "WARNING",
        "error",
        "no such order",
        "InvalidOrder",
    )
