"""The account's event source mappings: one poller for every SQS mapping of the Lambda
API, whoever created it (a template, ``sam deploy``, ``aws lambda
create-event-source-mapping``).

The patched ``CreateEventSourceMapping`` hands each new mapping here (:func:`created`) and
``DeleteEventSourceMapping`` takes it away (:func:`deleted`); each poll reads the mapping
back from the Lambda API first (its state, batch size, response types and function), so
``update-event-source-mapping`` takes effect at once. In server mode every poller runs in
a thread of its own (:func:`start`); in-process, :meth:`localcloud.account.LocalCloud.
drain` polls them in turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from localcloud.lambda_runtime import lookup
from localcloud.sqs.mapping import SqsEventSourceMapping
from localcloud.text import say

ClientFactory = Callable[[str], Any]


@dataclass(frozen=True)
class Account:
    """How pollers reach the account: its clients and region, and whether they poll in
    the background (server mode) and how long they wait when a queue is empty."""

    client: ClientFactory
    region: str
    background: bool = False
    idle_wait_s: float = 0.2


_ACCOUNT: Account | None = None
_POLLERS: dict[str, SqsEventSourceMapping] = {}
_LOCK = threading.Lock()


def serve(account: Account | None) -> None:
    """Poll the mappings of ``account`` from now on (``None``: stop every poller)."""
    global _ACCOUNT
    with _LOCK:
        _ACCOUNT = account
        stopping = list(_POLLERS.values()) if account is None else []
        if account is None:
            _POLLERS.clear()
    for poller in stopping:
        poller.stop()


def created(config: Mapping[str, Any]) -> SqsEventSourceMapping | None:
    """A mapping was created: poll it, if its source is an SQS queue of this region.
    Any other mapping is said once and left alone (``None``)."""
    account = _ACCOUNT
    if account is None:
        return None
    uuid = str(config["UUID"])
    source = str(config.get("EventSourceArn", ""))
    if not source.startswith(f"arn:aws:sqs:{account.region}:"):
        say(
            f"[event source mapping {uuid}] {source} -> {config.get('FunctionArn')}: the "
            "local cloud polls SQS queues of this region only; not polled"
        )
        return None
    sqs = account.client("sqs")
    queue_url = sqs.get_queue_url(QueueName=source.rsplit(":", 1)[-1])["QueueUrl"]
    try:
        function = lookup(str(config.get("FunctionArn", "")))
    except KeyError:
        return None  # moto refuses a mapping to a function it does not have
    poller = SqsEventSourceMapping(
        sqs=sqs,
        queue_url=queue_url,
        queue_arn=source,
        region=account.region,
        function=function,
        batch_size=int(config.get("BatchSize", 10)),
        report_batch_item_failures="ReportBatchItemFailures"
        in (config.get("FunctionResponseTypes") or []),
        lambda_client=account.client("lambda"),
        uuid=uuid,
        enabled=str(config.get("State", "Enabled")) in ("Enabled", "Enabling"),
    )
    with _LOCK:
        _POLLERS[uuid] = poller
    if account.background:
        poller.start(idle_wait_seconds=account.idle_wait_s)
    return poller


def deleted(uuid: str) -> None:
    """A mapping was deleted: its poller stops."""
    with _LOCK:
        poller = _POLLERS.pop(uuid, None)
    if poller is not None:
        poller.deleted = True
        poller.stop()


def get(uuid: str) -> SqsEventSourceMapping:
    """The poller of mapping ``uuid`` (``KeyError`` if none)."""
    with _LOCK:
        return _POLLERS[uuid]


def pollers() -> list[SqsEventSourceMapping]:
    """Every poller of the account, in creation order."""
    with _LOCK:
        return list(_POLLERS.values())


def start(idle_wait_s: float = 0.2) -> None:
    """Server mode: poll every mapping in the background from now on, waiting
    ``idle_wait_s`` seconds after a poll that found the queue empty."""
    global _ACCOUNT
    with _LOCK:
        if _ACCOUNT is not None:
            _ACCOUNT = Account(_ACCOUNT.client, _ACCOUNT.region, True, idle_wait_s)
        account, current = _ACCOUNT, list(_POLLERS.values())
    if account is not None:
        for poller in current:
            poller.start(idle_wait_seconds=account.idle_wait_s)
