"""`sam local invoke` reproduces every sample event, as docs/deploy.md lists them.

No Docker here, so the container is replaced, not SAM CLI: the environment of each
function's container is computed by SAM CLI's own classes (tests/support/sam_cli.py) from
template.yaml, samconfig.toml and the checked-in env-vars.local.json, and the handler
runs in an execution environment of its own (a process, as the container is one) with
exactly that environment against a local server started as
`make serve` starts it. Only the endpoint's host changes: the container would reach the
server at host.docker.internal:5000; here it is this test's 127.0.0.1 port.
"""

from __future__ import annotations

import json
import re
import sysconfig
from collections.abc import Iterator
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.services.lambda_ import Invocation, ProcessFunction
from order_guard_tools.project import ROOT
from tests.support.order_guard import started
from tests.support.sam_cli import container_environment

ENV_VARS_FILE = ROOT / "env-vars.local.json"
CONTAINER_ENDPOINT = "http://host.docker.internal:5000"


def ids(response: Any) -> list[str]:
    return [failure["itemIdentifier"] for failure in response["batchItemFailures"]]


def records(event_file: str, *, body_without: str = "\0") -> list[str]:
    """The messageIds of an event file's records (those whose body lacks a text)."""
    event = json.loads((ROOT / "events" / event_file).read_text())
    return [r["messageId"] for r in event["Records"] if body_without not in r["body"]]


def results(invocation: Invocation) -> list[str]:
    lines = [json.loads(line) for line in invocation.log_lines if line.startswith("{")]
    return [line["decision"] for line in lines if line.get("message") == "RESULT"]


# (event file, function, what docs/deploy.md says it shows), in that page's order.
DOCUMENTED: list[tuple[str, str, Any]] = [
    ("sqs-first-order.json", "QueueWorkerFunction", (["accepted"], [])),
    ("sqs-two-copies.json", "QueueWorkerFunction", (["duplicate", "duplicate"], [])),
    ("sqs-independent-order.json", "QueueWorkerFunction", (["accepted"], [])),
    (
        "sqs-conflicting-copy.json",
        "QueueWorkerFunction",
        (["conflict"], records("sqs-conflicting-copy.json")),
    ),
    (
        "sqs-mixed-batch.json",
        "QueueWorkerFunction",
        (["accepted"] * 2 + ["invalid"] * 7, records("sqs-mixed-batch.json", body_without="good")),
    ),
    ("workflow-after-write.json", "WorkflowWorkerFunction", ("TransientOrderError", "accepted")),
    (
        "workflow-repeat.json",
        "WorkflowWorkerFunction",
        {"id": "protected-order", "quantity": 4, "total_cents": 1100, "duplicate": True},
    ),
    (
        "workflow-different-order.json",
        "WorkflowWorkerFunction",
        {"id": "different-order", "quantity": 1, "total_cents": 350, "duplicate": False},
    ),
    (
        "workflow-summary.json",
        "WorkflowWorkerFunction",
        {"id": "protected-order", "total_cents": 1100, "completed": True},
    ),
    ("workflow-flaky.json", "WorkflowWorkerFunction", ("TransientOrderError", "error")),
    ("workflow-permanent.json", "WorkflowWorkerFunction", ("InvalidOrder", "invalid")),
]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalCloud]:
    """A local server as `make serve` starts it: stack order-guard, samconfig [default]."""
    with started(server=True) as running:
        yield running


def run_like_sam_local_invoke(
    server: LocalCloud, logical_id: str, event_file: str, config_env: str = "default"
) -> Invocation:
    environment = container_environment(
        logical_id,
        template=ROOT / "template.yaml",
        samconfig=ROOT / "samconfig.toml",
        env_vars_file=ENV_VARS_FILE,
        config_env=config_env,
    )
    assert environment["AWS_ENDPOINT_URL"] == CONTAINER_ENDPOINT
    assert server.endpoint_url is not None
    environment["AWS_ENDPOINT_URL"] = server.endpoint_url
    properties = server.function(logical_id)
    function = ProcessFunction(  # a new container per invocation, as sam local invoke runs
        extra_paths=(sysconfig.get_paths()["purelib"],),  # what sam build would package
        owns_code=False,  # the source folder
        name=logical_id,
        arn=f"arn:aws:lambda:us-east-1:123456789012:function:{logical_id}",
        code_uri=properties.code_uri,
        handler=environment["AWS_LAMBDA_FUNCTION_HANDLER"],
        environment=environment,
        timeout_s=int(environment["AWS_LAMBDA_FUNCTION_TIMEOUT"]),
        memory_mb=int(environment["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"]),
        log_group=environment["AWS_LAMBDA_LOG_GROUP_NAME"],
        region=environment["AWS_REGION"],
    )
    try:
        return function.invoke(json.loads((ROOT / "events" / event_file).read_text()))
    finally:
        function.close()


def test_the_env_vars_file_names_the_tables_make_serve_creates(server: LocalCloud) -> None:
    env_vars = json.loads(ENV_VARS_FILE.read_text())
    orders, attempts = server.outputs["OrdersTableName"], server.outputs["AttemptsTableName"]
    assert env_vars == {
        "QueueWorkerFunction": {
            "ORDERS_TABLE_NAME": orders,
            "AWS_ENDPOINT_URL": CONTAINER_ENDPOINT,
        },
        "WorkflowWorkerFunction": {
            "ORDERS_TABLE_NAME": orders,
            "ATTEMPTS_TABLE_NAME": attempts,
            "AWS_ENDPOINT_URL": CONTAINER_ENDPOINT,
        },
    }


def test_the_docs_list_every_event_file_in_this_order() -> None:
    page = (ROOT / "docs" / "deploy.md").read_text()
    section = page.split("## Invoke on AWS or with `sam local`", 1)[1].split("\n## ", 1)[0]
    listed = re.findall(r"^\| `([\w-]+\.json)` \|", section, flags=re.MULTILINE)
    assert listed == [event_file for event_file, _, _ in DOCUMENTED]
    executions = {p.name for p in (ROOT / "events").glob("execution-*.json")}
    assert {p.name for p in (ROOT / "events").glob("*.json")} == set(listed) | executions


def test_every_sample_event_gives_its_documented_result_in_documented_order(
    server: LocalCloud,
) -> None:
    seen = []
    for event_file, logical_id, documented in DOCUMENTED:
        invocation = run_like_sam_local_invoke(server, logical_id, event_file)
        if logical_id == "QueueWorkerFunction":
            decisions, listed = documented  # decisions sorted: RESULT lines of one batch
            outcome: Any = (sorted(results(invocation)), ids(invocation.payload))
            seen.append((event_file, outcome == (decisions, listed), outcome))
        elif isinstance(documented, tuple):
            error_type, decision = documented
            outcome = (invocation.error_type, results(invocation))
            seen.append((event_file, outcome == (error_type, [decision]), outcome))
        else:
            seen.append((event_file, invocation.payload == documented, invocation.payload))
    assert [(name, ok) for name, ok, _ in seen] == [(name, True) for name, _, _ in DOCUMENTED], seen


def test_prod_keeps_the_fault_modes_off_for_sam_local_invoke(server: LocalCloud) -> None:
    invocation = run_like_sam_local_invoke(
        server, "WorkflowWorkerFunction", "workflow-flaky.json", config_env="prod"
    )
    assert invocation.error_type == "InvalidOrder"
    assert "fault modes are disabled" in invocation.payload["errorMessage"]
