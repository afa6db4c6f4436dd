"""Server mode: the application stays deployed on 127.0.0.1 and answers boto3; verify
runs the seed scenarios through the endpoint."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.tests.support.processes import python_module
from order_guard_tools.scenarios import Report
from order_guard_tools.verify import StackTarget, verify
from tests.support.aws import free_port
from tests.support.order_guard import started
from tests.support.paths import ROOT


def failed(report: Report) -> list[str]:
    return [f"{c.label}: {c.detail}" for c in report.checks if not c.ok]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalCloud]:
    with started(server=True, visibility_timeout=1) as running:
        running.start_event_sources(idle_wait_seconds=0.1)
        yield running


def test_server_mode_answers_boto3_through_its_endpoint(server: LocalCloud) -> None:
    import boto3

    sqs = boto3.client(
        "sqs",
        region_name="us-east-1",
        endpoint_url=server.endpoint_url,
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    attributes = sqs.get_queue_attributes(
        QueueUrl=server.outputs["JobsQueueUrl"], AttributeNames=["QueueArn"]
    )
    assert attributes["Attributes"]["QueueArn"] == server.outputs["JobsQueueArn"]


UNRELATED_DEAD_LETTERS = [
    "not json {",
    "[1, 2, 3]",
    '{"id": ["x"]}',
    '{"id": 5, "quantity": 4}',
    '{"id": null}',
    '{"id": {"S": "dedup-order-server-test"}}',
    '"dedup-order-server-test"',
    "[" * 5000 + "]" * 5000,  # deeper than Python's JSON parser will go
    '{"id": "someone-elses-order", "quantity": 4}',
    '{"id": "big", "pad": "' + "x" * (256 * 1024 - 24) + '"}',  # 256 KiB, the SQS limit
]


def test_verify_passes_and_cleans_up_only_its_own_among_fifty_unrelated_dead_letters(
    server: LocalCloud,
) -> None:
    target = StackTarget("order-guard", endpoint_url=server.endpoint_url)
    sqs = target.client("sqs")
    dlq = target.outputs["JobsDeadLetterQueueUrl"]
    unrelated = UNRELATED_DEAD_LETTERS * 5
    for body in unrelated:
        sqs.send_message(QueueUrl=dlq, MessageBody=body)

    reports = verify(target, run_id="server-test")

    assert [failed(report) for report in reports] == [[], []]
    # verify cleans up only what it created: its orders, and its one dead letter
    items: Any = target.client("dynamodb").scan(TableName=target.outputs["OrdersTableName"])[
        "Items"
    ]
    assert not [i for i in items if i["id"]["S"].endswith("-server-test")]
    left = []
    while page := sqs.receive_message(
        QueueUrl=dlq, MaxNumberOfMessages=10, VisibilityTimeout=60, WaitTimeSeconds=1
    ).get("Messages"):
        left += [message["Body"] for message in page]
        for message in page:
            sqs.delete_message(QueueUrl=dlq, ReceiptHandle=message["ReceiptHandle"])
    assert sorted(left) == sorted(unrelated)


def test_invoke_reaches_the_functions_of_a_running_server(
    server: LocalCloud, capsys: pytest.CaptureFixture[str]
) -> None:
    from order_guard_tools import cli

    status = cli.main(
        [
            "invoke",
            "WorkflowWorkerFunction",
            "-e",
            "events/workflow-different-order.json",
            "--endpoint-url",
            str(server.endpoint_url),
        ]
    )
    out = capsys.readouterr().out
    assert status == 0
    assert '"total_cents": 350' in out
    assert "START RequestId:" in out  # the LogType=Tail log of the invocation


def test_serve_prints_its_parameters_and_resources_and_stops_cleanly_on_sigint() -> None:
    port = free_port()
    arguments = (
        "--port",
        str(port),
        "--parameter-overrides",
        "BatchSize=1",
        "FaultModesEnabled=true",
    )
    with python_module("order_guard_tools", "serve", *arguments, cwd=ROOT) as server:
        printed = server.read_until("Ctrl-C stops the server")
        assert f"listening on http://127.0.0.1:{port}" in printed
        rows = {tuple(line.split()) for line in printed.splitlines()}
        assert ("BatchSize", "1", "--parameter-overrides") in rows
        assert ("FaultModesEnabled", "true", "--parameter-overrides") in rows
        assert ("MaxReceiveCount", "5", "template", "default") in rows  # replaced, as in SAM
        for output in (
            "JobsQueueUrl",
            "OrdersTableName",
            "OrdersStateMachineArn",
            "QueueWorkerFunctionName",
        ):
            assert output in printed
        server.process.send_signal(signal.SIGINT)
        assert server.process.wait(timeout=20) == 0
        assert "stopping" in server.read_until("stopping", timeout_s=5)
