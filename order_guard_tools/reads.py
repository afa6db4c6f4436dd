"""Order Guard's stack, read through the local cloud's account reads
(:mod:`localcloud.state`): stored orders, the workers' write decisions (their ``RESULT``
log lines), the orders in the dead-letter queue, and the stack's queue settings and
executions by the names its Outputs give them. Works against AWS and the local cloud.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Mapping
from typing import Any

from localcloud import state
from localcloud.state import Target


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
        for message in state.log_messages(target, group, since_ms, '"RESULT"'):
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


def order_id_of(body: str) -> str | None:
    """The order id of a message body, if it is a JSON object with a string ``id``."""
    try:
        value = json.loads(body)
    except (json.JSONDecodeError, RecursionError):
        return None
    order_id = value.get("id") if isinstance(value, dict) else None
    return order_id if isinstance(order_id, str) else None


def dead_letters(target: Target, ids: Iterable[str], *, delete: bool = False) -> list[str]:
    """Bodies in ``JobsDeadLetterQueue`` whose order id is among ``ids``; bodies of any
    other shape (not JSON, not an object, an ``id`` that is not a string) are not ours and
    are left untouched (:func:`localcloud.state.dead_letters`)."""
    wanted = set(ids)
    return state.dead_letters(
        target,
        target.outputs["JobsDeadLetterQueueUrl"],
        lambda body: order_id_of(body) in wanted,
        delete=delete,
    )


def max_receive_count(target: Target) -> int:
    """``JobsQueue``'s ``maxReceiveCount``: receives before a message is redriven."""
    return state.max_receive_count(target, target.outputs["JobsQueueUrl"])


def visibility_timeout(target: Target) -> int:
    """``JobsQueue``'s visibility timeout, in seconds."""
    return state.visibility_timeout(target, target.outputs["JobsQueueUrl"])


def run_execution(
    target: Target,
    name: str,
    execution_input: Any,
    timeout_s: float = 120.0,
    state_machine_arn: str | None = None,
) -> tuple[dict[str, Any], list[Mapping[str, Any]]]:
    """An execution of ``state_machine_arn`` (default: the stack's
    ``OrdersStateMachineArn`` Output) under ``name``, run to its end: (DescribeExecution,
    history), as :func:`localcloud.state.run_execution`."""
    arn = state_machine_arn or target.outputs["OrdersStateMachineArn"]
    return state.run_execution(target, arn, name, execution_input, timeout_s)
