"""Model-check the queue and workflow protocols with SPIN, and show that the mutants fail.

``python -m model.check`` (``make model``) generates a verifier for each model in this
folder with ``spin -a``, compiles it with ``cc`` and runs it with acceptance cycles and
weak fairness (``pan -a -f``), so the one LTL property of each model (every message
leaves the queue; every execution ends) is checked under fair scheduling together with
the assertions (at most one accepted write; the first order stands; no conflicting copy
acknowledged; no identical copy dead-lettered or failed without a fault). The constants
come from the application itself: ``MAXRECV`` is the template's ``MaxReceiveCount``, the
workflow's retry bounds are the ``MaxAttempts`` of StoreOrder's retriers in the ASL.

Every model runs as written, where SPIN must report ``errors: 0``, and once per mutant
(``-D<NAME>``), where SPIN must report a counterexample. The table printed gives the
state-space size of each run and the first line of each counterexample. Exit status 1
when a real model fails or a mutant passes; 2 when ``spin`` or ``cc`` is missing
(``apt-get install spin gcc`` on Debian).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from order_guard_tools.cloud import order_guard_template

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
ASL = ROOT / "statemachine" / "orders.asl.json"


@dataclass(frozen=True)
class Run:
    """One SPIN run: a model, the mutant compiled in (``None``: the model as written) and
    what the mutant breaks, in words for the table."""

    model: str
    mutant: str | None
    breaks: str


RUNS = [
    Run("queue", None, "the queue worker as written"),
    Run("queue", "NO_CONDITION", "PutItem without attribute_not_exists(id)"),
    Run("queue", "ACK_BEFORE_WRITE", "delete the message before the write"),
    Run("queue", "MISSING_ITEM_IS_DUPLICATE", "a condition failure without Item is a duplicate"),
    Run("queue", "DELETE_ON_ERROR", "delete the message whatever the decision"),
    Run("queue", "LISTED_STAYS_HIDDEN", "a listed message never becomes visible again"),
    Run("workflow", None, "StoreOrder with its retriers as written"),
    Run("workflow", "NO_CONDITION", "PutItem without attribute_not_exists(id)"),
    Run("workflow", "MISSING_ITEM_IS_DUPLICATE", "a condition failure without Item is a duplicate"),
    Run("workflow", "RETRY_CONFLICT", "OrderConflict retried until it 'works'"),
]


@dataclass(frozen=True)
class Outcome:
    """What ``pan`` reported: ``errors`` (0: every property holds), ``states`` stored,
    ``seconds`` of wall time (generate, compile, verify) and the first violation line."""

    errors: int
    states: int
    seconds: float
    violation: str


def constants() -> dict[str, dict[str, int]]:
    """The models' ``-D`` constants, read from the application: ``{model: {name: value}}``.

    Raises ``KeyError`` when the template lost ``MaxReceiveCount`` or StoreOrder lost one
    of its two retriers (TransientStoreError, TransientOrderError).
    """
    parameters = order_guard_template().parameters
    retriers = json.loads(ASL.read_text())["States"]["StoreOrder"]["Retry"]
    attempts = {error: r["MaxAttempts"] for r in retriers for error in r["ErrorEquals"]}
    return {
        "queue": {"MAXRECV": int(parameters["MaxReceiveCount"])},
        "workflow": {
            "STORE_RETRIES": int(attempts["TransientStoreError"]),
            "AFTER_RETRIES": int(attempts["TransientOrderError"]),
        },
    }


def check(run: Run, defines: dict[str, int], workdir: Path, tools: dict[str, str]) -> Outcome:
    """Generate, compile and run the verifier for ``run`` in ``workdir``, with ``tools``
    the full paths of ``spin`` and ``cc``.

    Raises ``subprocess.CalledProcessError`` when SPIN rejects the model or the C
    compiler fails (a broken model, not a property violation).
    """
    started = time.perf_counter()
    flags = [f"-D{name}={value}" for name, value in defines.items()]
    if run.mutant:
        flags.append(f"-D{run.mutant}")
    source = HERE / f"{run.model}.pml"
    # Fixed programs and arguments: the model files, constants from the repository.
    spin = [tools["spin"], *flags, "-a", str(source)]
    subprocess.run(spin, cwd=workdir, check=True, capture_output=True)  # noqa: S603
    # NFAIR: memory for weak fairness over the model's four processes.
    compile_ = [tools["cc"], "-O2", "-DNFAIR=4", "-o", "pan", "pan.c"]
    subprocess.run(compile_, cwd=workdir, check=True, capture_output=True)  # noqa: S603
    verify = [str(workdir / "pan"), "-a", "-f", "-m100000"]
    result = subprocess.run(verify, cwd=workdir, capture_output=True, text=True)  # noqa: S603
    out = result.stdout
    errors = re.search(r"errors: (\d+)", out)
    states = re.search(r"(\d+) states, stored", out)
    if errors is None or states is None:
        raise RuntimeError(f"pan printed no verdict for {run}:\n{out}\n{result.stderr}")
    violation = next((line for line in out.splitlines() if line.startswith("pan:1:")), "")
    return Outcome(
        errors=int(errors.group(1)),
        states=int(states.group(1)),
        seconds=time.perf_counter() - started,
        violation=violation.removeprefix("pan:1: ").split(" (at depth")[0],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m model.check", description=__doc__)
    parser.add_argument(
        "--max-faults",
        type=int,
        default=None,
        help="faults per run in every model (default: each model's own, 2 queue, 3 workflow)",
    )
    args = parser.parse_args(argv)
    tools = {tool: shutil.which(tool) or "" for tool in ("spin", "cc")}
    missing = [tool for tool, path in tools.items() if not path]
    if missing:
        print(
            f"model check: {' and '.join(missing)} not found; install with "
            "`apt-get install spin gcc` (Debian)",
            file=sys.stderr,
        )
        return 2
    defines = constants()
    if args.max_faults is not None:
        for values in defines.values():
            values["MAXFAULTS"] = args.max_faults
    wrong = 0
    print(f"{'model':<9} {'variant':<26} {'states':>9} {'s':>5}  verdict")
    for run in RUNS:
        with tempfile.TemporaryDirectory(prefix="order-guard-spin-") as workdir:
            outcome = check(run, defines[run.model], Path(workdir), tools)
        if run.mutant is None:
            ok = outcome.errors == 0
            verdict = "holds" if ok else f"FAILS: {outcome.violation}"
        else:
            ok = outcome.errors > 0
            verdict = (
                f"counterexample: {outcome.violation}" if ok else "NOT CAUGHT: the model is blind"
            )
        wrong += not ok
        name = run.mutant or "as written"
        print(f"{run.model:<9} {name:<26} {outcome.states:>9,} {outcome.seconds:>5.1f}  {verdict}")
    settings = ", ".join(f"{k}={v}" for values in defines.values() for k, v in values.items())
    print(f"constants from template.yaml and the ASL: {settings}")
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
