"""The state of a deployed stack, read through its public APIs: the one place that reads
queue depths, orders, dead letters, RESULT log lines and execution histories for
everything that shows or checks them (the scenarios, ``verify``, ``status``, the live
view and the tests). Works against AWS and against the local cloud alike.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol


class Target(Protocol):
    """Where a scenario runs: the stack Outputs, clients, and a way to let the queue settle."""

    @property
    def outputs(self) -> Mapping[str, str]: ...

    def client(self, service: str) -> Any: ...

    def settle(self, timeout_s: float) -> None:
        """Return once JobsQueue holds no message, visible or in flight."""
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


def results(
    target: Target,
    group: str,
    since_ms: int,
    ids: Iterable[str],
    *,
    expected: int = 0,
    timeout_s: float = 60.0,
) -> list[dict[str, Any]]:
    """Write decisions about ``ids`` (RESULT lines with a ``decision``; a summary's line
    has an ``outcome`` instead), waiting (CloudWatch Logs lags on AWS) for ``expected``."""
    wanted = set(ids)
    deadline = time.monotonic() + timeout_s
    while True:
        lines = []
        for message in log_messages(target, group, since_ms, '"RESULT"'):
            try:
                line = json.loads(message)
            except json.JSONDecodeError:
                continue
            if line.get("message") == "RESULT" and "decision" in line and line.get("id") in wanted:
                lines.append(line)
        lines.sort(key=lambda line: str(line.get("timestamp")))
        if len(lines) >= expected or time.monotonic() >= deadline:
            return lines
        time.sleep(1.0)


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


def stored(target: Target, order_id: str) -> dict[str, Any] | None:
    """The business details of a stored order (consistent read), or ``None``."""
    item = (
        target.client("dynamodb")
        .get_item(
            TableName=target.outputs["OrdersTableName"],
            Key={"id": {"S": order_id}},
            ConsistentRead=True,
        )
        .get("Item")
    )
    if item is None:
        return None
    return {
        "id": item["id"]["S"],
        "quantity": int(item["quantity"]["N"]),
        "total_cents": int(item["total_cents"]["N"]),
    }


def scan_ids(target: Target, ids: Iterable[str]) -> dict[str, tuple[int, int]]:
    """``{id: (quantity, total_cents)}`` for the stored orders among ``ids`` (a full scan)."""
    wanted = set(ids)
    dynamodb = target.client("dynamodb")
    found: dict[str, tuple[int, int]] = {}
    kwargs: dict[str, Any] = {
        "TableName": target.outputs["OrdersTableName"],
        "ConsistentRead": True,
    }
    while True:
        page = dynamodb.scan(**kwargs)
        for item in page["Items"]:
            if item["id"]["S"] in wanted:
                found[item["id"]["S"]] = (int(item["quantity"]["N"]), int(item["total_cents"]["N"]))
        if "LastEvaluatedKey" not in page:
            return found
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]


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


def dead_letters(target: Target, ids: Iterable[str], *, delete: bool = False) -> list[str]:
    """Bodies in the dead-letter queue whose order id is among ``ids``.

    Every message is looked at once: each one received stays hidden (visibility timeout
    60 s) until the scan ends, so the scan moves through the whole queue instead of
    receiving the same ten again, and then the ones kept are made visible again at once.
    Bodies of any shape (not JSON, not an object, an ``id`` that is not a string, up to
    the SQS size limit) are simply not ours and are left untouched.

    Args:
        ids: the order ids wanted.
        delete: delete the wanted messages instead of putting them back.
    """
    wanted = set(ids)
    sqs = target.client("sqs")
    url = target.outputs["JobsDeadLetterQueueUrl"]
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
                if order_id_of(message["Body"]) in wanted:
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


def order_id_of(body: str) -> str | None:
    """The order id of a message body, if it is a JSON object with a string ``id``."""
    try:
        value = json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        return None
    order_id = value.get("id") if isinstance(value, dict) else None
    return order_id if isinstance(order_id, str) else None


def max_receive_count(target: Target) -> int:
    attributes = target.client("sqs").get_queue_attributes(
        QueueUrl=target.outputs["JobsQueueUrl"],
        AttributeNames=["RedrivePolicy", "VisibilityTimeout"],
    )["Attributes"]
    return int(json.loads(attributes["RedrivePolicy"])["maxReceiveCount"])


def visibility_timeout(target: Target) -> int:
    attributes = target.client("sqs").get_queue_attributes(
        QueueUrl=target.outputs["JobsQueueUrl"], AttributeNames=["VisibilityTimeout"]
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


def start_execution(
    target: Target, name: str, execution_input: Any, state_machine_arn: str | None = None
) -> str:
    """Start an execution under ``name`` of ``state_machine_arn`` (default: the stack's
    ``OrdersStateMachineArn`` Output); returns its ARN."""
    arn: str = target.client("stepfunctions").start_execution(
        stateMachineArn=state_machine_arn or target.outputs["OrdersStateMachineArn"],
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
    name: str,
    execution_input: Any,
    timeout_s: float = 120.0,
    state_machine_arn: str | None = None,
) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """Start an execution and wait for it (see :func:`start_execution` and
    :func:`wait_for_execution`)."""
    arn = start_execution(target, name, execution_input, state_machine_arn)
    return wait_for_execution(target, arn, timeout_s)
