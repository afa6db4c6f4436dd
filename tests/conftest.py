"""Shared fixtures: fake credentials, moto, tables built from template.yaml, the
functions' environment as template.yaml gives it, a Lambda context, the sample events in
events/, and the workers' RESULT log lines.

No variable the workers read is set suite-wide: settings come from the template's own
``Environment`` (``function_environment``), so a variable the template lacks fails here.
"""

from __future__ import annotations

import functools
import io
import json
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.exceptions import UnStubbedResponseError
from botocore.stub import Stubber
from moto import mock_aws

from localcloud import patches
from localcloud.cfn import template as template_module
from localcloud.cfn.deployer import function_properties
from localcloud.cfn.intrinsics import resolve
from localcloud.cfn.resources.dynamodb_table import create_table
from order_guard import queue_worker, workflow_worker
from order_guard.config import QueueWorkerSettings, WorkflowWorkerSettings

ROOT = Path(__file__).resolve().parent.parent
EVENTS = ROOT / "events"
REGION = "us-east-1"


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and region: no test can reach a real account."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SECURITY_TOKEN": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("AWS_PROFILE", raising=False)


@functools.cache
def default_template() -> template_module.Template:
    """template.yaml with the default samconfig environment's parameters."""
    return template_module.load()


@pytest.fixture(scope="session")
def template() -> template_module.Template:
    """template.yaml with the default samconfig environment's parameters."""
    return default_template()


def function_environment(
    logical_id: str, *, orders_table: str, attempts_table: str = "unused-AttemptsTable"
) -> dict[str, str]:
    """The variables template.yaml gives a function (``Globals.Function`` merged as SAM
    merges it), with ``!Ref OrdersTable``/``AttemptsTable`` pointing at the given tables
    and parameters at the default samconfig environment's values."""
    template = default_template()
    tables = {"OrdersTable": orders_table, "AttemptsTable": attempts_table}
    variables = function_properties(template, logical_id)["Environment"]["Variables"]
    resolved = resolve(
        variables,
        where=f"{logical_id}.Environment",
        ref=lambda name: tables[name] if name in tables else template.parameters[name],
        get_att=lambda *_: (_ for _ in ()).throw(KeyError("no GetAtt in Environment")),
    )
    return {name: str(value) for name, value in resolved.items()}


def queue_settings(orders_table: str) -> QueueWorkerSettings:
    """The queue worker's settings, read from its template environment."""
    return QueueWorkerSettings.from_environ(
        function_environment("QueueWorkerFunction", orders_table=orders_table)
    )


def workflow_settings_for(
    orders_table: str, attempts_table: str, *, fault_modes_enabled: bool = True
) -> WorkflowWorkerSettings:
    """The workflow worker's settings, read from its template environment (fault modes
    as the default samconfig environment has them, on, unless told otherwise)."""
    environment = function_environment(
        "WorkflowWorkerFunction", orders_table=orders_table, attempts_table=attempts_table
    )
    environment["FAULT_MODES_ENABLED"] = "true" if fault_modes_enabled else "false"
    return WorkflowWorkerSettings.from_environ(environment)


@pytest.fixture
def patched() -> Iterator[None]:
    """The local cloud's patches of moto in force for the test (fault injection, the
    refusals AWS makes, the filter-pattern language …), as a local cloud has them."""
    patches.install()
    yield
    patches.uninstall()


@pytest.fixture
def aws() -> Iterator[None]:
    with mock_aws():
        yield


@pytest.fixture
def dynamodb(aws: None) -> Any:
    return boto3.client("dynamodb", region_name=REGION)


@dataclass(frozen=True)
class Tables:
    orders: str
    attempts: str


@pytest.fixture
def tables(dynamodb: Any, template: template_module.Template) -> Tables:
    """OrdersTable and AttemptsTable created from template.yaml's own properties."""
    names = {}
    for logical_id in ("OrdersTable", "AttemptsTable"):
        properties = resolve(
            template.resources[logical_id]["Properties"],
            where=logical_id,
            ref=lambda name: template.parameters[name],
            get_att=lambda *_: (_ for _ in ()).throw(KeyError("no GetAtt in tables")),
        )
        names[logical_id] = f"test-{logical_id}"
        create_table(dynamodb, logical_id, names[logical_id], properties)
    return Tables(orders=names["OrdersTable"], attempts=names["AttemptsTable"])


@dataclass
class LambdaContext:
    """The attributes of the Lambda Python runtime's context object that the code reads."""

    function_name: str = "test-function"
    function_version: str = "$LATEST"
    memory_limit_in_mb: int = 256
    aws_request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    invoked_function_arn: str = "arn:aws:lambda:us-east-1:123456789012:function:test-function"
    log_group_name: str = "/aws/lambda/test-function"
    log_stream_name: str = "2026/11/29/[$LATEST]test"

    def get_remaining_time_in_millis(self) -> int:
        return 10_000


@pytest.fixture
def lambda_context() -> LambdaContext:
    return LambdaContext()


@pytest.fixture
def load_event() -> Callable[[str], Any]:
    """Load ``events/<name>.json``: the same files ``sam local invoke -e`` uses."""

    def load(name: str) -> Any:
        return json.loads((EVENTS / f"{name}.json").read_text())

    return load


@pytest.fixture
def queue_deps(dynamodb: Any, tables: Tables) -> queue_worker.Dependencies:
    return queue_worker.Dependencies(dynamodb=dynamodb, settings=queue_settings(tables.orders))


@pytest.fixture
def workflow_settings(tables: Tables) -> WorkflowWorkerSettings:
    return workflow_settings_for(tables.orders, tables.attempts)


@pytest.fixture
def workflow_deps(
    dynamodb: Any, workflow_settings: WorkflowWorkerSettings
) -> workflow_worker.Dependencies:
    return workflow_worker.Dependencies(dynamodb=dynamodb, settings=workflow_settings)


class LogCapture:
    """The JSON lines a worker's Powertools logger wrote during a test."""

    def __init__(self, stream: io.StringIO) -> None:
        self._stream = stream

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self._stream.getvalue().splitlines() if line]

    def results(self) -> list[dict[str, Any]]:
        return [line for line in self.lines() if line.get("message") == "RESULT"]

    @property
    def text(self) -> str:
        return self._stream.getvalue()


def _capture(logger: Any) -> Iterator[LogCapture]:
    handler = logger.registered_handler
    stream = io.StringIO()
    previous = handler.setStream(stream)
    try:
        yield LogCapture(stream)
    finally:
        handler.setStream(previous)


@pytest.fixture(autouse=True)
def fresh_metrics() -> Iterator[None]:
    """Tests that call a worker's testable core add metrics without the handler's flush;
    Powertools keeps them in one process-wide set, so clear it between tests."""
    yield
    queue_worker.metrics.clear_metrics()
    workflow_worker.metrics.clear_metrics()


@pytest.fixture
def queue_logs() -> Iterator[LogCapture]:
    yield from _capture(queue_worker.logger)


@pytest.fixture
def workflow_logs() -> Iterator[LogCapture]:
    yield from _capture(workflow_worker.logger)


def scan_orders(dynamodb: Any, table: str) -> dict[str, tuple[int, int]]:
    """Business projection of a scan: ``{id: (quantity, total_cents)}``."""
    items = dynamodb.scan(TableName=table, ConsistentRead=True)["Items"]
    return {
        item["id"]["S"]: (int(item["quantity"]["N"]), int(item["total_cents"]["N"]))
        for item in items
    }


def stored_answer(table: str, units: float = 1.0) -> dict[str, Any]:
    """DynamoDB's answer to a successful write or read asked with
    ``ReturnConsumedCapacity: TOTAL`` (what the workers require before they count a call
    as done), for botocore's Stubber."""
    return {"ConsumedCapacity": {"TableName": table, "CapacityUnits": units}}


def free_port() -> int:
    """A free TCP port on 127.0.0.1 for a local-cloud server."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sqs_record(body: str, message_id: str | None = None, receive_count: int = 1) -> dict[str, Any]:
    """One SQS record as the event source mapping sends it (for tests that vary bodies)."""
    import hashlib

    return {
        "messageId": message_id or str(uuid.uuid4()),
        "receiptHandle": "AQEBtestreceipthandle==",
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": str(receive_count),
            "SentTimestamp": "1764421200000",
            "SenderId": "AIDAEXAMPLESENDERID",
            "ApproximateFirstReceiveTimestamp": "1764421200050",
        },
        "messageAttributes": {},
        "md5OfBody": hashlib.md5(body.encode("utf-8", "surrogatepass")).hexdigest(),
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:test-JobsQueue",
        "awsRegion": REGION,
    }


class KeyedStubber(Stubber):
    """botocore's Stubber for records that run concurrently.

    Stubber answers strictly in call order, but the queue worker runs a batch's records
    in parallel threads (one per business key), so the order in which they call DynamoDB
    varies from run to run. Here each queued answer is tied to a business key: a call takes
    the first answer queued for the ``id`` in its ``Item`` (or ``Key``) and operation, so
    every record gets its own answer whatever the thread timing. Use ``add_response_for``
    and ``add_client_error_for``; everything else (response validation, modeled error
    fields, ``assert_no_pending_responses``) is Stubber's own.
    """

    def __init__(self, client: Any) -> None:
        super().__init__(client)
        self._lock = threading.Lock()

    def add_response_for(self, key: str, method: str, service_response: dict[str, Any]) -> None:
        """Queue ``service_response`` for the next ``method`` call on business key ``key``."""
        with self._lock:
            self.add_response(method, service_response)
            self._queue[-1]["business_key"] = key

    def add_client_error_for(self, key: str, method: str, *args: Any, **kwargs: Any) -> None:
        """Queue a ``ClientError`` (Stubber's ``add_client_error`` arguments) for ``key``."""
        with self._lock:
            self.add_client_error(method, *args, **kwargs)
            self._queue[-1]["business_key"] = key

    def _assert_expected_params(
        self, model: Any, params: dict[str, Any], context: dict[str, Any], **kwargs: Any
    ) -> None:
        if self._should_not_stub(context):
            return
        item = params.get("Item") or params.get("Key") or {}
        key = item.get("id", {}).get("S")
        with self._lock:
            for entry in self._queue:
                if entry["operation_name"] == model.name and entry.get("business_key") == key:
                    self._queue.remove(entry)
                    context["keyed_stubber_entry"] = entry
                    return
        raise UnStubbedResponseError(
            operation_name=model.name, reason=f"no answer queued for business key {key!r}"
        )

    def _get_response_handler(
        self, model: Any, params: dict[str, Any], context: dict[str, Any], **kwargs: Any
    ) -> Any:
        if self._should_not_stub(context):
            return None
        return context.pop("keyed_stubber_entry")["response"]
