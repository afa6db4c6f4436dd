"""Render scenario reports with rich: one table of write decisions per step, ✓/✗ per check."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

from localcloud.cloudformation.template import Template
from localcloud.remote import render_status as render_status_of
from localcloud.remote import shown, table
from localcloud.text import plain
from order_guard_tools.scenarios import Report, Step, StepListener

_STYLE = {
    "accepted": "green",
    "duplicate": "cyan",
    "conflict": "red",
    "invalid": "yellow",
    "error": "magenta",
}


def _item(value: Mapping[str, Any] | None) -> str:
    if not value:
        return "—"
    return f"qty {value.get('quantity')}, {value.get('total_cents')}¢"


def render_parameters(console: Console, template: Template, heading: str) -> None:
    """The resolved template parameters, each with where its value came from."""
    table = Table(title=heading, title_justify="left", box=None, pad_edge=False)
    for column in ("parameter", "value", "from"):
        table.add_column(column)
    for name, value in template.parameters.items():
        table.add_row(*map(plain, (name, value, template.parameter_sources.get(name, ""))))
    console.print(table)


def render(console: Console, reports: Iterable[Report]) -> None:
    """Print whole reports (each header, then each step)."""
    for report in reports:
        render_header(console, report)
        for step in report.steps:
            render_step(console, step)


def render_header(console: Console, report: Report) -> None:
    console.rule(f"[bold]{report.name}")
    for note in report.notes:
        console.print(f"[dim]note: {note}")


def render_step(console: Console, step: Step) -> None:
    """One step: its write decisions as a table, then ✓/✗ per expectation."""
    console.print(f"\n[bold]{step.title}")
    if step.rows:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for column in ("order id", "delivery", "decision", "previous item", "stored item"):
            table.add_column(column)
        for row in step.rows:
            style = _STYLE.get(row.decision, "")
            table.add_row(
                plain(row.order_id or "—"),
                plain(row.note),
                f"[{style}]{plain(row.decision)}[/]" if style else plain(row.decision),
                _item(row.previous),
                _item(row.stored),
            )
        console.print(table)
    for check in step.checks:
        mark = "[green]✓[/]" if check.ok else "[red]✗[/]"
        detail = "" if check.ok or not check.detail else f"  [dim]({check.detail})"
        console.print(f"  {mark} {check.label}{detail}")


def live(console: Console) -> StepListener:
    """A step listener that prints each report's header once, then each step as it ends."""
    started: set[int] = set()

    def show(report: Report, step: Step) -> None:
        if id(report) not in started:
            started.add(id(report))
            render_header(console, report)
        render_step(console, step)

    return show


def summary(reports: Iterable[Report]) -> tuple[int, int]:
    """(passed, failed) checks."""
    checks = [check for report in reports for check in report.checks]
    passed = sum(1 for check in checks if check.ok)
    return passed, len(checks) - passed


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False)


def render_status(console: Console, state: Mapping[str, Any]) -> None:
    """The live view's sections as terminal tables (``python -m order_guard_tools status``):
    the local cloud's own (:func:`localcloud.remote.render_status`), with the write
    decisions after the mappings where the server shows them (Order Guard's own server,
    not a plain ``python -m localcloud serve``)."""
    render_status_of(console, state, sections=[_decisions] if "decisions" in state else [])


def _decisions(console: Console, state: Mapping[str, Any]) -> None:
    table(
        console,
        f"Write decisions (newest first){shown(state.get('pages', {}).get('decisions'))}",
        ["order id", "from", "decision", "item before", "item after"],
        [
            [
                d["order_id"],
                d["source"],
                f"[{_STYLE.get(d['decision'], 'white')}]{plain(d['decision'])}[/]",
                _item(d["before"]),
                _item(d["after"]),
            ]
            for d in state["decisions"]
        ],
        markup_column=2,
    )


def render_cold_start(console: Console, init: Mapping[str, Any]) -> None:
    """The cold-start table: each function's INIT against a bare boto3 handler's."""
    rounds = "fresh processes, interleaved; INIT = handler module imported + DynamoDB client"
    table(
        console,
        f"Cold start ({rounds}; built package, no bytecode written, no awscrt)",
        ["function", "INIT ms (median)", "min–max ms", "× bare boto3 (median)", "min–max ×"],
        [
            [
                name,
                f["median_ms"],
                f"{f['min_ms']}–{f['max_ms']}",
                f["vs_bare"],
                f"{f['vs_bare_min']}–{f['vs_bare_max']}",
            ]
            for name, f in init.items()
        ],
    )


def render_environment_start(console: Console, figures: Sequence[Any]) -> None:
    """The local cloud's cold start of an execution environment, against a bare
    interpreter start (:mod:`order_guard_tools.bench.environment_start`)."""

    def span(values: tuple[float, float, float] | None, unit: str = "") -> list[str]:
        if values is None:
            return ["—", "—"]
        median, low, high = values
        return [f"{median:.1f}{unit}", f"{low:.1f}–{high:.1f}{unit}"]

    table(
        console,
        "Local cold start of an execution environment (a cold invocation of a zip function, "
        "until the invoker has the answer; rounds interleaved)",
        [
            "contestant",
            "wall ms",
            "min–max",
            "Init Duration ms",
            "min–max",
            "× baseline",
            "min–max",
        ],
        [[f.name, *span(f.wall_ms), *span(f.init_ms), *span(f.ratio, "×")] for f in figures],
    )


def render_write_units(console: Console, units: Mapping[str, Any]) -> None:
    """Write and read units per decision, by DynamoDB's rule (not the emulator's)."""
    table(
        console,
        "Capacity units per decision, computed by DynamoDB's documented rule from the items "
        "written (item size rounded up to 1 KB; a failed condition still consumes); not "
        "the emulator's ConsumedCapacity",
        ["decision", "write units", "read units", "item bytes", "writes"],
        [
            [
                name,
                u["write_units"],
                u["read_units"],
                u["item_bytes"],
                ", ".join(f"{op} {n}" for op, n in u["writes"]) or "none",
            ]
            for name, u in units.items()
        ],
    )


def render_critical_path(console: Console, figures: Mapping[str, Any]) -> None:
    """Where the queue worker's 10-new-order batch spends its time outside the emulator
    (``critical_path.worker_round_trips``)."""
    table(
        console,
        "The queue worker's 10-new-order batch outside the emulator (a stand-in DynamoDB "
        "in its own process): wall in round trips, CPU in the worker's process",
        ["the worker's code with", "wall", "CPU"],
        [
            [f"its DynamoDB client, {name}", f["wall"], f"{f['sdk_cpu_ms']:.2f} ms a request"]
            for name, f in figures["sdk_configs"].items()
        ]
        + [
            [
                "a client that only waits the round trip (no SDK)",
                figures["worker_alone"],
                f"{figures['worker_cpu_ms']:.2f} ms a batch",
            ]
        ],
    )
    sdk_ms = figures["sdk_cpu_ms"]
    console.print(
        f"The SDK's CPU, {sdk_ms:.2f} ms a PutItem × 10 = {10 * sdk_ms:.1f} ms a batch, "
        "runs one thread at a time on the GIL: it is what lies between the first and the "
        "last wall."
    )


def render_bench(console: Console, results: Mapping[str, Any]) -> None:
    """``make bench``'s figures, one table per question."""
    names = list(results["requests_per_message"])
    rpm = results["requests_per_message"]
    table(
        console,
        "DynamoDB requests per message",
        ["contestant", "new", "repeat", "conflict", "invalid"],
        [
            [n, *(f"{rpm[n][k]:.2f}" for k in ("new", "repeat", "conflict", "invalid"))]
            for n in names
        ],
    )
    for key, trip in (
        ("messages_per_second", "no round trip (CPU only: the emulator)"),
        ("messages_per_second_2ms", "a fixed 2 ms round trip"),
        (
            "messages_per_second_latency",
            f"DynamoDB's latency, modelled: {results['latency_model']}",
        ),
    ):
        mps = results[key]
        table(
            console,
            f"Messages per second, mixed stream of {results['messages']} (half repeats), "
            f"{trip}, median of {results['rounds']} interleaved rounds",
            ["contestant", "median", "× floor", "× Powertools"],
            [[n, v["median"], v["vs_floor"], v["vs_powertools"]] for n, v in mps.items()],
        )
    table(
        console,
        "10-record batch in simulated round trips (wall; added by the round trip); peak memory",
        ["contestant", "wall", "added", "peak KiB"],
        [
            [
                n,
                results["batch_round_trips"][n]["wall"],
                results["batch_round_trips"][n]["added"],
                results["peak_memory_kib"][n],
            ]
            for n in names
        ],
    )
    render_critical_path(console, results["batch_round_trips_worker"])
    render_cold_start(console, results["init"])
    cost = results["cost_model"]
    table(
        console,
        "Cost per million orders (us-east-1, published prices; see the results file)",
        ["contestant", "DynamoDB $ (new orders)", "Lambda $"],
        [
            [
                n,
                cost[n]["dynamodb_usd_per_million_new_orders"],
                cost[n]["lambda_usd_per_million_orders"],
            ]
            for n in names
        ],
    )
    render_write_units(console, results["write_units"])
    table(
        console,
        f"Billed INIT per million orders (10 orders a batch, 256 MB; {results['cold_start_rate']})",
        ["function", "cold starts", "INIT s", "$ per million orders"],
        [
            [n, c["cold_starts_per_million_orders"], c["init_seconds"], c["usd_per_million_orders"]]
            for n, c in results["init_cost"].items()
        ],
    )
    handoff = results["thread_handoff"]
    table(
        console,
        "CPython thread hand-off: 10-task batches of CPU-bound Python, no I/O "
        "(the baseline for concurrency with no round trip)",
        ["tasks", "per second", "× one after another"],
        [
            ["one after another", handoff["sequential_tasks_per_second"], 1.0],
            [
                "on 10 threads kept across batches",
                handoff["threaded_tasks_per_second"],
                handoff["ratio"],
            ],
        ],
    )
    if results.get("package_kib") is not None:
        console.print(f"built package (sam build): {results['package_kib']:.0f} KiB")
