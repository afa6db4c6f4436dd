"""Soak: thousands of messages through the local cloud, and every one accounted for.

The mix (seeded, so a run can be repeated): new orders, duplicates of earlier orders
(some with keys reordered or other whitespace), conflicting copies (an earlier id with
another quantity) and invalid bodies. Messages are sent in waves (SendMessageBatch)
while the event source mapping drains the queue with the template's batch size, so
copies of one order race inside and across batches.

At the end, independently of the order SQS delivered them in:

- accepted writes = the distinct valid ids, one ``accepted`` RESULT per id;
- for each id, the stored quantity is one that was sent, and every message with that
  quantity but the accepted one was acknowledged as a duplicate;
- every conflicting message and every invalid body is in the dead-letter queue, body
  intact, and was never acknowledged;
- the queue is empty (visible + in flight = 0);
- no stored item changed after its first write (scans taken during the run, and each
  item's ``first_written_by`` is the message that was accepted).
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from localcloud.account import LocalCloud
from localcloud.state import queue_depth, queue_empty
from order_guard_tools.scenarios import Report, Step

INVALID_BODIES = [
    "not json",
    "[]",
    "null",
    "{}",
    '{"id": ""}',
    '{"id": "x", "quantity": 0}',
    '{"id": "x", "quantity": "4"}',
    '{"id": "x", "quantity": 4.0}',
    '{"id": "x", "quantity": true}',
    '{"id": 7, "quantity": 1}',
    '{"id": "x", "quantity": 1, "extra": 1}',
]


@dataclass
class Sent:
    """What was sent: bodies by kind, and the quantities sent per valid id."""

    bodies: list[tuple[str, str]] = field(default_factory=list)  # (kind, body)
    quantities: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))


def plan(messages: int, seed: int) -> Sent:
    """The message mix: ~50% new, ~25% duplicates, ~12.5% conflicts, ~12.5% invalid."""
    rng = random.Random(seed)  # noqa: S311 - a repeatable mix, not a secret
    sent = Sent()
    ids: list[str] = []
    first_quantity: dict[str, int] = {}
    for n in range(messages):
        roll = rng.random()
        if roll < 0.5 or not ids:
            order_id = f"soak-{seed}-{n}"
            quantity = rng.randint(1, 10)
            ids.append(order_id)
            first_quantity[order_id] = quantity
            kind, body = "new", json.dumps({"id": order_id, "quantity": quantity})
        elif roll < 0.75:
            order_id = rng.choice(ids)
            quantity = first_quantity[order_id]
            spellings = [
                json.dumps({"id": order_id, "quantity": quantity}),
                json.dumps({"quantity": quantity, "id": order_id}),
                json.dumps({"id": order_id, "quantity": quantity}, indent=2),
            ]
            kind, body = "duplicate", rng.choice(spellings)
        elif roll < 0.875:
            order_id = rng.choice(ids)
            quantity = rng.choice([q for q in range(1, 11) if q != first_quantity[order_id]])
            kind, body = "conflict", json.dumps({"id": order_id, "quantity": quantity})
        else:
            sent.bodies.append(("invalid", rng.choice(INVALID_BODIES)))
            continue
        sent.quantities[order_id].append(quantity)
        sent.bodies.append((kind, body))
    return sent


Progress = Callable[[int, int, int, float], None]
"""(messages sent, records processed, messages still to send or in the queue, elapsed s)."""


def run(
    cloud: LocalCloud,
    *,
    messages: int = 5000,
    seed: int = 7,
    window: int = 200,
    progress: Progress | None = None,
) -> tuple[Report, dict[str, Any]]:
    """Send the mix in waves of ``window`` messages, drain, and account for every message.

    ``progress`` is called after every batch (and once at the end).

    Returns:
        (the checks as a :class:`Report`, the figures by name).
    """
    started = time.monotonic()
    sqs = cloud.client("sqs")
    dynamodb = cloud.client("dynamodb")
    queue, dlq = cloud.outputs["JobsQueueUrl"], cloud.outputs["JobsDeadLetterQueueUrl"]
    table = cloud.outputs["OrdersTableName"]
    sent = plan(messages, seed)
    snapshots: list[dict[str, tuple[str, str, str]]] = []
    results: list[dict[str, Any]] = []
    batches = 0
    pending = list(sent.bodies)
    deadline = time.monotonic() + max(600.0, messages * 0.2)
    in_queue = 0  # the last depth read (progress reuses it: each read scans the queue)
    while time.monotonic() < deadline:
        # Keep at most `window` messages in the queue: moto's ReceiveMessage scans every
        # message it holds, so an unbounded backlog makes each poll quadratic.
        if pending:
            in_queue = sum(queue_depth(cloud, queue))
        if pending and in_queue < window:
            chunk, pending = pending[:window], pending[window:]
            for start in range(0, len(chunk), 10):
                entries = [
                    {"Id": str(i), "MessageBody": body}
                    for i, (_, body) in enumerate(chunk[start : start + 10])
                ]
                response = sqs.send_message_batch(QueueUrl=queue, Entries=entries)
                if response.get("Failed"):
                    raise RuntimeError(f"SendMessageBatch failed: {response['Failed']}")
        outcome = cloud.event_source.poll_once()
        if outcome.invocation is None:
            if not pending and queue_empty(cloud, queue):
                break
            time.sleep(0.05)
            continue
        batches += 1
        for invocation in outcome.invocations:
            for line in invocation.log_lines:
                if '"message":"RESULT"' in line:
                    results.append(json.loads(line))
        if batches % 100 == 0:
            snapshots.append(_snapshot(dynamodb, table))
        if progress is not None:
            remaining = len(pending) + in_queue
            progress(messages - len(pending), len(results), remaining, time.monotonic() - started)
    drained = time.monotonic() - started
    if progress is not None:
        progress(messages, len(results), 0, drained)
    snapshots.append(_snapshot(dynamodb, table))
    final = snapshots[-1]

    dead: list[str] = []
    while True:
        page = sqs.receive_message(QueueUrl=dlq, MaxNumberOfMessages=10, VisibilityTimeout=300)
        if not page.get("Messages"):
            break
        dead.extend(message["Body"] for message in page["Messages"])

    by_kind = Counter(kind for kind, _ in sent.bodies)
    decisions = Counter(line["decision"] for line in results)
    accepted = [line for line in results if line["decision"] == "accepted"]
    accepted_ids = Counter(line["id"] for line in accepted)
    stored_quantity = {order_id: int(values[0]) for order_id, values in final.items()}

    # What each message should have become, given the quantity that won per id.
    should_ack: Counter[str] = Counter()
    should_dead: Counter[str] = Counter()
    for kind, body in sent.bodies:
        if kind == "invalid":
            should_dead[body] += 1
            continue
        job = json.loads(body)
        if stored_quantity.get(job["id"]) == job["quantity"]:
            should_ack[body] += 1
        else:
            should_dead[body] += 1
    acknowledged_duplicates = sum(should_ack.values()) - len(sent.quantities)
    conflicts_dead = sum(n for body, n in should_dead.items() if not _is_invalid(body))
    invalid_dead = by_kind["invalid"]

    report = Report(
        f"Soak: {messages} messages, seed {seed}, batch size {cloud.event_source.batch_size}"
    )
    step = Step("Every message accounted for")
    step.expect(
        "accepted writes = distinct valid ids",
        len(accepted) == len(sent.quantities) == len(final),
        f"{len(accepted)} accepted, {len(sent.quantities)} distinct ids, {len(final)} items",
    )
    step.expect(
        "one accepted write per id",
        set(accepted_ids.values()) == {1},
        f"{accepted_ids.most_common(1)}",
    )
    step.expect(
        "each stored quantity is one that was sent for that id",
        all(stored_quantity.get(i) in qs for i, qs in sent.quantities.items()),
    )
    step.expect(
        "duplicates acknowledged",
        decisions["duplicate"] == acknowledged_duplicates,
        f"{decisions['duplicate']} duplicate results, {acknowledged_duplicates} expected",
    )
    step.expect(
        "conflicts and invalid bodies in the DLQ, bodies intact",
        Counter(dead) == should_dead,
        f"{len(dead)} dead letters, {sum(should_dead.values())} expected",
    )
    step.expect("queue empty (visible + in flight = 0)", queue_depth(cloud, queue) == (0, 0))
    step.expect(
        "no stored item changed after its first write",
        all(final[k] == snap[k] for snap in snapshots for k in snap),
        f"{len(snapshots)} scans compared",
    )
    winners = {line["id"]: line["message_id"] for line in accepted}
    step.expect(
        "each item's first_written_by is the accepted message",
        all(final[i][1] == f"sqs:{winners.get(i)}" for i in final),
    )
    report.steps.append(step)
    figures = {
        "messages sent": len(sent.bodies),
        "new orders sent": by_kind["new"],
        "duplicates sent": by_kind["duplicate"],
        "conflicting copies sent": by_kind["conflict"],
        "invalid bodies sent": by_kind["invalid"],
        "distinct valid ids": len(sent.quantities),
        "accepted writes": len(accepted),
        "duplicates acknowledged": decisions["duplicate"],
        "conflict results (all receives)": decisions["conflict"],
        "invalid results (all receives)": decisions["invalid"],
        "dead letters (conflicts)": conflicts_dead,
        "dead letters (invalid)": invalid_dead,
        "worker invocations": batches,
        "seconds": round(drained, 1),
    }
    return report, figures


def _is_invalid(body: str) -> bool:
    return body in INVALID_BODIES


def _snapshot(dynamodb: Any, table: str) -> dict[str, tuple[str, str, str]]:
    items: dict[str, tuple[str, str, str]] = {}
    kwargs: dict[str, Any] = {"TableName": table, "ConsistentRead": True}
    while True:
        page = dynamodb.scan(**kwargs)
        for item in page["Items"]:
            items[item["id"]["S"]] = (
                item["quantity"]["N"],
                item["first_written_by"]["S"],
                item["first_written_at"]["S"],
            )
        if "LastEvaluatedKey" not in page:
            return items
        kwargs["ExclusiveStartKey"] = page["LastEvaluatedKey"]
