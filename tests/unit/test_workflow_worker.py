"""The workflow worker: every mode, the after-write retry, the summary, fault modes off."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from botocore.exceptions import ClientError

from order_guard import workflow_worker
from order_guard.config import WorkflowWorkerSettings
from order_guard.exceptions import (
    AttemptsCounterUnavailable,
    ConfigurationError,
    InvalidOrder,
    OrderConflict,
    OrderNotFound,
    TransientOrderError,
    TransientStoreError,
)
from tests.support.aws import LambdaContext, Tables, scan_orders
from tests.support.environment import workflow_settings_for
from tests.support.logs import LogCapture

Deps = workflow_worker.Dependencies


def attempts(dynamodb: Any, tables: Tables, order_id: str) -> int | None:
    item = dynamodb.get_item(TableName=tables.attempts, Key={"id": {"S": order_id}}).get("Item")
    return int(item["attempts"]["N"]) if item else None


def test_after_write_fails_attempt_one_after_writing_and_the_retry_is_a_duplicate(
    load_event: Callable[[str], Any],
    workflow_deps: Deps,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
    workflow_logs: LogCapture,
) -> None:
    with pytest.raises(TransientOrderError, match="after the write"):
        workflow_worker.handle(load_event("workflow-after-write"), lambda_context, workflow_deps)
    assert scan_orders(dynamodb, tables.orders) == {"protected-order": (4, 1100)}

    retried = workflow_worker.handle(load_event("workflow-repeat"), lambda_context, workflow_deps)

    assert retried == {
        "id": "protected-order",
        "quantity": 4,
        "total_cents": 1100,
        "duplicate": True,
    }
    assert scan_orders(dynamodb, tables.orders) == {"protected-order": (4, 1100)}
    assert [(r["decision"], r["attempt"]) for r in workflow_logs.results()] == [
        ("accepted", 1),
        ("duplicate", 2),
    ]


def test_normal_mode_stores_and_returns_the_priced_order(
    load_event: Callable[[str], Any],
    workflow_deps: Deps,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
) -> None:
    result = workflow_worker.handle(
        load_event("workflow-different-order"), lambda_context, workflow_deps
    )
    assert result == {
        "id": "different-order",
        "quantity": 1,
        "total_cents": 350,
        "duplicate": False,
    }
    assert scan_orders(dynamodb, tables.orders) == {"different-order": (1, 350)}


def test_mode_defaults_to_normal(workflow_deps: Deps, lambda_context: LambdaContext) -> None:
    result = workflow_worker.handle({"id": "plain", "quantity": 2}, lambda_context, workflow_deps)
    assert result == {"id": "plain", "quantity": 2, "total_cents": 600, "duplicate": False}


def test_flaky_fails_attempt_one_before_the_write_and_then_succeeds(
    load_event: Callable[[str], Any],
    workflow_deps: Deps,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
) -> None:
    event = load_event("workflow-flaky")
    with pytest.raises(TransientOrderError, match="before the write"):
        workflow_worker.handle(event, lambda_context, workflow_deps)
    assert scan_orders(dynamodb, tables.orders) == {}

    result = workflow_worker.handle(event, lambda_context, workflow_deps)

    assert result == {"id": "flaky-order", "quantity": 2, "total_cents": 600, "duplicate": False}
    assert attempts(dynamodb, tables, "flaky-order") == 2


def test_permanent_is_invalid_on_every_attempt_and_stores_nothing(
    load_event: Callable[[str], Any],
    workflow_deps: Deps,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
) -> None:
    for _ in range(2):
        with pytest.raises(InvalidOrder, match="'permanent'"):
            workflow_worker.handle(load_event("workflow-permanent"), lambda_context, workflow_deps)
    assert scan_orders(dynamodb, tables.orders) == {}
    assert attempts(dynamodb, tables, "permanent-order") == 2


def test_a_conflicting_order_raises_order_conflict(
    workflow_deps: Deps, lambda_context: LambdaContext, dynamodb: Any, tables: Tables
) -> None:
    workflow_worker.handle({"id": "c", "quantity": 4}, lambda_context, workflow_deps)
    with pytest.raises(OrderConflict, match="requested id='c', quantity=5"):
        workflow_worker.handle({"id": "c", "quantity": 5}, lambda_context, workflow_deps)
    assert scan_orders(dynamodb, tables.orders) == {"c": (4, 1100)}


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"id": "q", "quantity": 0}, "quantity must be from 1 to 10"),
        ({"id": "q", "quantity": "4"}, "quantity must be a JSON integer"),
        ({"id": "q", "quantity": 4, "mode": "sometimes"}, "mode must be one of"),
        ({"id": "q", "quantity": 4, "extra": True}, "unexpected key(s) extra"),
        (["q", 4], "job must be a JSON object"),
    ],
)
def test_invalid_payloads_raise_invalid_order_without_any_write(
    payload: Any,
    message: str,
    workflow_deps: Deps,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
) -> None:
    with pytest.raises(InvalidOrder) as raised:
        workflow_worker.handle(payload, lambda_context, workflow_deps)
    assert message in str(raised.value)
    assert scan_orders(dynamodb, tables.orders) == {}
    assert dynamodb.scan(TableName=tables.attempts)["Count"] == 0


@pytest.mark.parametrize(
    "event_name", ["workflow-after-write", "workflow-flaky", "workflow-permanent"]
)
def test_fault_modes_disabled_reject_every_fault_mode(
    event_name: str,
    load_event: Callable[[str], Any],
    workflow_deps: Deps,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
) -> None:
    deps = replace(
        workflow_deps, settings=replace(workflow_deps.settings, fault_modes_enabled=False)
    )
    with pytest.raises(InvalidOrder, match="fault modes are disabled"):
        workflow_worker.handle(load_event(event_name), lambda_context, deps)
    assert scan_orders(dynamodb, tables.orders) == {}


def test_fault_modes_disabled_still_store_normal_orders(
    load_event: Callable[[str], Any], workflow_deps: Deps, lambda_context: LambdaContext
) -> None:
    deps = replace(
        workflow_deps, settings=replace(workflow_deps.settings, fault_modes_enabled=False)
    )
    result = workflow_worker.handle(load_event("workflow-different-order"), lambda_context, deps)
    assert result["total_cents"] == 350


def test_summary_reads_the_stored_order(
    load_event: Callable[[str], Any], workflow_deps: Deps, lambda_context: LambdaContext
) -> None:
    workflow_worker.handle({"id": "protected-order", "quantity": 4}, lambda_context, workflow_deps)
    summary = workflow_worker.handle(load_event("workflow-summary"), lambda_context, workflow_deps)
    assert summary == {"id": "protected-order", "total_cents": 1100, "completed": True}


def test_summary_of_a_missing_order_raises_order_not_found(
    load_event: Callable[[str], Any], workflow_deps: Deps, lambda_context: LambdaContext
) -> None:
    with pytest.raises(OrderNotFound, match="protected-order"):
        workflow_worker.handle(load_event("workflow-summary"), lambda_context, workflow_deps)


@pytest.mark.parametrize(
    "payload",
    [
        {"stage": "summary"},
        {"stage": "summary", "id": "a", "x": 1},
        {"stage": "other", "id": "a"},
        {"stage": "summary", "id": ""},
    ],
)
def test_malformed_summary_payloads_are_invalid(
    payload: dict[str, Any], workflow_deps: Deps, lambda_context: LambdaContext
) -> None:
    with pytest.raises(InvalidOrder):
        workflow_worker.handle(payload, lambda_context, workflow_deps)


@pytest.mark.parametrize("flag", ["", "yes", "True"])
def test_fault_modes_flag_must_be_true_or_false(flag: str) -> None:
    environ = {"ORDERS_TABLE_NAME": "o", "ATTEMPTS_TABLE_NAME": "a", "FAULT_MODES_ENABLED": flag}
    with pytest.raises(ConfigurationError, match="FAULT_MODES_ENABLED"):
        WorkflowWorkerSettings.from_environ(environ)


# --- the attempts counter is diagnostics (issue 18, finding 3) -------------------------


class CounterFails:
    """A DynamoDB client whose attempts counter (``UpdateItem``) fails with ``error``;
    every other call reaches the real (moto) table."""

    def __init__(self, client: Any, error: Exception) -> None:
        self._client = client
        self._error = error

    def update_item(self, **_: Any) -> Any:
        raise self._error

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def client_error(code: str, status: int) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
        "UpdateItem",
    )


COUNTER_FAILURES = {
    "access denied": client_error("AccessDeniedException", 400),
    "missing table": client_error("ResourceNotFoundException", 400),
    "throttled (after botocore's retries)": TransientStoreError("throttled"),
}


@pytest.mark.parametrize("failure", COUNTER_FAILURES, ids=list(COUNTER_FAILURES))
@pytest.mark.parametrize("fault_modes_enabled", [True, False], ids=["fault modes on", "off"])
def test_without_a_fault_mode_a_counter_failure_is_logged_counted_and_the_order_stored(
    failure: str,
    fault_modes_enabled: bool,
    dynamodb: Any,
    tables: Tables,
    lambda_context: LambdaContext,
    workflow_logs: LogCapture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = workflow_settings_for(
        tables.orders, tables.attempts, fault_modes_enabled=fault_modes_enabled
    )
    deps = Deps(CounterFails(dynamodb, COUNTER_FAILURES[failure]), settings)

    returned = workflow_worker.handle({"id": "stored-anyway", "quantity": 2}, lambda_context, deps)

    assert returned == {
        "id": "stored-anyway",
        "quantity": 2,
        "total_cents": 600,
        "duplicate": False,
    }
    assert scan_orders(dynamodb, tables.orders) == {"stored-anyway": (2, 600)}
    (logged,) = [
        line for line in workflow_logs.lines() if line["message"] == "AttemptsCounterFailed"
    ]
    assert logged["id"] == "stored-anyway"
    assert logged["error_type"] == type(COUNTER_FAILURES[failure]).__name__  # its own name
    (result,) = workflow_logs.results()
    assert (result["decision"], result.get("attempt")) == ("accepted", None)  # no count
    workflow_worker.metrics.flush_metrics()
    flushed = [json.loads(line) for line in capsys.readouterr().out.splitlines() if "_aws" in line]
    assert any(
        line.get("AttemptsCounterFailed") == [1.0] or line.get("AttemptsCounterFailed") == 1.0
        for line in flushed
    )


def test_a_real_missing_attempts_table_does_not_stop_an_order(
    dynamodb: Any, tables: Tables, lambda_context: LambdaContext
) -> None:
    settings = replace(
        workflow_settings_for(tables.orders, tables.attempts), attempts_table="no-such-table"
    )
    workflow_worker.handle(
        {"id": "no-counter", "quantity": 1}, lambda_context, Deps(dynamodb, settings)
    )
    assert scan_orders(dynamodb, tables.orders) == {"no-counter": (1, 350)}


@pytest.mark.parametrize("mode", ["after-write", "flaky"])
def test_a_fault_mode_that_needs_the_count_fails_on_a_permanent_counter_failure_by_name(
    mode: str,
    dynamodb: Any,
    tables: Tables,
    lambda_context: LambdaContext,
    workflow_logs: LogCapture,
) -> None:
    deps = Deps(
        CounterFails(dynamodb, client_error("AccessDeniedException", 400)),
        workflow_settings_for(tables.orders, tables.attempts),
    )

    with pytest.raises(AttemptsCounterUnavailable, match=f"mode '{mode}' needs the attempts count"):
        workflow_worker.handle(
            {"id": "needs-count", "quantity": 1, "mode": mode}, lambda_context, deps
        )

    assert scan_orders(dynamodb, tables.orders) == {}
    (result,) = workflow_logs.results()
    assert (result["decision"], result["error_type"], result["transient"]) == (
        "error",
        "AttemptsCounterUnavailable",
        False,
    )


def test_a_fault_mode_that_needs_the_count_retries_a_transient_counter_failure(
    dynamodb: Any, tables: Tables, lambda_context: LambdaContext
) -> None:
    deps = Deps(
        CounterFails(dynamodb, TransientStoreError("DynamoDB UpdateItem failed transiently")),
        workflow_settings_for(tables.orders, tables.attempts),
    )
    with pytest.raises(TransientStoreError):
        workflow_worker.handle(
            {"id": "needs-count", "quantity": 1, "mode": "after-write"}, lambda_context, deps
        )
    assert scan_orders(dynamodb, tables.orders) == {}
