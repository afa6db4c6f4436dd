"""The simulated network of ``make bench``, and the baseline it is read against: DynamoDB's
round trip as a latency model (a few milliseconds with a tail), and CPython's own cost of
running a batch's CPU-bound work on threads (``thread_handoff``)."""

from __future__ import annotations

import json
import math
import random
import statistics
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass


@dataclass(frozen=True)
class LatencyModel:
    """A DynamoDB round trip as a client in the same Region sees it: a few milliseconds
    with a tail, log-normal with the given median and 99th percentile. DynamoDB is
    documented at "single-digit millisecond" latency (AWS Database Blog, "Understanding
    Amazon DynamoDB latency"), and its high percentiles are expected to spike above the
    median (Developer Guide, "Troubleshooting latency issues"; AWS Knowledge Center, "Why
    is my DynamoDB maximum latency metric high": 99 requests at 10 ms and one at 100 ms).
    A stated model, seeded, not a measurement of AWS."""

    median_ms: float = 4.0
    p99_ms: float = 12.0
    seed: int = 7

    def sampler(self) -> Callable[[], float]:
        """Seconds per request, drawn from the model (thread-safe, deterministic order
        per sampler)."""
        sigma = math.log(self.p99_ms / self.median_ms) / 2.3263  # z of the 99th percentile
        draw = random.Random(self.seed)  # noqa: S311 - a model, not a secret
        lock = threading.Lock()

        def sample() -> float:
            with lock:
                return self.median_ms * math.exp(sigma * draw.gauss()) / 1000

        return sample

    def describe(self) -> str:
        return f"log-normal, median {self.median_ms:g} ms, p99 {self.p99_ms:g} ms"


LATENCY = LatencyModel()


def _cpu_task(items: int = 400) -> int:
    """Pure-Python work of about one record's CPU time on the emulator (about 2 ms of
    small JSON documents out and in, as a request goes through botocore and moto), no
    I/O."""
    size = 0
    for index in range(items):
        size += len(json.loads(json.dumps({"id": {"S": f"order-{index}"}, "n": {"N": "3"}})))
    return size


def thread_handoff(batches: int, rounds: int, workers: int = 10) -> dict[str, float]:
    """CPython's own cost of running CPU-bound work on threads, on this machine now.

    The same 10-task batches run one task after another and on one
    ``ThreadPoolExecutor(workers)`` kept for every batch (as the queue worker runs a
    batch's records on its execution environment's threads), interleaved over
    ``rounds``. With no I/O to wait on, the threads only take
    turns on the GIL, so ``ratio`` (threaded over sequential tasks per second, median
    of the rounds) is what concurrency costs when DynamoDB answers without a round trip;
    it is the baseline for the no-round-trip rows of ``order-guard`` against
    ``order-guard RECORD_CONCURRENCY=1``.
    """

    def sequential() -> None:
        for _ in range(10):
            _cpu_task()

    def threaded() -> None:
        for done in [pool.submit(_cpu_task) for _ in range(10)]:
            done.result()

    rates: dict[str, list[float]] = {"sequential": [], "threads": []}
    with ThreadPoolExecutor(max_workers=workers) as pool:
        for index in range(rounds):
            modes = [("sequential", sequential), ("threads", threaded)]
            for mode, batch in modes if index % 2 == 0 else modes[::-1]:
                started = time.perf_counter()
                for _ in range(batches):
                    batch()
                rates[mode].append(10 * batches / (time.perf_counter() - started))
    medians = {mode: statistics.median(values) for mode, values in rates.items()}
    return {
        "sequential_tasks_per_second": round(medians["sequential"], 1),
        "threaded_tasks_per_second": round(medians["threads"], 1),
        "ratio": round(medians["threads"] / medians["sequential"], 2),
    }
