"""What ``lab-check`` judges a lab's named checks by: the three verdicts, and the evidence
of what happened in the lab's account (the live view's record of every write DynamoDB
decided and every invocation, the executions it keeps after their state machine is
deleted) beside the account as it is now.

The lab's own setup writes one thing, the reference item (:attr:`Lab.reference`,
written by :func:`~order_guard_tools.labs.provision` before the learner can type
anything); it shows in the view as a write by "not a function (CLI, SDK)", as the
learner's own ``aws dynamodb`` commands do. No check counts a write to a reference table
(the reference is judged by what it holds now, :func:`provided_kept`), and the learner's
moves are told by table and key (the lab's orders), so the setup's write is never taken
for the learner's.

May import: :mod:`order_guard_tools.labs.machines`.
"""

from __future__ import annotations

import enum
import functools
import io
import json
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import requests
from botocore.exceptions import ClientError

from order_guard_tools.labs.machines import Lab

State = Mapping[str, Any]
"""The live view's state (``state.json``) with every page of writes and invocations."""
Row = Mapping[str, Any]
Client = Callable[[str], Any]
"""A boto3 client factory for the lab's account: service name → client."""


class Verdict(enum.Enum):
    """How a named check stands: it holds, it fails, or its step has not happened."""

    HOLDS = "✓"
    FAILS = "✗"
    NOT_YET = "not yet"


@dataclass(frozen=True)
class Check:
    """One of a lab's named checks: ``name`` as the lab's text gives it, with an English
    gloss (``部署检查 (deployment)``), its ``verdict``, and ``detail``: what was seen, what
    is wrong, or what has not happened yet."""

    name: str
    verdict: Verdict
    detail: str

    @property
    def holds(self) -> bool:
        return self.verdict is Verdict.HOLDS


def judged(name: str, problems: list[str], pending: str | None, done: str) -> Check:
    """✗ with the ``problems`` if there are any, else "not yet" with ``pending`` if the
    step has not fully happened, else ✓ with ``done``."""
    if problems:
        return Check(name, Verdict.FAILS, "; ".join(problems))
    if pending is not None:
        return Check(name, Verdict.NOT_YET, pending)
    return Check(name, Verdict.HOLDS, done)


def times(count: int) -> str:
    """``once``, ``twice``, ``3 times``."""
    return {1: "once", 2: "twice"}.get(count, f"{count} times")


# --- what happened: the view's history --------------------------------------------------


def writes(
    state: State,
    table: str,
    *,
    key: str | None = None,
    function: str | None = None,
    since: float = 0.0,
) -> list[Row]:
    """The recorded writes to ``table``, oldest first: of the item ``key``, made by the
    function ``function`` (any writer when ``None``), at or after ``since`` (epoch s)."""
    return [
        w
        for w in reversed(state.get("writes", []))
        if w["table"] == table
        and (key is None or w["key"] == key)
        and (function is None or w["function"] == function)
        and w["at"] >= since
    ]


def accepted_puts(rows: Iterable[Row]) -> list[Row]:
    return [w for w in rows if w["operation"] == "PutItem" and w["outcome"] == "Accepted"]


def refused_puts(rows: Iterable[Row]) -> list[Row]:
    return [
        w
        for w in rows
        if w["operation"] == "PutItem" and w["outcome"] == "ConditionalCheckFailedException"
    ]


def stored_once(rows: list[Row], key: str, quantity: int, total: int) -> list[str]:
    """What is wrong with the order ``key``'s writes (``rows``, of that item): more than
    one accepted ``PutItem``, an accepted one storing other details than ``quantity`` and
    ``total`` (cents), or a refused one that changed the item."""
    problems = []
    accepted = accepted_puts(rows)
    if len(accepted) > 1:
        problems.append(
            f"the order {key} was written {times(len(accepted))}: {len(accepted)} accepted writes"
        )
    elif accepted:
        after = accepted[0]["after"] or {}
        if (after.get("quantity"), after.get("total_cents")) != (quantity, total):
            problems.append(
                f"{key} stored quantity {after.get('quantity')}, total "
                f"{after.get('total_cents')}, not {quantity}/{total}"
            )
    if any(w["before"] != w["after"] for w in refused_puts(rows)):
        problems.append(f"a refused write changed {key}")
    return problems


def learner_deleted(state: State, tables: Iterable[str], keys: Iterable[str]) -> bool:
    """Whether an ``aws dynamodb delete-item`` (a write of no function) removed one of the
    lab's ``keys`` from ``tables``: a cleanup step's move."""
    wanted_tables, wanted_keys = set(tables), set(keys)
    return any(
        w["function"] is None
        and w["operation"] == "DeleteItem"
        and w["table"] in wanted_tables
        and w["key"] in wanted_keys
        for w in state.get("writes", [])
    )


def invocations(state: State, function: str, *, since: float = 0.0) -> list[Row]:
    """The recorded invocations of ``function`` that ended at or after ``since``, oldest
    first."""
    return [
        i
        for i in reversed(state.get("invocations", []))
        if i["function"] == function and i["at"] >= since
    ]


def returned(invocation: Row) -> Mapping[str, Any]:
    """What an invocation returned, as a mapping (``{}`` if not one, or cut by the view)."""
    try:
        value = json.loads(invocation["returned"])
    except ValueError:  # cut: longer than the view keeps
        return {}
    return value if isinstance(value, dict) else {}


def machine_seen(state: State, name: str) -> Row | None:
    """The state machine ``name`` as the view keeps it (``gone`` once deleted, with the
    executions last read), if it was ever seen."""
    return next((m for m in state.get("state_machines", []) if m["name"] == name), None)


def queue_seen(state: State, name: str) -> Row | None:
    """The queue ``name`` as the view keeps it (``gone`` once deleted), if ever seen."""
    return next((q for q in state.get("queues", []) if q["name"] == name), None)


# --- the account now ---------------------------------------------------------------------


def exists(call: Callable[[], Any]) -> bool:
    """Whether ``call`` (a describe or get) finds its resource."""
    try:
        call()
    except ClientError as exc:
        code = str(exc.response.get("Error", {}).get("Code", ""))
        if "NotFound" in code or "DoesNotExist" in code or code == "NoSuchEntity":
            return False
        raise
    return True


def item_ids(client: Client, table: str) -> list[str]:
    """The ``id`` of every item in ``table`` (one ``Scan`` page: a lab's few items)."""
    items = client("dynamodb").scan(TableName=table)["Items"]
    return sorted(str(item.get("id", {}).get("S", item)) for item in items)


def package_files(client: Client, function: str) -> list[str] | None:
    """The file names of the package ``function`` runs (downloaded from
    ``GetFunction``'s ``Code.Location``, as ``curl`` would); ``None`` if it cannot be
    read."""
    location = client("lambda").get_function(FunctionName=function)["Code"].get("Location")
    if not location:
        return None
    try:
        answer = requests.get(location, timeout=30)
        answer.raise_for_status()
        return zipfile.ZipFile(io.BytesIO(answer.content)).namelist()
    except (requests.RequestException, zipfile.BadZipFile):
        return None


def provided_kept(lab: Lab, client: Client) -> list[str]:
    """What is wrong with what the lab's machine provides, which its cleanup keeps: the
    function, its role, the tables and the reference item (unchanged)."""
    problems = []
    functions, iam, dynamodb = client("lambda"), client("iam"), client("dynamodb")
    if not exists(lambda: functions.get_function_configuration(FunctionName=lab.function)):
        problems.append(f"the provided function {lab.function} is gone")
    if not exists(lambda: iam.get_role(RoleName=lab.role)):
        problems.append(f"the provided role {lab.role} is gone")
    for table in lab.tables:
        if not exists(functools.partial(dynamodb.describe_table, TableName=table)):
            problems.append(f"the provided table {table} is gone")
        elif table in lab.reference:
            items = dynamodb.scan(TableName=table)["Items"]
            if items != [lab.reference[table]]:
                problems.append(f"the reference item changed: {table} now holds {items}")
    return problems
