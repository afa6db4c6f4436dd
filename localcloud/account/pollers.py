"""The account's event source mappings seen from a stack and run to the end: the pollers
of a deployment's SQS mappings, draining every mapped queue in-process, and running
every stream mapping (Kinesis, DynamoDB) until it has caught up with its stream.

May import: :mod:`localcloud.services` (Lambda's mappings, SQS's poller) and
:mod:`localcloud.state`.
"""

from __future__ import annotations

import time

from localcloud.cloudformation.provider import Deployment
from localcloud.services.lambda_ import event_source_mappings as mappings
from localcloud.services.lambda_.stream_mappings import (
    THROTTLE_BACKOFF_S,
    PollOutcome,
    StreamEventSourceMapping,
)
from localcloud.services.sqs import BatchOutcome, SqsEventSourceMapping
from localcloud.state import Target, queue_empty


def of(deployment: Deployment) -> list[SqsEventSourceMapping]:
    """The pollers of the SQS event source mappings ``deployment`` made, in template
    order (a mapping deleted since is still listed, marked ``deleted``; one the account
    does not poll, such as a queue of another region, is not)."""
    found = []
    for logical_id, resource in deployment.template.resources.items():
        mapping = resource.get("Type") == "AWS::Lambda::EventSourceMapping"
        if mapping and logical_id in deployment.refs:
            try:
                poller = mappings.get(str(deployment.refs[logical_id]))
            except KeyError:
                continue
            if isinstance(poller, SqsEventSourceMapping):
                found.append(poller)
    return found


def drain(target: Target, *, timeout_s: float, idle_sleep_s: float) -> list[BatchOutcome]:
    """Run every enabled SQS event source mapping of the account until its queue holds
    nothing, visible or in flight.

    Messages left for redelivery come back after the visibility timeout and are polled
    again, until they are acknowledged or redriven to the dead-letter queue.

    Raises:
        TimeoutError: a queue is not empty after ``timeout_s`` seconds.
    """
    outcomes: list[BatchOutcome] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        sources = [p for p in mappings.pollers() if isinstance(p, SqsEventSourceMapping)]
        polled = [source.poll_once() for source in sources]
        busy = [outcome for outcome in polled if outcome.invocation is not None]
        outcomes.extend(busy)
        if busy:
            continue
        active = [s for s in sources if s.enabled and not s.deleted]
        if all(queue_empty(target, source.queue_url) for source in active):
            return outcomes
        time.sleep(idle_sleep_s)
    raise TimeoutError(f"a mapped queue still holds messages after {timeout_s} s")


def settle_streams(*, timeout_s: float, idle_sleep_s: float) -> list[PollOutcome]:
    """Run every enabled stream event source mapping of the account until each has
    processed or discarded every record of its stream (a batch waiting for a retry is
    retried when its delay is over, a throttled one after a back-off; a batching window is
    not waited for: a served account's background polls wait it out).

    Raises:
        TimeoutError: a mapping has not caught up after ``timeout_s`` seconds.
    """
    outcomes: list[PollOutcome] = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        streams = [p for p in mappings.pollers() if isinstance(p, StreamEventSourceMapping)]
        polled = [stream.poll_once() for stream in streams]
        busy = [outcome for outcome in polled if outcome.invocations or outcome.discarded]
        outcomes.extend(busy)
        if busy:
            continue
        if all(stream.caught_up() for stream in streams):
            return outcomes
        throttled = any(outcome.throttled for outcome in polled)
        time.sleep(THROTTLE_BACKOFF_S if throttled else idle_sleep_s)
    raise TimeoutError(f"a stream mapping has not caught up after {timeout_s} s")
