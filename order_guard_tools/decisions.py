"""Order Guard's write decisions on the local cloud: every ``RESULT`` line the workers
write, read out of each invocation's log as it happens, kept after the log groups,
queues or tables are deleted (a lab's cleanup), and shown in the live view and
``status`` beside the account's own lists.

:class:`Decisions` is an invocation listener of the account's Lambda runtime and hands
the live view a section of its own (``view/decisions.html``) through the local cloud's
extension interface (:class:`localcloud.account.Extension`). Memory only.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from localcloud.account import Extension
from localcloud.account.view import page_number
from localcloud.server.view import ViewPart
from localcloud.services.lambda_ import Function, Invocation
from localcloud.state.history import PAGE_SIZE, page

CONDITION: Final = "attribute_not_exists(id)"
"""The conditional write's condition (src/order_guard/store.py, CONDITION_EXPRESSION)."""
TEMPLATES: Final = Path(__file__).parent / "view"
"""The live view's section of write decisions."""


@dataclass(frozen=True)
class DecisionRecord:
    """One write decision (or a summary read), read from a ``RESULT`` line.

    ``source`` says where the job came from (``sqs <messageId> receive <n>`` or
    ``attempt <n> (<mode>)``); ``before`` and ``after`` are the order item's business
    details before and after the conditional write (``None``: no item).
    """

    at: float
    order_id: str | None
    stage: str
    decision: str
    source: str
    message_id: str | None
    detail: str
    condition: str
    outcome: str
    before: Mapping[str, Any] | None
    after: Mapping[str, Any] | None
    requested: Mapping[str, Any] | None
    error_type: str | None
    reason: str | None


def result_lines(lines: list[str]) -> list[dict[str, Any]]:
    """The ``RESULT`` lines of an invocation's log, parsed."""
    found = []
    for line in lines:
        if '"RESULT"' not in line:
            continue
        try:
            parsed = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(parsed, dict) and parsed.get("message") == "RESULT":
            found.append(parsed)
    return found


def decision_of(line: Mapping[str, Any], at: float) -> DecisionRecord:
    """A :class:`DecisionRecord` from one RESULT line (both workers' shapes)."""
    decision = str(line.get("decision") or line.get("outcome") or "?")
    details = None
    if line.get("id") is not None and isinstance(line.get("quantity"), int):
        quantity = line["quantity"]
        details = {"id": line["id"], "quantity": quantity, "total_cents": quantity * 250 + 100}
    before = line.get("previous") or line.get("stored")
    if decision == "accepted":
        after, outcome = details, "PutItem succeeded: the item was written"
    elif decision in ("duplicate", "conflict"):
        after = before
        outcome = "ConditionalCheckFailedException: the item is kept unchanged"
    elif decision == "invalid":
        after, outcome = None, "no write attempted"
    elif line.get("stage") == "summary":
        after, outcome = None, f"GetItem: {decision}"
    else:
        after, outcome = before, "the call failed: nothing known written"
    if "receive_count" in line or "message_id" in line:
        detail = f"receive {line.get('receive_count')}"
        source = f"sqs {line.get('message_id')} {detail}"
    elif "attempt" in line:
        detail = f"attempt {line['attempt']} ({line.get('mode')})"
        source = detail
    else:
        detail = source = str(line.get("stage", ""))
    return DecisionRecord(
        at=at,
        order_id=line.get("id"),
        stage=str(line.get("stage", "")),
        decision=decision,
        source=source,
        message_id=line.get("message_id"),
        detail=detail,
        condition=CONDITION if line.get("stage") != "summary" else "",
        outcome=outcome,
        before=before if isinstance(before, Mapping) else None,
        after=after if isinstance(after, Mapping) else None,
        requested=details if decision != "accepted" else None,
        error_type=line.get("error_type"),
        reason=line.get("reason"),
    )


class Decisions:
    """The last ``limit`` write decisions of the account's functions, newest last
    (thread-safe)."""

    def __init__(self, limit: int = 10_000) -> None:
        self._lock = threading.Lock()
        self.rows: deque[DecisionRecord] = deque(maxlen=limit)

    def record(self, function: Function, event: Any, invocation: Invocation) -> None:
        """The runtime listener: keep the decisions in the invocation's log."""
        now = time.time()
        found = [decision_of(line, now) for line in result_lines(invocation.log_lines)]
        with self._lock:
            self.rows.extend(found)

    def add(self, record: DecisionRecord) -> None:
        """Keep one decision (the view's tests fill the history this way)."""
        with self._lock:
            self.rows.append(record)

    def pages(self, number: int = 1, size: int = PAGE_SIZE) -> dict[str, Any]:
        """``{"decisions": [...], "pages": {"decisions": {"page", "count", "total"}}}``:
        one page, newest first (:func:`localcloud.state.history.page`)."""
        with self._lock:
            rows, info = page(self.rows, number, size)
        return {"decisions": rows, "pages": {"decisions": info}}

    def extension(self, lab: str | None = None) -> Extension:
        """What the account is handed: this listener, and the view's decisions section
        with its data (``?decisions=N`` pages it) and ``lab``, the seed lab the account
        is the machine of (``make lab-check`` asks)."""

        def read(args: Mapping[str, str]) -> Mapping[str, Any]:
            return {"lab": lab, **self.pages(page_number(args.get("decisions")))}

        return Extension(
            listeners=(self.record,),
            view=ViewPart(TEMPLATES, ("decisions.html",), {"item": item}),
            read=read,
        )


def item(value: Any) -> str:
    """An order item's business details as ``qty 4, 1100¢`` (``—`` for none)."""
    if not isinstance(value, dict):
        return "—"
    return f"qty {value.get('quantity')}, {value.get('total_cents')}¢"
