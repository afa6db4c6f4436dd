"""``make bench``: Order Guard against the floor and the field, in one run.

Four SQS consumers run on the same in-process local cloud, each from its own fresh orders
table, fed the same SQS events (records built as the event source mapping builds them).
The contestants' handlers run in this process (the local cloud's in-process runtime), not
in execution environments of their own as every deployed function does: the figures are
the handlers' own requests, CPU and traced memory, which ``tracemalloc`` and the
simulated network see only here; the cold start is measured in fresh processes apart
(:mod:`.cold_start`).

- ``order-guard``: the queue worker as deployed (its template environment: batching by
  key, validation, logging and metrics on);
- ``floor``: a bare one-record-at-a-time consumer, only the conditional ``PutItem`` and
  the comparison (``handlers/floor.py``);
- ``powertools``: Powertools' idempotency utility (``idempotent_function`` keyed on the
  id, payload validation on) with its batch processor, storing the same item;
- ``read-then-write``: ``GetItem``, then ``PutItem`` when nothing is stored.

Figures: DynamoDB requests per message for new, repeated, conflicting and invalid
records (counted at the emulator, ``faults.simulated``); messages per second over a
mixed stream (half repeats), contestants interleaved over several rounds, medians and
ratios to the floor and to Powertools, with no round trip (CPU only: the emulator), with
a fixed 2 ms one, and with DynamoDB's latency modelled (:mod:`.latency`: a few
milliseconds with a tail), and Order Guard also with its records one at a time; the
wall time of a 10-record batch under a simulated round trip, in round trips, and where
it goes outside the emulator (:mod:`.critical_path`: the worker's own code, the SDK's
CPU per request); each
function's cold start (INIT) against a bare boto3 handler's in fresh processes
(:mod:`.cold_start`); capacity units per decision by DynamoDB's rule and the billed INIT
(:mod:`.cost_model`); peak traced memory over the stream; the built package size; and
the baseline for concurrency with no round trip, CPython's cost of running CPU-bound
tasks on threads (``thread_handoff``). Ratios, not absolute times, are the results: the
machine is shared.
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import time
import tracemalloc
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localcloud.account import LocalCloud
from localcloud.cloudformation.deployer import function_properties
from localcloud.cloudformation.intrinsics import resolve
from localcloud.services.dynamodb.providers import create_table
from localcloud.services.lambda_ import InProcessFunction
from order_guard_tools import faults
from order_guard_tools.bench.cold_start import HANDLERS, cold_start_figures, package_size_kib
from order_guard_tools.bench.cost_model import (
    COLD_START_RATE,
    LIMITS,
    PRICES,
    cost_model,
    init_cost,
    write_units_per_decision,
)
from order_guard_tools.bench.critical_path import worker_round_trips
from order_guard_tools.bench.latency import LATENCY, LatencyModel, thread_handoff
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.project import ROOT

CONTESTANTS = ("order-guard", "floor", "powertools", "read-then-write")
MODULES = {
    "order-guard": (ROOT / "src", "order_guard.queue_worker"),
    "floor": (HANDLERS, "floor"),
    "powertools": (HANDLERS, "powertools_idempotency"),
    "read-then-write": (HANDLERS, "read_then_write"),
}
SEQUENTIAL = "order-guard RECORD_CONCURRENCY=1"
STREAM_CONTESTANTS = (*CONTESTANTS, SEQUENTIAL)
KEY_SCHEMA = {
    "BillingMode": "PAY_PER_REQUEST",
    "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
    "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
}


def record(body: str, message_id: str, queue_arn: str) -> dict[str, Any]:
    """One SQS record in the event source mapping's form."""
    return {
        "messageId": message_id,
        "receiptHandle": f"AQEB{message_id}",
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": "1764421200000",
            "SenderId": "AIDABENCH",
            "ApproximateFirstReceiveTimestamp": "1764421200050",
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(body.encode(), usedforsecurity=False).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": queue_arn,
        "awsRegion": "us-east-1",
    }


@dataclass
class Bench:
    """One local cloud and the means to give each contestant a fresh table and function."""

    cloud: LocalCloud
    environment: dict[str, str]

    def contestant(self, name: str) -> InProcessFunction:
        """A fresh function (a cold execution environment) on fresh tables, warmed up."""
        dynamodb = self.cloud.client("dynamodb")
        orders = f"bench-{name}-{uuid.uuid4().hex[:8]}"
        create_table(dynamodb, "OrdersTable", orders, KEY_SCHEMA)
        environment = {**self.environment, "ORDERS_TABLE_NAME": orders}
        if name == "powertools":
            idempotency = f"{orders}-idempotency"
            create_table(dynamodb, "IdempotencyTable", idempotency, KEY_SCHEMA)
            environment["IDEMPOTENCY_TABLE_NAME"] = idempotency
        code_uri, module = MODULES[name]
        function = InProcessFunction(
            name=f"bench-{name}",
            arn=f"arn:aws:lambda:us-east-1:123456789012:function:bench-{name}",
            code_uri=code_uri,
            handler=f"{module}.lambda_handler",
            environment=environment,
            timeout_s=60,
            memory_mb=256,
            log_group=f"/aws/lambda/bench-{name}",
            region="us-east-1",
        )
        warm = self.event([json.dumps({"id": f"warm-{uuid.uuid4().hex}", "quantity": 1})])
        function.invoke(warm)
        return function

    def event(self, bodies: list[str]) -> dict[str, Any]:
        arn = self.cloud.outputs["JobsQueueArn"]
        return {"Records": [record(body, str(uuid.uuid4()), arn) for body in bodies]}


def _orders(prefix: str, count: int, quantity: int = 2) -> list[str]:
    return [json.dumps({"id": f"{prefix}-{i}", "quantity": quantity}) for i in range(count)]


def requests_per_message(bench: Bench, name: str) -> dict[str, float]:
    """DynamoDB requests per message of each kind, from 10-record batches."""
    function = bench.contestant(name)
    new = _orders("rpm", 10)
    kinds = {
        "new": new,
        "repeat": new,
        "conflict": _orders("rpm", 10, quantity=3),
        "invalid": [json.dumps({"id": f"bad-{i}", "quantity": 0}) for i in range(10)],
    }
    figures = {}
    for kind, bodies in kinds.items():
        with faults.simulated() as network:
            function.invoke(bench.event(bodies))
        figures[kind] = network.requests(function.name) / len(bodies)
    return figures


def stream(messages: int, seed: int) -> list[list[str]]:
    """``messages`` bodies in batches of 10: half new orders, half repeats of earlier ones."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible mix, not a secret
    bodies: list[str] = []
    for i in range(messages):
        if i % 2 == 1 and bodies:
            bodies.append(rng.choice(bodies))
        else:
            bodies.append(json.dumps({"id": f"s{seed}-{i}", "quantity": rng.randint(1, 10)}))
    return [bodies[i : i + 10] for i in range(0, len(bodies), 10)]


def throughput(
    bench: Bench,
    name: str,
    batches: list[list[str]],
    round_trip_s: float = 0.0,
    latency: LatencyModel | None = None,
) -> float:
    """Messages per second over the stream (one fresh function and table), with every
    DynamoDB request delayed by ``round_trip_s``, or by a round trip ``latency`` draws."""
    function = bench.contestant(name)
    events = [bench.event(batch) for batch in batches]
    started = time.perf_counter()
    sampler = latency.sampler() if latency is not None else None
    with faults.simulated(round_trip_s=round_trip_s, latency=sampler):
        for event in events:
            function.invoke(event)
    return sum(len(batch) for batch in batches) / (time.perf_counter() - started)


def peak_memory_kib(bench: Bench, name: str, batches: list[list[str]]) -> float:
    """Peak memory traced while the contestant handles the stream (KiB)."""
    function = bench.contestant(name)
    events = [bench.event(batch) for batch in batches]
    tracemalloc.start()
    try:
        for event in events:
            function.invoke(event)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak / 1024


def batch_round_trips(
    bench: Bench, name: str, round_trip_s: float, repeats: int
) -> dict[str, float]:
    """A 10-new-order batch's median wall time in simulated round trips: ``wall`` as
    measured, and ``added`` by the round trip alone (the same batch without it taken
    away: the emulator's own CPU time, which DynamoDB would spend on other machines)."""
    function = bench.contestant(name)
    with_trip: list[float] = []
    without: list[float] = []
    for i in range(repeats):
        for simulated_s, times in ((round_trip_s, with_trip), (0.0, without)):
            event = bench.event(_orders(f"rt{i}-{uuid.uuid4().hex[:6]}", 10))
            with faults.simulated(round_trip_s=simulated_s):
                times.append(function.invoke(event).duration_ms / 1000)
    wall, base = statistics.median(with_trip), statistics.median(without)
    return {
        "wall": round(wall / round_trip_s, 2),
        "added": round(max(0.0, wall - base) / round_trip_s, 2),
    }


def run(
    *,
    messages: int = 2000,
    rounds: int = 5,
    round_trip_ms: float = 10.0,
    seed: int = 7,
    repeats: int = 15,
    batch_repeats: int = 21,
    output: Path | None = None,
    progress: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """Every figure, in one run; written to ``output`` as JSON when given.

    Args:
        messages: the mixed stream's length (half repeats).
        rounds: throughput rounds, the contestants' order rotated each round.
        round_trip_ms: the simulated DynamoDB round trip for the batch figure.
        repeats: fresh processes per contestant for the cold-start figure (rounds).
        batch_repeats: batches per contestant, with and without the round trip, for the
            batch figure (medians; the difference of two medians needs more samples).
    """
    results: dict[str, Any] = {"messages": messages, "rounds": rounds}
    with OrderGuardCloud() as cloud:
        assert cloud.template is not None  # a stack's cloud
        variables = function_properties(cloud.template, "QueueWorkerFunction")["Environment"]
        environment = {
            k: str(v)
            for k, v in resolve(
                variables["Variables"],
                where="QueueWorkerFunction.Environment",
                ref=cloud.deployment.ref,
                get_att=cloud.deployment.get_att,
            ).items()
        }
        bench = Bench(cloud, environment)
        progress("DynamoDB requests per message")
        results["requests_per_message"] = {
            name: requests_per_message(bench, name) for name in CONTESTANTS
        }
        batches = stream(messages, seed)
        sequential = Bench(cloud, {**environment, "RECORD_CONCURRENCY": "1"})
        models: tuple[tuple[str, float, LatencyModel | None], ...] = (
            ("messages_per_second", 0.0, None),
            ("messages_per_second_2ms", 0.002, None),
            ("messages_per_second_latency", 0.0, LATENCY),
        )
        results["latency_model"] = LATENCY.describe()
        for key, trip_s, model in models:
            per_round: dict[str, list[float]] = {name: [] for name in STREAM_CONTESTANTS}
            for index in range(rounds):
                shift = index % len(STREAM_CONTESTANTS)
                for name in STREAM_CONTESTANTS[shift:] + STREAM_CONTESTANTS[:shift]:
                    progress(f"{key}, round {index + 1} of {rounds}: {name}")
                    runner = sequential if name == SEQUENTIAL else bench
                    contestant = "order-guard" if name == SEQUENTIAL else name
                    per_round[name].append(
                        throughput(runner, contestant, batches, trip_s, latency=model)
                    )
            medians = {name: statistics.median(values) for name, values in per_round.items()}
            results[key] = {
                name: {
                    "median": round(medians[name], 1),
                    "rounds": [round(v, 1) for v in values],
                    "vs_floor": round(medians[name] / medians["floor"], 2),
                    "vs_powertools": round(medians[name] / medians["powertools"], 2),
                }
                for name, values in per_round.items()
            }
        progress(f"10-record batch under a {round_trip_ms:g} ms round trip")
        results["batch_round_trips"] = {
            name: batch_round_trips(bench, name, round_trip_ms / 1000, repeats=batch_repeats)
            for name in CONTESTANTS
        }
        progress(f"10-record batch, the worker alone, {round_trip_ms:g} ms round trip")
        results["batch_round_trips_worker"] = worker_round_trips(
            environment,
            round_trip_ms / 1000,
            lambda prefix: bench.event(_orders(prefix, 10)),
            repeats=batch_repeats,
        )
        progress("peak memory")
        sample = batches[: max(1, len(batches) // 4)]
        results["peak_memory_kib"] = {
            name: round(peak_memory_kib(bench, name, sample), 1) for name in CONTESTANTS
        }
        seconds_per_batch = {
            name: results["batch_round_trips"][name]["wall"] * round_trip_ms / 1000
            for name in CONTESTANTS
        }
    progress("CPython thread hand-off, CPU-bound tasks")
    results["thread_handoff"] = thread_handoff(batches=max(5, messages // 40), rounds=rounds)
    progress(f"cold start (INIT), {repeats} fresh processes per contestant")
    results["init"] = cold_start_figures(environment, repeats)
    results["write_units"] = write_units_per_decision()
    results["init_cost"] = {
        name: init_cost(figures["median_ms"] / 1000, memory_mb=256)
        for name, figures in results["init"].items()
    }
    results["cold_start_rate"] = COLD_START_RATE[1]
    results["package_kib"] = package_size_kib()
    results["cost_model"] = cost_model(
        results["requests_per_message"], seconds_per_batch, memory_mb=256
    )
    results["sources"] = {k: v[1] for k, v in {**PRICES, **LIMITS}.items()}
    if output is not None:
        output.write_text(json.dumps(results, indent=2) + "\n")
    return results
