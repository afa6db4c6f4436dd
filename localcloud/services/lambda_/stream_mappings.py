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
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from localcloud.services.lambda_.destinations import service_of, to_queue, to_topic
from localcloud.services.lambda_.dispatch import PROBLEM_BACKOFF_S, dispatcher
from localcloud.services.lambda_.runtime import Function, Invocation, Throttled, lookup
from localcloud.text import say

MAX_PAYLOAD_BYTES: Final = 6 * 1024 * 1024
"""Lambda's limit on a synchronous invocation's request payload (6 MB)."""
DEFAULT_BATCH_SIZE: Final = 100
"""``BatchSize`` of a stream mapping that names none (the API reference's default)."""
RETRY_DELAY_S: Final = 0.5
"""How long a shard waits before it retries a failed batch, locally (seconds)."""
THROTTLE_BACKOFF_S: Final = 1.0
"""How long a mapping waits after its function was throttled (seconds)."""
INFINITE: Final = -1
"""``MaximumRetryAttempts`` or ``MaximumRecordAgeInSeconds`` of -1: no limit."""
RETRY_EXHAUSTED: Final = "RetryAttemptsExhausted"
AGE_EXCEEDED: Final = "RecordAgeExceeded"


@dataclass(frozen=True)
class StreamRecord:
    """One record of a shard: its sequence number, when it reached the stream (epoch
    seconds), and the record as the function receives it (the source's shape, with
    ``eventSourceARN`` and ``awsRegion``)."""

    sequence_number: str
    arrived: float
    record: Mapping[str, Any]


class StreamSource(Protocol):
    """A stream, as its service gives it to a mapping."""

    arn: str
    batch_info_key: str
    """Where an on-failure record says which records it is about: ``KinesisBatchInfo``
    or ``DDBStreamBatchInfo``."""

    def shard_ids(self) -> list[str]:
        """The stream's shards, oldest first."""
        ...

    def last_sequence_number(self, shard_id: str) -> str | None:
        """The sequence number of the shard's newest record now (``None``: it has none)."""
        ...

    def read(
        self, shard_id: str, after: str | None, limit: int, at_timestamp: float | None
    ) -> list[StreamRecord]:
        """Up to ``limit`` records of the shard after the sequence number ``after`` (from
        the oldest one kept, or from ``at_timestamp``, when ``after`` is ``None``)."""
        ...

    def waiting(self, shard_id: str, after: str | None) -> tuple[int, float | None]:
        """How many records follow ``after`` and when the first of them arrived (epoch
        seconds), read without a request (the dispatcher asks often)."""
        ...


@dataclass(frozen=True)
class Settings:
    """A stream mapping's configuration, as ``GetEventSourceMapping`` returns it."""

    batch_size: int = DEFAULT_BATCH_SIZE
    window_s: int = 0
    bisect: bool = False
    max_retries: int = INFINITE
    max_age_s: int = INFINITE
    report_batch_item_failures: bool = False
    on_failure: str | None = None
    enabled: bool = True

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> Settings:
        destination = ((config.get("DestinationConfig") or {}).get("OnFailure") or {}).get(
            "Destination"
        )
        return cls(
            batch_size=int(config.get("BatchSize") or DEFAULT_BATCH_SIZE),
            window_s=int(config.get("MaximumBatchingWindowInSeconds") or 0),
            bisect=bool(config.get("BisectBatchOnFunctionError") or False),
            max_retries=int(_given(config.get("MaximumRetryAttempts"), INFINITE)),
            max_age_s=int(_given(config.get("MaximumRecordAgeInSeconds"), INFINITE)),
            report_batch_item_failures="ReportBatchItemFailures"
            in (config.get("FunctionResponseTypes") or []),
            on_failure=str(destination) if destination else None,
            enabled=str(config.get("State", "Enabled")) in ("Enabled", "Enabling", "Updating"),
        )


def _given(value: Any, default: int) -> Any:
    return default if value is None else value


@dataclass(frozen=True)
class Judgement:
    """What a response says of a batch: all done, retry from ``retry_from`` (an index
    into the batch), or a failure of the whole batch (``retry_from`` 0)."""

    retry_from: int | None
    verdict: str


def judge_response(
    response: Any, sequence_numbers: Sequence[str], *, report_batch_item_failures: bool
) -> Judgement:
    """A successful invocation's response, judged as Lambda judges a stream batch's.

    Without ``ReportBatchItemFailures`` any response is a success. With it: a null or empty
    response, or a null or empty ``batchItemFailures``, is a success; a list of
    ``itemIdentifier`` s (sequence numbers of the batch) retries from the lowest of them
    (the checkpoint); an identifier that is empty, null, not a string or not in the batch,
    or any malformed response, fails the whole batch. Source: "Configuring partial batch
    response with Kinesis Data Streams and Lambda" (success and failure conditions).
    """
    if not report_batch_item_failures:
        return Judgement(None, "success")
    if response is None or response == {} or response == "":
        return Judgement(None, "empty response: whole batch succeeded")
    if not isinstance(response, Mapping):
        return Judgement(0, "malformed response (not an object): whole batch failed")
    failures = response.get("batchItemFailures")
    if failures is None or failures == []:
        return Judgement(None, "no batch item failures: whole batch succeeded")
    if not isinstance(failures, list):
        return Judgement(0, "malformed batchItemFailures (not a list): whole batch failed")
    position = {number: index for index, number in enumerate(sequence_numbers)}
    lowest = len(sequence_numbers)
    for failure in failures:
        identifier = failure.get("itemIdentifier") if isinstance(failure, Mapping) else None
        if not isinstance(identifier, str) or identifier not in position:
            return Judgement(0, f"invalid itemIdentifier {identifier!r}: whole batch failed")
        lowest = min(lowest, position[identifier])
    retried = len(sequence_numbers) - lowest
    return Judgement(lowest, f"checkpoint at {sequence_numbers[lowest]}: {retried} retried")


def fit_payload(
    records: Sequence[StreamRecord], limit: int = MAX_PAYLOAD_BYTES
) -> list[StreamRecord]:
    """The longest run of ``records`` from the first whose event ``{"Records": [...]}``
    stays within Lambda's request payload limit (at least the first record)."""
    size = len(b'{"Records": []}')
    fitted: list[StreamRecord] = []
    for record in records:
        size += len(json.dumps(record.record).encode()) + 2
        if fitted and size > limit:
            break
        fitted.append(record)
    return fitted


@dataclass
class Batch:
    """Records being tried together, with the retries and invocations they have had."""

    records: list[StreamRecord]
    retries: int = 0
    invocations: int = 0
    last: Invocation | None = None


@dataclass
class Shard:
    """One shard as a mapping reads it: the last sequence number done (``None``: nothing
    yet, read from the starting position) and the batches of the batch in hand (a stack:
    bisected halves, the first on top)."""

    shard_id: str
    position: str | None = None
    work: list[Batch] = field(default_factory=list)
    batch_end: str | None = None
    retry_at: float = 0.0


@dataclass(frozen=True)
class Discarded:
    """A batch a mapping gave up on: why, how many records, where its record went."""

    shard_id: str
    condition: str
    records: int
    destination: str | None


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
        except KeyError:
            self.settings = dataclasses.replace(self.settings, enabled=False)

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
        record = failure_record(self, shard.shard_id, batch, condition)
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
        discarded = Discarded(shard.shard_id, condition, len(batch.records), destination)
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
        code = getattr(exc, "response", {}).get("Error", {}).get("Code", type(exc).__name__)
        if code == self._last_problem:
            return
        self._last_problem = code
        say(
            f"[event source mapping {self.uuid}] poll of {self.source.arn} failed: {exc!r}; "
            "retrying every 5 s, reported once until it recovers"
        )


def iso_time(epoch_s: float, *, milliseconds: bool = True) -> str:
    """``2019-11-14T00:13:49.717Z`` (UTC, as Lambda writes its records' times)."""
    moment = datetime.datetime.fromtimestamp(epoch_s, datetime.UTC)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    return f"{text}.{moment.microsecond // 1000:03d}Z" if milliseconds else f"{text}Z"


def failure_record(
    mapping: StreamEventSourceMapping, shard_id: str, batch: Batch, condition: str
) -> dict[str, Any]:
    """The record an on-failure destination receives for a discarded batch: the request
    context (``condition``, ``approximateInvokeCount``), the last invocation's response
    context, and the source's batch information. Source: "Retain discarded batch records
    for a Kinesis Data Streams event source in Lambda" (the example invocation record)."""
    records = batch.records
    last = batch.last
    record: dict[str, Any] = {
        "requestContext": {
            "requestId": last.request_id if last is not None else str(uuid.uuid4()),
            "functionArn": mapping.function.arn,
            "condition": condition,
            "approximateInvokeCount": batch.invocations,
        },
    }
    if last is not None:
        response: dict[str, Any] = {"statusCode": 200, "executedVersion": mapping.function.version}
        if last.error:
            response["functionError"] = "Unhandled"
        record["responseContext"] = response
    record["version"] = "1.0"
    record["timestamp"] = iso_time(time.time())
    record[mapping.source.batch_info_key] = {
        "shardId": shard_id,
        "startSequenceNumber": records[0].sequence_number,
        "endSequenceNumber": records[-1].sequence_number,
        "approximateArrivalOfFirstRecord": iso_time(records[0].arrived),
        "approximateArrivalOfLastRecord": iso_time(records[-1].arrived),
        "batchSize": len(records),
        "streamArn": mapping.source.arn,
    }
    return record


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
    "AGE_EXCEEDED",
    "DEFAULT_BATCH_SIZE",
    "MAX_PAYLOAD_BYTES",
    "RETRY_DELAY_S",
    "RETRY_EXHAUSTED",
    "Batch",
    "Discarded",
    "Judgement",
    "PollOutcome",
    "Settings",
    "Shard",
    "StreamEventSourceMapping",
    "StreamRecord",
    "StreamSource",
    "failure_record",
    "fit_payload",
    "iso_time",
    "judge_response",
    "mapping_for",
]
