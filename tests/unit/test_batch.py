"""The queue worker's batch mechanics (order_guard.batch): the partial batch response and
the key-ordered concurrency, independent of the write."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from order_guard.batch import batch_records, process_batch_by_key
from order_guard.exceptions import InvalidBatchEvent


def record(message_id: str, order_id: str | None) -> dict[str, Any]:
    body = json.dumps({"id": order_id}) if order_id is not None else "not json"
    return {"messageId": message_id, "body": body}


@pytest.mark.parametrize(
    ("event", "raised"),
    [
        ({}, InvalidBatchEvent),
        ({"Records": []}, InvalidBatchEvent),
        ({"Records": "x"}, InvalidBatchEvent),
        ([], InvalidBatchEvent),
        (None, InvalidBatchEvent),
    ],
)
def test_an_event_without_records_is_refused_by_name(event: Any, raised: type[Exception]) -> None:
    with pytest.raises(raised, match="an SQS event is an object with a non-empty Records list"):
        batch_records(event)


def test_failures_are_listed_in_batch_order_and_every_record_runs() -> None:
    records = [record(f"m{n}", f"order-{n % 3}") for n in range(9)]
    ran: list[str] = []
    lock = threading.Lock()

    def handler(raw: Mapping[str, Any]) -> None:
        with lock:
            ran.append(raw["messageId"])
        if raw["messageId"] in ("m7", "m2", "m4"):
            raise ValueError("listed")

    response = process_batch_by_key({"Records": records}, handler, concurrency=3)

    assert response == {"batchItemFailures": [{"itemIdentifier": m} for m in ("m2", "m4", "m7")]}
    assert sorted(ran) == sorted(r["messageId"] for r in records)


def test_records_of_one_key_run_in_batch_order_one_at_a_time() -> None:
    records = [record(f"m{n}", "same" if n % 2 else None) for n in range(8)]
    seen: list[str] = []
    overlapped: list[str] = []
    running = threading.Semaphore(1)

    def handler(raw: Mapping[str, Any]) -> None:
        if "same" in raw["body"]:
            if not running.acquire(blocking=False):
                overlapped.append(raw["messageId"])
                return
            time.sleep(0.01)  # long enough for a concurrent record of the key to show
            seen.append(raw["messageId"])
            running.release()

    assert process_batch_by_key({"Records": records}, handler, concurrency=4) == {
        "batchItemFailures": []
    }
    assert overlapped == []
    assert seen == ["m1", "m3", "m5", "m7"]


def test_a_failure_mid_group_still_runs_the_keys_later_records() -> None:
    records = [record("a1", "a"), record("a2", "a"), record("a3", "a")]
    ran: list[str] = []

    def handler(raw: Mapping[str, Any]) -> None:
        ran.append(raw["messageId"])
        if raw["messageId"] == "a2":
            raise ValueError("conflict")

    response = process_batch_by_key({"Records": records}, handler, concurrency=4)

    assert ran == ["a1", "a2", "a3"]
    assert response == {"batchItemFailures": [{"itemIdentifier": "a2"}]}


def test_a_base_exception_is_not_swallowed_as_a_record_failure() -> None:
    def handler(raw: Mapping[str, Any]) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        process_batch_by_key(
            {"Records": [record("a", "x"), record("b", "y")]}, handler, concurrency=2
        )


def test_every_record_failing_is_still_a_partial_response() -> None:
    def handler(raw: Mapping[str, Any]) -> None:
        raise RuntimeError("all fail")

    response = process_batch_by_key(
        {"Records": [record("a", "x"), record("b", "y")]}, handler, concurrency=2
    )
    assert response == {"batchItemFailures": [{"itemIdentifier": "a"}, {"itemIdentifier": "b"}]}


def test_a_failed_record_without_a_message_id_fails_the_invocation_after_the_others_ran() -> None:
    ran: list[str] = []
    broken = {"body": "no id"}

    def handler(raw: Mapping[str, Any]) -> None:
        if raw is broken:
            raise ValueError("cannot be named")
        ran.append(raw["messageId"])

    with pytest.raises(KeyError, match="messageId"):
        process_batch_by_key({"Records": [record("good", "g"), broken]}, handler, concurrency=2)
    assert ran == ["good"]


def test_the_environments_threads_serve_every_batch_and_no_more_are_started() -> None:
    used: set[str] = set()
    lock = threading.Lock()

    def handler(raw: Mapping[str, Any]) -> None:
        time.sleep(0.002)
        with lock:
            used.add(threading.current_thread().name)

    with ThreadPoolExecutor(max_workers=3, thread_name_prefix="env") as threads:
        for batch in range(4):
            records = [record(f"{batch}-{n}", f"{batch}-{n}") for n in range(6)]
            response = process_batch_by_key(
                {"Records": records}, handler, concurrency=3, threads=threads
            )
            assert response == {"batchItemFailures": []}

    assert 1 < len(used) <= 3
    assert all(name.startswith("env") for name in used)


def test_every_group_has_ended_when_a_base_exception_comes_out() -> None:
    ended: list[str] = []

    def handler(raw: Mapping[str, Any]) -> None:
        if raw["messageId"] == "a":
            raise KeyboardInterrupt
        time.sleep(0.05)
        ended.append(raw["messageId"])

    threads = ThreadPoolExecutor(max_workers=2)
    try:
        with pytest.raises(KeyboardInterrupt):
            process_batch_by_key(
                {"Records": [record("a", "x"), record("b", "y")]},
                handler,
                concurrency=2,
                threads=threads,
            )
        assert ended == ["b"]  # before the threads are shut down: the call itself waited
    finally:
        threads.shutdown()


class RefusingThirdGroup(ThreadPoolExecutor):
    """Takes two groups, then refuses, as a pool whose next thread cannot start."""

    def __init__(self) -> None:
        super().__init__(max_workers=2)
        self.taken = 0

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        self.taken += 1
        if self.taken == 3:
            raise RuntimeError("can't start new thread")
        return super().submit(fn, *args, **kwargs)


def test_when_the_threads_refuse_a_group_none_runs_after_the_call() -> None:
    ran: list[str] = []

    def handler(raw: Mapping[str, Any]) -> None:
        time.sleep(0.02)
        ran.append(raw["messageId"])

    threads = RefusingThirdGroup()
    try:
        with pytest.raises(RuntimeError, match="can't start new thread"):
            process_batch_by_key(
                {"Records": [record(k, k) for k in ("a", "b", "c", "d")]},
                handler,
                concurrency=4,
                threads=threads,
            )
        at_raise = sorted(ran)
        time.sleep(0.1)  # anything still queued or running would finish here
        assert sorted(ran) == at_raise
        assert set(ran) <= {"a", "b"}  # the refused and later groups never ran
    finally:
        threads.shutdown()
