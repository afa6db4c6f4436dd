"""The state machine of the generated histories against the real queue worker on the
local cloud (docs/proofs.md, "Generated histories against the real code").

A Hypothesis state machine plays producer, event source mapping, fault injector and
clock against the deployed stack (moto in-process, the template's queue with its redrive
policy, the real handler through the local Lambda runtime): it sends new, identical and
conflicting orders and bodies that are not orders; delivers batches of any size through
the local cloud's own mapping code (``SqsEventSourceMapping.poll_once``); injects
DynamoDB faults into the next ``PutItem`` of an order (throttling, 5xx, dropped
connections, and a write whose response is lost on every attempt); crashes an
invocation before or after its writes; and runs out the visibility timeout of messages
in flight, in any order. After every step the system must match a small reference model:
which messages each receive returns and which move to the dead-letter queue (after
``MaxReceiveCount`` receives, the template's redrive policy), each record's write
decision, which messages are acknowledged, the stored items and the DLQ.

Size: ``ORDER_GUARD_HISTORIES`` histories (default 25, derandomized, so ``make test``
is deterministic) of up to ``ORDER_GUARD_STEPS`` steps (default 30); ``make histories``
runs the nightly size (2,000, random seeds).
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any

from hypothesis import HealthCheck, event, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    invariant,
    multiple,
    precondition,
    rule,
)

from localcloud.account import LocalCloud
from localcloud.services import lambda_ as lambda_runtime
from order_guard.config import TOTAL_MAX_ATTEMPTS
from order_guard_tools import faults
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.faults import Fault, Kind

HISTORIES = int(os.environ.get("ORDER_GUARD_HISTORIES", "25"))
STEPS = int(os.environ.get("ORDER_GUARD_STEPS", "30"))
NIGHTLY = HISTORIES > 100

ORDERS = ("a", "b", "c")
QUANTITIES = (1, 2)
NOT_ORDERS = ("not json", '{"id": "x", "quantity": 0}', "[1, 2]")
FAULTS_BEFORE_WRITE = (Kind.THROTTLING, Kind.HTTP_500, Kind.HTTP_503, Kind.DROPPED_CONNECTION)
"""Each fails both attempts of one ``PutItem`` call: nothing is written."""
WRITE_RESPONSE_LOST = Kind.RESPONSE_LOST
"""Both attempts reach the table, both responses are lost: written, and an error."""


def tally(label: str) -> None:
    """Count ``label`` in Hypothesis's statistics (``--hypothesis-show-statistics``);
    nothing when a history is replayed outside Hypothesis (the regression tests)."""
    with contextlib.suppress(InvalidArgument):
        event(label)


@dataclass
class Message:
    """The reference model's view of one message."""

    message_id: str
    body: str
    order_id: str | None  # None: not an order (invalid body)
    quantity: int | None
    where: str = "queue"  # queue | deleted | dlq
    visible: bool = True
    receives: int = 0
    receipt_handle: str = ""
    faulted: bool = False  # a fault or a crash hit one of its deliveries


@dataclass
class Reference:
    """The reference model: messages in send order (moto's receive order), the stored
    quantity of each order, the faults waiting for each order's next ``PutItem``."""

    max_receive_count: int
    messages: list[Message] = field(default_factory=list)
    stored: dict[str, int] = field(default_factory=dict)
    pending: dict[str, list[Kind]] = field(default_factory=dict)

    def receive(self, batch_size: int) -> tuple[list[Message], list[Message]]:
        """One ``ReceiveMessage`` as moto runs it: visible messages in send order; one
        received ``max_receive_count`` times already moves to the DLQ instead (SQS
        redrive); stops when the batch is full. Returns (received, moved to the DLQ)."""
        received: list[Message] = []
        moved: list[Message] = []
        for message in self.messages:
            if message.where != "queue" or not message.visible:
                continue
            if message.receives >= self.max_receive_count:
                moved.append(message)
                continue
            received.append(message)
            if len(received) == batch_size:
                break
        for message in moved:
            message.where = "dlq"
        for message in received:
            message.receives += 1
            message.visible = False
        return received, moved

    def decide(self, message: Message) -> str:
        """The write decision for one record, with its faults (docs/design.md, "The write
        decision")."""
        if message.order_id is None or message.quantity is None:
            return "invalid"
        order, quantity = message.order_id, message.quantity
        waiting = self.pending.get(order)
        fault = waiting.pop(0) if waiting else None
        if fault is not None:
            message.faulted = True
            if fault is WRITE_RESPONSE_LOST:
                self.stored.setdefault(order, quantity)
            return "error"
        if order not in self.stored:
            self.stored[order] = quantity
            return "accepted"
        return "duplicate" if self.stored[order] == quantity else "conflict"


class CrashingFunction:
    """The deployed function, crashing its next invocation when told: ``"before"`` any
    record runs (the runtime dies at start), ``"after"`` every record ran (the
    invocation then times out, its writes stay). The mapping keeps the whole batch."""

    def __init__(self, function: lambda_runtime.Function) -> None:
        self.function = function
        self.crash: str | None = None

    def invoke(self, event: Any) -> lambda_runtime.Invocation:
        crash, self.crash = self.crash, None
        if crash == "before":
            return lambda_runtime.Invocation(
                function_name=self.function.name,
                request_id=str(uuid.uuid4()),
                payload={"errorType": "Runtime.ExitError", "errorMessage": "crashed"},
                error=True,
                log_lines=[],
                duration_ms=0.0,
            )
        invocation = self.function.invoke(event)
        return lambda_runtime.timed_out(invocation, self.function) if crash else invocation


CLOUD: LocalCloud | None = None


@contextlib.contextmanager
def history_cloud() -> Iterator[LocalCloud]:
    """The local cloud the state machine runs on (one per test module: the fixture
    ``cloud`` of tests/proofs/conftest.py)."""
    global CLOUD
    with OrderGuardCloud(visibility_timeout=600) as running:
        CLOUD = running
        try:
            yield running
        finally:
            CLOUD = None


class Histories(RuleBasedStateMachine):
    """One generated history on a fresh queue (both queues purged, new order ids)."""

    sent = Bundle("sent")

    def __init__(self) -> None:
        super().__init__()
        assert CLOUD is not None
        self.cloud = CLOUD
        self.sqs = self.cloud.client("sqs")
        self.dynamodb = self.cloud.client("dynamodb")
        self.table = self.cloud.outputs["OrdersTableName"]
        self.namespace = uuid.uuid4().hex[:8]
        # A fresh pair of queues per history, with the template queue's attributes and
        # redrive policy (SQS allows one PurgeQueue a minute, so no purging).
        self.queue_url, self.dlq_url, max_receive_count = fresh_queues(
            self.sqs, self.cloud.outputs["JobsQueueUrl"], self.namespace
        )
        mapping = self.cloud.event_source
        # A cold start per history: each history gets its own execution environment, so
        # its own DynamoDB client and botocore retry quota. botocore's standard mode
        # spends 5 of a client's 500 quota tokens per retry, so the 101st failed call of
        # one client is not retried; a fault meant to fail both attempts of one call then
        # leaves its second attempt to the next call of that order. A 300-history run
        # sharing one environment hit exactly that (a conflict logged as an error).
        mapping.function.new_execution_environment()
        self.function = CrashingFunction(mapping.function)
        self.mapping = replace(
            mapping,
            queue_url=self.queue_url,
            queue_arn=queue_arn(self.sqs, self.queue_url),
            lambda_client=None,
            uuid=None,
        )
        self.mapping.function = self.function  # type: ignore[assignment]
        self.model = Reference(max_receive_count=max_receive_count)
        self.plan = contextlib.ExitStack()
        self.faults = self.plan.enter_context(faults.injected())

    def teardown(self) -> None:
        self.plan.close()
        for url in (self.queue_url, self.dlq_url):
            self.sqs.delete_queue(QueueUrl=url)

    def _order_id(self, order: str) -> str:
        return f"{self.namespace}-{order}"

    # --- producer -------------------------------------------------------------------

    def _send(self, body: str, order_id: str | None, quantity: int | None) -> Message:
        sent = self.sqs.send_message(QueueUrl=self.queue_url, MessageBody=body)
        message = Message(sent["MessageId"], body, order_id, quantity)
        self.model.messages.append(message)
        return message

    @rule(
        target=sent,
        orders=st.lists(
            st.tuples(st.sampled_from(ORDERS), st.sampled_from(QUANTITIES)), min_size=1, max_size=4
        ),
    )
    def send_orders(self, orders: list[tuple[str, int]]) -> MultipleResults[Message]:
        """New orders, identical copies and conflicting copies: same order, same or other
        quantity."""
        sent = []
        for order, quantity in orders:
            order_id = self._order_id(order)
            body = json.dumps({"id": order_id, "quantity": quantity})
            sent.append(self._send(body, order_id, quantity))
        return multiple(*sent)

    @rule(target=sent, copy=sent)
    def send_identical_copy(self, copy: Message) -> Message:
        """The producer sends a body again (a retry after a lost response)."""
        return self._send(copy.body, copy.order_id, copy.quantity)

    @rule(target=sent, body=st.sampled_from(NOT_ORDERS))
    def send_not_an_order(self, body: str) -> Message:
        return self._send(body, None, None)

    # --- faults and the clock -------------------------------------------------------

    @precondition(lambda self: sum(map(len, self.model.pending.values())) < 2)
    @rule(
        order=st.sampled_from(ORDERS),
        kind=st.sampled_from((*FAULTS_BEFORE_WRITE, WRITE_RESPONSE_LOST)),
    )
    def fault_next_write(self, order: str, kind: Kind) -> None:
        order_id = self._order_id(order)
        self.faults.faults.append(Fault(kind, order_id, "PutItem", times=TOTAL_MAX_ATTEMPTS))
        tally(f"fault: {kind}")
        self.model.pending.setdefault(order_id, []).append(kind)

    @rule(when=st.sampled_from(("before", "after")))
    def crash_next_invocation(self, when: str) -> None:
        self.function.crash = when

    @precondition(
        lambda self: any(m.where == "queue" and not m.visible for m in self.model.messages)
    )
    @rule(data=st.data())
    def visibility_timeout_runs_out(self, data: st.DataObject) -> None:
        in_flight = [m for m in self.model.messages if m.where == "queue" and not m.visible]
        message = data.draw(st.sampled_from(in_flight), label="message")
        self.sqs.change_message_visibility(
            QueueUrl=self.queue_url,
            ReceiptHandle=message.receipt_handle,
            VisibilityTimeout=0,
        )
        message.visible = True

    @precondition(
        lambda self: any(m.where == "queue" and not m.visible for m in self.model.messages)
    )
    @rule()
    def time_passes(self) -> None:
        """Every visibility timeout in flight runs out (nobody deleted those messages)."""
        self._expire_all()

    def _expire_all(self) -> None:
        for message in self.model.messages:
            if message.where == "queue" and not message.visible:
                self.sqs.change_message_visibility(
                    QueueUrl=self.queue_url,
                    ReceiptHandle=message.receipt_handle,
                    VisibilityTimeout=0,
                )
                message.visible = True

    # --- the event source mapping ---------------------------------------------------

    @rule(batch_size=st.integers(min_value=1, max_value=10))
    def deliver(self, batch_size: int) -> None:
        self._deliver(batch_size)

    @rule()
    def drain(self) -> None:
        """Time passes and the mapping polls until the queue is empty: every message left
        ends acknowledged or, after MaxReceiveCount receives, in the dead-letter queue."""
        left = sum(m.where == "queue" for m in self.model.messages)
        # each message needs at most MaxReceiveCount receives and then one more poll to
        # move, and a poll receives at most 10
        for _ in range((self.model.max_receive_count + 1) * (1 + left // 10) + 1):
            if not any(m.where == "queue" for m in self.model.messages):
                return
            self._expire_all()
            self._deliver(10)
        raise AssertionError("messages still in the queue after every receive ran out")

    def _deliver(self, batch_size: int) -> None:
        crash = self.function.crash
        self.mapping.batch_size = batch_size
        received, moved = self.model.receive(batch_size)
        outcome = self.mapping.poll_once()

        assert outcome.message_ids == [m.message_id for m in received]
        handles = {r["messageId"]: r["receiptHandle"] for r in outcome.records}
        for message in received:
            message.receipt_handle = handles[message.message_id]

        expected: dict[str, str] = {}
        if crash != "before":
            for message in received:  # batch order: the first of a key is the original
                expected[message.message_id] = self.model.decide(message)
        logged = {
            line["message_id"]: line["decision"]
            for invocation in outcome.invocations
            for line in map(result_line, invocation.log_lines)
            if line is not None
        }
        assert logged == expected, f"moved to the DLQ first: {[m.message_id for m in moved]}"

        acknowledged = {
            message_id
            for message_id, decision in expected.items()
            if decision in ("accepted", "duplicate") and crash is None
        }
        assert set(outcome.deleted) == acknowledged
        for decision in expected.values():
            tally(f"decision: {decision}")
        if moved:
            tally("redriven to the dead-letter queue")
        if crash:
            tally(f"crash {crash} the writes")
        for message in received:
            if message.message_id in acknowledged:
                message.where = "deleted"
            elif crash:
                message.faulted = True

    # --- what must hold after every step ---------------------------------------------

    @invariant()
    def stored_items_are_the_first_orders(self) -> None:
        for order in ORDERS:
            order_id = self._order_id(order)
            item = self.dynamodb.get_item(
                TableName=self.table, Key={"id": {"S": order_id}}, ConsistentRead=True
            ).get("Item")
            stored = int(item["quantity"]["N"]) if item else None
            assert stored == self.model.stored.get(order_id), order_id

    @invariant()
    def the_dead_letter_queue_holds_exactly_the_redriven_bodies(self) -> None:
        dead = dead_letter_bodies(self.sqs, self.dlq_url)
        expected = {m.message_id: m.body for m in self.model.messages if m.where == "dlq"}
        assert dead == expected
        for message in self.model.messages:
            if message.where != "dlq" or message.order_id is None:
                continue
            # an identical copy of the stored order only if faults kept failing it
            if self.model.stored.get(message.order_id) == message.quantity:
                assert message.faulted, message

    @invariant()
    def nothing_acknowledged_without_its_order_stored(self) -> None:
        for message in self.model.messages:
            if message.where == "deleted":
                assert message.order_id is not None
                assert self.model.stored[message.order_id] == message.quantity


def result_line(text: str) -> dict[str, Any] | None:
    """A worker's ``RESULT`` log line, parsed; ``None`` for any other line."""
    try:
        line = json.loads(text)
    except json.JSONDecodeError:
        return None
    return line if isinstance(line, dict) and line.get("message") == "RESULT" else None


def queue_arn(sqs: Any, url: str) -> str:
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])
    return str(attributes["Attributes"]["QueueArn"])


def fresh_queues(sqs: Any, template_queue_url: str, namespace: str) -> tuple[str, str, int]:
    """A new jobs queue and dead-letter queue with the template jobs queue's attributes
    (its redrive policy pointed at the new DLQ). Returns (queue URL, DLQ URL,
    maxReceiveCount)."""
    attributes = sqs.get_queue_attributes(QueueUrl=template_queue_url, AttributeNames=["All"])[
        "Attributes"
    ]
    redrive = json.loads(attributes["RedrivePolicy"])
    dlq_url = sqs.create_queue(QueueName=f"history-{namespace}-dlq")["QueueUrl"]
    redrive["deadLetterTargetArn"] = queue_arn(sqs, dlq_url)
    copied = {
        name: attributes[name]
        for name in ("VisibilityTimeout", "MessageRetentionPeriod", "MaximumMessageSize")
    }
    url = sqs.create_queue(
        QueueName=f"history-{namespace}",
        Attributes={**copied, "RedrivePolicy": json.dumps(redrive)},
    )["QueueUrl"]
    return url, dlq_url, int(redrive["maxReceiveCount"])


def dead_letter_bodies(sqs: Any, url: str) -> dict[str, str]:
    """Every message in the DLQ, ``{MessageId: Body}``, each received once (held for
    30 s while the scan runs) and then made visible again."""
    bodies: dict[str, str] = {}
    handles: list[str] = []
    while True:
        page = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, VisibilityTimeout=30)
        messages = page.get("Messages", [])
        if not messages:
            break
        for message in messages:
            bodies[message["MessageId"]] = message["Body"]
            handles.append(message["ReceiptHandle"])
    for handle in handles:
        sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=0)
    return bodies


Histories.TestCase.settings = settings(
    max_examples=HISTORIES,
    stateful_step_count=STEPS,
    deadline=None,
    derandomize=not NIGHTLY,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    print_blob=True,
)
