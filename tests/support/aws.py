"""AWS-shaped test doubles and readings: the region, a free port, SQS records as the event
source mapping sends them, a Lambda context, DynamoDB answers and scans, and a Stubber for
records that run concurrently."""

from __future__ import annotations

import functools
import hashlib
import socket
import threading
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import boto3
from botocore.exceptions import UnStubbedResponseError
from botocore.stub import Stubber

REGION = "us-east-1"


@functools.cache
def _session() -> boto3.session.Session:
    return boto3.session.Session(region_name=REGION)


def shared_client(service: str, **options: Any) -> Any:
    """A boto3 client from one session shared by the suite (``options`` as for
    ``Session.client``). moto's ``mock_aws`` drops boto3's default session each time it
    starts, and a new session parses the service models again (about 0.1 s a client)."""
    return _session().client(service, **options)  # type: ignore[call-overload]


@dataclass(frozen=True)
class Tables:
    """The physical names of the orders and attempts tables a test made."""

    orders: str
    attempts: str


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


def create_table(dynamodb: Any, name: str, properties: Mapping[str, Any]) -> None:
    """Create a table with the key schema and billing mode of its template properties
    (``AWS::DynamoDB::Table``'s ``KeySchema``, ``AttributeDefinitions``, ``BillingMode``),
    so a test's table cannot drift from the deployed one."""
    dynamodb.create_table(
        TableName=name,
        KeySchema=list(properties["KeySchema"]),
        AttributeDefinitions=list(properties["AttributeDefinitions"]),
        BillingMode=properties.get("BillingMode", "PROVISIONED"),
    )


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
