"""``python -m order_guard_tools lab-check``: the running lab's named checks, as its text
names them, each ✓ (it holds), ✗ (with what is wrong) or "not yet" (its step has not
happened).

It asks the running ``make lab`` which lab it serves (the live view's ``state.json``),
reads every page of the view's history, and judges each check the lab's text asks for
(:mod:`.q05_checks`, :mod:`.ev05_checks`) by what the account shows happened: the writes
and their decisions, the invocations, the executions and their histories, the mappings,
beside the account as it is now (:mod:`.evidence`). A resource that merely exists proves
nothing; a fresh ``make lab`` says "not yet" for every check. When the lab runs on a port
other than the one its code calls (``make lab`` with ``--any-port``), a note says where
that code writes.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import requests

from localcloud.account import FAKE_CREDENTIALS
from localcloud.server.view import PATH
from localcloud.text import plain
from order_guard_tools.commands import CommandError, console
from order_guard_tools.labs import REGION, lab_named
from order_guard_tools.labs.ev05_checks import ev05_checks
from order_guard_tools.labs.evidence import Check, Client, State, Verdict
from order_guard_tools.labs.ports import DEFAULT_PORT, lab_code
from order_guard_tools.labs.q05_checks import q05_checks

Reader = Callable[[Mapping[str, str]], Mapping[str, Any]]
"""The live view's state for query arguments (``{"writes": "2"}``: that page)."""

CHECKS: dict[str, Callable[[State, Client], list[Check]]] = {"q05": q05_checks, "ev05": ev05_checks}
"""Each lab's named checks, by the lab's name."""

MARKS = {
    Verdict.HOLDS: "[green]✓[/]",
    Verdict.FAILS: "[red]✗[/]",
    Verdict.NOT_YET: "[yellow]not yet[/]",
}


def gather(read: Reader) -> dict[str, Any]:
    """The view's state with every page of its history lists (writes, invocations), each
    row once even if a page moved while it was read."""
    state = dict(read({}))
    for kind in ("writes", "invocations"):
        rows: dict[str, Any] = {}
        for number in range(1, int(state["pages"][kind]["count"]) + 1):
            page = state[kind] if number == 1 else read({kind: str(number)})[kind]
            rows.update((json.dumps(row, sort_keys=True), row) for row in page)
        state[kind] = sorted(rows.values(), key=lambda row: row["at"], reverse=True)
    return state


def read_state(endpoint: str) -> dict[str, Any]:
    """The running lab's view state, with every recorded write and invocation.

    Raises:
        CommandError: nothing answers, or it is not a lab.
    """
    url = f"{endpoint.rstrip('/')}{PATH}/state.json"

    def read(args: Mapping[str, str]) -> Mapping[str, Any]:
        answer: Mapping[str, Any] = requests.get(url, params=dict(args), timeout=30).json()
        return answer

    try:
        state = gather(read)
    except (requests.RequestException, ValueError, KeyError) as exc:
        port = urlsplit(endpoint).port
        start = (
            "start one with make lab LAB=q05 (or ev05)"
            if port in (None, DEFAULT_PORT)
            else f"start the lab there first (make lab LAB=… PORT={port})"
        )
        raise CommandError(f"no lab answers at {endpoint}: {start}") from exc
    if not state.get("lab"):
        raise CommandError(f"{endpoint} serves {state.get('title')}, not a lab: use make lab")
    return state


def judge(state: State, client: Client) -> list[Check]:
    """The named checks of the lab ``state`` (:func:`gather`) is of, in the lab's order."""
    return CHECKS[lab_named(str(state["lab"])).name](state, client)


def lab_check(args: argparse.Namespace) -> int:
    """Print each named check of the running lab; 0 if all hold, else 1."""
    endpoint = f"http://127.0.0.1:{args.port}"
    state = read_state(endpoint)
    lab = lab_named(str(state["lab"]))

    def client(service: str) -> Any:
        return boto3.client(
            service,  # type: ignore[call-overload]
            region_name=REGION,
            endpoint_url=endpoint,
            aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
            aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        )

    checks = judge(state, client)
    console.print(f"[bold]Lab {lab.name.upper()}[/] on {endpoint}:")
    code = lab_code(lab, Path(args.lab_texts))
    elsewhere = code.conflict(args.port)
    if elsewhere:  # make lab ran with --any-port
        console.print(
            f"  [yellow]note:[/] {code.says(elsewhere)}: deployed unedited, it writes to port "
            f"{elsewhere.port}, not to this lab on {args.port}",
            soft_wrap=True,
        )
    for check in checks:
        console.print(
            f"  {MARKS[check.verdict]} {check.name}: {plain(check.detail)}", soft_wrap=True
        )
    return 0 if all(check.holds for check in checks) else 1
