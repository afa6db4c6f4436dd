"""``python -m order_guard_tools lab-check``: which of the running lab's expectations hold now.

It asks the running ``make lab`` which lab it serves (the live view's ``state.json``),
then tells, step by step, each expectation the lab's text sets after a command block, as
✓ or ✗ with what differs. Each step is judged from what happened (the recorded writes to
DynamoDB, the invocations, the executions the view keeps) where the lab's cleanup removes
the evidence later, and from the account as it is now for the cleanup itself. A guard is
judged by its writes, not by reading its code: a repeat acknowledged without a second
accepted ``PutItem`` of the same key. When the lab runs on a port other than the one its
code calls (``make lab`` with ``--any-port``), a note says where that code writes.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import boto3
import requests
from botocore.exceptions import ClientError

from localcloud.account import FAKE_CREDENTIALS
from localcloud.server.view import PATH
from localcloud.text import plain
from order_guard_tools.commands import CommandError, console
from order_guard_tools.labs import EV05, Q05, REGION, Lab, lab_named
from order_guard_tools.labs.ports import DEFAULT_PORT, lab_code

State = Mapping[str, Any]
Client = Callable[[str], Any]


@dataclass(frozen=True)
class Check:
    """One expectation: ``step`` (the lab's step), ``holds``, and ``detail`` (what was
    seen, or what differs)."""

    step: str
    holds: bool
    detail: str


def _writes(state: State) -> list[Mapping[str, Any]]:
    """Every recorded write, oldest first."""
    return list(reversed(state.get("writes", [])))


def _accepted_puts(writes: Iterable[Mapping[str, Any]], table: str) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for w in writes:
        if w["table"] == table and w["operation"] == "PutItem" and w["outcome"] == "Accepted":
            found.setdefault(w["key"], []).append(w)
    return found


def _guarded(state: State, lab: Lab, table: str) -> Check:
    """The learner's worker behaves as protected: a repeat was refused by the condition
    with the item unchanged, and no key got a second accepted write after that."""
    writes = [w for w in _writes(state) if w.get("function") == lab.function]
    refused = [
        w
        for w in writes
        if w["table"] == table
        and w["outcome"] == "ConditionalCheckFailedException"
        and "attribute_not_exists" in str(w.get("condition"))
    ]
    if not refused:
        return Check(
            "protected worker",
            False,
            "no repeat refused by attribute_not_exists(id) yet (upload the guarded worker, "
            "then send a repeat)",
        )
    since = writes[writes.index(refused[0]) :]  # from the first refusal on
    overwritten = sorted(
        {
            w["key"]
            for w in since
            if w["table"] == table
            and w["operation"] == "PutItem"
            and w["outcome"] == "Accepted"
            and w["before"] is not None
        }
    )
    unchanged = all(w["before"] == w["after"] for w in refused)
    if overwritten or not unchanged:
        return Check(
            "protected worker",
            False,
            f"an accepted write over a stored order: {', '.join(overwritten)}"
            if overwritten
            else "a refused write changed the item",
        )
    return Check(
        "protected worker",
        True,
        f"{len(refused)} repeat(s) refused by the condition, the item unchanged",
    )


def _stored(state: State, table: str, expected: Mapping[str, tuple[int, int]]) -> Check:
    """Each expected order's first accepted write stored its quantity and total."""
    accepted = _accepted_puts(_writes(state), table)
    wrong = []
    for key, (quantity, total) in expected.items():
        writes = accepted.get(key, [])
        if len(writes) != 1:
            wrong.append(f"{key}: {len(writes)} accepted write(s)")
            continue
        after = writes[0]["after"] or {}
        if (after.get("quantity"), after.get("total_cents")) != (quantity, total):
            wrong.append(f"{key}: stored {after}")
    shown = ", ".join(f"{k} {q}/{t}" for k, (q, t) in expected.items())
    return Check("stored orders", not wrong, "; ".join(wrong) or f"{shown}, one write each")


def _cleanup(checks: list[tuple[str, bool]]) -> Check:
    left = [what for what, gone in checks if not gone]
    return Check("cleanup", not left, f"still there: {', '.join(left)}" if left else "all gone")


def _reference_kept(client: Client, table: str) -> Check:
    items = client("dynamodb").scan(TableName=table)["Items"]
    kept = items == [{"id": {"S": "reference"}, "note": {"S": "keep unchanged"}}]
    return Check("reference data", kept, "keep unchanged" if kept else f"now {items}")


def _uploaded(client: Client, lab: Lab) -> Check:
    sha = client("lambda").get_function_configuration(FunctionName=lab.function)["CodeSha256"]
    changed = sha != lab.starter_sha256()
    return Check(
        "upload",
        changed,
        f"CodeSha256 {sha}" if changed else "the function still runs the starter",
    )


def _returned_duplicate(invocation: Mapping[str, Any]) -> bool:
    try:
        returned = json.loads(invocation["returned"])
    except ValueError:  # cut: longer than the view keeps
        return False
    return isinstance(returned, dict) and returned.get("duplicate") is True


def _exists(call: Callable[[], Any]) -> bool:
    try:
        call()
    except ClientError:
        return False
    return True


def q05_checks(state: State, client: Client) -> list[Check]:
    """Lab Q05's expectations."""
    invocations = [i for i in state.get("invocations", []) if i["function"] == Q05.function]
    mapped = any('"processed"' in i["returned"] for i in invocations)
    mappings = client("lambda").list_event_source_mappings(FunctionName=Q05.function)
    now = [
        m
        for m in mappings["EventSourceMappings"]
        if m["EventSourceArn"].endswith(":labex-q05-jobs")
    ]
    connected = mapped or any(m["BatchSize"] == 1 and m["State"] == "Enabled" for m in now)
    duplicates = [i for i in invocations if i["result"] == "ok" and _returned_duplicate(i)]
    queue_urls = client("sqs").list_queues().get("QueueUrls", [])
    orders = client("dynamodb").scan(TableName="labex-q05-orders")["Items"]
    return [
        Check(
            "mapping",
            connected,
            "labex-q05-jobs → labex-q05-worker, batch size 1"
            if connected
            else "no Enabled mapping of batch size 1 from labex-q05-jobs",
        ),
        _uploaded(client, Q05),
        _guarded(state, Q05, "labex-q05-orders"),
        _stored(state, "labex-q05-orders", {"dedup-order": (4, 1100), "other-order": (1, 350)}),
        Check(
            "repeats acknowledged",
            len(duplicates) >= 2,
            f"{len(duplicates)} invocation(s) returned duplicate: true (the lab sends two)",
        ),
        _cleanup(
            [
                ("the mapping", not now),
                (
                    "the queue labex-q05-jobs",
                    not any(u.endswith("/labex-q05-jobs") for u in queue_urls),
                ),
                (f"{len(orders)} order(s)", not orders),
                (
                    "/aws/lambda/labex-q05-worker",
                    not client("logs").describe_log_groups(
                        logGroupNamePrefix="/aws/lambda/labex-q05-worker"
                    )["logGroups"],
                ),
            ]
        ),
        _reference_kept(client, "labex-q05-reference"),
    ]


def ev05_checks(state: State, client: Client) -> list[Check]:
    """Lab EV05's expectations."""
    machines = [m for m in state.get("state_machines", []) if m["name"] == "labex-ev05-orders"]
    executions = {e["name"]: e for m in machines for e in m["executions"]}
    first = executions.get("after-write-order")
    retried = bool(
        first
        and first["status"] == "SUCCEEDED"
        and any(t["error"] == "TransientOrderError" for t in first["tasks"])
    )
    statuses = {
        n: executions[n]["status"] for n in ("repeated-order", "different-order") if n in executions
    }
    iam = client("iam")
    role_there = _exists(lambda: iam.get_role(RoleName="labex-ev05-workflow-role"))
    listed = client("stepfunctions").list_state_machines()["stateMachines"]
    orders = client("dynamodb").scan(TableName="labex-ev05-orders")["Items"]
    attempts = client("dynamodb").scan(TableName="labex-ev05-attempts")["Items"]
    groups = client("logs").describe_log_groups()["logGroups"]
    return [
        _uploaded(client, EV05),
        Check(
            "workflow",
            bool(machines),
            "labex-ev05-orders seen" if machines else "no state machine labex-ev05-orders yet",
        ),
        Check(
            "retry after the write",
            retried,
            "after-write-order: TransientOrderError, then SUCCEEDED"
            if retried
            else "after-write-order has not succeeded after a TransientOrderError",
        ),
        Check(
            "re-execution and a different order",
            statuses == {"repeated-order": "SUCCEEDED", "different-order": "SUCCEEDED"},
            ", ".join(f"{n} {s}" for n, s in statuses.items()) or "not run yet",
        ),
        _guarded(state, EV05, "labex-ev05-orders"),
        _stored(
            state, "labex-ev05-orders", {"protected-order": (4, 1100), "different-order": (1, 350)}
        ),
        _cleanup(
            [
                ("the state machine", not listed),
                ("labex-ev05-workflow-role", not role_there),
                (f"{len(orders)} order(s)", not orders),
                (f"{len(attempts)} attempts item(s)", not attempts),
                (f"{len(groups)} log group(s)", not groups),
            ]
        ),
        _reference_kept(client, "labex-ev05-reference"),
    ]


CHECKS: dict[str, Callable[[State, Client], list[Check]]] = {"q05": q05_checks, "ev05": ev05_checks}


def read_state(endpoint: str) -> dict[str, Any]:
    """The running lab's view state, with every recorded write (all pages).

    Raises:
        CommandError: nothing answers, or it is not a lab.
    """
    url = f"{endpoint.rstrip('/')}{PATH}/state.json"
    try:
        state: dict[str, Any] = requests.get(url, timeout=30).json()
        pages = state["pages"]["writes"]["count"]
        for page in range(2, pages + 1):
            more = requests.get(f"{url}?writes={page}", timeout=30).json()
            state["writes"] += more["writes"]
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


def lab_check(args: argparse.Namespace) -> int:
    """Print each expectation of the running lab as ✓ or ✗; 0 if all hold, else 1."""
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

    checks = CHECKS[lab.name](state, client)
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
        mark = "[green]✓[/]" if check.holds else "[red]✗[/]"
        console.print(f"  {mark} {check.step}: {plain(check.detail)}", soft_wrap=True)
    return 0 if all(check.holds for check in checks) else 1
