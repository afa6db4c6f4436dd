"""The cost model ``make bench`` prints: dollars per million orders and the throughput
limits, from the measured request counts and batch times and AWS's published prices and
quotas (each with its source)."""

from __future__ import annotations

from typing import Any

__all__ = ["LIMITS", "PRICES", "cost_model"]


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
