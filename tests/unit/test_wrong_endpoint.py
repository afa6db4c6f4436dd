"""A record is acknowledged only on an answer that shows DynamoDB stored the item.

Issue 18, finding 4: any HTTP 200 counted as success. Against a wrong endpoint that answers
200 with an HTML page (a mistyped ``AWS_ENDPOINT_URL``), three records came back accepted
and were deleted from the queue, with nothing stored. The workers now ask for
``ReturnConsumedCapacity: TOTAL`` and require it; any other answer is the error decision,
transient.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from order_guard import queue_worker, workflow_worker
from order_guard.config import DYNAMODB_CLIENT_CONFIG
from order_guard.exceptions import TransientStoreError
from tests.support.aws import LambdaContext, Tables, free_port, shared_client, sqs_record
from tests.support.environment import queue_settings, workflow_settings_for
from tests.support.logs import LogCapture

WRONG_ANSWERS = {
    # a web server where the DynamoDB endpoint should be: an HTML page
    "html page": (b"<!doctype html><title>Welcome</title><p>It works!", "text/html"),
    # something else again: bytes that are not UTF-8 (botocore's JSON parser cannot
    # decode them, and raises UnicodeDecodeError, which is neither of its error classes)
    "undecodable bytes": (b"\xff\xfe\x00\x81 binary \xc3\x28", "application/octet-stream"),
}


def answering(body: bytes, content_type: str) -> type[BaseHTTPRequestHandler]:
    class WrongEndpoint(BaseHTTPRequestHandler):
        """HTTP 200 with ``body`` to every request."""

        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(200)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    return WrongEndpoint


@pytest.fixture(params=list(WRONG_ANSWERS))
def wrong_endpoint(request: pytest.FixtureRequest) -> Iterator[Any]:
    server = ThreadingHTTPServer(
        ("127.0.0.1", free_port()), answering(*WRONG_ANSWERS[request.param])
    )
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield shared_client(
        "dynamodb",
        region_name="us-east-1",
        endpoint_url=f"http://127.0.0.1:{server.server_address[1]}",
        config=DYNAMODB_CLIENT_CONFIG,
    )
    server.shutdown()


def test_records_answered_by_an_html_page_are_all_listed_not_acknowledged(
    wrong_endpoint: Any, tables: Tables, lambda_context: LambdaContext, queue_logs: LogCapture
) -> None:
    records = [sqs_record(json.dumps({"id": f"lost-{n}", "quantity": 1})) for n in range(3)]
    deps = queue_worker.Dependencies(wrong_endpoint, queue_settings(tables.orders))

    response = queue_worker.handle_batch({"Records": records}, lambda_context, deps)

    assert response == {"batchItemFailures": [{"itemIdentifier": r["messageId"]} for r in records]}
    decisions = {(r["decision"], r["error_type"], r["transient"]) for r in queue_logs.results()}
    assert decisions == {("error", "TransientStoreError", True)}


def test_the_workflow_worker_fails_transiently_on_a_wrong_answer(
    wrong_endpoint: Any, tables: Tables, lambda_context: LambdaContext, workflow_logs: LogCapture
) -> None:
    deps = workflow_worker.Dependencies(
        wrong_endpoint, workflow_settings_for(tables.orders, tables.attempts)
    )
    with pytest.raises(TransientStoreError, match="PutItem on test-OrdersTable"):
        workflow_worker.handle({"id": "lost", "quantity": 1}, lambda_context, deps)
    with pytest.raises(TransientStoreError, match="GetItem on test-OrdersTable"):
        workflow_worker.handle({"stage": "summary", "id": "lost"}, lambda_context, deps)
    counted = {"id": "lost", "quantity": 1, "mode": "after-write"}
    with pytest.raises(TransientStoreError, match="UpdateItem on test-AttemptsTable"):
        workflow_worker.handle(counted, lambda_context, deps)

    # Every failure wrote its RESULT line first, the counter's included.
    results = [
        (r.get("stage"), r.get("error_type"), r.get("transient")) for r in workflow_logs.results()
    ]
    assert results == [
        ("store", "TransientStoreError", True),
        ("summary", "TransientStoreError", True),
        ("store", "TransientStoreError", True),
    ]
    (counter_failed,) = [
        line for line in workflow_logs.lines() if line["message"] == "AttemptsCounterFailed"
    ]
    assert counter_failed["error_type"] == "TransientStoreError"
