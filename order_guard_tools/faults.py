"""Fault injection: the transient failures an idempotent worker must survive, on demand.

Two places:

- **DynamoDB requests** that a function makes. A function runs in a process of its own
  and signs its calls with its own access key; the server's hook around its answer
  (:func:`localcloud.server.hooks.around_served`, :func:`around_served_request`) decides
  a fault before moto sees the request or after it has handled it, so the function's
  botocore and its real retry logic (``total_max_attempts``) see it as they would see the
  network. Clients of this process (a test's own, a function run in this process) are
  answered through moto's ``before-send`` handler, which the patch registry wraps the
  same way (:mod:`localcloud.patches.botocore`, :func:`around_request`):

  ===================  ==============================================================
  dropped-connection   ``ConnectionClosedError``; the request never reached the table
  response-lost        the table handled the request, then ``ConnectionClosedError``:
                       a committed write whose response is lost
  connect-timeout      ``ConnectTimeoutError``; nothing sent (over HTTP: the connection
                       closed unhandled, ``ConnectionClosedError``)
  read-timeout         ``ReadTimeoutError``; nothing handled (over HTTP: held past the
                       function's read timeout, then closed unhandled)
  http-500             HTTP 500 ``InternalServerError``; nothing handled
  http-503             HTTP 503 ``ServiceUnavailable`` (a code botocore does not model)
  throttling           HTTP 400 ``ThrottlingException``
  ===================  ==============================================================

- **Lambda invocations through the invoke API** (what Step Functions calls):

  ========================  =========================================================
  lambda-service-exception  HTTP 500 ``ServiceException``: the function never runs
  lambda-too-many-requests  HTTP 429 ``TooManyRequestsException``: never runs
  function-timeout          the function runs (its writes stay), then the invocation
                            fails with ``Sandbox.Timedout``
  ========================  =========================================================

A :class:`Fault` names the order id it hits (the ``id`` of the request's ``Item`` or
``Key``, or of the invocation's payload), the DynamoDB operation (or ``Invoke``), and how
many matching requests it fails; faults of different orders never touch each other, so
executions can run side by side. Only requests a function makes are hit (signed with
its access key, or made in this process inside an invocation:
:func:`~localcloud.services.lambda_.invoking_function`), never a test's own reads.

May import: :mod:`localcloud.patches` and :mod:`localcloud.server.hooks` (the hooks
around moto's answers), :mod:`localcloud.services.lambda_`, :mod:`order_guard.config`.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from botocore.awsrequest import AWSPreparedRequest, AWSResponse
from botocore.exceptions import ConnectionClosedError, ConnectTimeoutError, ReadTimeoutError
from moto.core.botocore_stubber import MockRawResponse
from moto.core.exceptions import JsonRESTError

from localcloud.patches.botocore import around_requests
from localcloud.server.hooks import Answer, DropConnection, ServedRequest, around_served
from localcloud.services.lambda_ import (
    Function,
    Invocation,
    by_access_key,
    invoking_function,
    set_invoke_wrapper,
    timed_out,
)
from order_guard.config import READ_TIMEOUT_S


class Kind(StrEnum):
    """A transient failure (the module tables say what each does)."""

    DROPPED_CONNECTION = "dropped-connection"
    RESPONSE_LOST = "response-lost"
    CONNECT_TIMEOUT = "connect-timeout"
    READ_TIMEOUT = "read-timeout"
    HTTP_500 = "http-500"
    HTTP_503 = "http-503"
    THROTTLING = "throttling"
    LAMBDA_SERVICE_EXCEPTION = "lambda-service-exception"
    LAMBDA_TOO_MANY_REQUESTS = "lambda-too-many-requests"
    FUNCTION_TIMEOUT = "function-timeout"


DYNAMODB_KINDS: Final = (
    Kind.DROPPED_CONNECTION,
    Kind.RESPONSE_LOST,
    Kind.CONNECT_TIMEOUT,
    Kind.READ_TIMEOUT,
    Kind.HTTP_500,
    Kind.HTTP_503,
    Kind.THROTTLING,
)
LAMBDA_KINDS: Final = (
    Kind.LAMBDA_SERVICE_EXCEPTION,
    Kind.LAMBDA_TOO_MANY_REQUESTS,
    Kind.FUNCTION_TIMEOUT,
)
_ERROR_RESPONSES: Final = {
    Kind.HTTP_500: (500, "InternalServerError", "Internal server error"),
    Kind.HTTP_503: (503, "ServiceUnavailable", "Service unavailable"),
    Kind.THROTTLING: (
        400,
        "ThrottlingException",
        "Rate of requests exceeds the allowed throughput",
    ),
}
_LAMBDA_ERRORS: Final = {
    Kind.LAMBDA_SERVICE_EXCEPTION: (500, "ServiceException", "Lambda service error (injected)"),
    Kind.LAMBDA_TOO_MANY_REQUESTS: (429, "TooManyRequestsException", "Rate Exceeded. (injected)"),
}


@dataclass
class Fault:
    """Fail the next ``times`` matching requests with ``kind``.

    Args:
        kind: what happens (:class:`Kind`).
        order_id: the order id the request carries.
        operation: ``PutItem``, ``UpdateItem`` or ``GetItem`` for a DynamoDB kind;
            ``Invoke`` for a Lambda kind.
        times: how many matching requests fail. botocore makes
            ``config.TOTAL_MAX_ATTEMPTS`` (2) attempts per call, so ``times=2`` fails one
            whole call and the failure reaches the worker (and Step Functions).
        stage: for ``Invoke``: ``"summary"`` hits the summary stage only, ``"store"``
            everything else, ``None`` both.
    """

    kind: Kind
    order_id: str
    operation: str
    times: int = 2
    stage: str | None = None
    fired: int = 0

    def __post_init__(self) -> None:
        lambda_kind = self.kind in LAMBDA_KINDS
        if lambda_kind != (self.operation == "Invoke"):
            raise ValueError(
                f"{self.kind} needs operation {'Invoke' if lambda_kind else 'a DynamoDB one'}"
            )


class FaultPlan:
    """The faults in force, consumed thread-safely as requests match them."""

    def __init__(self, faults: Sequence[Fault], *, in_functions_only: bool = True) -> None:
        self.faults = list(faults)
        self.in_functions_only = in_functions_only
        self._lock = threading.Lock()

    def take(self, operation: str, order_id: str | None, stage: str | None = None) -> Fault | None:
        """The fault that hits this request (and count it), or ``None``."""
        if order_id is None:
            return None
        with self._lock:
            for fault in self.faults:
                if (
                    fault.order_id == order_id
                    and fault.operation == operation
                    and fault.fired < fault.times
                    and (fault.stage is None or fault.stage == stage)
                ):
                    fault.fired += 1
                    return fault
        return None


_ACTIVE: FaultPlan | None = None


@dataclass
class Network:
    """The simulated network between the functions and DynamoDB (:func:`simulated`):
    each request a function makes waits ``round_trip_s`` and is counted by function and
    operation."""

    round_trip_s: float = 0.0
    latency: Callable[[], float] | None = None
    """Draws each request's round trip (seconds) instead of ``round_trip_s``."""
    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def carry(self, function: str, operation: str) -> None:
        """One request of ``function``: count it, then wait its round trip."""
        with self._lock:
            self.counts[(function, operation)] += 1
        delay = self.latency() if self.latency is not None else self.round_trip_s
        if delay:
            time.sleep(delay)

    def requests(self, function: str, operations: Iterable[str] | None = None) -> int:
        """Requests a function made (of the given operations, or all)."""
        return sum(
            n
            for (name, operation), n in self.counts.items()
            if name == function and (operations is None or operation in operations)
        )


_NETWORK: Network | None = None


@contextlib.contextmanager
def simulated(
    round_trip_s: float = 0.0, latency: Callable[[], float] | None = None
) -> Iterator[Network]:
    """Count, and delay by ``round_trip_s`` (or by what ``latency`` draws for each),
    every DynamoDB request a function makes in the block (the benchmark's simulated round
    trip)."""
    global _NETWORK
    _hook()
    network = Network(round_trip_s=round_trip_s, latency=latency)
    _NETWORK = network
    try:
        yield network
    finally:
        _NETWORK = None


@contextlib.contextmanager
def injected(*faults: Fault, in_functions_only: bool = True) -> Iterator[FaultPlan]:
    """Put ``faults`` in force for the block (one plan at a time).

    ``in_functions_only=False`` also hits requests made outside a function invocation
    (a unit test's own client).
    """
    global _ACTIVE
    if _ACTIVE is not None:
        raise RuntimeError("a fault plan is already in force")
    _hook()
    plan = FaultPlan(faults, in_functions_only=in_functions_only)
    _ACTIVE = plan
    try:
        yield plan
    finally:
        _ACTIVE = None


def _hook() -> None:
    """Put fault injection in the places it works (idempotent): around the server's answer
    to every request a function's process makes (:func:`localcloud.server.hooks.
    around_served`), around moto's answer to every botocore request of this process
    (:func:`localcloud.patches.botocore.around_requests`: a test's own clients, functions
    run in this process) and around every invocation through the invoke API
    (:func:`localcloud.services.lambda_.set_invoke_wrapper`). Each passes straight through
    while no plan or network is in force."""
    around_served(around_served_request)
    around_requests(around_request)
    set_invoke_wrapper(invoke_with_faults)


# --- DynamoDB: botocore's before-send, around moto's stubber -----------------------------


def _dynamodb_request(request: AWSPreparedRequest) -> tuple[str, str | None] | None:
    """(operation, order id) of a DynamoDB JSON request, else ``None``."""
    raw = request.headers.get("X-Amz-Target", b"")
    target = raw.decode() if isinstance(raw, bytes) else str(raw)
    raw_body = request.body
    return _dynamodb_call(target, raw_body if isinstance(raw_body, str | bytes) else b"{}")


def _dynamodb_call(target: str, raw_body: str | bytes) -> tuple[str, str | None] | None:
    """(operation, order id) of a DynamoDB JSON request's target and body, else ``None``."""
    if not target.startswith("DynamoDB_"):
        return None
    operation = target.rpartition(".")[2]
    try:
        body = json.loads(raw_body or b"{}")
        item = body.get("Item") or body.get("Key") or {}
        order_id = item.get("id", {}).get("S")
    except (ValueError, AttributeError):
        order_id = None
    return operation, order_id if isinstance(order_id, str) else None


def _error_response(request: AWSPreparedRequest, kind: Kind) -> AWSResponse:
    status, code, message = _ERROR_RESPONSES[kind]
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message})
    headers = {"Content-Type": "application/x-amz-json-1.0", "x-amzn-RequestId": "injected"}
    return AWSResponse(request.url, status, headers, MockRawResponse(body))  # type: ignore[arg-type]


def around_request(request: AWSPreparedRequest, handle: Callable[[], Any]) -> Any:
    """moto's answer to one botocore request (``handle()``), with the active plan's
    DynamoDB faults and the simulated network around it (the patched
    ``BotocoreStubber.__call__``'s hook, :mod:`localcloud.patches.botocore`)."""
    network = _NETWORK
    if network is not None:
        function = invoking_function()
        matched = _dynamodb_request(request) if function is not None else None
        if function is not None and matched is not None:
            network.carry(function.name, matched[0])
    plan = _ACTIVE
    fault = None
    if plan is not None and (not plan.in_functions_only or invoking_function() is not None):
        matched = _dynamodb_request(request)
        fault = plan.take(*matched) if matched is not None else None
    if fault is None:
        return handle()
    if fault.kind is Kind.DROPPED_CONNECTION:
        raise ConnectionClosedError(endpoint_url=request.url)
    if fault.kind is Kind.CONNECT_TIMEOUT:
        raise ConnectTimeoutError(endpoint_url=request.url)
    if fault.kind is Kind.READ_TIMEOUT:
        raise ReadTimeoutError(endpoint_url=request.url)
    if fault.kind in _ERROR_RESPONSES:
        return _error_response(request, fault.kind)
    # RESPONSE_LOST: the table handles the request, then the connection drops.
    if handle() is None:
        raise RuntimeError("response-lost needs the in-process local cloud (mock_aws)")
    raise ConnectionClosedError(endpoint_url=request.url)


# --- DynamoDB over HTTP: a function's process, around the server's answer ---------------

STALL_S: Final = READ_TIMEOUT_S + 0.5
"""How long the server holds a request it answers with a read timeout (seconds): past the
functions' read timeout (:data:`order_guard.config.READ_TIMEOUT_S`), so their SDK gives
up first, as it would on a stalled network."""


def _error_answer(kind: Kind) -> Answer:
    status, code, message = _ERROR_RESPONSES[kind]
    body = json.dumps({"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message})
    headers = [("Content-Type", "application/x-amz-json-1.0"), ("x-amzn-RequestId", "injected")]
    return Answer(status, headers, body.encode())


def around_served_request(request: ServedRequest, handle: Callable[[], Answer]) -> Answer:
    """The server's answer to one request (``handle()``), with the active plan's DynamoDB
    faults and the simulated network around it, for a request one of the account's
    functions signed (its access key: :func:`~localcloud.services.lambda_.by_access_key`);
    any other caller's request is answered as it is (the set hook of
    :mod:`localcloud.server.hooks`).

    What the function's SDK sees: what it would see of a network that failed so, but for
    ``connect-timeout``: a connection the server accepted cannot time out connecting, so
    it is closed before the request is handled (``ConnectionClosedError``, nothing
    handled, as a connect timeout leaves it); ``read-timeout`` holds the request for
    :data:`STALL_S`, then closes the connection unhandled.

    Raises:
        DropConnection: the kind closes the connection (the server then does).
    """
    function = by_access_key(request.access_key)
    matched = _dynamodb_call(request.target, request.body) if function is not None else None
    if function is None or matched is None:
        return handle()
    network = _NETWORK
    if network is not None:
        network.carry(function.name, matched[0])
    plan = _ACTIVE
    fault = plan.take(*matched) if plan is not None else None
    if fault is None:
        return handle()
    if fault.kind in (Kind.DROPPED_CONNECTION, Kind.CONNECT_TIMEOUT):
        raise DropConnection
    if fault.kind is Kind.READ_TIMEOUT:
        time.sleep(STALL_S)
        raise DropConnection
    if fault.kind in _ERROR_RESPONSES:
        return _error_answer(fault.kind)
    handle()  # RESPONSE_LOST: the table handles the request, then the connection drops
    raise DropConnection


# --- Lambda: the invoke API -------------------------------------------------------------


def invoke_with_faults(function: Function, event: Any, run: Callable[[], Invocation]) -> Invocation:
    """The invoke API's path to a function, with the active plan's Lambda faults around it
    (set by :func:`_hook`)."""
    plan = _ACTIVE
    if plan is None or not isinstance(event, dict):
        return run()
    order_id = event.get("id")
    stage = "summary" if "stage" in event else "store"
    fault = plan.take("Invoke", order_id if isinstance(order_id, str) else None, stage)
    if fault is None:
        return run()
    if fault.kind in _LAMBDA_ERRORS:
        status, code, message = _LAMBDA_ERRORS[fault.kind]
        error = JsonRESTError(code, message)
        error.code = status
        raise error
    return timed_out(run(), function)
