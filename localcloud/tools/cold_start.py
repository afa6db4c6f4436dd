"""Cold-start figures for ``make bench``: a handler's import time in fresh interpreters,
as a ratio to a bare ``import boto3``, and the built package's size."""

from __future__ import annotations

import statistics
import subprocess
import sys
from pathlib import Path

from localcloud.project import ROOT

__all__ = ["BUILT", "import_figures", "import_seconds", "package_size_kib"]

BUILT = ROOT / ".aws-sam" / "build" / "QueueWorkerFunction"
"""The queue worker's built package (``sam build``: src/Makefile, bytecode included)."""


def import_seconds(module: str | None, path: Path, environment: dict[str, str]) -> float:
    """Seconds to import ``module`` (``None``: ``boto3``) in a fresh interpreter, as
    Lambda's runtime would: no bytecode written (``/var/task`` is read-only, so every
    run sees the same files) and no ``awscrt`` (the runtime's SDK comes without the
    CRT: aws/aws-lambda-base-images#147), which this venv has and boto3 would import."""
    target = module or "boto3"
    code = (
        "import sys, time; sys.modules['awscrt'] = None; t = time.perf_counter(); "
        f"import {target}; print(time.perf_counter() - t)"
    )
    completed = subprocess.run(  # noqa: S603 - this interpreter, a fixed program
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**environment, "PYTHONPATH": str(path), "PYTHONDONTWRITEBYTECODE": "1"},
        cwd=path,
    )
    return float(completed.stdout.strip().splitlines()[-1])


def package_size_kib() -> float | None:
    """The built queue worker package (``sam build`` output), if built."""
    if not BUILT.is_dir():
        return None
    return sum(f.stat().st_size for f in BUILT.rglob("*") if f.is_file()) / 1024


def import_figures(
    modules: dict[str, tuple[Path, str]], environment: dict[str, str], repeats: int
) -> tuple[str, dict[str, dict[str, float]]]:
    """Median import seconds per contestant over ``repeats`` fresh interpreters, each
    with its ratio to ``import boto3`` measured in the same rounds; and where the
    ``order-guard`` module was imported from (the built package when ``sam build`` has
    run, as Lambda loads it with its own bytecode; else ``src/``).

    ``modules`` maps a contestant's name to ``(folder, module)``.
    """
    sources = dict(modules)
    if BUILT.is_dir():
        sources["order-guard"] = (BUILT, modules["order-guard"][1])
    samples: dict[str, list[float]] = {"boto3": [], **{name: [] for name in sources}}
    for _ in range(repeats):
        samples["boto3"].append(import_seconds(None, ROOT, environment))
        for name, (path, module) in sources.items():
            samples[name].append(import_seconds(module, path, environment))
    boto3_median = statistics.median(samples["boto3"])
    figures = {
        name: {
            "median": round(statistics.median(values), 4),
            "vs_boto3": round(statistics.median(values) / boto3_median, 2),
        }
        for name, values in samples.items()
    }
    return str(sources["order-guard"][0].relative_to(ROOT)), figures
