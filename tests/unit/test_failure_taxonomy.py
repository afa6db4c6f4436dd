"""One failure taxonomy, checked against the state machine.

Each transient kind is produced for real (botocore's retries included), raised by the
workers, named as the Lambda runtime names it (:func:`reported_type`: awslambdaric's own
handling), and matched against the retriers of the ASL after ``DefinitionSubstitutions``,
as Step Functions matches them. Each permanent failure is produced the same way and must
never meet a retrier.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

import pytest
from awslambdaric import bootstrap
from botocore.exceptions import (
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ProxyConnectionError,
    ReadTimeoutError,
    ResponseStreamingError,
    SSLError,
)
from botocore.retries.standard import ThrottledRetryableChecker, TransientRetryableChecker
from botocore.stub import Stubber

from order_guard import config, workflow_worker
from order_guard.config import WorkflowWorkerSettings
from order_guard.dynamodb_calls import dynamodb_call
from order_guard.exceptions import (
    ConfigurationError,
    TimeBudgetExhausted,
    TransientOrderError,
    TransientStoreError,
)
from order_guard.transient import (
    OWN_TRANSIENT_ERRORS,
    THROTTLING_ERROR_CODES,
    TRANSIENT_ERROR_CODES,
    is_transient,
)
from tests.support import faults
from tests.support.aws import LambdaContext, Tables, shared_client, stored_answer
from tests.support.environment import workflow_settings_for
from tests.support.faults import Fault, Kind
from tests.support.template import Template

ASL_PATH = "statemachine/orders.asl.json"
TASK_STATES = ("StoreOrder", "ReadSummary")
WORKFLOW_TRANSIENT_ERRORS = (TransientStoreError, TransientOrderError)
"""Transient errors the workflow worker raises (TransientOrderError: store stage only)."""
LAMBDA_SERVICE_ERRORS = (
    "Lambda.ClientExecutionTimeoutException",
    "Lambda.ServiceException",
    "Lambda.AWSLambdaException",
    "Lambda.SdkClientException",
    "Lambda.TooManyRequestsException",
)
"""Lambda's own transient errors, as Step Functions names them (``Lambda.<code>``; the
Step Functions guide, "Handle Lambda service exceptions")."""
LAMBDA_TIMEOUT_ERRORS = ("Lambda.Unknown", "Sandbox.Timedout")
"""A function timeout or out-of-memory: ``Lambda.Unknown`` in Step Functions on AWS,
``Sandbox.Timedout`` as the invoke API (and the local cloud) names a timeout."""


@pytest.fixture(scope="module")
def states(template: Template) -> dict[str, Any]:
    """The ASL as deployed: DefinitionSubstitutions applied."""
    machine = template.resources["OrdersStateMachine"]["Properties"]
    text = (template.path.parent / machine["DefinitionUri"]).read_text()
    for name in machine["DefinitionSubstitutions"]:
        text = text.replace(
            "${" + name + "}", "arn:aws:lambda:us-east-1:123456789012:function:worker"
        )
    assert "${" not in text, "every placeholder has a substitution"
    definition: dict[str, Any] = json.loads(text)
    return definition["States"]


def _matches(entry: Mapping[str, Any], error: str) -> bool:
    """Step Functions' ErrorEquals: the exact name, ``States.ALL``, or
    ``States.TaskFailed`` (every task error but ``States.Timeout``)."""
    names = entry["ErrorEquals"]
    return (
        error in names
        or "States.ALL" in names
        or ("States.TaskFailed" in names and error != "States.Timeout")
    )


def retrier_for(state: Mapping[str, Any], error: str) -> Mapping[str, Any] | None:
    return next((r for r in state.get("Retry", []) if _matches(r, error)), None)


def catcher_for(state: Mapping[str, Any], error: str) -> Mapping[str, Any] | None:
    return next((c for c in state.get("Catch", []) if _matches(c, error)), None)


# --- the taxonomy itself -------------------------------------------------------------------


def test_every_code_botocores_standard_mode_retries_is_transient() -> None:
    """botocore's lists are private: this fails loudly if an upgrade changes them."""
    assert set(ThrottledRetryableChecker._THROTTLED_ERROR_CODES) <= THROTTLING_ERROR_CODES
    assert set(TransientRetryableChecker._TRANSIENT_ERROR_CODES) <= TRANSIENT_ERROR_CODES


def reported_type(error: BaseException) -> str:
    """The ``errorType`` the Lambda Python runtime reports for a handler that raises
    ``error``: awslambdaric's own ``build_fault_result``, which makes the error envelope
    of a handler's exception in ``handle_event_request``."""
    try:
        raise error
    except BaseException:
        envelope = bootstrap.build_fault_result(sys.exc_info(), None)
    return str(envelope["errorType"])


def client_error(code: str, status: int) -> ClientError:
    return ClientError(
        {"Error": {"Code": code, "Message": "m"}, "ResponseMetadata": {"HTTPStatusCode": status}},
        "PutItem",
    )


TRANSIENT_BOTOCORE = [
    ConnectionClosedError(endpoint_url="u"),
    ReadTimeoutError(endpoint_url="u"),
    ConnectTimeoutError(endpoint_url="u"),
    EndpointConnectionError(endpoint_url="u"),
    ProxyConnectionError(proxy_url="p", error="e"),
    SSLError(endpoint_url="u", error="e"),
    ResponseStreamingError(error="e"),
    *(client_error(code, 400) for code in sorted(THROTTLING_ERROR_CODES | TRANSIENT_ERROR_CODES)),
    *(client_error("AnythingUnmodelled", status) for status in (500, 502, 503, 504, 599)),
    client_error("AnythingUnmodelled", 408),  # Request Timeout (issue 18)
    client_error("AnythingUnmodelled", 429),  # Too Many Requests (issue 18)
]
PERMANENT_BOTOCORE = [
    client_error("AccessDeniedException", 400),
    client_error("ValidationException", 400),
    client_error("ResourceNotFoundException", 400),
    client_error("ItemCollectionSizeLimitExceededException", 400),
    client_error("ConditionalCheckFailedException", 400),
]


@pytest.mark.parametrize("error", TRANSIENT_BOTOCORE, ids=lambda e: repr(e)[:60])
def test_a_transient_botocore_failure_leaves_a_dynamodb_call_as_transient_store_error(
    error: Exception,
) -> None:
    assert is_transient(error)
    with (
        pytest.raises(TransientStoreError, match="PutItem on t failed transiently") as raised,
        dynamodb_call("PutItem", "t"),
    ):
        raise error
    assert raised.value.__cause__ is error


@pytest.mark.parametrize("error", PERMANENT_BOTOCORE, ids=lambda e: repr(e)[:60])
def test_a_permanent_botocore_failure_leaves_a_dynamodb_call_unchanged(error: Exception) -> None:
    assert not is_transient(error)
    with pytest.raises(ClientError) as raised, dynamodb_call("PutItem", "t"):
        raise error
    assert raised.value is error


def test_our_own_retried_errors_are_transient_and_domain_errors_are_not() -> None:
    assert is_transient(TransientStoreError())
    assert is_transient(TransientOrderError())
    assert is_transient(TimeBudgetExhausted())
    assert not is_transient(ConfigurationError())
    assert not is_transient(ValueError())


# --- every transient kind, raised by the real worker, reaches a retrier -----------------


@pytest.fixture
def faulty_deps(tables: Tables) -> workflow_worker.Dependencies:
    """The workflow worker with a client built as in production (its retries and
    timeouts), from a botocore session."""
    client = shared_client(
        "dynamodb", region_name="us-east-1", config=config.DYNAMODB_CLIENT_CONFIG
    )
    return workflow_worker.Dependencies(
        client, workflow_settings_for(tables.orders, tables.attempts)
    )


# (operation hit, the Task state that sees the failure, the payload)
STAGES = [
    ("UpdateItem", "StoreOrder", {"quantity": 2, "mode": "after-write"}),  # needs the count
    ("PutItem", "StoreOrder", {"quantity": 2}),
    ("GetItem", "ReadSummary", {"stage": "summary"}),
]


def reported_name(
    deps: workflow_worker.Dependencies, kind: Kind, operation: str, payload: dict[str, Any]
) -> str:
    """Run the worker with ``kind`` failing every attempt of ``operation``; return the
    ``errorType`` the Lambda runtime would report."""
    order_id = f"{kind}-{operation}"
    if operation == "GetItem":  # the summary reads an order the store stage wrote
        workflow_worker.handle({"id": order_id, "quantity": 2}, LambdaContext(), deps)
    event = {**payload, "id": order_id}
    fault = Fault(kind, order_id, operation, times=config.TOTAL_MAX_ATTEMPTS)
    with (
        faults.injected(deps.dynamodb, fault),
        pytest.raises(TransientStoreError) as raised,
    ):
        workflow_worker.handle(event, LambdaContext(), deps)
    assert fault.fired == config.TOTAL_MAX_ATTEMPTS, "botocore retried inside the call"
    return reported_type(raised.value)


@pytest.mark.parametrize("kind", faults.DYNAMODB_KINDS)
@pytest.mark.parametrize(("operation", "state", "payload"), STAGES, ids=[s[0] for s in STAGES])
def test_every_transient_dynamodb_kind_reaches_a_retrier_of_its_task_state(
    kind: Kind,
    operation: str,
    state: str,
    payload: dict[str, Any],
    faulty_deps: workflow_worker.Dependencies,
    states: dict[str, Any],
) -> None:
    name = reported_name(faulty_deps, kind, operation, payload)
    assert name == "TransientStoreError"
    assert retrier_for(states[state], name) is not None


def test_every_transient_name_of_the_taxonomy_reaches_a_retrier_in_its_task_states(
    states: dict[str, Any],
) -> None:
    """Every name transient.py calls transient, for the states that can see it: the
    Lambda service's and the timeout's in both; ours as the workflow worker raises them
    (TransientOrderError comes from the store stage's fault modes only)."""
    assert set(OWN_TRANSIENT_ERRORS) == {*WORKFLOW_TRANSIENT_ERRORS, TimeBudgetExhausted}
    expected = {
        "StoreOrder": [cls.__name__ for cls in WORKFLOW_TRANSIENT_ERRORS],
        "ReadSummary": [
            cls.__name__ for cls in WORKFLOW_TRANSIENT_ERRORS if cls is not TransientOrderError
        ],
    }
    for state, ours in expected.items():
        for name in (*ours, *LAMBDA_SERVICE_ERRORS, *LAMBDA_TIMEOUT_ERRORS):
            assert retrier_for(states[state], name) is not None, f"{state} does not retry {name}"


def test_the_seed_transient_order_error_retrier_is_kept_as_it_was(states: dict[str, Any]) -> None:
    assert retrier_for(states["StoreOrder"], "TransientOrderError") == {
        "ErrorEquals": ["TransientOrderError"],
        "IntervalSeconds": 1,
        "BackoffRate": 2,
        "MaxAttempts": 2,
    }


# --- every permanent failure is caught or fails under its own name, never retried -------


def permanent_failures(tables: Tables) -> dict[str, tuple[str, BaseException]]:
    """Each permanent failure, raised by the real code: {label: (Task state, error)}."""
    dynamodb = shared_client("dynamodb", region_name="us-east-1")
    deps = workflow_worker.Dependencies(
        dynamodb, workflow_settings_for(tables.orders, tables.attempts)
    )
    raised: dict[str, tuple[str, BaseException]] = {}

    def capture(label: str, state: str, event: Any, worker_deps: Any = deps) -> None:
        with pytest.raises(Exception) as error:  # noqa: PT011 - each case raises its own
            workflow_worker.handle(event, LambdaContext(), worker_deps)
        raised[label] = (state, error.value)

    capture("invalid order", "StoreOrder", {"id": "p", "quantity": 0})
    workflow_worker.handle({"id": "p", "quantity": 1}, LambdaContext(), deps)
    capture("conflicting order", "StoreOrder", {"id": "p", "quantity": 2})
    capture("order not found", "ReadSummary", {"stage": "summary", "id": "missing"})

    stubbed = shared_client("dynamodb", region_name="us-east-1")
    stubber = Stubber(stubbed)
    stubber.add_response(
        "update_item",
        {"Attributes": {"attempts": {"N": "1"}}, **stored_answer(tables.attempts, 0.5)},
    )
    stubber.add_client_error("put_item", "ConditionalCheckFailedException", http_status_code=400)
    stubber.add_client_error("get_item", "AccessDeniedException", http_status_code=400)
    stubber.add_client_error("update_item", "AccessDeniedException", http_status_code=400)
    stubbed_deps = workflow_worker.Dependencies(stubbed, deps.settings)
    with stubber:
        capture("unreadable stored item", "StoreOrder", {"id": "u", "quantity": 1}, stubbed_deps)
        capture("access denied", "ReadSummary", {"stage": "summary", "id": "u"}, stubbed_deps)
        counted = {"id": "c", "quantity": 1, "mode": "after-write"}
        capture("attempts counter unavailable", "StoreOrder", counted, stubbed_deps)
    with pytest.raises(ConfigurationError) as configuration:
        WorkflowWorkerSettings.from_environ({})
    raised["configuration error"] = ("StoreOrder", configuration.value)
    return raised


def test_no_permanent_failure_meets_a_retrier_and_domain_ones_are_caught(
    aws: None, tables: Tables, states: dict[str, Any]
) -> None:
    failures = permanent_failures(tables)
    names = {label: reported_type(error) for label, (_, error) in failures.items()}
    assert names == {
        "invalid order": "InvalidOrder",
        "conflicting order": "OrderConflict",
        "order not found": "OrderNotFound",
        "unreadable stored item": "UnreadableStoredOrder",
        "access denied": "ClientError",
        "attempts counter unavailable": "AttemptsCounterUnavailable",
        "configuration error": "ConfigurationError",
    }
    for name in names.values():
        for state in TASK_STATES:
            assert retrier_for(states[state], name) is None, f"{state} retries {name}"
    for label in ("invalid order", "conflicting order"):
        assert catcher_for(states["StoreOrder"], names[label]) is not None
    for label in (
        "order not found",
        "access denied",
        "unreadable stored item",
        "attempts counter unavailable",
    ):
        state, _ = failures[label]
        assert catcher_for(states[state], names[label]) is None  # fails under its own name
