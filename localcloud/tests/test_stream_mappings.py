"""The stream event source mapping's rules, without a server: a fake stream and a fake
function stand in for Kinesis (or DynamoDB) and Lambda, so each documented rule (partial
batch responses, bisection, retries, record age, starting position, batching window,
the 6 MB payload limit, the on-failure record) is checked on its own."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from localcloud.services.lambda_ import stream_mappings
from localcloud.services.lambda_.runtime import Invocation, Throttled
from localcloud.services.lambda_.stream_batches import (
    AGE_EXCEEDED,
    MAX_PAYLOAD_BYTES,
    RETRY_EXHAUSTED,
    Settings,
    StreamRecord,
    fit_payload,
    iso_time,
    judge_response,
)
from localcloud.services.lambda_.stream_mappings import StreamEventSourceMapping

ARN = "arn:aws:kinesis:us-east-1:123456789012:stream/readings"


@dataclass
class FakeStream:
    """A stream of one shard holding ``records`` (sequence numbers 1, 2, …)."""

    records: list[StreamRecord] = field(default_factory=list)
    arn: str = ARN
    batch_info_key: str = "KinesisBatchInfo"
    arrival_milliseconds: bool = True

    def put(self, body: dict[str, Any], *, arrived: float | None = None) -> str:
        number = str(len(self.records) + 1)
        record = {"kinesis": {"sequenceNumber": number, "data": json.dumps(body)}}
        self.records.append(StreamRecord(number, arrived or time.time(), record))
        return number

    def shard_ids(self) -> list[str]:
        return ["shardId-000000000000"]

    def last_sequence_number(self, shard_id: str) -> str | None:
        return self.records[-1].sequence_number if self.records else None

    def _after(self, after: str | None) -> list[StreamRecord]:
        return [r for r in self.records if after is None or int(r.sequence_number) > int(after)]

    def read(
        self, shard_id: str, after: str | None, limit: int, at_timestamp: float | None
    ) -> list[StreamRecord]:
        newer = self._after(after)
        if at_timestamp is not None:
            newer = [r for r in newer if r.arrived >= at_timestamp]
        return newer[:limit]

    def waiting(self, shard_id: str, after: str | None) -> tuple[int, float | None]:
        newer = self._after(after)
        return len(newer), (newer[0].arrived if newer else None)


@dataclass
class FakeFunction:
    """A function whose answer to each batch ``answer`` decides: a payload, or an
    exception (the runtime's error envelope). It keeps every batch it was given."""

    answer: Callable[[list[dict[str, Any]]], Any] = lambda bodies: None
    batches: list[list[dict[str, Any]]] = field(default_factory=list)
    arn: str = "arn:aws:lambda:us-east-1:123456789012:function:reader"
    version: str = "$LATEST"
    throttle: bool = False

    def invoke(self, event: dict[str, Any]) -> Invocation:
        if self.throttle:
            raise Throttled("ReservedFunctionConcurrentInvocationLimitExceeded")
        bodies = [json.loads(r["kinesis"]["data"]) for r in event["Records"]]
        self.batches.append(bodies)
        request_id = f"request-{len(self.batches)}"
        try:
            payload = self.answer(bodies)
        except ValueError as exc:
            error = {"errorType": "ValueError", "errorMessage": str(exc)}
            return Invocation("reader", request_id, error, True, [], 1.0)
        return Invocation("reader", request_id, payload, False, [], 1.0)

    def numbers(self) -> list[list[int]]:
        return [[body["n"] for body in batch] for batch in self.batches]


def mapping(
    stream: FakeStream,
    function: FakeFunction,
    *,
    starting_position: str = "TRIM_HORIZON",
    **settings: Any,
) -> StreamEventSourceMapping:
    return StreamEventSourceMapping(
        source=stream,
        function=function,  # type: ignore[arg-type]
        region="us-east-1",
        settings=Settings(**settings),
        starting_position=starting_position,
    )


def run(poller: StreamEventSourceMapping, polls: int = 50) -> None:
    """Poll until the stream is caught up (retries due at once)."""
    for _ in range(polls):
        for shard in poller.shards.values():
            shard.retry_at = 0.0
        poller.poll_once()
        if poller.caught_up():
            return
    raise AssertionError("the mapping did not catch up")


def poison(n: int) -> Callable[[list[dict[str, Any]]], Any]:
    def answer(bodies: list[dict[str, Any]]) -> Any:
        if any(body["n"] == n for body in bodies):
            raise ValueError(f"reading {n} is poison")
        return None

    return answer


# --- the response ------------------------------------------------------------------------

NUMBERS = ["11", "12", "13"]


@pytest.mark.parametrize(
    "response",
    [None, {}, "", {"batchItemFailures": None}, {"batchItemFailures": []}],
    ids=["null", "empty object", "empty string", "null list", "empty list"],
)
def test_an_empty_response_or_failure_list_is_a_whole_success(response: Any) -> None:
    judged = judge_response(response, NUMBERS, report_batch_item_failures=True)
    assert judged.retry_from is None


def test_the_lowest_reported_sequence_number_is_the_checkpoint() -> None:
    response = {"batchItemFailures": [{"itemIdentifier": "13"}, {"itemIdentifier": "12"}]}
    judged = judge_response(response, NUMBERS, report_batch_item_failures=True)
    assert judged.retry_from == 1  # 12 and everything after it is retried


@pytest.mark.parametrize(
    "response",
    [
        {"batchItemFailures": [{"itemIdentifier": ""}]},
        {"batchItemFailures": [{"itemIdentifier": None}]},
        {"batchItemFailures": [{"identifier": "12"}]},
        {"batchItemFailures": [{"itemIdentifier": "99"}]},
        {"batchItemFailures": [{"itemIdentifier": 12}]},
        {"batchItemFailures": "12"},
        ["12"],
    ],
    ids=["empty id", "null id", "wrong key", "not in batch", "a number", "not a list", "a list"],
)
def test_a_malformed_response_fails_the_whole_batch(response: Any) -> None:
    judged = judge_response(response, NUMBERS, report_batch_item_failures=True)
    assert judged.retry_from == 0


def test_without_report_batch_item_failures_a_listed_failure_is_ignored() -> None:
    response = {"batchItemFailures": [{"itemIdentifier": "12"}]}
    assert judge_response(response, NUMBERS, report_batch_item_failures=False).retry_from is None


def test_a_batch_is_cut_to_lambdas_six_mb_payload() -> None:
    big = "x" * (2 * 1024 * 1024)
    records = [StreamRecord(str(i), 0.0, {"data": big}) for i in range(5)]
    fitted = fit_payload(records)
    assert len(fitted) == 2
    event = json.dumps({"Records": [r.record for r in fitted]}).encode()
    assert len(event) <= MAX_PAYLOAD_BYTES
    huge = [StreamRecord("1", 0.0, {"data": "x" * (7 * 1024 * 1024)})]
    assert fit_payload(huge) == huge  # one record is always sent (Kinesis caps it at 1 MB)


# --- batches, retries, bisection --------------------------------------------------------


def test_records_arrive_in_order_in_batches_of_the_batch_size() -> None:
    stream, function = FakeStream(), FakeFunction()
    for n in range(25):
        stream.put({"n": n})
    run(mapping(stream, function, batch_size=10))
    assert function.numbers() == [list(range(10)), list(range(10, 20)), list(range(20, 25))]


def test_a_failing_batch_is_retried_then_discarded_and_the_shard_moves_on() -> None:
    stream, function = FakeStream(), FakeFunction(answer=poison(1))
    for n in range(4):
        stream.put({"n": n})
    poller = mapping(stream, function, batch_size=2, max_retries=2)
    run(poller)
    assert function.numbers() == [[0, 1], [0, 1], [0, 1], [2, 3]]
    (discarded,) = poller.discarded
    assert (discarded.condition, discarded.records) == (RETRY_EXHAUSTED, 2)


def test_with_infinite_retries_a_failing_batch_holds_its_shard_until_it_succeeds() -> None:
    broken = {"yes": True}

    def answer(bodies: list[dict[str, Any]]) -> Any:
        if broken["yes"]:
            raise ValueError("down")
        return None

    stream, function = FakeStream(), FakeFunction(answer=answer)
    for n in range(3):
        stream.put({"n": n})
    poller = mapping(stream, function, batch_size=2)
    for _ in range(5):
        for shard in poller.shards.values():
            shard.retry_at = 0.0
        poller.poll_once()
    assert function.numbers() == [[0, 1]] * 5  # record 2 waits behind the failing batch
    assert not poller.discarded
    broken["yes"] = False
    run(poller)
    assert function.numbers()[5:] == [[0, 1], [2]]


def test_bisection_isolates_the_poison_record_without_spending_retries() -> None:
    stream, function = FakeStream(), FakeFunction(answer=poison(5))
    for n in range(8):
        stream.put({"n": n})
    poller = mapping(stream, function, batch_size=8, bisect=True, max_retries=0)
    run(poller)
    assert function.numbers() == [
        list(range(8)),
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [4, 5],
        [4],
        [5],
        [6, 7],
    ]
    (discarded,) = poller.discarded
    assert (discarded.condition, discarded.records) == (RETRY_EXHAUSTED, 1)


def test_a_partial_batch_response_retries_from_the_checkpoint_only() -> None:
    def answer(bodies: list[dict[str, Any]]) -> Any:
        failed = [b for b in bodies if b["n"] in (2, 4)]
        return {"batchItemFailures": [{"itemIdentifier": str(b["n"] + 1)} for b in failed]}

    stream, function = FakeStream(), FakeFunction(answer=answer)
    for n in range(6):
        stream.put({"n": n})
    poller = mapping(stream, function, batch_size=6, report_batch_item_failures=True)
    poller.poll_once()
    poller.shards["shardId-000000000000"].retry_at = 0.0
    poller.poll_once()
    assert function.numbers() == [list(range(6)), [2, 3, 4, 5]]


def test_a_partial_failure_counts_as_a_retry_and_the_rest_is_discarded_when_spent() -> None:
    stream = FakeStream()
    function = FakeFunction(answer=lambda bodies: {"batchItemFailures": [{"itemIdentifier": "3"}]})
    for n in range(4):
        stream.put({"n": n})
    poller = mapping(stream, function, batch_size=4, report_batch_item_failures=True, max_retries=1)
    run(poller)
    assert function.numbers() == [[0, 1, 2, 3], [2, 3]]
    (discarded,) = poller.discarded
    assert discarded.records == 2  # records 3 and 4 (n 2 and 3), from the checkpoint on


def test_a_malformed_response_fails_the_whole_batch_without_bisecting() -> None:
    stream = FakeStream()
    function = FakeFunction(answer=lambda bodies: {"batchItemFailures": [{"itemIdentifier": ""}]})
    for n in range(2):
        stream.put({"n": n})
    poller = mapping(stream, function, report_batch_item_failures=True, bisect=True, max_retries=1)
    run(poller)
    assert function.numbers() == [[0, 1], [0, 1]]
    assert [d.records for d in poller.discarded] == [2]


def test_records_older_than_the_maximum_age_are_discarded_before_any_try() -> None:
    stream, function = FakeStream(), FakeFunction()
    stream.put({"n": 0}, arrived=time.time() - 120)
    stream.put({"n": 1}, arrived=time.time() - 90)
    stream.put({"n": 2})
    poller = mapping(stream, function, max_age_s=60)
    run(poller)
    assert function.numbers() == [[2]]
    (discarded,) = poller.discarded
    assert (discarded.condition, discarded.records) == (AGE_EXCEEDED, 2)


def test_a_throttled_batch_waits_without_spending_a_retry() -> None:
    stream, function = FakeStream(), FakeFunction(throttle=True)
    stream.put({"n": 0})
    poller = mapping(stream, function, max_retries=0)
    outcome = poller.poll_once()
    assert outcome.throttled
    assert not poller.discarded
    function.throttle = False
    run(poller)
    assert function.numbers() == [[0]]


# --- where it starts, when it invokes ---------------------------------------------------


def test_latest_starts_after_the_records_there_when_the_mapping_was_made() -> None:
    stream, function = FakeStream(), FakeFunction()
    stream.put({"n": 0})
    poller = mapping(stream, function, starting_position="LATEST")
    stream.put({"n": 1})
    run(poller)
    assert function.numbers() == [[1]]


def test_trim_horizon_starts_at_the_oldest_record() -> None:
    stream, function = FakeStream(), FakeFunction()
    stream.put({"n": 0})
    poller = mapping(stream, function, starting_position="TRIM_HORIZON")
    run(poller)
    assert function.numbers() == [[0]]


def test_the_batching_window_waits_for_a_full_batch_or_its_oldest_record() -> None:
    stream, function = FakeStream(), FakeFunction()
    poller = mapping(stream, function, batch_size=3, window_s=5)
    stream.put({"n": 0})
    assert not poller.ready()  # one record, just arrived: wait
    stream.put({"n": 1})
    stream.put({"n": 2})
    assert poller.ready()  # a full batch goes at once
    late = FakeStream()
    late.put({"n": 0}, arrived=time.time() - 6)
    assert mapping(late, FakeFunction(), batch_size=3, window_s=5).ready()
    assert mapping(FakeStream([*late.records]), FakeFunction(), batch_size=3).ready()


def test_a_disabled_mapping_reads_nothing() -> None:
    stream, function = FakeStream(), FakeFunction()
    stream.put({"n": 0})
    poller = mapping(stream, function, enabled=False)
    assert poller.poll_once().invocation is None
    assert function.batches == []


# --- the on-failure record ---------------------------------------------------------------

FAILED_QUEUE = "arn:aws:sqs:us-east-1:123456789012:failed-readings"


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, dict[str, Any]]]:
    """What the mapping sends to its on-failure queue, instead of sending it."""
    found: list[tuple[str, dict[str, Any]]] = []
    monkeypatch.setattr(
        stream_mappings, "to_queue", lambda arn, body: found.append((arn, json.loads(body)))
    )
    return found


def test_a_discarded_batch_reaches_the_queue_as_lambdas_invocation_record(
    sent: list[tuple[str, dict[str, Any]]],
) -> None:
    stream, function = FakeStream(), FakeFunction(answer=poison(0))
    first = stream.put({"n": 0}, arrived=1_573_690_399.668)
    last = stream.put({"n": 1}, arrived=1_573_690_399.715)
    poller = mapping(stream, function, max_retries=1, on_failure=FAILED_QUEUE)
    run(poller)
    ((destination, record),) = sent
    assert destination == FAILED_QUEUE
    assert record["requestContext"] == {
        "requestId": "request-2",  # the last invocation's
        "functionArn": function.arn,
        "condition": RETRY_EXHAUSTED,
        "approximateInvokeCount": 2,
    }
    assert record["responseContext"] == {
        "statusCode": 200,
        "executedVersion": "$LATEST",
        "functionError": "Unhandled",
    }
    assert record["version"] == "1.0"
    assert record["timestamp"].endswith("Z")
    assert record["KinesisBatchInfo"] == {
        "shardId": "shardId-000000000000",
        "startSequenceNumber": first,
        "endSequenceNumber": last,
        "approximateArrivalOfFirstRecord": "2019-11-14T00:13:19.668Z",
        "approximateArrivalOfLastRecord": "2019-11-14T00:13:19.715Z",
        "batchSize": 2,
        "streamArn": ARN,
    }
    assert poller.shards["shardId-000000000000"].position == last


def test_records_too_old_to_try_are_discarded_with_no_response_context(
    sent: list[tuple[str, dict[str, Any]]],
) -> None:
    stream = FakeStream(arrival_milliseconds=False, batch_info_key="DDBStreamBatchInfo")
    stream.put({"n": 0}, arrived=time.time() - 61)
    run(mapping(stream, FakeFunction(), max_age_s=60, on_failure=FAILED_QUEUE))
    ((_, record),) = sent
    assert record["requestContext"]["condition"] == AGE_EXCEEDED
    assert record["requestContext"]["approximateInvokeCount"] == 0
    assert "responseContext" not in record  # never invoked
    arrival = record["DDBStreamBatchInfo"]["approximateArrivalOfFirstRecord"]
    assert arrival == iso_time(stream.records[0].arrived, milliseconds=False)
    assert len(arrival) == len("2019-11-14T00:13:19Z")  # DynamoDB's are to the second
