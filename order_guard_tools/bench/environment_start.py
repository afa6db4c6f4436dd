"""The local cloud's cold start of an execution environment (``make bench-env``).

What a cold invocation of a function deployed from a zip costs locally: the supervisor
and the runtime started, awslambdaric's bootstrap, the handler module imported (its
``Init Duration``), the event fetched through the Runtime API and the answer posted, until
the invoker has it. Two handlers: one that imports nothing, and one that imports boto3 and
creates a DynamoDB client at module scope (the INIT of a function of Order Guard's kind).
The baseline, in the same rounds: a bare ``python -I -S -c pass`` started and waited for
(the floor any process-per-environment design pays). Rounds interleave the contestants;
each figure is the median with its min–max, and the ratio to the baseline is taken within
a round.
"""

from __future__ import annotations

import io
import statistics
import subprocess
import sys
import time
import zipfile
from dataclasses import dataclass

from localcloud.services.lambda_ import Function, runnable

HANDLERS = {
    "empty handler": "def handler(event, context):\n    return None\n",
    "boto3 handler": (
        "import boto3\n"
        "client = boto3.client('dynamodb', region_name='us-east-1')\n"
        "def handler(event, context):\n    return None\n"
    ),
}
BASELINE = "python -I -S -c pass"


@dataclass(frozen=True)
class Figure:
    """One contestant: cold invocation wall time and ``Init Duration`` (ms, medians and
    ranges), and the wall time's ratio to the baseline (median, min, max)."""

    name: str
    wall_ms: tuple[float, float, float]
    init_ms: tuple[float, float, float] | None
    ratio: tuple[float, float, float] | None


def _function(name: str, source: str) -> Function:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("app.py", source)
    slug = name.replace(" ", "-")
    return runnable(
        name=f"bench-{slug}",
        arn=f"arn:aws:lambda:us-east-1:123456789012:function:bench-{slug}",
        package=archive.getvalue(),
        handler="app.handler",
        environment={},
        timeout_s=30,
        memory_mb=128,
        log_group=f"/aws/lambda/bench-{slug}",
        region="us-east-1",
    )


def _summary(values: list[float]) -> tuple[float, float, float]:
    return statistics.median(values), min(values), max(values)


def figures(rounds: int = 15) -> list[Figure]:
    """``rounds`` cold starts of each contestant, after one warm-up round (dropped)."""
    functions = {name: _function(name, source) for name, source in HANDLERS.items()}
    walls: dict[str, list[float]] = {name: [] for name in [BASELINE, *HANDLERS]}
    inits: dict[str, list[float]] = {name: [] for name in HANDLERS}
    ratios: dict[str, list[float]] = {name: [] for name in HANDLERS}
    try:
        for round_number in range(rounds + 1):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-I", "-S", "-c", "pass"], check=True)
            baseline = (time.perf_counter() - started) * 1000
            timed = {}
            for name, function in functions.items():
                function.new_execution_environment()  # the next invocation is cold
                started = time.perf_counter()
                invocation = function.invoke({})
                timed[name] = ((time.perf_counter() - started) * 1000, invocation.init_ms)
            if round_number == 0:
                continue
            walls[BASELINE].append(baseline)
            for name, (wall, init) in timed.items():
                walls[name].append(wall)
                if init is not None:
                    inits[name].append(init)
                ratios[name].append(wall / baseline)
    finally:
        for function in functions.values():
            function.close()
    result = [Figure(BASELINE, _summary(walls[BASELINE]), None, None)]
    for name in HANDLERS:
        result.append(
            Figure(
                name,
                _summary(walls[name]),
                _summary(inits[name]) if inits[name] else None,
                _summary(ratios[name]),
            )
        )
    return result
