"""The handlers run with exactly the environment template.yaml gives them, and a missing
variable fails the invocation with ConfigurationError before any DynamoDB call.

Each run imports the handler module anew (as a new execution environment would,
:func:`tests.support.handlers.invoke_cold`), so Powertools reads its variables at import
exactly as on Lambda; the test process's own values of those variables are removed first.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from order_guard.config import QueueWorkerSettings, WorkflowWorkerSettings
from tests.support.aws import Tables, scan_orders
from tests.support.environment import function_environment
from tests.support.handlers import ColdInvocation, invoke_cold
from tests.support.paths import SRC
from tests.support.template import Template

FUNCTIONS = {
    "QueueWorkerFunction": QueueWorkerSettings.REQUIRED,
    "WorkflowWorkerFunction": WorkflowWorkerSettings.REQUIRED,
}
EVENTS = {
    "QueueWorkerFunction": "sqs-first-order",
    "WorkflowWorkerFunction": "workflow-after-write",
}

Run = Callable[[str, dict[str, str]], ColdInvocation]


@pytest.fixture
def run(
    template: Template,
    tables: Tables,
    monkeypatch: pytest.MonkeyPatch,
    load_event: Callable[[str], Any],
) -> Run:
    """Invoke a function of the template, cold, with exactly ``environment``."""
    for name in {name for names in FUNCTIONS.values() for name in names}:
        monkeypatch.delenv(name, raising=False)  # only the template's values count
    monkeypatch.delenv("POWERTOOLS_LOG_LEVEL", raising=False)

    def invoke(logical_id: str, environment: dict[str, str]) -> ColdInvocation:
        function = template.function(logical_id)
        code_uri = (template.path.parent / str(function.codeuri)).resolve()
        assert code_uri == SRC, "the handler is imported from src/, its CodeUri"
        return invoke_cold(
            str(function.handler),
            environment,
            load_event(EVENTS[logical_id]),
            function_name=logical_id,
            memory_mb=int(function.memory or 128),
            task_root=str(code_uri),
        )

    return invoke


def template_environment(logical_id: str, tables: Tables) -> dict[str, str]:
    return function_environment(
        logical_id, orders_table=tables.orders, attempts_table=tables.attempts
    )


def test_every_required_variable_is_in_the_template_environment(tables: Tables) -> None:
    for logical_id, required in FUNCTIONS.items():
        assert set(required) <= set(template_environment(logical_id, tables))


@pytest.mark.parametrize("logical_id", FUNCTIONS)
def test_the_handler_runs_and_flushes_its_metrics_with_the_template_environment(
    logical_id: str, run: Run, tables: Tables, dynamodb: Any
) -> None:
    invocation = run(logical_id, template_environment(logical_id, tables))

    if logical_id == "QueueWorkerFunction":
        assert invocation.payload == {"batchItemFailures": []}
    else:  # workflow-after-write: written, then the demonstration fault after the write
        assert invocation.error_type == "TransientOrderError"
    assert list(scan_orders(dynamodb, tables.orders)) == [
        "dedup-order" if logical_id == "QueueWorkerFunction" else "protected-order"
    ]
    emf = [json.loads(line) for line in invocation.lines if '"_aws"' in line]
    (directive,) = [d for line in emf for d in line["_aws"]["CloudWatchMetrics"]]
    assert directive["Namespace"] == "OrderGuard"


def template_variables(logical_id: str) -> list[str]:
    return list(template_environment(logical_id, Tables("o", "a")))


@pytest.mark.parametrize(
    ("logical_id", "variable"),
    [(logical_id, name) for logical_id in FUNCTIONS for name in template_variables(logical_id)],
)
def test_without_each_template_variable_a_required_one_fails_before_any_write(
    logical_id: str, variable: str, run: Run, tables: Tables, dynamodb: Any
) -> None:
    """Every variable the template gives the function is taken away in turn: a required
    one fails the invocation with ConfigurationError naming it and nothing written; an
    optional one (log level, endpoint) changes nothing. A variable the code needs but
    does not check would fail neither way."""
    environment = template_environment(logical_id, tables)
    del environment[variable]

    invocation = run(logical_id, environment)

    if variable in FUNCTIONS[logical_id]:
        assert invocation.error_type == "ConfigurationError"
        assert variable in invocation.payload["errorMessage"]
        assert scan_orders(dynamodb, tables.orders) == {}
        assert dynamodb.scan(TableName=tables.attempts)["Items"] == []
    else:
        assert invocation.error_type in (None, "TransientOrderError")  # as with every variable
        assert scan_orders(dynamodb, tables.orders) != {}
