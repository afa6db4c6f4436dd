"""The SQS event source mapping, emulated as AWS documents it.

moto's own SQS→Lambda trigger is not faithful (one record per call, the receive count
stuck at 1, partial batch responses ignored), so the local cloud polls the queue itself:

- receive up to ``BatchSize`` messages with all attributes, and build records with every
  field Lambda sends (``messageId``, ``receiptHandle``, ``body``, ``attributes``,
  ``messageAttributes``, ``md5OfBody``, ``eventSource``, ``eventSourceARN``,
  ``awsRegion``);
- invoke the function synchronously with ``{"Records": [...]}``, never with an event
  over Lambda's 6 MB synchronous payload limit: a batch whose records exceed it is
  split, in order, into several invocations;
- every mapping is a mapping of the Lambda API (``list``/``get``/``update``/``delete-
  event-source-mapping`` see and change it): the template's are created through
  ``CreateEventSourceMapping`` at deploy, mappings created later through the API are
  picked up by :func:`discover`, and each poll reads its mapping's state, batch size,
  ``FunctionResponseTypes`` and function back first. moto's own SQS trigger (one record
  per call, partial batch responses ignored) is switched off
  (:mod:`localcloud.services.lambda_.mapping_patches`);
- a function error (an exception) leaves the whole batch: every message becomes visible
  again after the visibility timeout;
- with ``ReportBatchItemFailures``: a null/absent/empty ``batchItemFailures`` (or a null
  or empty response) deletes the whole batch; listed ``itemIdentifier`` s stay and the
  rest are deleted; an ``itemIdentifier`` that is empty, null or not in the batch, or any
  malformed response, fails the whole batch (nothing deleted);
- without ``ReportBatchItemFailures`` any successful response deletes the whole batch;
- redrive to the dead-letter queue after ``maxReceiveCount`` receives is SQS's job, and
  moto's SQS does it.

Source: "Handling errors for an SQS event source in Lambda" and "Implementing partial
batch responses" in the AWS Lambda developer guide.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from moto.sqs.models import sqs_backends

from localcloud.services.lambda_ import (
    Function,
    Invocation,
    Throttled,
    dispatch,
    event_source_mappings,
    lookup,
)
from localcloud.services.lambda_.dispatch import PROBLEM_BACKOFF_S, problem_code
from localcloud.services.sqs.batches import MAX_RECEIVE, judge_response, record, split_by_payload
from localcloud.text import say

if TYPE_CHECKING:
    from mypy_boto3_lambda.client import LambdaClient
    from mypy_boto3_sqs.client import SQSClient


THROTTLE_BACKOFF_S = 1.0
"""How long a mapping waits after its function was throttled (seconds); Lambda backs off
without a documented figure."""


@dataclass(frozen=True)
class BatchOutcome:
    """One poll: the invocation (or ``None`` when the queue gave nothing) and its effect.

    ``invocation`` is the last one when a batch over 6 MB was split (``invocations``
    holds them all, in order).
    """

    invocation: Invocation | None
    message_ids: list[str]
    deleted: list[str]
    kept: list[str]
    verdict: str
    records: list[dict[str, Any]] = field(default_factory=list)
    invocations: list[Invocation] = field(default_factory=list)
    throttled: bool = False
    """The function was throttled: the batch stays, and returns after the visibility
    timeout; the poller backs off."""


@dataclass
class SqsEventSourceMapping:
    """One SQS event source mapping, polled as Lambda polls it.

    With ``lambda_client`` and ``uuid`` it is a mapping of the Lambda API and each poll
    first reads its configuration back (:meth:`refresh`); without them (unit tests) the
    fields are fixed.
    """

    sqs: SQSClient
    queue_url: str
    queue_arn: str
    region: str
    function: Function
    batch_size: int
    report_batch_item_failures: bool
    lambda_client: LambdaClient | None = None
    uuid: str | None = None
    enabled: bool = True
    deleted: bool = False
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _idle_wait: float = field(default=0.2, repr=False)
    _last_problem: str | None = field(default=None, repr=False)

    def refresh(self) -> None:
        """Read the mapping back from the Lambda API: state, batch size,
        ``FunctionResponseTypes`` and function, as ``update-event-source-mapping`` left
        them. A deleted mapping stops polling."""
        if self.lambda_client is None or self.uuid is None or self.deleted:
            return
        try:
            config = self.lambda_client.get_event_source_mapping(UUID=self.uuid)
        except self.lambda_client.exceptions.ResourceNotFoundException:
            self.deleted = True
            return
        self.enabled = config.get("State") == "Enabled"
        self.batch_size = int(config.get("BatchSize", self.batch_size))
        self.report_batch_item_failures = "ReportBatchItemFailures" in (
            config.get("FunctionResponseTypes") or []
        )
        try:
            self.function = lookup(config["FunctionArn"])
        except KeyError:
            self.enabled = False  # not a function the local cloud runs (reported by discover)

    def poll_once(self, wait_seconds: int = 0) -> BatchOutcome:
        """Receive one batch (up to the batch size), invoke the function, delete what
        succeeded. A disabled or deleted mapping receives nothing."""
        self.refresh()
        if self.deleted or not self.enabled:
            state = "deleted" if self.deleted else "disabled"
            return BatchOutcome(None, [], [], [], f"mapping {state}: nothing received")
        messages: list[Mapping[str, Any]] = []
        while len(messages) < self.batch_size:
            response = self.sqs.receive_message(
                QueueUrl=self.queue_url,
                MaxNumberOfMessages=min(MAX_RECEIVE, self.batch_size - len(messages)),
                WaitTimeSeconds=wait_seconds if not messages else 0,
                AttributeNames=["All"],
                MessageSystemAttributeNames=["All"],
                MessageAttributeNames=["All"],
            )
            received = response.get("Messages", [])
            messages.extend(received)
            if len(received) < MAX_RECEIVE:
                break
        if not messages:
            return BatchOutcome(None, [], [], [], "queue returned no messages")
        records = [record(message, self.queue_arn, self.region) for message in messages]
        ids = [record["messageId"] for record in records]
        keep: set[str] = set()
        verdicts: list[str] = []
        invocations: list[Invocation] = []
        throttled = False
        for chunk in split_by_payload(records):
            chunk_ids = [record["messageId"] for record in chunk]
            try:
                invocation = self.function.invoke({"Records": chunk})
            except Throttled as throttle:
                keep |= set(chunk_ids)
                throttled = True
                verdicts.append(f"throttled ({throttle.reason}): the batch returns later")
                continue
            invocations.append(invocation)
            if invocation.error:
                kept = set(chunk_ids)
                verdict = f"function error {invocation.error_type}: whole batch failed"
            else:
                kept, verdict = judge_response(
                    invocation.payload,
                    chunk_ids,
                    report_batch_item_failures=self.report_batch_item_failures,
                )
            keep |= kept
            verdicts.append(verdict)
        deleted = [message for message in messages if message["MessageId"] not in keep]
        for start in range(0, len(deleted), 10):
            chunk_messages = deleted[start : start + 10]
            deletion = self.sqs.delete_message_batch(
                QueueUrl=self.queue_url,
                Entries=[
                    {"Id": str(i), "ReceiptHandle": message["ReceiptHandle"]}
                    for i, message in enumerate(chunk_messages)
                ],
            )
            if deletion.get("Failed"):
                # The message stays and comes back: a duplicate next time, never lost.
                raise RuntimeError(f"DeleteMessageBatch failed for {deletion['Failed']}")
        return BatchOutcome(
            invocation=invocations[-1] if invocations else None,
            message_ids=ids,
            deleted=[message["MessageId"] for message in deleted],
            kept=[i for i in ids if i in keep],
            verdict="; ".join(verdicts),
            records=records,
            invocations=invocations,
            throttled=throttled,
        )

    # --- background polling (server mode) --------------------------------------------

    def start(self, idle_wait_seconds: float = 0.2) -> None:
        """Poll from now on, on the account's one dispatcher
        (:mod:`localcloud.services.lambda_.dispatch`), which looks at the queue every
        ``idle_wait_seconds`` while it is empty."""
        self._stop.clear()
        self._idle_wait = idle_wait_seconds
        dispatch.dispatcher(idle_wait_seconds).add(self)

    def stop(self) -> None:
        """Poll no more (a poll in flight ends first, up to 10 s)."""
        self._stop.set()
        dispatch.dispatcher().remove(self)

    def ready(self) -> bool:
        """Whether the queue holds a message it would give now, read from moto's memory
        (no request made; a queue that is gone answers yes, so the poll reports it)."""
        _, _, _, region, account, name = self.queue_arn.split(":", 5)
        queue = sqs_backends[account][region].queues.get(name)
        return queue is None or bool(queue.messages)

    def poll_in_dispatcher(self) -> float:
        """One background poll; the seconds to wait before the next."""
        if self._stop.is_set() or self.deleted:
            return PROBLEM_BACKOFF_S
        try:
            outcome = self.poll_once()
        except Exception as exc:  # noqa: BLE001 - a poller must survive a bad poll
            self._report(exc)
            return PROBLEM_BACKOFF_S
        if self._last_problem is not None:
            say(f"[event source mapping {self.uuid}] polling again: {self.queue_arn}")
            self._last_problem = None
        if outcome.throttled:
            return THROTTLE_BACKOFF_S
        return 0.0 if outcome.invocation is not None else self._idle_wait

    def _report(self, exc: Exception) -> None:
        """Say once what keeps a poll from working (a deleted queue, say), not every poll."""
        code = problem_code(exc)
        if code == self._last_problem:
            return
        self._last_problem = code
        if "NonExistentQueue" in code or "QueueDoesNotExist" in code:
            detail = f"queue {self.queue_arn} does not exist (deleted?)"
        else:
            detail = f"poll failed: {exc!r}"
        say(
            f"[event source mapping {self.uuid}] {detail}; retrying every 5 s, "
            "reported once until it recovers"
        )


def from_mapping(
    account: event_source_mappings.Account, config: Mapping[str, Any], function: Function
) -> SqsEventSourceMapping:
    """The poller of a mapping whose source is a queue of the account (the SQS service's
    :data:`~localcloud.services.lambda_.event_source_mappings.PollerFactory`)."""
    sqs = account.client("sqs")
    source = str(config["EventSourceArn"])
    queue_url = sqs.get_queue_url(QueueName=source.rsplit(":", 1)[-1])["QueueUrl"]
    return SqsEventSourceMapping(
        sqs=sqs,
        queue_url=queue_url,
        queue_arn=source,
        region=account.region,
        function=function,
        batch_size=int(config.get("BatchSize", 10)),
        report_batch_item_failures="ReportBatchItemFailures"
        in (config.get("FunctionResponseTypes") or []),
        lambda_client=account.client("lambda"),
        uuid=str(config["UUID"]),
        enabled=str(config.get("State", "Enabled")) in ("Enabled", "Enabling"),
    )
