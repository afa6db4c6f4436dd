"""Cold-start figures for ``make bench``: each function's INIT work (its handler module
imported and its DynamoDB client created, what Lambda's ``Init Duration`` covers and, since
1 August 2025, bills) in fresh interpreters, as a ratio to a bare boto3 handler doing the
same (``import boto3`` and the same client); and the built package's size.

Like for like, as Lambda loads a function: the built package (``sam build``: bytecode
precompiled, checked-hash), no bytecode written (``/var/task`` is read-only), no
``awscrt`` (the runtime's SDK comes without the CRT: aws/aws-lambda-base-images#147).
Contestants run interleaved, one fresh process each per round, in a seeded random order
each round after one warm-up round that is dropped; a ratio is taken within a round (the
machine's drift hits both sides), and the median ratio is the figure, printed with its
min–max. A build whose ``order_guard`` differs from ``src/`` is not timed (``src/`` is).
"""

from __future__ import annotations

import filecmp
import random
import statistics
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localcloud.cloudformation.deployer import function_properties
from localcloud.cloudformation.intrinsics import resolve
from order_guard_tools.cloud import order_guard_template
from order_guard_tools.project import ROOT

HANDLERS = Path(__file__).resolve().parent / "handlers"
"""The benchmark's contestant handlers (Powertools' idempotency handler among them)."""

BUILD = ROOT / ".aws-sam" / "build"
BUILT = BUILD / "QueueWorkerFunction"
"""The queue worker's built package (``sam build``: src/Makefile, bytecode included)."""
BARE = "bare boto3 handler"


@dataclass(frozen=True)
class Contestant:
    """A handler's INIT: ``statement`` run with ``folder`` on the path (a Python
    statement that imports the handler module and creates its client)."""

    folder: Path
    statement: str


def contestants(handlers: Path) -> dict[str, Contestant]:
    """The bare handler, both workers (built when ``sam build`` has run, else ``src/``)
    and Powertools' idempotency handler (``handlers``: the bench's contestants)."""

    def package(function: str) -> Path:
        """The built package if it holds this ``src/order_guard`` (else ``src/``: a
        stale build would time other code)."""
        built = BUILD / function
        if not built.is_dir():
            return ROOT / "src"
        sources = sorted(p.name for p in (ROOT / "src" / "order_guard").glob("*.py"))
        _, differ, missing = filecmp.cmpfiles(
            ROOT / "src" / "order_guard", built / "order_guard", sources, shallow=False
        )
        return ROOT / "src" if differ or missing else built

    return {
        BARE: Contestant(ROOT, "import boto3; boto3.client('dynamodb')"),
        "queue worker": Contestant(
            package("QueueWorkerFunction"),
            "import order_guard.queue_worker as h; h.dependencies()",
        ),
        "workflow worker": Contestant(
            package("WorkflowWorkerFunction"),
            "import order_guard.workflow_worker as h; h.dependencies()",
        ),
        "powertools idempotency": Contestant(handlers, "import powertools_idempotency"),
    }


def init_seconds(contestant: Contestant, environment: dict[str, str]) -> float:
    """Seconds of one INIT in a fresh interpreter (its own start-up not counted)."""
    code = (
        "import sys, time; sys.modules['awscrt'] = None; t = time.perf_counter(); "
        f"{contestant.statement}; print(time.perf_counter() - t)"
    )
    completed = subprocess.run(  # noqa: S603 - this interpreter, a fixed program
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={
            **environment,
            "PYTHONPATH": str(contestant.folder),
            "PYTHONDONTWRITEBYTECODE": "1",
        },
        cwd=contestant.folder,
    )
    return float(completed.stdout.strip().splitlines()[-1])


def init_figures(
    entrants: dict[str, Contestant], environment: dict[str, str], rounds: int
) -> dict[str, dict[str, float | str]]:
    """Per contestant: the median INIT in ms, its min and max, and the median of its
    per-round ratio to the bare handler with that ratio's min and max; and where it was
    loaded from.

    Args:
        entrants: name → contestant; must include :data:`BARE`.
        rounds: fresh processes per contestant (15 or more for a figure to quote).
    """
    names = list(entrants)
    samples: dict[str, list[float]] = {name: [] for name in names}
    order = random.Random(7)  # noqa: S311 - a seeded order, not a secret
    for index in range(-1, rounds):  # round -1 warms the page cache and is dropped
        for name in order.sample(names, len(names)):
            seconds = init_seconds(entrants[name], environment)
            if index >= 0:
                samples[name].append(seconds)
    figures: dict[str, dict[str, float | str]] = {}
    for name in names:
        ratios = [v / b for v, b in zip(samples[name], samples[BARE], strict=True)]
        folder = entrants[name].folder
        figures[name] = {
            "median_ms": round(statistics.median(samples[name]) * 1000, 1),
            "min_ms": round(min(samples[name]) * 1000, 1),
            "max_ms": round(max(samples[name]) * 1000, 1),
            "vs_bare": round(statistics.median(ratios), 3),
            "vs_bare_min": round(min(ratios), 3),
            "vs_bare_max": round(max(ratios), 3),
            "from": str(folder.relative_to(ROOT)) if folder.is_relative_to(ROOT) else str(folder),
        }
    return figures


def package_size_kib() -> float | None:
    """The built queue worker package (``sam build`` output), if built."""
    if not BUILT.is_dir():
        return None
    return sum(f.stat().st_size for f in BUILT.rglob("*") if f.is_file()) / 1024


def queue_worker_environment() -> dict[str, str]:
    """The queue worker's variables as template.yaml gives them (merged with Globals), with
    each resource's logical id standing for its name (nothing is deployed)."""
    template = order_guard_template()
    variables = function_properties(template, "QueueWorkerFunction")["Environment"]
    resolved = resolve(
        variables["Variables"],
        where="QueueWorkerFunction.Environment",
        ref=lambda name: template.parameters.get(name, name),
        get_att=lambda name, attribute: f"{name}.{attribute}",
    )
    return {k: str(v) for k, v in resolved.items()}


def init_environment(queue_worker: Mapping[str, str]) -> dict[str, str]:
    """The variables every contestant's INIT runs with: the queue worker's own (as the
    template gives them), the workflow worker's and the idempotency handler's table names,
    a region and fake credentials (creating a client calls nothing)."""
    return {
        **queue_worker,
        "PATH": "/usr/bin:/bin",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "ATTEMPTS_TABLE_NAME": "attempts",
        "FAULT_MODES_ENABLED": "false",
        "IDEMPOTENCY_TABLE_NAME": "idempotency",
    }


def cold_start_figures(queue_worker: Mapping[str, str], repeats: int) -> dict[str, Any]:
    """:func:`~order_guard_tools.bench.cold_start.init_figures` of every contestant."""
    return init_figures(contestants(HANDLERS), init_environment(queue_worker), repeats)
