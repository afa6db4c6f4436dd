"""Bad input loses nothing: every catalogue case, on both workers.

For each invalid input: a clear error naming the field and the rule, one RESULT log
line, no DynamoDB write attempted, the record reported as a batch item failure, and the
good records of its batch unaffected. The workflow worker raises InvalidOrder for the
same inputs. (That failed records reach the DLQ after maxReceiveCount is shown in
tests/e2e/test_bad_input_end_to_end.py.)
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from order_guard import queue_worker, workflow_worker
from order_guard.exceptions import InvalidBatchEvent, InvalidOrder
from tests.support.aws import LambdaContext, Tables, scan_orders, sqs_record
from tests.support.catalogue import ACCEPTED, INVALID, SAME_ORDER_SPELLINGS, Case
from tests.support.logs import LogCapture


class CallCounter:
    """Counts the DynamoDB operations a client sends, by name."""

    def __init__(self, client: Any) -> None:
        self.calls: list[str] = []
        client.meta.events.register("before-call.dynamodb", self._count)

    def _count(self, model: Any, **_: Any) -> None:
        self.calls.append(model.name)


@pytest.fixture
def calls(dynamodb: Any) -> CallCounter:
    return CallCounter(dynamodb)


def test_the_catalogue_has_at_least_forty_hostile_inputs() -> None:
    assert len(INVALID) >= 40
    assert len({case.name for case in INVALID + ACCEPTED}) == len(INVALID + ACCEPTED)


@pytest.mark.parametrize("case", INVALID, ids=lambda case: case.name)
def test_queue_worker_lists_only_the_invalid_record_and_writes_nothing_for_it(
    case: Case,
    queue_deps: queue_worker.Dependencies,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
    calls: CallCounter,
    queue_logs: LogCapture,
) -> None:
    before = sqs_record(json.dumps({"id": "good-before", "quantity": 1}))
    bad = sqs_record(case.body)
    after = sqs_record(json.dumps({"id": "good-after", "quantity": 2}))

    response = queue_worker.handle_batch(
        {"Records": [before, bad, after]}, lambda_context, queue_deps
    )

    assert response == {"batchItemFailures": [{"itemIdentifier": bad["messageId"]}]}
    assert calls.calls == ["PutItem", "PutItem"], "no write for the invalid record"
    assert scan_orders(dynamodb, tables.orders) == {"good-before": (1, 350), "good-after": (2, 600)}
    (line,) = [line for line in queue_logs.results() if line["message_id"] == bad["messageId"]]
    assert line["decision"] == "invalid"
    assert case.rule in line["reason"]
    assert len(queue_logs.results()) == 3


@pytest.mark.parametrize("case", ACCEPTED, ids=lambda case: case.name)
def test_queue_worker_accepts_edge_cases_and_stores_the_id_exactly(
    case: Case,
    queue_deps: queue_worker.Dependencies,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
) -> None:
    response = queue_worker.handle_batch(
        {"Records": [sqs_record(case.body)]}, lambda_context, queue_deps
    )

    assert response == {"batchItemFailures": []}
    assert list(scan_orders(dynamodb, tables.orders)) == [case.stored_id]


WORKFLOW_CASES = [case for case in INVALID if case.json_value and case.workflow is None]


@pytest.mark.parametrize("case", WORKFLOW_CASES, ids=lambda case: case.name)
def test_workflow_worker_raises_invalid_order_for_the_same_inputs_without_any_write(
    case: Case,
    workflow_deps: workflow_worker.Dependencies,
    lambda_context: LambdaContext,
    calls: CallCounter,
    workflow_logs: LogCapture,
) -> None:
    with pytest.raises(InvalidOrder) as raised:
        workflow_worker.handle(case.value, lambda_context, workflow_deps)

    assert case.rule in str(raised.value)
    assert calls.calls == [], "neither the attempt counter nor the order is written"
    (line,) = workflow_logs.results()
    assert line["decision"] == "invalid"


def test_the_workflow_catalogue_covers_every_json_case() -> None:
    assert len(WORKFLOW_CASES) >= 35  # decodable cases, less "mode" and the duplicated key


def test_the_same_order_spelled_differently_is_a_duplicate_never_a_conflict(
    queue_deps: queue_worker.Dependencies, lambda_context: LambdaContext, queue_logs: LogCapture
) -> None:
    for body in SAME_ORDER_SPELLINGS:
        response = queue_worker.handle_batch(
            {"Records": [sqs_record(body)]}, lambda_context, queue_deps
        )
        assert response == {"batchItemFailures": []}
    decisions = [line["decision"] for line in queue_logs.results()]
    assert decisions == ["accepted"] + ["duplicate"] * (len(SAME_ORDER_SPELLINGS) - 1)


# --- malformed SQS events ------------------------------------------------------------


def test_a_record_without_body_is_listed_and_its_neighbours_processed(
    queue_deps: queue_worker.Dependencies,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
    queue_logs: LogCapture,
) -> None:
    good = sqs_record(json.dumps({"id": "good", "quantity": 1}))
    bodiless = sqs_record("placeholder")
    del bodiless["body"]

    response = queue_worker.handle_batch({"Records": [good, bodiless]}, lambda_context, queue_deps)

    assert response == {"batchItemFailures": [{"itemIdentifier": bodiless["messageId"]}]}
    assert scan_orders(dynamodb, tables.orders) == {"good": (1, 350)}
    # (the two records run concurrently, so their RESULT lines come in either order)
    (result,) = [r for r in queue_logs.results() if r["message_id"] == bodiless["messageId"]]
    assert "body must be a JSON string, got null" in result["reason"]


def test_a_record_without_attributes_is_still_processed(
    queue_deps: queue_worker.Dependencies, lambda_context: LambdaContext, queue_logs: LogCapture
) -> None:
    record = sqs_record(json.dumps({"id": "no-attributes", "quantity": 1}))
    del record["attributes"]
    assert queue_worker.handle_batch({"Records": [record]}, lambda_context, queue_deps) == {
        "batchItemFailures": []
    }
    assert queue_logs.results()[0].get("receive_count") is None


@pytest.mark.parametrize(
    ("broken", "raised"), [("no messageId", KeyError), ("not an object", TypeError)]
)
def test_a_record_that_cannot_be_reported_fails_the_whole_batch_and_redelivery_loses_nothing(
    broken: str,
    raised: type[Exception],
    queue_deps: queue_worker.Dependencies,
    lambda_context: LambdaContext,
    dynamodb: Any,
    tables: Tables,
    queue_logs: LogCapture,
) -> None:
    good = sqs_record(json.dumps({"id": "beside-broken", "quantity": 1}))
    record: Any = sqs_record("an invalid body: this record must be reported")
    if broken == "no messageId":
        del record["messageId"]
    else:
        record = "not a record"

    # The failed record cannot be named in the response, so the invocation fails.
    with pytest.raises(raised):
        queue_worker.handle_batch({"Records": [good, record]}, lambda_context, queue_deps)

    # The whole batch comes back; the good record written the first time is a duplicate.
    response = queue_worker.handle_batch({"Records": [good]}, lambda_context, queue_deps)
    assert response == {"batchItemFailures": []}
    assert queue_logs.results()[-1]["decision"] == "duplicate"
    assert scan_orders(dynamodb, tables.orders)["beside-broken"] == (1, 350)


@pytest.mark.parametrize(
    ("event", "raised"),
    [
        ({}, InvalidBatchEvent),
        ({"Records": None}, InvalidBatchEvent),
        ({"records": []}, InvalidBatchEvent),
        ([], InvalidBatchEvent),  # not a mapping
        (None, InvalidBatchEvent),
    ],
)
def test_events_without_records_raise_instead_of_succeeding(
    event: Any,
    raised: type[Exception],
    queue_deps: queue_worker.Dependencies,
    lambda_context: LambdaContext,
) -> None:
    with pytest.raises(raised):
        queue_worker.handle_batch(event, lambda_context, queue_deps)
