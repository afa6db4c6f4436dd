"""Transient DynamoDB failures on one boto3 client, for the application's unit tests.

The failure is made in botocore's own ``before-send`` event, ahead of moto's answer (moto
answers that event too), so botocore's retry logic sees it as it sees the network:

===================  ==================================================================
dropped-connection   ``ConnectionClosedError``; the request never reached the table
response-lost        the table handles the request, then ``ConnectionClosedError``: a
                     committed write whose response is lost
connect-timeout      ``ConnectTimeoutError``; nothing sent
read-timeout         ``ReadTimeoutError``; nothing handled
http-500             HTTP 500 ``InternalServerError``; nothing handled
http-503             HTTP 503 ``ServiceUnavailable`` (a code botocore does not model)
throttling           HTTP 400 ``ThrottlingException``
===================  ==================================================================

A :class:`Fault` names the order id the request carries (the ``id`` of its ``Item`` or
``Key``), the operation and how many matching requests fail.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import ConnectionClosedError, ConnectTimeoutError, ReadTimeoutError
from moto.core.botocore_stubber import MockRawResponse
from moto.core.models import botocore_stubber


class Kind(StrEnum):
    """A transient DynamoDB failure (the module table says what each does)."""

    DROPPED_CONNECTION = "dropped-connection"
    RESPONSE_LOST = "response-lost"
    CONNECT_TIMEOUT = "connect-timeout"
    READ_TIMEOUT = "read-timeout"
    HTTP_500 = "http-500"
    HTTP_503 = "http-503"
    THROTTLING = "throttling"


DYNAMODB_KINDS: Final = tuple(Kind)
_ERROR_RESPONSES: Final = {
    Kind.HTTP_500: (500, "InternalServerError", "Internal server error"),
    Kind.HTTP_503: (503, "ServiceUnavailable", "Service unavailable"),
    Kind.THROTTLING: (
        400,
        "ThrottlingException",
        "Rate of requests exceeds the allowed throughput",
    ),
}


@dataclass
class Fault:
    """Fail the next ``times`` requests of ``operation`` (``PutItem``, ``UpdateItem``,
    ``GetItem``) that carry ``order_id``. botocore makes ``config.TOTAL_MAX_ATTEMPTS`` (2)
    attempts per call, so ``times=2`` fails one whole call."""

    kind: Kind
    order_id: str
    operation: str
    times: int = 2
    fired: int = 0


def _order_id(request: AWSPreparedRequest) -> str | None:
    try:
        body = json.loads(request.body or b"{}")
        order_id = (body.get("Item") or body.get("Key") or {}).get("id", {}).get("S")
    except (ValueError, AttributeError):
        return None
    return order_id if isinstance(order_id, str) else None


def _error_response(request: AWSPreparedRequest, kind: Kind) -> AWSResponse:
    status, code, message = _ERROR_RESPONSES[kind]
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message})
    headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "injected"}
    return AWSResponse(request.url, status, headers, MockRawResponse(body))  # type: ignore[arg-type]


@contextlib.contextmanager
def injected(client: Any, *faults: Fault) -> Iterator[None]:
    """Put ``faults`` in force on ``client`` (a boto3 DynamoDB client under ``mock_aws``)
    for the block."""

    def before_send(request: AWSPreparedRequest, event_name: str, **_: Any) -> Any:
        operation = event_name.rpartition(".")[2]
        order_id = _order_id(request)
        fault = next(
            (
                f
                for f in faults
                if f.operation == operation and f.order_id == order_id and f.fired < f.times
            ),
            None,
        )
        if fault is None:
            return None  # moto answers
        fault.fired += 1
        if fault.kind is Kind.DROPPED_CONNECTION:
            raise ConnectionClosedError(endpoint_url=request.url)
        if fault.kind is Kind.CONNECT_TIMEOUT:
            raise ConnectTimeoutError(endpoint_url=request.url)
        if fault.kind is Kind.READ_TIMEOUT:
            raise ReadTimeoutError(endpoint_url=request.url)
        if fault.kind in _ERROR_RESPONSES:
            return _error_response(request, fault.kind)
        botocore_stubber(event_name=event_name, request=request)  # RESPONSE_LOST: handled
        raise ConnectionClosedError(endpoint_url=request.url)

    unique_id = f"fault-{uuid.uuid4()}"
    client.meta.events.register_first("before-send.dynamodb", before_send, unique_id=unique_id)
    try:
        yield
    finally:
        client.meta.events.unregister("before-send.dynamodb", unique_id=unique_id)
