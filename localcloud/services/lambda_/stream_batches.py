"""The pure parts of Lambda's stream event source mappings (Kinesis, DynamoDB Streams),
tested without a server: a stream's record as the function receives it and what a
stream service gives a mapping (:class:`StreamSource`), a mapping's settings, the
judgement of a response as a stream batch's, the 6 MB payload cut, and the record an
on-failure destination receives for a discarded batch.

Sources: "Configuring partial batch response with Kinesis Data Streams and Lambda"
(success and failure conditions), "Retain discarded batch records for a Kinesis Data
Streams event source in Lambda" (the invocation record), the CreateEventSourceMapping
API reference (defaults).
"""

from __future__ import annotations

import datetime
import json
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from localcloud.services.lambda_.destinations import response_context
from localcloud.services.lambda_.runtime import Function, Invocation

MAX_PAYLOAD_BYTES: Final = 6 * 1024 * 1024
"""Lambda's limit on a synchronous invocation's request payload (6 MB)."""
DEFAULT_BATCH_SIZE: Final = 100
"""``BatchSize`` of a stream mapping that names none (the API reference's default)."""
INFINITE: Final = -1
"""``MaximumRetryAttempts`` or ``MaximumRecordAgeInSeconds`` of -1: no limit."""
RETRY_EXHAUSTED: Final = "RetryAttemptsExhausted"
"""The on-failure record's ``condition`` for a batch whose retries are spent."""
AGE_EXCEEDED: Final = "RecordAgeExceeded"
"""The on-failure record's ``condition`` for records older than the maximum age."""


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
    arrival_milliseconds: bool
    """Whether that record writes arrival times with milliseconds (Kinesis) or to the
    second (DynamoDB)."""

    def shard_ids(self) -> list[str]:
        """The stream's shards, oldest first.

        Raises:
            botocore's ``ClientError``: the stream is gone (``ResourceNotFoundException``).
        """
        ...

    def last_sequence_number(self, shard_id: str) -> str | None:
        """The sequence number of the shard's newest record now (``None``: it has none)."""
        ...

    def read(
        self, shard_id: str, after: str | None, limit: int, at_timestamp: float | None
    ) -> list[StreamRecord]:
        """Up to ``limit`` records of the shard after the sequence number ``after`` (from
        the oldest one kept, or from ``at_timestamp`` (epoch seconds), when ``after`` is
        ``None``).

        Raises:
            botocore's ``ClientError``: the stream or shard is gone.
        """
        ...

    def waiting(self, shard_id: str, after: str | None) -> tuple[int, float | None]:
        """How many records follow ``after`` and when the first of them arrived (epoch
        seconds), read from moto's memory without a request and without walking the
        shard (the dispatcher asks every tick); ``(1, None)`` when the stream is gone, so
        that a poll says so."""
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
    """Records being tried together, with the retries and invocations they have had and
    the last invocation's outcome (``None`` before the first)."""

    records: list[StreamRecord]
    retries: int = 0
    invocations: int = 0
    last: Invocation | None = None


def iso_time(epoch_s: float, *, milliseconds: bool = True) -> str:
    """``2019-11-14T00:13:49.717Z``, or ``…T00:13:49Z`` without ``milliseconds`` (UTC, as
    Lambda writes its records' times)."""
    moment = datetime.datetime.fromtimestamp(epoch_s, datetime.UTC)
    text = moment.isoformat(timespec="milliseconds" if milliseconds else "seconds")
    return text.replace("+00:00", "Z")


def failure_record(
    function: Function,
    source: StreamSource,
    shard_id: str,
    batch: Batch,
    condition: str,
    *,
    now: float,
) -> dict[str, Any]:
    """The record an on-failure destination receives for a discarded ``batch`` of
    ``source``'s shard ``shard_id`` (``now``: epoch seconds): the request context
    (``condition``: :data:`RETRY_EXHAUSTED` or :data:`AGE_EXCEEDED`,
    ``approximateInvokeCount``), the last invocation's response context (none when it was
    never invoked), and the source's batch information (arrival times in milliseconds for
    Kinesis, in seconds for DynamoDB, as AWS's examples write them). Source: "Retain
    discarded batch records for a Kinesis Data Streams event source in Lambda" and its
    DynamoDB counterpart (the example invocation records)."""
    records = batch.records
    last = batch.last
    record: dict[str, Any] = {
        "requestContext": {
            "requestId": last.request_id if last is not None else str(uuid.uuid4()),
            "functionArn": function.arn,
            "condition": condition,
            "approximateInvokeCount": batch.invocations,
        },
    }
    if last is not None:
        record["responseContext"] = response_context(last, function.version)
    record["version"] = "1.0"
    record["timestamp"] = iso_time(now)
    precise = source.arrival_milliseconds
    record[source.batch_info_key] = {
        "shardId": shard_id,
        "startSequenceNumber": records[0].sequence_number,
        "endSequenceNumber": records[-1].sequence_number,
        "approximateArrivalOfFirstRecord": iso_time(records[0].arrived, milliseconds=precise),
        "approximateArrivalOfLastRecord": iso_time(records[-1].arrived, milliseconds=precise),
        "batchSize": len(records),
        "streamArn": source.arn,
    }
    return record


__all__ = [
    "AGE_EXCEEDED",
    "DEFAULT_BATCH_SIZE",
    "INFINITE",
    "MAX_PAYLOAD_BYTES",
    "RETRY_EXHAUSTED",
    "Batch",
    "Judgement",
    "Settings",
    "StreamRecord",
    "StreamSource",
    "failure_record",
    "fit_payload",
    "iso_time",
    "judge_response",
]
