"""The state of an account, read through its public APIs: the one place that reads queue
depths, dead letters, log lines, invocations and execution histories for everything that
shows or checks them (a project's scenarios and checks, ``status``, the live view, the
tests). Works against AWS and against the local cloud alike; it knows no application:
what a message or an item means is the caller's (a predicate, a queue URL).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class Target(Protocol):
    """Where a scenario runs: the stack's Outputs, clients, and a way to let the mapped
    queues settle."""

    @property
    def outputs(self) -> Mapping[str, str]: ...

    def client(self, service: str) -> Any: ...

    def settle(self, timeout_s: float) -> None:
        """Return once the queues the event source mappings read hold no message,
        visible or in flight."""
        ...


def now_ms() -> int:
    return int(time.time() * 1000)


def log_messages(target: Target, group: str, since_ms: int, pattern: str) -> list[str]:
    """Messages of ``group`` since ``since_ms`` that match a CloudWatch Logs term pattern."""
    logs = target.client("logs")
    messages: list[str] = []
    kwargs: dict[str, Any] = {
        "logGroupName": group,
        "startTime": since_ms,
        "filterPattern": pattern,
    }
    while True:
        page = logs.filter_log_events(**kwargs)
        messages.extend(event["message"] for event in page.get("events", []))
        if not page.get("nextToken"):
            return messages
        kwargs["nextToken"] = page["nextToken"]


def invocations(
    target: Target,
    group: str,
    since_ms: int,
    until_ms: int,
    *,
    expected: int,
    timeout_s: float = 60.0,
) -> int:
    """Lambda invocations between two instants: the runtime's ``REPORT RequestId`` lines."""
    deadline = time.monotonic() + timeout_s
    while True:
        logs = target.client("logs")
        count = 0
        kwargs: dict[str, Any] = {
            "logGroupName": group,
            "startTime": since_ms,
            "endTime": until_ms,
            "filterPattern": '"REPORT RequestId"',
        }
        while True:
            page = logs.filter_log_events(**kwargs)
            count += sum(
                1 for e in page.get("events", []) if e["message"].startswith("REPORT RequestId")
            )
            if not page.get("nextToken"):
                break
            kwargs["nextToken"] = page["nextToken"]
        if count >= expected or time.monotonic() >= deadline:
            return count
        time.sleep(1.0)


def queue_depth(target: Target, url: str) -> tuple[int, int]:
    attributes = target.client("sqs").get_queue_attributes(
        QueueUrl=url,
        AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"],
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]), int(
        attributes["ApproximateNumberOfMessagesNotVisible"]
    )


def queue_empty(target: Target, url: str, *, pause_s: float = 0.25) -> bool:
    """Whether the queue holds nothing, visible or in flight, on two reads ``pause_s``
    apart. One read is not enough: the two counts are taken one after the other, and a
    message whose visibility timeout ends between them is counted in neither (seen with
    moto; SQS documents both as approximate)."""
    if queue_depth(target, url) != (0, 0):
        return False
    time.sleep(pause_s)
    return queue_depth(target, url) == (0, 0)


DLQ_SCAN_LIMIT = 10_000
"""Messages :func:`dead_letters` looks at, at most, in one scan."""


def dead_letters(
    target: Target, url: str, wanted: Callable[[str], bool], *, delete: bool = False
) -> list[str]:
    """Bodies of the queue at ``url`` (a dead-letter queue) for which ``wanted`` holds.

    Every message is looked at once: each one received stays hidden (visibility timeout
    60 s) until the scan ends, so the scan moves through the whole queue instead of
    receiving the same ten again, and then the ones kept are made visible again at once.
    ``wanted`` is given every body as SQS holds it (any text, up to the SQS size limit);
    the bodies it refuses are left untouched.

    Args:
        delete: delete the wanted messages instead of putting them back.
    """
    sqs = target.client("sqs")
    bodies: dict[str, str] = {}  # by MessageId: a message seen twice counts once
    held: list[str] = []  # receipt handles to make visible again
    try:
        while len(held) + len(bodies) < DLQ_SCAN_LIMIT:
            page = sqs.receive_message(
                QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=60, WaitTimeSeconds=1
            )
            messages = page.get("Messages", [])
            if not messages:
                break
            for message in messages:
                if wanted(message["Body"]):
                    bodies[message["MessageId"]] = message["Body"]
                    if delete:
                        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
                        continue
                held.append(message["ReceiptHandle"])
    finally:
        for start in range(0, len(held), 10):
            sqs.change_message_visibility_batch(
                QueueUrl=url,
                Entries=[
                    {"Id": str(n), "ReceiptHandle": handle, "VisibilityTimeout": 0}
                    for n, handle in enumerate(held[start : start + 10])
                ],
            )
    return list(bodies.values())


def max_receive_count(target: Target, url: str) -> int:
    """The ``maxReceiveCount`` of the queue's redrive policy."""
    attributes = target.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["RedrivePolicy"]
    )["Attributes"]
    return int(json.loads(attributes["RedrivePolicy"])["maxReceiveCount"])


def visibility_timeout(target: Target, url: str) -> int:
    """The queue's visibility timeout, in seconds."""
    attributes = target.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["VisibilityTimeout"]
    )["Attributes"]
    return int(attributes["VisibilityTimeout"])


@dataclass(frozen=True)
class TaskAttempt:
    state: str
    error: str | None
    payload: Any


def task_attempts(history: list[Mapping[str, Any]]) -> list[TaskAttempt]:
    """Each Task attempt of an execution, in order, with its error or its Lambda payload."""
    attempts: list[TaskAttempt] = []
    state = ""
    for event in history:
        kind = event["type"]
        if kind.endswith("StateEntered"):
            state = event["stateEnteredEventDetails"]["name"]
        elif kind == "TaskFailed":
            details = event["taskFailedEventDetails"]
            attempts.append(TaskAttempt(state, details.get("error"), details.get("cause")))
        elif kind == "TaskSucceeded":
            output = json.loads(event["taskSucceededEventDetails"]["output"])
            attempts.append(TaskAttempt(state, None, output.get("Payload")))
        elif kind == "TaskTimedOut":
            attempts.append(TaskAttempt(state, "States.Timeout", None))
    return attempts


def start_execution(target: Target, state_machine_arn: str, name: str, execution_input: Any) -> str:
    """Start an execution of ``state_machine_arn`` under ``name`` (always name one: an
    execution started again under its name while it runs is the same execution); returns
    its ARN."""
    arn: str = target.client("stepfunctions").start_execution(
        stateMachineArn=state_machine_arn,
        name=name,
        input=json.dumps(execution_input),
    )["executionArn"]
    return arn


def wait_for_execution(
    target: Target, arn: str, timeout_s: float = 120.0
) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """Poll until the execution leaves RUNNING; returns (DescribeExecution, history).

    Raises:
        TimeoutError: still RUNNING after ``timeout_s`` seconds.
    """
    sfn = target.client("stepfunctions")
    deadline = time.monotonic() + timeout_s
    while True:
        described = sfn.describe_execution(executionArn=arn)
        if described["status"] != "RUNNING":
            break
        if time.monotonic() > deadline:
            raise TimeoutError(f"execution {arn} still RUNNING after {timeout_s} s")
        time.sleep(0.2)
    history: list[Mapping[str, Any]] = []
    kwargs: dict[str, Any] = {"executionArn": arn, "maxResults": 1000}
    while True:
        page = sfn.get_execution_history(**kwargs)
        history.extend(page["events"])
        if not page.get("nextToken"):
            break
        kwargs["nextToken"] = page["nextToken"]
    return described, history


def run_execution(
    target: Target,
    state_machine_arn: str,
    name: str,
    execution_input: Any,
    timeout_s: float = 120.0,
) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """Start an execution and wait for it (see :func:`start_execution` and
    :func:`wait_for_execution`)."""
    arn = start_execution(target, state_machine_arn, name, execution_input)
    return wait_for_execution(target, arn, timeout_s)
