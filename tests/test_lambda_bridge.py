"""The Lambda bridge reports what the Python runtime reports, on small probe handlers."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from localcloud.cloud import LocalCloud
from localcloud.lambda_bridge import LocalFunction

FIXTURES = Path(__file__).parent / "fixtures" / "bridge_functions"


def function(
    handler: str, *, timeout_s: int = 3, environment: dict[str, str] | None = None
) -> LocalFunction:
    return LocalFunction(
        name=f"probe-{handler.replace('.', '-')}",
        arn=f"arn:aws:lambda:us-east-1:123456789012:function:probe-{handler.replace('.', '-')}",
        code_uri=FIXTURES,
        handler=handler,
        environment=environment or {},
        timeout_s=timeout_s,
        memory_mb=128,
        log_group="/aws/lambda/probe",
        region="us-east-1",
    )


def test_a_handler_sees_its_variables_and_no_host_aws_config_files() -> None:
    probe = function("probe.environment", environment={"ORDERS_TABLE_NAME": "local-orders"})

    seen = probe.invoke(
        {
            "names": [
                "ORDERS_TABLE_NAME",
                "AWS_LAMBDA_FUNCTION_NAME",
                "AWS_CONFIG_FILE",
                "AWS_SHARED_CREDENTIALS_FILE",
            ]
        }
    ).payload

    assert seen == {
        "ORDERS_TABLE_NAME": "local-orders",
        "AWS_LAMBDA_FUNCTION_NAME": probe.name,
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
    }


def test_a_local_cloud_hides_the_host_aws_variables_while_it_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_PROFILE", "production-admin")
    monkeypatch.setenv("AWS_ENDPOINT_URL_DYNAMODB", "https://dynamodb.example")
    with LocalCloud():
        assert "AWS_PROFILE" not in os.environ
        assert "AWS_ENDPOINT_URL_DYNAMODB" not in os.environ
    assert os.environ["AWS_PROFILE"] == "production-admin"
    assert os.environ["AWS_ENDPOINT_URL_DYNAMODB"] == "https://dynamodb.example"


def test_a_change_another_thread_makes_meanwhile_is_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EXTRA", "host")
    function("probe.another_thread_changes_extra", environment={"EXTRA": "function"}).invoke({})
    assert os.environ["EXTRA"] == "changed meanwhile"


def test_after_the_invocation_the_host_environment_is_back(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    monkeypatch.setenv("AWS_PROFILE", "production-admin")
    before = dict(os.environ)
    function("probe.environment", environment={"EXTRA": "1"}).invoke({"names": []})
    assert dict(os.environ) == before


def test_an_invocation_past_its_timeout_fails_whatever_it_returned() -> None:
    invocation = function("probe.slow", timeout_s=1).invoke({"seconds": 1.1})
    assert invocation.error
    assert invocation.error_type == "Sandbox.Timedout"
    assert "Task timed out after 1.00 seconds" in invocation.payload["errorMessage"]


def test_an_import_failure_is_runtime_import_module_error_with_the_start_line_logged() -> None:
    invocation = function("broken.handler").invoke({})
    assert invocation.error_type == "Runtime.ImportModuleError"
    assert "a_module_that_is_not_installed" in invocation.payload["errorMessage"]
    assert invocation.log_lines[0].startswith("START RequestId:")


def test_sys_exit_is_runtime_exit_error() -> None:
    assert function("probe.exits").invoke({}).error_type == "Runtime.ExitError"


def test_a_response_that_is_not_json_is_runtime_marshal_error() -> None:
    assert function("probe.unserialisable").invoke({}).error_type == "Runtime.MarshalError"


def test_output_of_threads_running_before_the_invocation_stays_out_of_its_log() -> None:
    stop = threading.Event()

    def server_thread() -> None:
        while not stop.is_set():
            print("from a thread that was already running")
            time.sleep(0.001)

    background = threading.Thread(target=server_thread)
    background.start()
    try:
        invocation = function("probe.chatty_neighbour").invoke({})
    finally:
        stop.set()
        background.join()
    assert "from the handler" in invocation.log_lines
    assert "from a thread the handler started" in invocation.log_lines
    assert "from a thread that was already running" not in invocation.log_lines
