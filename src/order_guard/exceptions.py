"""The application's exceptions: every error class Order Guard defines, under one root.

The class name of each error is a contract: the Lambda Python runtime reports a raised
exception with ``errorType`` set to the *unqualified* class name, and Step Functions
matches a retrier's or catcher's ``ErrorEquals`` against that exact string. Renaming a
class here silently changes which retrier or catcher applies in
``statemachine/orders.asl.json``; ``tests/template/test_state_machine.py`` pins the names.

Each class derives from :class:`OrderGuardError`, which is never raised: it lets a caller
catch the application's errors in one ``except`` without changing the ``errorType`` any
raised error reports. Apart from that root, none of these classes subclasses another on
purpose: a subclass would report its own name and would not be matched by a retrier that
lists only the parent.
"""

from __future__ import annotations

__all__ = [
    "AttemptsCounterUnavailable",
    "ConfigurationError",
    "InvalidBatchEvent",
    "InvalidOrder",
    "OrderConflict",
    "OrderGuardError",
    "OrderNotFound",
    "TimeBudgetExhausted",
    "TransientOrderError",
    "TransientStoreError",
    "UnreadableStoredOrder",
]


class OrderGuardError(Exception):
    """The root of the application's errors; never raised itself.

    ``except OrderGuardError`` catches every error below and nothing of botocore's: a
    ``ClientError`` that is not transient (access denied, a missing table) leaves the
    workers unchanged, under its own name.
    """


class InvalidOrder(OrderGuardError):
    """The job breaks the order contract (shape, type or range); no write was attempted.

    Permanent: retrying the same input can never succeed. The state machine catches it
    and ends in ``Rejected``; the queue worker reports the record as a batch item failure
    so that it reaches the dead-letter queue after ``maxReceiveCount`` receives.
    """


class TransientOrderError(OrderGuardError):
    """A temporary failure worth retrying (the demonstration fault modes raise it).

    The state machine's retrier for ``StoreOrder`` retries exactly this name.
    """


class TransientStoreError(OrderGuardError):
    """A DynamoDB call failed in a way that is safe and useful to retry.

    Raised from the original botocore error (kept as ``__cause__`` and named in the
    message) when :func:`order_guard.transient.is_transient` says so: throttling, any
    HTTP 5xx, a dropped connection, a connect or read timeout. botocore has already
    retried the call (``config.TOTAL_MAX_ATTEMPTS`` attempts in all). The Lambda runtime
    reports every such failure under this one name, whatever the runtime's botocore
    models, so one retrier per Task state covers them all; the write is idempotent, so
    the retry is safe even when the failed call had committed.
    """


class TimeBudgetExhausted(OrderGuardError):
    """Too little of the invocation's time is left to finish one more record.

    The queue worker raises it *before* starting a record (nothing written), so that
    record is listed as a batch item failure and redelivered, instead of the invocation
    timing out and SQS redelivering the whole batch, finished records included.
    """


class OrderConflict(OrderGuardError):
    """The business key is already stored with different business details.

    Never retried and never acknowledged: the first completed order stands, and the
    differing repeat needs a human decision.
    """


class OrderNotFound(OrderGuardError):
    """The summary stage found no order for the business key (consistent read)."""


class UnreadableStoredOrder(OrderGuardError):
    """DynamoDB answered in a shape the write decision cannot trust.

    Raised for a conditional-check failure whose response carries no ``Item``, or whose
    ``Item`` lacks a business attribute, has an unexpected attribute type, or holds a
    number that does not parse. Classified as the *error* decision: it is never guessed
    to be a duplicate.
    """


class AttemptsCounterUnavailable(OrderGuardError):
    """The diagnostic attempts counter failed permanently (access denied, a missing table)
    while a fault mode needs the count (``after-write``, ``flaky``).

    Permanent, and listed by no retrier or catcher: the execution fails under this name.
    Without a fault mode the count is not needed, and a counter failure never stops the
    order (the worker logs it and counts ``AttemptsCounterFailed``).
    """


class ConfigurationError(OrderGuardError):
    """A required environment variable is missing or malformed (checked at start-up)."""


class InvalidBatchEvent(OrderGuardError, ValueError):
    """The queue worker's event is not an SQS batch: not an object, or without a non-empty
    ``Records`` list.

    The invocation fails, so the event source mapping retries the whole batch: a
    malformed event is never taken for an empty success. A ``ValueError`` too, so a
    caller that catches bad values catches it.
    """
