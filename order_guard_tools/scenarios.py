"""The seed scenarios, shared by ``demo`` (in-process), ``verify`` (a deployed stack or a
local server) and the integration tests.

Each scenario drives the system only through its public surface (SendMessage,
StartExecution, the stack Outputs, CloudWatch Logs, GetItem/Scan, the execution
history), so the same code checks the local cloud and AWS. Write decisions are read
back from the workers' ``RESULT`` log lines.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from localcloud.state import Target, TaskAttempt, invocations, now_ms, queue_depth, task_attempts
from order_guard_tools.project import ROOT
from order_guard_tools.reads import (
    dead_letters,
    max_receive_count,
    results,
    run_execution,
    scan_ids,
    stored,
    visibility_timeout,
)

EVENTS = ROOT / "events"


@dataclass(frozen=True)
class Check:
    label: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True)
class Row:
    """One write decision, as a worker logged it."""

    order_id: str | None
    decision: str
    previous: Mapping[str, Any] | None
    stored: Mapping[str, Any] | None
    note: str = ""


@dataclass
class Step:
    title: str
    rows: list[Row] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)

    def expect(self, label: str, ok: bool, detail: str = "") -> bool:
        self.checks.append(Check(label, bool(ok), detail))
        return bool(ok)


StepListener = Callable[["Report", Step], None]
"""Called with each finished step, so a long run (verify on AWS) can show progress."""


@dataclass
class Report:
    name: str
    steps: list[Step] = field(default_factory=list)
    created_ids: set[str] = field(default_factory=set)
    notes: list[str] = field(default_factory=list)
    listener: StepListener | None = field(default=None, repr=False)

    def add(self, step: Step) -> None:
        self.steps.append(step)
        if self.listener is not None:
            self.listener(self, step)

    @property
    def ok(self) -> bool:
        return all(check.ok for step in self.steps for check in step.checks)

    @property
    def checks(self) -> list[Check]:
        return [check for step in self.steps for check in step.checks]


def load_event(name: str) -> Any:
    return json.loads((EVENTS / f"{name}.json").read_text())


# --- reading back -----------------------------------------------------------------------


def _rows(lines: list[dict[str, Any]], target: Target) -> list[Row]:
    rows = []
    for line in lines:
        order_id = line.get("id")
        note = ""
        if "attempt" in line:
            note = f"attempt {line['attempt']} ({line.get('mode')})"
        elif line.get("receive_count"):
            note = f"receive {line['receive_count']}"
        rows.append(
            Row(
                order_id=order_id,
                decision=line["decision"],
                previous=line.get("previous") or line.get("stored"),
                stored=stored(target, order_id) if order_id else None,
                note=note,
            )
        )
    return rows


# --- the queue scenario -----------------------------------------------------------------


def queue_scenario(
    target: Target,
    *,
    suffix: str = "",
    settle_timeout_s: float = 120.0,
    listener: StepListener | None = None,
) -> Report:
    """The seed queue scenario (issue 3 §5): first order, two copies, an independent order,
    then a conflicting copy that must end in the dead-letter queue."""
    report = Report("Queue scenario: SQS → QueueWorkerFunction → OrdersTable", listener=listener)
    group = target.outputs["QueueWorkerLogGroupName"]
    queue = target.outputs["JobsQueueUrl"]
    sqs = target.client("sqs")
    dedup, other = f"dedup-order{suffix}", f"other-order{suffix}"
    report.created_ids |= {dedup, other}
    started = now_ms()

    def deliver(
        title: str, body: dict[str, Any], expected: list[str], total: tuple[int, int]
    ) -> Step:
        step = Step(title)
        since = now_ms()
        sqs.send_message(QueueUrl=queue, MessageBody=json.dumps(body))
        target.settle(settle_timeout_s)
        lines = results(target, group, since, [body["id"]], expected=len(expected))
        step.rows = _rows(lines, target)
        got = [line["decision"] for line in lines]
        step.expect(f"decision {' + '.join(expected)}", got == expected, f"got {got}")
        item = stored(target, body["id"])
        step.expect(
            f"stored {body['id']} = {total[0]} / {total[1]} cents",
            item is not None and (item["quantity"], item["total_cents"]) == total,
            f"stored {item}",
        )
        report.add(step)
        return step

    first = load_event("sqs-first-order")["Records"][0]["body"]
    first_job = {**json.loads(first), "id": dedup}
    deliver(f"1. {dedup} quantity 4 (first delivery)", first_job, ["accepted"], (4, 1100))
    deliver(f"2. {dedup} quantity 4 (copy 1)", first_job, ["duplicate"], (4, 1100))
    deliver(f"3. {dedup} quantity 4 (copy 2)", first_job, ["duplicate"], (4, 1100))
    independent = json.loads(load_event("sqs-independent-order")["Records"][0]["body"])
    deliver(
        f"4. {other} quantity 1 (independent order)",
        {**independent, "id": other},
        ["accepted"],
        (1, 350),
    )

    totals = Step("Queue totals after the four deliveries")
    lines = results(target, group, started, [dedup, other], expected=4)
    invoked = invocations(target, group, started, now_ms(), expected=4)
    totals.expect("4 worker invocations", invoked == 4, f"{invoked} REPORT lines")
    decisions = [line["decision"] for line in lines]
    totals.expect("4 deliveries processed", len(lines) == 4, f"{len(lines)} RESULT lines")
    totals.expect(
        "2 accepted writes, 2 duplicates acknowledged",
        sorted(decisions) == ["accepted", "accepted", "duplicate", "duplicate"],
        f"{decisions}",
    )
    scan = scan_ids(target, [dedup, other])
    totals.expect(
        f"scan shows exactly {dedup} 4/1100 and {other} 1/350",
        scan == {dedup: (4, 1100), other: (1, 350)},
        f"{scan}",
    )
    totals.expect("queue empty (visible + in flight = 0)", queue_depth(target, queue) == (0, 0))
    totals.expect("no message of this run in the DLQ", dead_letters(target, [dedup, other]) == [])
    report.add(totals)

    receives = max_receive_count(target)
    conflict = Step(f"5. {dedup} quantity 5 (conflicting copy)")
    since = now_ms()
    body = json.dumps(
        {**json.loads(load_event("sqs-conflicting-copy")["Records"][0]["body"]), "id": dedup}
    )
    sqs.send_message(QueueUrl=queue, MessageBody=body)
    target.settle(settle_timeout_s + receives * visibility_timeout(target))
    lines = results(target, group, since, [dedup], expected=receives)
    conflict.rows = _rows(lines, target)
    got = [line["decision"] for line in lines]
    conflict.expect(
        "never acknowledged: every receive is a conflict",
        bool(got) and set(got) == {"conflict"},
        f"{got}",
    )
    conflict.expect(
        f"received {receives} times (maxReceiveCount) before redrive",
        len(got) == receives,
        f"{len(got)}",
    )
    letters = dead_letters(target, [dedup], delete=True)
    conflict.expect("in the dead-letter queue, body intact", letters == [body], f"{letters}")
    item = stored(target, dedup)
    conflict.expect(
        f"stored {dedup} unchanged (4 / 1100)",
        item is not None and (item["quantity"], item["total_cents"]) == (4, 1100),
        f"{item}",
    )
    report.add(conflict)
    return report


# --- the workflow scenario ----------------------------------------------------------------


def _expect_summary(step: Step, output: Any, total_cents: int) -> None:
    step.expect(
        f"summary reports {total_cents}",
        isinstance(output, dict) and output.get("total_cents") == total_cents,
        f"{output}",
    )


def workflow_scenario(
    target: Target, *, suffix: str = "", listener: StepListener | None = None
) -> Report:
    """The seed workflow scenario (issue 3 §5): after-write, repeated, different order."""
    report = Report(
        "Workflow scenario: StartExecution → OrdersStateMachine → WorkflowWorkerFunction",
        listener=listener,
    )
    group = target.outputs["WorkflowWorkerLogGroupName"]
    protected, different = f"protected-order{suffix}", f"different-order{suffix}"
    report.created_ids |= {protected, different}
    scheduled = 0

    def execute(
        title: str,
        name: str,
        event: str,
        order_id: str,
        check: Callable[[Step, dict[str, Any], list[TaskAttempt]], None],
    ) -> None:
        nonlocal scheduled
        step = Step(title)
        since = now_ms()
        execution_input = {**load_event(event), "id": order_id}
        described, history = run_execution(target, f"{name}{suffix}", execution_input)
        scheduled += sum(1 for event in history if event["type"] == "TaskScheduled")
        attempts = task_attempts(history)
        store_attempts = [a for a in attempts if a.state == "StoreOrder"]
        step.rows = _rows(
            results(target, group, since, [order_id], expected=len(store_attempts)), target
        )
        step.expect("execution SUCCEEDED", described["status"] == "SUCCEEDED", described["status"])
        output = json.loads(described.get("output") or "null")
        check(step, output, store_attempts)
        report.add(step)

    def after_write(step: Step, output: Any, store: list[TaskAttempt]) -> None:
        step.expect(
            "StoreOrder attempt 1 fails with TransientOrderError after the write",
            len(store) >= 1
            and store[0].error == "TransientOrderError"
            and "after the write" in str(store[0].payload),
            f"{store[0] if store else None}",
        )
        step.expect(
            "the retry (attempt 2) reports duplicate: true",
            len(store) == 2
            and store[1].error is None
            and store[1].payload.get("duplicate") is True,
            f"{store[1] if len(store) > 1 else None}",
        )
        _expect_summary(step, output, 1100)
        step.expect(
            f"one item for {protected}", scan_ids(target, [protected]) == {protected: (4, 1100)}
        )

    def stored_once(
        label: str, duplicate: bool, total_cents: int
    ) -> Callable[[Step, Any, list[TaskAttempt]], None]:
        """One StoreOrder attempt, succeeding with ``duplicate``, and the summary."""

        def check(step: Step, output: Any, store: list[TaskAttempt]) -> None:
            step.expect(
                label,
                len(store) == 1
                and store[0].error is None
                and store[0].payload.get("duplicate") is duplicate,
                f"{store}",
            )
            _expect_summary(step, output, total_cents)

        return check

    repeated = stored_once("a new execution of the same order reports duplicate: true", True, 1100)
    different_order = stored_once("stored once, duplicate: false", False, 350)

    execute(
        f"1. execution after-write-order{suffix}: {protected} 4, mode after-write",
        "after-write-order",
        "execution-after-write-order",
        protected,
        after_write,
    )
    execute(
        f"2. execution repeated-order{suffix}: the same order again",
        "repeated-order",
        "execution-repeated-order",
        protected,
        repeated,
    )
    execute(
        f"3. execution different-order{suffix}: {different} 1, normal",
        "different-order",
        "execution-different-order",
        different,
        different_order,
    )

    totals = Step("Workflow totals")
    totals.expect(
        "7 worker invocations in all", scheduled == 7, f"{scheduled} TaskScheduled events"
    )
    scan = scan_ids(target, [protected, different])
    totals.expect(
        f"two orders stored: {protected} 1100, {different} 350",
        scan == {protected: (4, 1100), different: (1, 350)},
        f"{scan}",
    )
    report.add(totals)
    return report


def cleanup(target: Target, ids: Iterable[str]) -> int:
    """Delete the orders and attempt counters of ``ids`` (only those); returns how many."""
    dynamodb = target.client("dynamodb")
    count = 0
    for order_id in sorted(set(ids)):
        for table in ("OrdersTableName", "AttemptsTableName"):
            dynamodb.delete_item(TableName=target.outputs[table], Key={"id": {"S": order_id}})
        count += 1
    dead_letters(target, ids, delete=True)
    return count
