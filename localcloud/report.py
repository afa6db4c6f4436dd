"""Render scenario reports with rich: one table of write decisions per step, ✓/✗ per check."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from localcloud.scenarios import Report, Step, StepListener
from localcloud.template import Template

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
        table.add_row(*map(escape, (name, value, template.parameter_sources.get(name, ""))))
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
                row.order_id or "—",
                row.note,
                f"[{style}]{row.decision}[/]" if style else row.decision,
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
