"""An invocation's lines into its function's CloudWatch Logs group, as Lambda delivers
them: one event per line, in the execution environment's log stream, in batches within
``PutLogEvents``' quotas (1,048,576 bytes, 10,000 events: :func:`batches`).

A missing log group is created when the function's role may create it (the first
invocation of a function made without one, as on AWS); otherwise its lines are lost, as
on AWS when the role may not (the template's roles grant only ``logs:CreateLogStream``
and ``logs:PutLogEvents``). It never fails the invocation, and a loss is said once per
group until the group is back.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final

from localcloud.text import say

ClientFactory = Callable[[str], Any]
BATCH_BYTES: Final = 1_048_576
"""A ``PutLogEvents`` batch, at most (bytes, its events' overhead counted)."""
BATCH_EVENTS: Final = 10_000
"""A ``PutLogEvents`` batch, at most (events)."""
EVENT_OVERHEAD_BYTES: Final = 26
"""What each event of a batch counts for besides its message (bytes)."""


class Delivery:
    """The log sink of an account's functions (``(group, stream, events)``).

    Args:
        client: service name → boto3 client of the account.
        may_create: group → whether the role of the function writing there allows
            ``logs:CreateLogGroup``; ``None``: never create.
    """

    def __init__(
        self, client: ClientFactory, may_create: Callable[[str], bool] | None = None
    ) -> None:
        self._client = client
        self._may_create = may_create
        self._lost: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, group: str, stream: str, events: list[tuple[int, str]]) -> None:
        if not events:
            return
        logs = self._client("logs")
        try:
            self._deliver(logs, group, stream, events)
        except logs.exceptions.ResourceNotFoundException:
            try:
                if self._may_create is None or not self._may_create(group):
                    self._lose(group)
                    return
                # created meanwhile by another invocation: as good
                with contextlib.suppress(logs.exceptions.ResourceAlreadyExistsException):
                    logs.create_log_group(logGroupName=group)
                self._deliver(logs, group, stream, events)
            except Exception as exc:  # noqa: BLE001 - never fail the invocation for its log
                say(f"[logs] {group}: the lines of an invocation were lost: {exc}")
                return
        with self._lock:
            self._lost.discard(group)

    def _lose(self, group: str) -> None:
        with self._lock:
            first = group not in self._lost
            self._lost.add(group)
        if first:
            say(
                f"[logs] log group {group} does not exist: this function's log lines are "
                "lost until it is created again (as on AWS)"
            )

    @staticmethod
    def _deliver(logs: Any, group: str, stream: str, events: list[tuple[int, str]]) -> None:
        existing = logs.describe_log_streams(logGroupName=group, logStreamNamePrefix=stream)[
            "logStreams"
        ]
        if not any(s["logStreamName"] == stream for s in existing):
            logs.create_log_stream(logGroupName=group, logStreamName=stream)
        for batch in batches(events):
            logs.put_log_events(
                logGroupName=group,
                logStreamName=stream,
                logEvents=[{"timestamp": ts, "message": message} for ts, message in batch],
            )


def batches(events: Sequence[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
    """``events`` in order, in the batches ``PutLogEvents`` takes: at most
    :data:`BATCH_EVENTS` events and :data:`BATCH_BYTES` bytes, each event counted as its
    message in UTF-8 plus :data:`EVENT_OVERHEAD_BYTES` (CloudWatch Logs API reference,
    PutLogEvents). An event too large for any batch is never made: Lambda cuts its lines
    to fit (:func:`localcloud.services.lambda_.runtime.contract.log_lines`)."""
    batch: list[tuple[int, str]] = []
    size = 0
    for event in events:
        message = event[1]
        event_size = EVENT_OVERHEAD_BYTES + (
            len(message) if message.isascii() else len(message.encode("utf-8", "surrogatepass"))
        )
        if batch and (size + event_size > BATCH_BYTES or len(batch) == BATCH_EVENTS):
            yield batch
            batch, size = [], 0
        batch.append(event)
        size += event_size
    if batch:
        yield batch
