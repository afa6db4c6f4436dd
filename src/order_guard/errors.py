"""The errors of the order domain.

The class name of each error is a contract: the Lambda Python runtime reports a raised
exception with ``errorType`` set to the *unqualified* class name, and Step Functions
matches a retrier's or catcher's ``ErrorEquals`` against that exact string. Renaming a
class here silently changes which retrier or catcher applies in
``statemachine/orders.asl.json``; ``tests/template/test_state_machine.py`` pins the names.

None of these classes subclasses another on purpose: a subclass would report its own
name and would not be matched by a retrier that lists only the parent.
"""

from __future__ import annotations


class InvalidOrder(Exception):
    """The job breaks the order contract (shape, type or range); no write was attempted.

    Permanent: retrying the same input can never succeed. The state machine catches it
    and ends in ``Rejected``; the queue worker reports the record as a batch item failure
    so that it reaches the dead-letter queue after ``maxReceiveCount`` receives.
    """


class TransientOrderError(Exception):
    """A temporary failure worth retrying (the demonstration fault modes raise it).

    The state machine's retrier for ``StoreOrder`` retries exactly this name.
    """


class TransientStoreError(Exception):
    """A DynamoDB call failed in a way that is safe and useful to retry.

    Raised from the original botocore error (kept as ``__cause__`` and named in the
    message) when :func:`order_guard.failures.is_transient` says so: throttling, any
    HTTP 5xx, a dropped connection, a connect or read timeout. botocore has already
    retried the call (``config.TOTAL_MAX_ATTEMPTS`` attempts in all). The Lambda runtime
    reports every such failure under this one name, whatever the runtime's botocore
    models, so one retrier per Task state covers them all; the write is idempotent, so
    the retry is safe even when the failed call had committed.
    """


class TimeBudgetExhausted(Exception):
    """Too little of the invocation's time is left to finish one more record.

    The queue worker raises it *before* starting a record (nothing written), so that
    record is listed as a batch item failure and redelivered, instead of the invocation
    timing out and SQS redelivering the whole batch, finished records included.
    """


class OrderConflict(Exception):
    """The business key is already stored with different business details.

    Never retried and never acknowledged: the first completed order stands, and the
    differing repeat needs a human decision.
    """


class OrderNotFound(Exception):
    """The summary stage found no order for the business key (consistent read)."""


class UnreadableStoredOrder(Exception):
    """DynamoDB answered in a shape the write decision cannot trust.

    Raised for a conditional-check failure whose response carries no ``Item``, or whose
    ``Item`` lacks a business attribute, has an unexpected attribute type, or holds a
    number that does not parse. Classified as the *error* decision: it is never guessed
    to be a duplicate.
    """


class AttemptsCounterUnavailable(Exception):
    """The diagnostic attempts counter failed permanently (access denied, a missing table)
    while a fault mode needs the count (``after-write``, ``flaky``).

    Permanent, and listed by no retrier or catcher: the execution fails under this name.
    Without a fault mode the count is not needed, and a counter failure never stops the
    order (the worker logs it and counts ``AttemptsCounterFailed``).
    """


class ConfigurationError(Exception):
    """A required environment variable is missing or malformed (checked at start-up)."""
