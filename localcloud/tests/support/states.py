"""Step Functions in-process for the local cloud's tests: one account (moto with the local
cloud's patches) per module, and the reads its tests share."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from moto.core.config import DefaultConfig

from localcloud import services
from localcloud.tests.support.aws import REGION

MOTO_CONFIG: DefaultConfig = {
    "stepfunctions": {"execute_state_machine": True},
    "lambda": {"use_docker": False},
}
ROLE_ARN = "arn:aws:iam::123456789012:role/x"


@contextlib.contextmanager
def account() -> Iterator[Any]:
    """A Step Functions client of one in-process account with the local cloud's patches."""
    services.install()
    try:
        with mock_aws(config=MOTO_CONFIG):
            yield boto3.client("stepfunctions", region_name=REGION)
    finally:
        services.uninstall()


def machine(sfn: Any, name: str, definition: dict[str, Any]) -> str:
    """A new state machine's ARN."""
    arn: str = sfn.create_state_machine(
        name=name, definition=json.dumps(definition), roleArn=ROLE_ARN
    )["stateMachineArn"]
    return arn


def ended(sfn: Any, execution_arn: str, guard_s: float = 120) -> dict[str, Any]:
    """DescribeExecution once the execution is no longer RUNNING (``guard_s``: a hang guard
    far above what the run needs)."""
    deadline = time.monotonic() + guard_s
    while True:
        described: dict[str, Any] = sfn.describe_execution(executionArn=execution_arn)
        if described["status"] != "RUNNING":
            return described
        if time.monotonic() > deadline:
            sfn.stop_execution(executionArn=execution_arn)
            pytest.fail(f"{execution_arn} still RUNNING after {guard_s} s")
        time.sleep(0.02)


def full_history(sfn: Any, execution_arn: str) -> list[dict[str, Any]]:
    """Every event of an execution, oldest first."""
    events: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {"executionArn": execution_arn, "maxResults": 1000}
    while True:
        page = sfn.get_execution_history(**arguments)
        events.extend(page["events"])
        if "nextToken" not in page:
            return events
        arguments["nextToken"] = page["nextToken"]


def kinds(history: list[dict[str, Any]]) -> list[str]:
    """The events' types, in order."""
    return [event["type"] for event in history]


def until(probe: Any, what: str, guard_s: float = 60) -> None:
    """Poll ``probe`` until it holds (``guard_s``: a hang guard far above the wait)."""
    deadline = time.monotonic() + guard_s
    while not probe():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {guard_s} s")
        time.sleep(0.02)
