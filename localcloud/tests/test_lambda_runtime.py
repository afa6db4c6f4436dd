"""The local Lambda runtime reports what the Python runtime reports, on small probe handlers,
in-process and from a deployment package alike."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pytest

import localcloud
from localcloud.account import LocalCloud
from localcloud.services.lambda_ import InProcessFunction, Invocation, ProcessFunction, register
from localcloud.tests.support.paths import FIXTURES

PROBES = FIXTURES / "runtime_probes"


def function(
    handler: str,
    *,
    timeout_s: int = 3,
    environment: dict[str, str] | None = None,
    name: str | None = None,
    code_uri: Path = PROBES,
) -> InProcessFunction:
    name = name or f"probe-{handler.replace('.', '-')}"
    return InProcessFunction(
        name=name,
        arn=f"arn:aws:lambda:us-east-1:123456789012:function:{name}",
        code_uri=code_uri,
        handler=handler,
        environment=environment or {},
        timeout_s=timeout_s,
        memory_mb=128,
        log_group="/aws/lambda/probe",
        region="us-east-1",
    )


SAME_EITHER_WAY = [
    "broken.handler",
    "nowhere.handler",
    "probe.nothing",
    "raises_at_import.handler",
    "probe.exits",
    "probe.unserialisable",
    "responses.decimals",
    "responses.accepted_by_simplejson",
    "responses.a_set",
    "responses.raw_bytes",
]


@pytest.mark.parametrize("handler", SAME_EITHER_WAY)
def test_in_process_and_from_a_package_the_runtime_answers_the_same(
    handler: str, tmp_path: Path
) -> None:
    """One runtime contract (``localcloud.services.lambda_.runtime.contract``) for both kinds of
    execution environment: the same response bytes, or the same error type and message
    (stack traces name each copy's own files)."""
    here = function(handler).invoke({})
    package = tmp_path / "package"
    shutil.copytree(PROBES, package, ignore=shutil.ignore_patterns("__pycache__"))
    in_process = function(handler, code_uri=package)
    worker = ProcessFunction(**{f: getattr(in_process, f) for f in FIELDS})
    try:
        there = worker.invoke({})
    finally:
        worker.close()

    assert there.error == here.error
    if here.error:  # the message may name the request id, which is each invocation's own
        message = there.payload["errorMessage"].replace(there.request_id, here.request_id)
        assert (there.error_type, message) == (here.error_type, here.payload["errorMessage"])
    else:
        assert there.payload_bytes() == here.payload_bytes()


FIELDS = (
    "name",
    "arn",
    "code_uri",
    "handler",
    "environment",
    "timeout_s",
    "memory_mb",
    "log_group",
    "region",
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
    # awslambdaric bootstrap._get_handler: "Unable to import module '{modname}': {error}"
    assert invocation.payload["errorMessage"] == (
        "Unable to import module 'broken': No module named 'a_module_that_is_not_installed'"
    )
    assert invocation.payload["stackTrace"] == []
    assert invocation.log_lines[0].startswith("START RequestId:")


def test_a_missing_handler_module_or_function_is_reported_as_the_runtime_does() -> None:
    missing_module = function("nowhere.handler").invoke({}).payload
    missing_function = function("probe.nothing").invoke({}).payload

    assert (missing_module["errorType"], missing_module["errorMessage"]) == (
        "Runtime.ImportModuleError",
        "Unable to import module 'nowhere': No module named 'nowhere'",
    )
    assert (missing_function["errorType"], missing_function["errorMessage"]) == (
        "Runtime.HandlerNotFound",
        "Handler 'nothing' missing on module 'probe'",
    )


def test_another_exception_at_import_keeps_its_own_class_name() -> None:
    invocation = function("raises_at_import.handler").invoke({})

    assert invocation.error_type == "ValueError"
    assert invocation.payload["errorMessage"] == "ITEMS_TABLE_NAME is not set"
    assert "raises_at_import.py" in invocation.payload["stackTrace"][-1]
    package = Path(localcloud.__file__).parent
    frames = [frame.split('"')[1] for frame in invocation.payload["stackTrace"]]
    assert [f for f in frames if Path(f).is_relative_to(package)] == [
        str(PROBES / "raises_at_import.py")
    ]


def test_a_syntax_error_is_runtime_user_code_syntax_error(tmp_path: Path) -> None:
    # Written at test time: a fixture file with a syntax error would break ruff.
    module = tmp_path / "broken_syntax.py"
    module.write_text("def handler(event, context)\n    return None\n")
    with pytest.raises(SyntaxError) as compiled:
        compile(module.read_text(), str(module), "exec")
    error = compiled.value

    invocation = function("broken_syntax.handler", code_uri=tmp_path).invoke({})

    assert invocation.error_type == "Runtime.UserCodeSyntaxError"
    assert invocation.payload["errorMessage"] == f"Syntax error in module 'broken_syntax': {error}"
    assert invocation.payload["stackTrace"] == [
        f'  File "{module}" Line {error.lineno}\n    {error.text}'
    ]


def test_sys_exit_is_runtime_exit_error() -> None:
    assert function("probe.exits").invoke({}).error_type == "Runtime.ExitError"


def test_a_response_that_is_not_json_is_runtime_marshal_error() -> None:
    assert function("probe.unserialisable").invoke({}).error_type == "Runtime.MarshalError"


def test_decimals_at_any_depth_are_json_numbers() -> None:
    invocation = function("responses.decimals").invoke({})

    assert not invocation.error
    assert invocation.payload == {
        "whole": 4,
        "fraction": 1.5,
        "nested": {"items": [{"quantity": 2, "price": 19.99}]},
    }
    assert isinstance(invocation.payload["whole"], int)
    assert invocation.payload_bytes() == (
        b'{"whole": 4, "fraction": 1.5, "nested": {"items": [{"quantity": 2, "price": 19.99}]}}'
    )


def test_what_the_runtime_marshaller_also_accepts() -> None:
    """simplejson's defaults: a namedtuple is an object, nested bytes are UTF-8 text."""
    invocation = function("responses.accepted_by_simplejson").invoke({})

    assert not invocation.error
    assert invocation.payload == {
        "point": {"x": 1, "y": 2},
        "pair": [1, 2],
        "raw": "café",
        "3": "int key",
    }


def test_a_set_is_still_runtime_marshal_error_with_the_runtime_message() -> None:
    invocation = function("responses.a_set").invoke({})

    assert invocation.error_type == "Runtime.MarshalError"
    assert invocation.payload["errorMessage"] == (
        "Unable to marshal response: Object of type set is not JSON serializable"
    )
    assert invocation.payload["stackTrace"] == []


def test_a_bytes_response_goes_out_as_it_is() -> None:
    invocation = function("responses.raw_bytes").invoke({})

    assert not invocation.error
    assert invocation.payload_bytes() == b"not json"


def powertools_records(invocation: Invocation) -> list[dict[str, Any]]:
    return [json.loads(line) for line in invocation.log_lines if line.startswith("{")]


def cold_start_seen(invocation: Invocation) -> tuple[bool, bool]:
    """(Logger's ``cold_start`` key, whether Metrics emitted its ColdStart metric)."""
    records = powertools_records(invocation)
    logged = [record["cold_start"] for record in records if record.get("message") == "handled"]
    assert len(logged) == 1, invocation.log_lines
    return logged[0], any("ColdStart" in record for record in records)


def test_each_function_has_its_own_powertools_cold_start() -> None:
    from aws_lambda_powertools.logging import logger as powertools_logger

    queue = function("powertools_probe.handler", name="probe-queue-worker")
    workflow = function("powertools_probe.handler", name="probe-workflow-worker")
    process_flag = powertools_logger.is_cold_start

    seen = [
        cold_start_seen(queue.invoke({})),
        cold_start_seen(workflow.invoke({})),
        cold_start_seen(queue.invoke({})),
        cold_start_seen(workflow.invoke({})),
    ]

    assert seen == [(True, True), (True, True), (False, False), (False, False)]
    assert powertools_logger.is_cold_start is process_flag


def test_a_new_execution_environment_starts_cold_again() -> None:
    probe = function("powertools_probe.handler", name="probe-updated-configuration")
    probe.invoke({})
    warm = probe.invoke({})

    probe.new_execution_environment()
    after = probe.invoke({})

    assert cold_start_seen(warm) == (False, False)
    assert cold_start_seen(after) == (True, True)


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


def test_in_process_a_thread_of_no_function_writing_during_an_invocation_stays_out_of_its_log(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """In-process, output belongs to the execution environment of the thread that writes
    it (the invoking thread and every thread started from it), never to a server thread
    that writes meanwhile."""
    running, written = tmp_path / "running", tmp_path / "written"
    handler = function("threads.while_another_writes", timeout_s=10)
    outcome: dict[str, Invocation] = {}
    invoker = threading.Thread(
        target=lambda: outcome.update(
            invocation=handler.invoke({"running": str(running), "written": str(written)})
        )
    )
    invoker.start()
    while not running.exists():
        time.sleep(0.01)

    def server_thread() -> None:  # started by neither the invoker nor the handler
        print("a server line")
        written.touch()

    threading.Thread(target=server_thread).start()
    invoker.join(10)

    lines = outcome["invocation"].log_lines
    assert "from the handler" in lines
    assert "a server line" not in lines
    assert "a server line" in capfd.readouterr().out


def test_in_process_a_function_that_invokes_itself_keeps_each_invocations_lines_its_own() -> None:
    """Lambda runs the inner invocation in another execution environment."""
    reentrant = function("threads.reentrant")
    register(reentrant)

    outer = reentrant.invoke({"depth": 1})

    printed = [line for line in outer.log_lines if line.startswith("outer ")]
    assert printed == ["outer before 1", "outer after 1"]
    assert outer.log_lines[0].startswith("START RequestId:")
