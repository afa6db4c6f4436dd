"""Server mode: the application stays deployed on 127.0.0.1 and answers boto3; verify
runs the seed scenarios through the endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from localcloud.cloud import LocalCloud
from localcloud.scenarios import Report
from localcloud.verify import StackTarget, verify
from tests.conftest import free_port


def failed(report: Report) -> list[str]:
    return [f"{c.label}: {c.detail}" for c in report.checks if not c.ok]


@pytest.fixture(scope="module")
def server() -> Iterator[LocalCloud]:
    with LocalCloud(server_port=free_port(), visibility_timeout=1) as running:
        for source in running.deployment.event_sources:
            source.start(idle_wait_seconds=0.1)
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


def test_verify_passes_against_server_mode(server: LocalCloud) -> None:
    target = StackTarget("order-guard", endpoint_url=server.endpoint_url)
    reports = verify(target, run_id="server-test")
    assert [failed(report) for report in reports] == [[], []]
    # verify cleans up only what it created
    items: Any = target.client("dynamodb").scan(TableName=target.outputs["OrdersTableName"])[
        "Items"
    ]
    assert not [i for i in items if i["id"]["S"].endswith("-server-test")]
