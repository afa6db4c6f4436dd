"""Lambda's asynchronous invocation: the event is queued, the caller answered at once, and
the function run from the queue, retried on error, and its outcome sent to a destination.

Whoever invokes a function asynchronously comes here (:func:`submit`): the Invoke API with
``InvocationType=Event`` (HTTP 202, an empty body), EventBridge rules, SNS topics, S3
notifications, Step Functions' ``lambda:invoke`` with ``InvocationType: Event``. As AWS
documents it ("How Lambda handles errors and retries with asynchronous invocation",
https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html):

- a function error (the runtime's ``Unhandled``, a timeout) is retried
  ``MaximumRetryAttempts`` times (the function's event invoke configuration, 0-2; 2 when
  none is set); a throttle is retried until the event is ``MaximumEventAgeInSeconds`` old
  (60-21600; 21600 when none is set);
- an event that succeeded goes to ``DestinationConfig.OnSuccess``; one whose retries are
  spent (``RetriesExhausted``) or that grew too old (``EventAgeExceeded``) goes to
  ``DestinationConfig.OnFailure`` as an invocation record, and to the function's
  dead-letter queue (``DeadLetterConfig.TargetArn``, SQS or SNS) as the event itself with
  the ``RequestID``, ``ErrorCode`` and ``ErrorMessage`` attributes;
- a destination is an SQS queue, an SNS topic, another function (asynchronously) or an
  event bus (``Lambda Function Invocation Result - Success|Failure``, source ``lambda``).

Locally the retries wait :data:`RETRY_DELAYS_S` (AWS waits about one minute, then two),
and throttled events are tried again every :data:`THROTTLE_DELAY_S`. Records go straight
into moto's backends (no request is signed, as none is on AWS).

Events run on a pool as large as the account's concurrency (:data:`WORKERS`), and a
thread is held only while an event runs: a retry or a throttled event waits on one timer
thread (:class:`_Later`), never in a worker. So one function's busy or hostile events can
hold up another function's only when every execution slot of the account is taken, when
Lambda would throttle it too (issue 47: with 8 workers for every function, 8 events of a
slow function froze EventBridge, SNS and S3 deliveries to every other one).
"""

from __future__ import annotations

import datetime
import heapq
import itertools
import json
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any, Final

from localcloud.services.lambda_.destinations import response_context, to_queue, to_topic
from localcloud.services.lambda_.runtime import (
    Function,
    Invocation,
    Throttled,
    invoke_through_api,
    lookup,
)
from localcloud.services.lambda_.runtime.environments import ACCOUNT_CONCURRENCY
from localcloud.text import say

RETRY_DELAYS_S: Final = (1.0, 2.0)
"""Seconds before the second and the third attempt (AWS: about 60 and 120)."""
THROTTLE_DELAY_S: Final = 1.0
"""Seconds before a throttled event is tried again."""
DEFAULT_RETRIES: Final = 2
DEFAULT_MAX_AGE_S: Final = 21600
WORKERS: Final = ACCOUNT_CONCURRENCY
"""Asynchronous invocations running at once, every function together: as many as the
account's executions (a thread more would only meet a throttle)."""

DeadLetters = Callable[[str], "str | None"]
"""A function's name → its dead-letter target ARN, if it has one."""


@dataclass
class Event:
    """One queued event: what was sent, to which function, and its tries so far."""

    function_name: str
    qualifier: str | None
    payload: Any
    account_id: str
    region: str
    request_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    received: float = field(default_factory=time.time)
    attempts: int = 0
    generation: int = field(default_factory=lambda: _GENERATION)
    """The account it was queued in (:func:`clear` starts a new one)."""


_GENERATION = 0
_POOL: ThreadPoolExecutor | None = None
_LOCK = threading.Condition()
_PENDING = 0
_DEAD_LETTERS: dict[str, str] = {}
_DELIVERED: list[dict[str, Any]] = []
"""Where each finished event went (newest last, the last 200): the view's rows."""


def set_dead_letter(function_name: str, target_arn: str | None) -> None:
    """Record a function's ``DeadLetterConfig.TargetArn`` (``None``: it has none)."""
    with _LOCK:
        if target_arn:
            _DEAD_LETTERS[function_name] = target_arn
        else:
            _DEAD_LETTERS.pop(function_name, None)


def dead_letter(function_name: str) -> str | None:
    with _LOCK:
        return _DEAD_LETTERS.get(function_name)


def submit(
    function_name: str,
    payload: Any,
    *,
    account_id: str,
    region: str,
    qualifier: str | None = None,
) -> str:
    """Queue ``payload`` for the function (a name or ARN, with or without a qualifier) and
    return the request id the invocation will run under.

    Raises:
        KeyError: no function of the local cloud has that name (the Invoke API answers
            404 before queueing, as AWS does).
    """
    lookup(function_name, qualifier)
    event = Event(function_name, qualifier, payload, account_id, region)
    _schedule(event, 0.0)
    return event.request_id


def wait_idle(timeout_s: float) -> bool:
    """Wait until no asynchronous event is queued or running; whether that happened
    within ``timeout_s`` seconds."""
    deadline = time.monotonic() + timeout_s
    with _LOCK:
        while _PENDING:
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            _LOCK.wait(left)
    return True


def delivered() -> list[dict[str, Any]]:
    """The last finished events: function, request id, attempts, condition, where sent."""
    with _LOCK:
        return list(_DELIVERED)


def clear() -> None:
    """Forget dead-letter targets and deliveries (a new account); an event still queued
    from the account before (a retry waiting) is dropped, never run in this one."""
    global _GENERATION
    with _LOCK:
        _GENERATION += 1
        _DEAD_LETTERS.clear()
        _DELIVERED.clear()


class _Later:
    """One timer thread for every event waiting to be tried again: each is handed to the
    pool when its time comes, so no worker sleeps."""

    def __init__(self) -> None:
        self._due: list[tuple[float, int, Event]] = []
        self._order = itertools.count()
        self._changed = threading.Condition()
        self._thread: threading.Thread | None = None

    def add(self, event: Event, delay_s: float) -> None:
        with self._changed:
            heapq.heappush(self._due, (time.monotonic() + delay_s, next(self._order), event))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._wait, name="lambda-async-later", daemon=True
                )
                self._thread.start()
            self._changed.notify()

    def _wait(self) -> None:
        while True:
            with self._changed:
                while not self._due or self._due[0][0] > time.monotonic():
                    self._changed.wait(
                        None if not self._due else self._due[0][0] - time.monotonic()
                    )
                _, _, event = heapq.heappop(self._due)
            try:
                _pool().submit(_run, event)
            except Exception as exc:  # noqa: BLE001 - said; the thread goes on for the rest
                say(
                    f"[lambda] {event.function_name}: asynchronous event {event.request_id} "
                    f"could not be run again: {type(exc).__name__}: {exc}"
                )
                _done()


_LATER = _Later()


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=WORKERS, thread_name_prefix="lambda-async")
        return _POOL


def _schedule(event: Event, delay_s: float) -> None:
    """Count ``event`` as pending and run it after ``delay_s`` seconds (on the pool; the
    wait on the timer thread)."""
    global _PENDING
    with _LOCK:
        _PENDING += 1
    if delay_s > 0:
        _LATER.add(event, delay_s)
    else:
        _pool().submit(_run, event)


def _done() -> None:
    global _PENDING
    with _LOCK:
        _PENDING -= 1
        _LOCK.notify_all()


def _run(event: Event) -> None:
    try:
        _attempt(event)
    except Exception as exc:  # noqa: BLE001 - said, not lost in a future nobody reads
        say(
            f"[lambda] {event.function_name}: asynchronous event {event.request_id} "
            f"failed in the local cloud: {type(exc).__name__}: {exc}"
        )
    finally:
        _done()


def _attempt(event: Event) -> None:
    if event.generation != _GENERATION:
        return  # queued in an account that has stopped
    try:
        function = lookup(event.function_name, event.qualifier)
    except KeyError:
        return  # deleted meanwhile: AWS drops the event too
    config = _invoke_config(event, function)
    max_age = int(config.get("MaximumEventAgeInSeconds", DEFAULT_MAX_AGE_S))
    retries = int(config.get("MaximumRetryAttempts", DEFAULT_RETRIES))
    if time.time() - event.received > max_age:
        _finish(event, function, None, "EventAgeExceeded", config)
        return
    try:
        invocation = invoke_through_api(function, event.payload)
    except Throttled:
        _schedule(event, THROTTLE_DELAY_S)
        return
    event.attempts += 1
    if not invocation.error:
        _finish(event, function, invocation, None, config)
    elif event.attempts <= retries:
        _schedule(event, RETRY_DELAYS_S[min(event.attempts, len(RETRY_DELAYS_S)) - 1])
    else:
        _finish(event, function, invocation, "RetriesExhausted", config)


def _invoke_config(event: Event, function: Function) -> dict[str, Any]:
    from moto.awslambda.utils import get_backend

    try:
        found = get_backend(event.account_id, event.region).get_function(function.name)
    except Exception:  # noqa: BLE001 - deleted meanwhile: the defaults
        return {}
    configs = getattr(found, "event_invoke_config", [])
    return dict(configs[0].config) if configs else {}


def _finish(
    event: Event,
    function: Function,
    invocation: Invocation | None,
    condition: str | None,
    config: dict[str, Any],
) -> None:
    destinations = config.get("DestinationConfig") or {}
    wanted = destinations.get("OnFailure" if condition else "OnSuccess") or {}
    target = str(wanted.get("Destination") or "")
    sent_to = ""
    sent: list[str] = []
    if target:
        record = _record(event, function, invocation, condition)
        _send_record(event, target, record, success=condition is None)
        sent.append(target)
    queue = dead_letter(function.name) if condition is not None else None
    if queue:  # a destination is "in addition to or instead of" the dead-letter queue
        _send_dead_letter(event, queue, invocation, condition or "")
        sent.append(queue)
    sent_to = ", ".join(sent)
    with _LOCK:
        _DELIVERED.append(
            {
                "function": function.name,
                "request_id": event.request_id,
                "attempts": event.attempts,
                "condition": condition or "Success",
                "sent_to": sent_to,
            }
        )
        del _DELIVERED[:-200]


def _record(
    event: Event, function: Function, invocation: Invocation | None, condition: str | None
) -> dict[str, Any]:
    """The invocation record a destination receives (AWS's documented shape)."""
    now = datetime.datetime.now(datetime.UTC)
    record: dict[str, Any] = {
        "version": "1.0",
        "timestamp": now.strftime("%Y-%m-%dT%H:%M:%S.") + f"{now.microsecond // 1000:03d}Z",
        "requestContext": {
            "requestId": event.request_id,
            "functionArn": f"{function.arn}:{function.version}",
            "condition": condition or "Success",
            "approximateInvokeCount": event.attempts,
        },
        "requestPayload": event.payload,
    }
    if invocation is not None:
        record["responseContext"] = response_context(invocation, function.version)
        record["responsePayload"] = invocation.payload
    return record


def _send_record(event: Event, target: str, record: dict[str, Any], *, success: bool) -> None:
    service = target.split(":")[2] if target.count(":") >= 5 else ""
    body = json.dumps(record)
    if service == "sqs":
        to_queue(target, body, {})
    elif service == "sns":
        to_topic(target, body)
    elif service == "lambda":
        submit(target, record, account_id=event.account_id, region=target.split(":")[3])
    elif service == "events":
        from moto.events.models import events_backends

        account, region = target.split(":")[4], target.split(":")[3]
        outcome = "Success" if success else "Failure"
        events_backends[account][region].put_events(
            [
                {
                    "Source": "lambda",
                    "DetailType": f"Lambda Function Invocation Result - {outcome}",
                    "Detail": body,
                    "Resources": [record["requestContext"]["functionArn"]],
                    "EventBusName": target,
                }
            ]
        )


def _send_dead_letter(
    event: Event, target: str, invocation: Invocation | None, condition: str
) -> None:
    error = condition
    if invocation is not None and isinstance(invocation.payload, dict):
        error = str(invocation.payload.get("errorMessage") or condition)
    attributes = {
        "RequestID": {"DataType": "String", "StringValue": event.request_id},
        "ErrorCode": {"DataType": "Number", "StringValue": "200"},
        "ErrorMessage": {"DataType": "String", "StringValue": error},
    }
    body = json.dumps(event.payload)
    if target.split(":")[2] == "sns":
        to_topic(target, body, attributes)
    else:
        to_queue(target, body, attributes)


__all__ = [
    "DEFAULT_MAX_AGE_S",
    "DEFAULT_RETRIES",
    "RETRY_DELAYS_S",
    "THROTTLE_DELAY_S",
    "Event",
    "clear",
    "dead_letter",
    "delivered",
    "set_dead_letter",
    "submit",
    "wait_idle",
]
