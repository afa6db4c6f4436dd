"""Lab Q05's named checks (``../shared/labs/q05.zh.txt``), in the lab's order, each judged
by what the account shows happened:

- 检查连接 (connection): the event source mapping from ``labex-q05-jobs`` to the worker,
  batch size 1, Enabled; once it is deleted, the messages it delivered one at a time.
- 检查实际工作程序结果 (worker results): ``dedup-order`` (4/1100) and ``other-order``
  (1/350) each written once; the two repeats refused by the condition, the item
  unchanged, each returning ``duplicate: true``.
- 检查消息确认情况 (message acknowledgement): the step's deliveries all returned, so
  each message was deleted, and the queue holds nothing, visible or in flight.
- 清理检查 (cleanup): the mapping, the queue, the orders and the worker's log group
  gone; the provided function, role, tables and reference item kept.

May import: :mod:`order_guard_tools.labs.evidence` and :mod:`~order_guard_tools.labs.machines`.
"""

from __future__ import annotations

from typing import Final

from order_guard_tools.labs.evidence import (
    Check,
    Client,
    Row,
    State,
    Verdict,
    accepted_puts,
    invocations,
    item_ids,
    judged,
    learner_deleted,
    provided_kept,
    queue_seen,
    refused_puts,
    returned,
    stored_once,
    writes,
)
from order_guard_tools.labs.machines import Q05

QUEUE: Final = "labex-q05-jobs"
ORDERS: Final = "labex-q05-orders"
LOG_GROUP: Final = f"/aws/lambda/{Q05.function}"
FIRST: Final = "dedup-order"
"""The order the lab sends first, then twice again."""
OTHER: Final = "other-order"
"""The independent order the lab sends after the repeats."""
STORED: Final = {FIRST: (4, 1100), OTHER: (1, 350)}
"""Each order's quantity and total (cents), as the lab expects them stored."""
REPEATS: Final = 2

CONNECTION: Final = "检查连接 (connection)"
RESULTS: Final = "检查实际工作程序结果 (worker results)"
ACKNOWLEDGEMENT: Final = "检查消息确认情况 (message acknowledgement)"
CLEANUP: Final = "清理检查 (cleanup)"


def _deliveries(state: State, *, since: float = 0.0) -> list[Row]:
    """The worker's invocations by an event source mapping (their event: SQS records)."""
    return [
        i for i in invocations(state, Q05.function, since=since) if i["given"].endswith("record(s)")
    ]


def connection(state: State, client: Client) -> Check:
    """检查连接: the mapping as the lab creates it, or, once deleted, what it delivered."""
    mappings = client("lambda").list_event_source_mappings(FunctionName=Q05.function)[
        "EventSourceMappings"
    ]
    delivered = _deliveries(state)
    batches = sorted({i["given"] for i in delivered} - {"1 record(s)"})
    if not mappings:
        if batches:
            return Check(
                CONNECTION, Verdict.FAILS, f"the worker was given {batches[0]}: batch size 1"
            )
        if delivered and queue_seen(state, QUEUE):
            return Check(
                CONNECTION,
                Verdict.HOLDS,
                f"{QUEUE} → {Q05.function} delivered {len(delivered)} message(s) one at a "
                "time; the mapping is deleted since",
            )
        return Check(
            CONNECTION,
            Verdict.NOT_YET,
            f"no event source mapping from {QUEUE} to {Q05.function} yet",
        )
    problems = []
    if len(mappings) > 1:
        problems.append(f"{len(mappings)} mappings for {Q05.function}: one is enough")
    pending = None
    for mapping in mappings:
        source = str(mapping["EventSourceArn"]).rsplit(":", 1)[-1]
        if source != QUEUE:
            problems.append(f"a mapping reads {source}, not {QUEUE}")
        if mapping["BatchSize"] != 1:
            problems.append(f"batch size {mapping['BatchSize']}, not 1")
        if mapping["State"] in ("Creating", "Enabling", "Updating"):
            pending = f"the mapping is {mapping['State']}"
        elif mapping["State"] != "Enabled":
            problems.append(f"the mapping is {mapping['State']}, not Enabled")
    return judged(
        CONNECTION,
        problems,
        pending,
        f"{QUEUE} → {Q05.function}, batch size 1, Enabled; "
        f"{len(delivered)} message(s) delivered so far",
    )


def worker_results(state: State) -> Check:
    """检查实际工作程序结果: each order written once, the repeats refused by the condition
    and acknowledged as duplicates."""
    rows = {key: writes(state, ORDERS, key=key, function=Q05.function) for key in STORED}
    problems = [
        problem for key, (q, t) in STORED.items() for problem in stored_once(rows[key], key, q, t)
    ]
    refused = len(refused_puts(rows[FIRST]))
    duplicates = sum(
        1
        for i in invocations(state, Q05.function)
        if returned(i).get("duplicate") is True and returned(i).get("id") == FIRST
    )
    first, other = len(accepted_puts(rows[FIRST])), len(accepted_puts(rows[OTHER]))
    processed = refused >= REPEATS and other >= 1
    if processed and duplicates < REPEATS and not problems:
        problems.append(
            f"{refused} repeats refused, but {duplicates} invocation(s) returned "
            "duplicate: true: an identical repeat is acknowledged as a duplicate"
        )
    pending = None
    if not processed or first == 0:
        pending = (
            f"no order written yet: send {FIRST} once the protected worker is uploaded"
            if not any(rows.values())
            else f"{FIRST}: {first} accepted write(s), {refused} of {REPEATS} repeats refused; "
            f"{OTHER}: {other} accepted write(s)"
        )
    return judged(
        RESULTS,
        problems,
        pending,
        f"{FIRST} 4/1100 and {OTHER} 1/350 written once each; its {refused} repeats "
        "refused by the condition, the item unchanged, each returning duplicate: true",
    )


def acknowledgement(state: State) -> Check:
    """检查消息确认情况: every delivery of the step returned, and the queue is empty."""
    rows = {key: writes(state, ORDERS, key=key, function=Q05.function) for key in STORED}
    puts = {key: [w for w in found if w["operation"] == "PutItem"] for key, found in rows.items()}
    if len(puts[FIRST]) < 1 + REPEATS or not puts[OTHER]:
        return Check(
            ACKNOWLEDGEMENT,
            Verdict.NOT_YET,
            f"the step's messages are not all processed yet ({FIRST} once and twice "
            f"again, then {OTHER})",
        )
    delivered = _deliveries(state, since=puts[FIRST][0]["at"])
    failed = [i for i in delivered if i["result"] != "ok"]
    queue = queue_seen(state, QUEUE) or {"gone": True}
    waiting = 0 if queue["gone"] else queue["visible"] + queue["in_flight"]
    problems = (
        [
            f"{len(failed)} of {len(delivered)} deliveries failed "
            f"({', '.join(sorted({i['result'] for i in failed}))}): a failed message is not "
            "acknowledged and comes back"
        ]
        if failed
        else []
    )
    return judged(
        ACKNOWLEDGEMENT,
        problems,
        f"{QUEUE} still holds {queue['visible']} visible, {queue['in_flight']} in flight"
        if waiting
        else None,
        f"{len(delivered)} deliveries returned, so each message was deleted; "
        + (
            f"{QUEUE} is deleted since"
            if queue["gone"]
            else f"{QUEUE} holds 0 visible, 0 in flight"
        ),
    )


def cleanup(state: State, client: Client) -> Check:
    """清理检查: what the learner made is gone, what the machine provides is kept."""
    queue = queue_seen(state, QUEUE)
    mappings = client("lambda").list_event_source_mappings(FunctionName=Q05.function)[
        "EventSourceMappings"
    ]
    if queue is None:
        return Check(CLEANUP, Verdict.NOT_YET, f"nothing to clean up yet: {QUEUE} never existed")
    begun = (
        queue["gone"]
        or (not mappings and bool(_deliveries(state)))
        or learner_deleted(state, [ORDERS], STORED)
    )
    if not begun:
        return Check(
            CLEANUP,
            Verdict.NOT_YET,
            f"the queue {QUEUE}, its mapping and the orders are still in use "
            "(the cleanup step removes them)",
        )
    left = [f"the mapping {m['UUID']}" for m in mappings]
    left += [
        f"the queue {u.rsplit('/', 1)[-1]}"
        for u in client("sqs").list_queues().get("QueueUrls", [])
    ]
    left += [f"the order {key}" for key in item_ids(client, ORDERS)]
    groups = client("logs").describe_log_groups(logGroupNamePrefix=LOG_GROUP)["logGroups"]
    left += [f"the log group {g['logGroupName']}" for g in groups]
    problems = [f"still there: {', '.join(left)}"] if left else []
    return judged(
        CLEANUP,
        problems + provided_kept(Q05, client),
        None,
        f"the mapping, {QUEUE}, the orders and {LOG_GROUP} are gone; the provided "
        "function, its role, the tables and the reference item kept",
    )


def q05_checks(state: State, client: Client) -> list[Check]:
    """Lab Q05's named checks, in the lab's order."""
    return [
        connection(state, client),
        worker_results(state),
        acknowledgement(state),
        cleanup(state, client),
    ]
