"""Lambda's event source mappings for streams (Kinesis Data Streams, DynamoDB Streams), as
AWS documents them; each stream service gives its :class:`StreamSource` (how to list a
stream's shards, read its records in order and shape them as the function receives them)
and this module does what Lambda does with them:

- each shard is read in order from the mapping's ``StartingPosition`` (``TRIM_HORIZON``,
  ``LATEST`` as it was when the mapping was created, or Kinesis' ``AT_TIMESTAMP``), up to
  ``BatchSize`` records a batch (100 by default), and fewer when more would pass Lambda's
  6 MB request payload limit; a batch holds records of one shard only;
- ``MaximumBatchingWindowInSeconds``: a mapping waits until it has a full batch, or until
  its oldest waiting record is that old, before it invokes (in a served account);
- the function is invoked synchronously with ``{"Records": [...]}``; a batch that failed
  holds its shard back (records are processed in order) until it succeeds, or is
  discarded: when it was retried ``MaximumRetryAttempts`` times (``-1``, the default:
  until the record expires), or when its records grow older than
  ``MaximumRecordAgeInSeconds`` (checked before each try);
- ``BisectBatchOnFunctionError``: a function error splits the batch in two, each half
  retried on its own (first half first), without counting a retry; a batch of one record
  that fails counts one;
- with ``ReportBatchItemFailures``: an empty or null response, or an empty or null
  ``batchItemFailures``, is a success; listed sequence numbers make the lowest of them
  the checkpoint, and the records from it on are retried (a retry); an ``itemIdentifier``
  that is empty, null, not in the batch, or a malformed response, fails the whole batch
  (a retry, not bisected);
- a discarded batch goes to ``DestinationConfig.OnFailure`` (an SQS queue or an SNS
  topic) as Lambda's invocation record with the source's batch information
  (``KinesisBatchInfo`` or ``DDBStreamBatchInfo``: the shard, the first and last
  sequence numbers and arrival times, the size, the stream) and the ``condition``
  ``RetryAttemptsExhausted`` or ``RecordAgeExceeded``; without a destination it is
  dropped, and said on the server's output.

Sources: "Using AWS Lambda with Amazon Kinesis" and "Using AWS Lambda with Amazon
DynamoDB" (starting positions, batching, error handling, on-failure destinations,
partial batch responses) in the Lambda developer guide; the CreateEventSourceMapping API
reference (defaults and ranges).

Locally a retry waits :data:`RETRY_DELAY_S` (Lambda backs off on its own schedule), and
the shards of one mapping are read one after another (``ParallelizationFactor`` is
stored, never applied: a shard's order is kept either way).
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from localcloud.services.lambda_.destinations import service_of, to_queue, to_topic
from localcloud.services.lambda_.dispatch import PROBLEM_BACKOFF_S, dispatcher, problem_code
from localcloud.services.lambda_.runtime import Function, Invocation, Throttled, lookup
from localcloud.services.lambda_.stream_batches import (
    AGE_EXCEEDED,
    INFINITE,
    RETRY_EXHAUSTED,
    Batch,
    Settings,
    StreamRecord,
    StreamSource,
    failure_record,
    fit_payload,
    judge_response,
)
from localcloud.text import say

RETRY_DELAY_S: Final = 0.5
"""How long a shard waits before it retries a failed batch, locally (seconds)."""
THROTTLE_BACKOFF_S: Final = 1.0
"""How long a mapping waits after its function was throttled (seconds)."""


@dataclass
class Shard:
    """One shard as a mapping reads it."""

    shard_id: str
    position: str | None = None
    """The sequence number of the last record done (``None``: none yet, read from the
    starting position)."""
    work: list[Batch] = field(default_factory=list)
    """The batch in hand, as a stack: after a bisection its halves, the first on top."""
    batch_end: str | None = None
    """The last sequence number of the batch in hand: the position once it is done."""
    retry_at: float = 0.0
    """When (``time.monotonic()`` seconds) the batch on top may be tried again."""


@dataclass(frozen=True)
class Discarded:
    """A batch a mapping gave up on: why, how many records, where its on-failure record
    went (``None``: nowhere), and that record."""

    shard_id: str
    condition: str
    records: int
    destination: str | None
    record: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class PollOutcome:
    """One poll of a stream mapping: the invocations it made, each one's verdict, the
    batches it discarded, and whether it was throttled or holds a batch for a retry."""

    invocations: list[Invocation] = field(default_factory=list)
    verdicts: list[str] = field(default_factory=list)
    discarded: list[Discarded] = field(default_factory=list)
    throttled: bool = False
    retrying: bool = False

    @property
    def invocation(self) -> Invocation | None:
        """The last invocation (``None``: the stream had nothing new)."""
        return self.invocations[-1] if self.invocations else None


@dataclass
class StreamEventSourceMapping:
    """One stream event source mapping, polled as Lambda polls it.

    With ``lambda_client`` and ``uuid`` it is a mapping of the Lambda API and each poll
    first reads its configuration back (:meth:`refresh`), so ``update-event-source-
    mapping`` takes effect at once; without them (unit tests) ``settings`` are fixed.
    """

    source: StreamSource
    function: Function
    region: str
    settings: Settings
    starting_position: str = "TRIM_HORIZON"
    at_timestamp: float | None = None
    lambda_client: Any = None
    uuid: str | None = None
    deleted: bool = False
    shards: dict[str, Shard] = field(default_factory=dict)
    discarded: list[Discarded] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _stop: threading.Event = field(default_factory=threading.Event, repr=False)
    _idle_wait: float = field(default=0.2, repr=False)
    _last_problem: str | None = field(default=None, repr=False)
    _missing: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self._sync_shards(initial=True)

    @property
    def enabled(self) -> bool:
        return self.settings.enabled

    def refresh(self) -> None:
        """Read the mapping back from the Lambda API; a deleted mapping stops polling."""
        if self.lambda_client is None or self.uuid is None or self.deleted:
            return
        try:
            config = self.lambda_client.get_event_source_mapping(UUID=self.uuid)
        except self.lambda_client.exceptions.ResourceNotFoundException:
            self.deleted = True
            return
        self.settings = Settings.of(config)
        try:
            self.function = lookup(str(config["FunctionArn"]))
            self._missing = None
        except KeyError:
            self.settings = dataclasses.replace(self.settings, enabled=False)
            if self._missing != config["FunctionArn"]:
                self._missing = str(config["FunctionArn"])
                say(
                    f"[event source mapping {self.uuid}] {self._missing} is not a function the "
                    "local cloud runs (deleted?): its stream is not read"
                )

    def _sync_shards(self, *, initial: bool = False) -> None:
        """Every shard of the stream has its reader; at creation a ``LATEST`` mapping
        starts after each shard's newest record (a shard made later starts at its
        first record: all of it is newer than the mapping)."""
        for shard_id in self.source.shard_ids():
            if shard_id in self.shards:
                continue
            shard = Shard(shard_id)
            if initial and self.starting_position == "LATEST":
                shard.position = self.source.last_sequence_number(shard_id)
            self.shards[shard_id] = shard

    # --- one poll --------------------------------------------------------------------

    def poll_once(self, *, wait_for_window: bool = False) -> PollOutcome:
        """Give each shard's next batch (or the batch it is retrying) to the function
        once; with ``wait_for_window``, a shard whose batch is neither full nor past the
        batching window is left for a later poll. A disabled or deleted mapping reads
        nothing."""
        self.refresh()
        outcome = PollOutcome()
        if self.deleted or not self.enabled:
            return outcome
        with self._lock:
            self._sync_shards()
            now = time.monotonic()
            for shard in list(self.shards.values()):
                if shard.work and shard.retry_at > now:
                    outcome.retrying = True
                    continue
                if wait_for_window and not shard.work and not self._due(shard):
                    continue
                self._poll_shard(shard, outcome)
        return outcome

    def _due(self, shard: Shard) -> bool:
        """Whether the shard's waiting records make a batch now: a full one, or one whose
        oldest record has waited the batching window (no window: any record)."""
        settings = self.settings
        count, first = self.source.waiting(shard.shard_id, shard.position)
        if not count:
            return False
        if count >= settings.batch_size or settings.window_s <= 0 or first is None:
            return True
        return time.time() - first >= settings.window_s

    def _poll_shard(self, shard: Shard, outcome: PollOutcome) -> None:
        settings = self.settings
        if not shard.work:
            records = self.source.read(
                shard.shard_id,
                shard.position,
                settings.batch_size,
                self.at_timestamp if shard.position is None else None,
            )
            if not records:
                return
            fitted = fit_payload(records)
            shard.work = [Batch(fitted)]
            shard.batch_end = fitted[-1].sequence_number
        batch = shard.work[-1]
        if settings.max_age_s != INFINITE:
            oldest = time.time() - settings.max_age_s
            expired = [r for r in batch.records if r.arrived < oldest]
            if expired:
                batch.records = [r for r in batch.records if r.arrived >= oldest]
                old = Batch(expired, batch.retries, batch.invocations, batch.last)
                self._discard(shard, old, AGE_EXCEEDED, outcome)
                if not batch.records:
                    self._done(shard)
                    return
        try:
            invocation = self.function.invoke({"Records": [r.record for r in batch.records]})
        except Throttled as throttle:
            outcome.throttled = True
            outcome.verdicts.append(f"throttled ({throttle.reason}): the batch waits")
            return
        batch.invocations += 1
        batch.last = invocation
        outcome.invocations.append(invocation)
        if invocation.error:
            if settings.bisect and len(batch.records) > 1:
                middle = len(batch.records) // 2
                first, second = batch.records[:middle], batch.records[middle:]
                shard.work[-1:] = [
                    Batch(second, batch.retries, batch.invocations, invocation),
                    Batch(first, batch.retries, batch.invocations, invocation),
                ]
                outcome.verdicts.append(
                    f"function error {invocation.error_type}: bisected into "
                    f"{len(first)} and {len(second)}"
                )
                return
            outcome.verdicts.append(f"function error {invocation.error_type}: batch failed")
            self._retry(shard, batch, batch.records, outcome)
            return
        judgement = judge_response(
            invocation.payload,
            [r.sequence_number for r in batch.records],
            report_batch_item_failures=settings.report_batch_item_failures,
        )
        outcome.verdicts.append(judgement.verdict)
        if judgement.retry_from is None:
            self._done(shard)
        else:
            self._retry(shard, batch, batch.records[judgement.retry_from :], outcome)

    def _retry(
        self, shard: Shard, batch: Batch, records: list[StreamRecord], outcome: PollOutcome
    ) -> None:
        """Keep ``records`` of ``batch`` for another try, or discard them when the
        retries are spent."""
        batch.records = records
        batch.retries += 1
        limit = self.settings.max_retries
        if limit != INFINITE and batch.retries > limit:
            self._discard(shard, batch, RETRY_EXHAUSTED, outcome)
            self._done(shard)
            return
        shard.retry_at = time.monotonic() + RETRY_DELAY_S
        outcome.retrying = True

    def _done(self, shard: Shard) -> None:
        """The batch on top is finished; when none is left, the shard moves past the
        batch it read."""
        shard.work.pop()
        shard.retry_at = 0.0
        if not shard.work:
            shard.position = shard.batch_end

    def _discard(self, shard: Shard, batch: Batch, condition: str, outcome: PollOutcome) -> None:
        destination = self.settings.on_failure
        record = failure_record(
            self.function, self.source, shard.shard_id, batch, condition, now=time.time()
        )
        if destination:
            try:
                if service_of(destination) == "sns":
                    to_topic(destination, json.dumps(record))
                else:
                    to_queue(destination, json.dumps(record))
            except Exception as exc:  # noqa: BLE001 - said, and the shard goes on as Lambda's does
                say(
                    f"[event source mapping {self.uuid}] could not send a discarded batch to "
                    f"{destination}: {type(exc).__name__}: {exc}"
                )
        else:
            say(
                f"[event source mapping {self.uuid}] {len(batch.records)} record(s) of "
                f"{shard.shard_id} discarded ({condition}); no on-failure destination"
            )
        discarded = Discarded(shard.shard_id, condition, len(batch.records), destination, record)
        self.discarded.append(discarded)
        del self.discarded[:-200]
        outcome.discarded.append(discarded)

    # --- how far it is behind --------------------------------------------------------

    def caught_up(self) -> bool:
        """Whether every shard has processed (or discarded) all its records."""
        if self.deleted or not self.enabled:
            return True
        with self._lock:
            self._sync_shards()
            return all(
                not shard.work and self.source.waiting(shard.shard_id, shard.position)[0] == 0
                for shard in self.shards.values()
            )

    def ready(self) -> bool:
        """Whether a poll would invoke now: a shard holds a batch due for a retry, or
        has a full batch waiting, or records waiting past the batching window (no
        request made: the dispatcher asks every tick)."""
        now = time.monotonic()
        for shard in list(self.shards.values()):
            if shard.work:
                if shard.retry_at <= now:
                    return True
            elif self._due(shard):
                return True
        return False

    # --- background polling (server mode) --------------------------------------------

    def start(self, idle_wait_seconds: float = 0.2) -> None:
        """Poll from now on, on the account's one dispatcher (:mod:`.dispatch`)."""
        self._stop.clear()
        self._idle_wait = idle_wait_seconds
        dispatcher(idle_wait_seconds).add(self)

    def stop(self) -> None:
        """Poll no more (a poll in flight ends first, up to 10 s)."""
        self._stop.set()
        dispatcher().remove(self)

    def poll_in_dispatcher(self) -> float:
        """One background poll; the seconds to wait before the next."""
        if self._stop.is_set() or self.deleted:
            return PROBLEM_BACKOFF_S
        try:
            outcome = self.poll_once(wait_for_window=True)
        except Exception as exc:  # noqa: BLE001 - a poller must survive a bad poll
            self._report(exc)
            return PROBLEM_BACKOFF_S
        if self._last_problem is not None:
            say(f"[event source mapping {self.uuid}] polling again: {self.source.arn}")
            self._last_problem = None
        if outcome.throttled:
            return THROTTLE_BACKOFF_S
        if outcome.retrying and not outcome.invocations:
            return RETRY_DELAY_S
        return 0.0 if outcome.invocations else self._idle_wait

    def _report(self, exc: Exception) -> None:
        """Say once what keeps a poll from working (a deleted stream, say), not every poll."""
        code = problem_code(exc)
        if code == self._last_problem:
            return
        self._last_problem = code
        say(
            f"[event source mapping {self.uuid}] poll of {self.source.arn} failed: {exc!r}; "
            "retrying every 5 s, reported once until it recovers"
        )


def mapping_for(
    source: StreamSource,
    account: Any,
    config: Mapping[str, Any],
    function: Function,
) -> StreamEventSourceMapping:
    """The poller of a stream mapping (``config`` as ``GetEventSourceMapping`` returns
    it), for a source service's poller factory."""
    stamp = config.get("StartingPositionTimestamp")
    if isinstance(stamp, datetime.datetime):
        at: float | None = stamp.timestamp()
    else:
        at = float(stamp) if stamp is not None else None
    return StreamEventSourceMapping(
        source=source,
        function=function,
        region=account.region,
        settings=Settings.of(config),
        starting_position=str(config.get("StartingPosition") or "TRIM_HORIZON"),
        at_timestamp=at,
        lambda_client=account.client("lambda"),
        uuid=str(config["UUID"]),
    )


__all__ = [
    "RETRY_DELAY_S",
    "THROTTLE_BACKOFF_S",
    "Discarded",
    "PollOutcome",
    "Shard",
    "StreamEventSourceMapping",
    "mapping_for",
]
