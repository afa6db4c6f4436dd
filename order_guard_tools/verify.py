"""Run the seed scenarios against a deployed stack (AWS, or the local cloud's server).

Resource names come from the stack's Outputs; order ids and execution names carry a
per-run suffix, so a run can be repeated; afterwards only this run's orders, attempt
counters and dead letters are deleted.
"""

from __future__ import annotations

import time
from typing import Any

import boto3

from localcloud.account import FAKE_CREDENTIALS
from localcloud.state import queue_depth
from order_guard_tools.scenarios import (
    Report,
    StepListener,
    cleanup,
    queue_scenario,
    workflow_scenario,
)


class StackTarget:
    """A stack reached through boto3: Outputs from ``DescribeStacks``; the event source
    mapping runs on its own, so settling means waiting for the queue to empty."""

    def __init__(
        self,
        stack_name: str,
        *,
        region: str | None = None,
        endpoint_url: str | None = None,
        profile: str | None = None,
    ) -> None:
        session_kwargs: dict[str, Any] = {}
        if profile:
            session_kwargs["profile_name"] = profile
        if endpoint_url:
            # A local endpoint never needs (and must never receive) real credentials.
            session_kwargs.update(
                aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
                aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
                aws_session_token=FAKE_CREDENTIALS["AWS_SESSION_TOKEN"],
            )
        self._session = boto3.Session(
            region_name=(region or "us-east-1") if endpoint_url else region, **session_kwargs
        )
        self._endpoint_url = endpoint_url
        stacks = self.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"]
        self.outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}

    def client(self, service: str) -> Any:
        return self._session.client(service, endpoint_url=self._endpoint_url)  # type: ignore[call-overload]

    def settle(self, timeout_s: float) -> None:
        """Wait until JobsQueue shows nothing visible or in flight twice in a row."""
        deadline = time.monotonic() + timeout_s
        empty_reads = 0
        while time.monotonic() < deadline:
            if queue_depth(self, self.outputs["JobsQueueUrl"]) == (0, 0):
                empty_reads += 1
                if empty_reads >= 2:
                    return
            else:
                empty_reads = 0
            time.sleep(0.5)
        raise TimeoutError(f"JobsQueue still holds messages after {timeout_s} s")


def verify(
    target: StackTarget,
    *,
    run_id: str | None = None,
    keep: bool = False,
    listener: StepListener | None = None,
) -> list[Report]:
    """Both seed scenarios with ids suffixed ``-<run_id>``; cleans up unless ``keep``."""
    suffix = f"-{run_id or time.strftime('%Y%m%d%H%M%S')}"
    reports: list[Report] = []
    try:
        reports.append(queue_scenario(target, suffix=suffix, listener=listener))
        reports.append(workflow_scenario(target, suffix=suffix, listener=listener))
    finally:
        if not keep:
            created = {order_id for report in reports for order_id in report.created_ids}
            created |= {
                f"{base}{suffix}"
                for base in ("dedup-order", "other-order", "protected-order", "different-order")
            }
            cleanup(target, created)
    return reports
