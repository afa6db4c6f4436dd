"""The cost model ``make bench`` prints: dollars per million orders and the throughput
limits, from the measured request counts and batch times and AWS's published prices and
quotas (each with its source); the write units each decision consumes, computed by
DynamoDB's documented rule from the items each path writes (never the emulator's
``ConsumedCapacity``, which answers constants); and the billed INIT at a stated
cold-start rate.
"""

from __future__ import annotations

import math
import uuid
from collections.abc import Mapping
from decimal import Decimal
from typing import Any

__all__ = [
    "COLD_START_RATE",
    "LIMITS",
    "PRICES",
    "cost_model",
    "init_cost",
    "item_size_bytes",
    "write_units",
    "write_units_per_decision",
]


# Published prices and limits the cost model uses (us-east-1), with where they are from.
PRICES = {
    "dynamodb_write_request_unit_usd": (
        0.625e-6,
        "DynamoDB on-demand pricing, write request unit, us-east-1 (aws.amazon.com/dynamodb/"
        "pricing/on-demand, effective 1 November 2024)",
    ),
    "dynamodb_read_request_unit_usd": (0.125e-6, "the same page, read request unit"),
    "lambda_arm_gb_second_usd": (
        0.0000133334,
        "AWS Lambda pricing, Arm, first 7.5 billion GB-s a month (aws.amazon.com/lambda/pricing)",
    ),
    "lambda_request_usd": (0.20e-6, "the same page, requests"),
}
LIMITS = {
    "partition_writes_per_second": (
        1000,
        "DynamoDB: 1,000 write units per second per partition (Developer Guide, partitions)",
    ),
    "table_writes_per_second": (
        40000,
        "DynamoDB on-demand: 40,000 write request units per second per table, default "
        "(Service Quotas, table-level throughput)",
    ),
    "sqs_mapping_concurrency": (
        1250,
        "Lambda: an SQS event source mapping scales to 1,250 concurrent invocations "
        "(Developer Guide, scaling for SQS, 2023)",
    ),
    "account_concurrency": (1000, "Lambda: 1,000 concurrent executions per Region, default"),
}


def _number_size(text: str) -> int:
    """A number's size: 1 byte per two significant digits, plus 1 (leading and trailing
    zeros trimmed)."""
    digits = Decimal(text).normalize().as_tuple().digits
    return math.ceil(len(digits) / 2) + 1


def _value_size(value: Mapping[str, Any]) -> int:
    ((kind, inner),) = value.items()
    if kind == "S":
        return len(str(inner).encode())
    if kind == "N":
        return _number_size(str(inner))
    if kind == "B":
        return len(inner)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(str(v).encode()) for v in inner)
    if kind == "NS":
        return sum(_number_size(str(v)) for v in inner)
    if kind == "L":
        return 3 + sum(1 + _value_size(v) for v in inner)
    if kind == "M":
        return 3 + sum(1 + len(k.encode()) + _value_size(v) for k, v in inner.items())
    raise ValueError(f"unknown DynamoDB type {kind!r}")


def item_size_bytes(item: Mapping[str, Mapping[str, Any]]) -> int:
    """An item's size as DynamoDB counts it: each attribute's name (UTF-8 bytes) plus its
    value (strings in UTF-8 bytes; numbers 1 byte per two significant digits plus 1;
    booleans and nulls 1; lists and maps 3 plus 1 per element) (DynamoDB Developer Guide,
    "Item sizes and formats").

    Raises:
        ValueError: an attribute of an unknown type.
    """
    return sum(len(name.encode()) + _value_size(value) for name, value in item.items())


def write_units(before: int, after: int) -> int:
    """Write units of one ``PutItem``, ``UpdateItem`` or ``DeleteItem``: the larger of the
    item's size before and after, rounded up to the next 1 KB, at least 1; a write whose
    condition fails consumes the same (DynamoDB Developer Guide, "DynamoDB read and write
    operations", capacity unit consumption for write operations)."""
    return max(1, math.ceil(max(before, after) / 1024))


def _order_item(order_id: str, quantity: int, source: str) -> dict[str, dict[str, str]]:
    """The order item the workers write: src/order_guard/item.py's own encoding, with
    its provenance and write id."""
    from order_guard.item import WRITE_ID, provenance, to_item
    from order_guard.orders import Order

    return to_item(Order(order_id, quantity), {**provenance(source), WRITE_ID: uuid.uuid4().hex})


def write_units_per_decision(order_id: str | None = None) -> dict[str, dict[str, Any]]:
    """Write (and read) units per decision of each path, for an order id of 36 characters
    (a UUID), from the items each path writes (one unit holds while the item stays under
    1 KB: ids up to about 820 bytes; the contract allows 2,048).

    Returns:
        decision → ``{"writes": [(operation, units), ...], "write_units", "read_units",
        "item_bytes"}``.
    """
    order_id = order_id or str(uuid.uuid4())
    queue_item = _order_item(order_id, 4, f"sqs:{uuid.uuid4()}")
    flow_item = _order_item(order_id, 4, f"lambda:{uuid.uuid4()}")
    queue = item_size_bytes(queue_item)
    flow = item_size_bytes(flow_item)
    token = str(uuid.uuid4())
    attempts_after = item_size_bytes(
        {"id": {"S": order_id}, "attempts": {"N": "1"}, "attempt_tokens": {"SS": [token]}}
    )
    attempts_second = item_size_bytes(
        {
            "id": {"S": order_id},
            "attempts": {"N": "2"},
            "attempt_tokens": {"SS": [token, str(uuid.uuid4())]},
        }
    )
    floor = item_size_bytes(
        {"id": {"S": order_id}, "quantity": {"N": "4"}, "total_cents": {"N": "1100"}}
    )
    rows: dict[str, tuple[list[tuple[str, int]], float, int]] = {
        "queue: accepted": ([("PutItem", write_units(0, queue))], 0.0, queue),
        "queue: duplicate (condition fails)": (
            [("PutItem", write_units(queue, queue))],
            0.0,
            queue,
        ),
        "queue: conflict (condition fails)": (
            [("PutItem", write_units(queue, queue))],
            0.0,
            queue,
        ),
        "queue: invalid": ([], 0.0, 0),
        "workflow: first attempt, accepted": (
            [
                ("UpdateItem attempts", write_units(0, attempts_after)),
                ("PutItem", write_units(0, flow)),
            ],
            0.0,
            flow,
        ),
        "workflow: retry, duplicate": (
            [
                ("UpdateItem attempts", write_units(attempts_after, attempts_second)),
                ("PutItem", write_units(flow, flow)),
            ],
            0.0,
            flow,
        ),
        "workflow: summary (GetItem, strongly consistent)": ([], 1.0, flow),
        "floor: new order": ([("PutItem", write_units(0, floor))], 0.0, floor),
        "read-then-write: new order (strongly consistent GetItem)": (
            [("PutItem", write_units(0, floor))],
            1.0,
            floor,
        ),
    }
    return {
        name: {
            "writes": writes,
            "write_units": sum(units for _, units in writes),
            "read_units": reads,
            "item_bytes": size,
        }
        for name, (writes, reads, size) in rows.items()
    }


COLD_START_RATE = (
    0.01,
    "cold starts in about 1% of invocations: AWS, 'Operating Lambda: Performance "
    "optimization, Part 1' (AWS Compute Blog, 2021): cold starts 'typically occur in under "
    "1% of invocations'; a stated assumption, not a measurement",
)


def init_cost(init_seconds: float, memory_mb: int, batch_size: int = 10) -> dict[str, Any]:
    """The billed INIT per million orders: one INIT per cold start, at
    :data:`COLD_START_RATE` of the invocations (``batch_size`` orders each), billed as
    duration since 1 August 2025 (AWS Compute Blog, "AWS Lambda standardizes billing for
    INIT phase")."""
    invocations = 1e6 / batch_size
    cold_starts = invocations * COLD_START_RATE[0]
    gbs = PRICES["lambda_arm_gb_second_usd"][0]
    return {
        "cold_starts_per_million_orders": round(cold_starts),
        "init_seconds": round(init_seconds, 4),
        "usd_per_million_orders": round(cold_starts * init_seconds * memory_mb / 1024 * gbs, 7),
    }


def cost_model(
    requests: dict[str, dict[str, float]], seconds_per_batch: dict[str, float], memory_mb: int
) -> dict[str, Any]:
    """Cost per million orders and the throughput limits, from the measured figures.

    Every Order Guard request is a write (a conditional PutItem consumes one write unit
    whether or not it succeeds); Powertools' requests are writes too (PutItem and
    UpdateItem on the idempotency table, the order PutItem); the reads of read-then-write
    are counted as reads.
    """
    wru = PRICES["dynamodb_write_request_unit_usd"][0]
    rru = PRICES["dynamodb_read_request_unit_usd"][0]
    gbs = PRICES["lambda_arm_gb_second_usd"][0]
    invoke = PRICES["lambda_request_usd"][0]
    model: dict[str, Any] = {}
    for name, per in requests.items():
        new = per["new"]
        reads = 1.0 if name == "read-then-write" else 0.0
        writes = new - reads
        dynamodb = 1e6 * (writes * wru + reads * rru)
        lambda_compute = 1e6 / 10 * seconds_per_batch[name] * memory_mb / 1024 * gbs
        model[name] = {
            "dynamodb_usd_per_million_new_orders": round(dynamodb, 3),
            "lambda_usd_per_million_orders": round(lambda_compute + 1e6 / 10 * invoke, 3),
        }
    writes_per_order = requests["order-guard"]["new"]
    model["limits"] = {
        "one order id (one partition key)": "1,000 conditional writes/s: far above any "
        "repeat rate of one order",
        "one table": f"{LIMITS['table_writes_per_second'][0] / writes_per_order:,.0f} "
        "orders/s at the default on-demand table quota",
        "one queue mapping": f"{LIMITS['sqs_mapping_concurrency'][0]} concurrent batches",
        "one account": f"{LIMITS['account_concurrency'][0]} concurrent executions, shared",
    }
    return model
