"""The time budget: every DynamoDB call, queue record and StoreOrder attempt ends inside
the function timeout, and a batch that runs short of time lists what it did not finish.

The endpoints here are real sockets on 127.0.0.1 (tests/support/endpoints.py): botocore's own
timeouts and retries run exactly as in the deployed function.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from typing import Any

import pytest
from botocore.endpoint import DEFAULT_TIMEOUT
from botocore.exceptions import (
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ReadTimeoutError,
)
from botocore.retries.standard import ExponentialBackoff, RetryContext

from order_guard import config, queue_worker
from order_guard.exceptions import TransientStoreError
from order_guard.orders import Order
from order_guard.store import put_order_once
from tests.support.aws import LambdaContext, shared_client, sqs_record
from tests.support.endpoints import scripted_endpoint, unaccepting_endpoint_url, unused_port_url
from tests.support.environment import queue_settings
from tests.support.logs import LogCapture

UNCONFIGURED_S = DEFAULT_TIMEOUT
"""botocore's own connect and read timeout (60 s): one attempt of a client that dropped
the configured timeouts waits this long. The wall-clock tests below use it as their upper
bound, a hang guard that load cannot reach, not a speed claim: what the worst case is made
of (the attempts, the timeouts, botocore's backoff) is checked exactly, without a clock, by
the two tests that follow; their lower bounds hold because a timeout fires late on a
loaded machine, never early."""


def client_for(url: str) -> Any:
    """A DynamoDB client exactly as the workers build it, pointed at ``url``."""
    return shared_client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=url,
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
        config=config.DYNAMODB_CLIENT_CONFIG,
    )


class RunningContext(LambdaContext):
    """A Lambda context whose clock runs, like the runtime's."""

    def __init__(self, timeout_s: float) -> None:
        super().__init__()
        self.deadline = time.monotonic() + timeout_s

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


def test_total_attempts_and_timeouts_are_set_explicitly() -> None:
    client_config = config.DYNAMODB_CLIENT_CONFIG
    assert client_config.retries == {"mode": "standard", "total_max_attempts": 2}
    assert (client_config.connect_timeout, client_config.read_timeout) == (0.5, 1.0)


def test_the_worst_case_uses_botocores_own_largest_backoff() -> None:
    """``worst_case_call_s`` adds the backoff botocore's standard mode can sleep at most
    (its random factor at 1) between the attempts."""
    backoff = ExponentialBackoff(random=lambda: 1.0)
    for attempts in (1, 2, 3, 5):
        largest = sum(
            backoff.delay_amount(RetryContext(attempt_number=n)) for n in range(1, attempts)
        )
        assert config.worst_case_call_s(attempts, 0.5, 1.0) == attempts * 1.5 + largest
    assert config.DYNAMODB_CALL_WORST_CASE_S == 4.0


def test_a_call_a_record_and_a_store_attempt_fit_the_function_timeout(template: Any) -> None:
    timeout_s = template.function_globals["Timeout"]
    assert timeout_s > config.RECORD_BUDGET_S
    assert timeout_s > config.STORE_ATTEMPT_WORST_CASE_S  # counter + write + margin
    for logical_id in ("QueueWorkerFunction", "WorkflowWorkerFunction"):
        assert "Timeout" not in template.resources[logical_id]["Properties"]
    visibility_timeout = template.resources["JobsQueue"]["Properties"]["VisibilityTimeout"]
    assert visibility_timeout >= 6 * timeout_s  # AWS: >= 6 x the function timeout


def test_a_put_item_to_an_endpoint_that_never_answers_gives_up_after_its_read_timeouts() -> None:
    with scripted_endpoint(["hang"]) as endpoint:
        started = time.monotonic()
        with pytest.raises(TransientStoreError) as raised:
            put_order_once(client_for(endpoint.url), "orders", Order("stalled", 1))
        elapsed = time.monotonic() - started
    assert isinstance(raised.value.__cause__, ReadTimeoutError)
    assert endpoint.requests == config.TOTAL_MAX_ATTEMPTS
    assert elapsed >= config.TOTAL_MAX_ATTEMPTS * config.READ_TIMEOUT_S  # each attempt waited
    assert elapsed < UNCONFIGURED_S  # a hang guard: the configured timeouts were the ones used


@pytest.mark.parametrize(
    ("script", "cause"),
    [(["drop"], ConnectionClosedError), (["503"], None)],
    ids=["dropped connection", "HTTP 503"],
)
def test_real_network_failures_are_transient_store_errors(
    script: list[str], cause: type[Exception] | None
) -> None:
    with scripted_endpoint(script) as endpoint, pytest.raises(TransientStoreError) as raised:
        put_order_once(client_for(endpoint.url), "orders", Order("flaky-net", 1))
    assert endpoint.requests == config.TOTAL_MAX_ATTEMPTS
    if cause is not None:
        assert isinstance(raised.value.__cause__, cause)
    else:
        assert "ServiceUnavailable (HTTP 503)" in str(raised.value)


def test_a_connection_that_cannot_open_gives_up_after_its_connect_timeouts() -> None:
    with unaccepting_endpoint_url() as url:
        started = time.monotonic()
        with pytest.raises(TransientStoreError) as raised:
            put_order_once(client_for(url), "orders", Order("unreachable", 1))
        elapsed = time.monotonic() - started
    assert isinstance(raised.value.__cause__, ConnectTimeoutError)
    assert elapsed >= config.TOTAL_MAX_ATTEMPTS * config.CONNECT_TIMEOUT_S  # each waited
    assert elapsed < UNCONFIGURED_S  # a hang guard: the configured timeouts were the ones used


def test_a_refused_connection_is_a_transient_store_error() -> None:
    with pytest.raises(TransientStoreError) as raised:
        put_order_once(client_for(unused_port_url()), "orders", Order("refused", 1))
    assert isinstance(raised.value.__cause__, EndpointConnectionError)


@pytest.mark.parametrize("concurrency", [1, 10])
def test_a_batch_against_a_stalled_endpoint_returns_in_time_and_lists_what_it_did_not_finish(
    concurrency: int, queue_logs: LogCapture
) -> None:
    """Three writes succeed, then the endpoint stops answering. The worker acknowledges
    the three and lists every record it did not finish, and returns before its 10 s
    timeout. One record at a time, it spends at most one worst-case call on each record
    it starts and starts none with less than RECORD_BUDGET_S left (TimeBudgetExhausted);
    ten at a time, every record starts at once and the stalled ones time out together."""
    timeout_s = 10.0
    records = [sqs_record(json.dumps({"id": f"budget-{i}", "quantity": 1})) for i in range(10)]
    with scripted_endpoint(["ok", "ok", "ok", "hang"]) as endpoint:
        settings = replace(queue_settings("orders"), record_concurrency=concurrency)
        deps = queue_worker.Dependencies(client_for(endpoint.url), settings)
        context = RunningContext(timeout_s)
        response = queue_worker.handle_batch({"Records": records}, context, deps)
        remaining_ms = context.get_remaining_time_in_millis()

    listed = {failure["itemIdentifier"] for failure in response["batchItemFailures"]}
    lines = queue_logs.results()
    accepted = {line["message_id"] for line in lines if line["decision"] == "accepted"}
    assert len(accepted) == 3
    assert listed == {record["messageId"] for record in records} - accepted
    assert remaining_ms > 0, "returned before the function timeout"
    failed = [line["error_type"] for line in lines if line["decision"] == "error"]
    timed_out = failed.count("TransientStoreError")
    if concurrency == 1:
        # A stalled call takes 2 to 3 s here (two 1 s read timeouts, a backoff under
        # 1 s), and records start only while 4.5 s are left, in the first 5.5 s.
        assert 1 <= timed_out <= 3
        assert failed.count("TimeBudgetExhausted") == 7 - timed_out
    else:
        assert timed_out == 7
    assert all(line["transient"] for line in lines if line["decision"] == "error")
