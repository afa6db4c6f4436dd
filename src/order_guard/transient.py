"""Which failures are transient: the one classification of failures Order Guard makes.

A *transient* failure may succeed if the same step is simply repeated, and repeating it
is safe because the write is idempotent (a repeat finds the order the first attempt
stored). Everything else is *permanent*: repeating cannot help, and the failure must
surface under its own name.

=====================  =================================================================
transient              source
=====================  =================================================================
throttling codes       :data:`THROTTLING_ERROR_CODES`: botocore's standard retry mode
                       (``botocore.retries.standard.ThrottledRetryableChecker``) and the
                       DynamoDB Developer Guide, "Error handling with DynamoDB"
transient codes        :data:`TRANSIENT_ERROR_CODES`: botocore's standard mode, plus
                       DynamoDB's ``TransactionConflictException`` and
                       ``ReplicatedWriteConflictException`` ("OK to retry")
any HTTP 5xx,          by status, so codes botocore does not model count too (DynamoDB's
408 and 429            503 ``ServiceUnavailable`` arrives as a plain ``ClientError``);
                       408 Request Timeout and 429 Too Many Requests are transient by
                       definition (RFC 9110 section 15.5.9, RFC 6585 section 4)
network                every ``botocore.exceptions.ConnectionError`` (connect timeout,
                       refused, proxy, TLS) and ``HTTPClientError`` (dropped connection,
                       read timeout): botocore's own transient classes
an unreadable answer   a ``200`` that does not show DynamoDB handled the call (no
                       ``ConsumedCapacity`` for the table: a wrong endpoint answering
                       HTML), or one botocore cannot parse (not UTF-8):
                       :class:`~order_guard.exceptions.TransientStoreError`, never a
                       success (:mod:`order_guard.dynamodb_calls`)
our own                :data:`OWN_TRANSIENT_ERRORS`:
                       :class:`~order_guard.exceptions.TransientStoreError`,
                       :class:`~order_guard.exceptions.TransientOrderError`,
                       :class:`~order_guard.exceptions.TimeBudgetExhausted`
=====================  =================================================================

Permanent: ``InvalidOrder``, ``OrderConflict``, ``ConfigurationError``,
``UnreadableStoredOrder``, ``OrderNotFound``, ``AttemptsCounterUnavailable``,
``InvalidBatchEvent`` and every other ``ClientError`` (access denied, validation, missing
table).

The workers call DynamoDB only inside :func:`order_guard.dynamodb_calls.dynamodb_call`,
which turns a transient botocore failure into ``TransientStoreError`` with the original as
``__cause__``. The Lambda runtime reports the unqualified class name as ``errorType``, so
every transient DynamoDB failure reaches Step Functions under that one name, whatever the
runtime's botocore models; ``tests/unit/test_failure_taxonomy.py`` proves that each
transient kind reaches a retrier in both Task states (Lambda's own service and timeout
errors included) and no permanent one does.
"""

from __future__ import annotations

from typing import Final

from botocore.exceptions import ClientError, HTTPClientError
from botocore.exceptions import ConnectionError as BotocoreConnectionError

from order_guard.exceptions import TimeBudgetExhausted, TransientOrderError, TransientStoreError

__all__ = [
    "OWN_TRANSIENT_ERRORS",
    "THROTTLING_ERROR_CODES",
    "TRANSIENT_ERROR_CODES",
    "TRANSIENT_EXCEPTIONS",
    "TRANSIENT_STATUSES",
    "describe",
    "is_transient",
]

THROTTLING_ERROR_CODES: Final = frozenset(
    {
        "Throttling",
        "ThrottlingException",
        "ThrottledException",
        "RequestThrottledException",
        "TooManyRequestsException",
        "ProvisionedThroughputExceededException",
        "TransactionInProgressException",
        "RequestLimitExceeded",
        "BandwidthLimitExceeded",
        "LimitExceededException",
        "RequestThrottled",
        "SlowDown",
        "PriorRequestNotComplete",
        "EC2ThrottledException",
    }
)
TRANSIENT_ERROR_CODES: Final = frozenset(
    {
        "RequestTimeout",
        "RequestTimeoutException",
        "PriorRequestNotComplete",
        "TransactionConflictException",
        "ReplicatedWriteConflictException",
    }
)
TRANSIENT_EXCEPTIONS: Final = (BotocoreConnectionError, HTTPClientError)
"""botocore's own transient classes: every connection failure and dropped response."""
OWN_TRANSIENT_ERRORS: Final = (TransientStoreError, TransientOrderError, TimeBudgetExhausted)
"""Ours: the workflow worker raises the first two (``TransientOrderError`` from the fault
modes only); ``TimeBudgetExhausted`` is the queue worker's (a batch item failure)."""
TRANSIENT_STATUSES: Final = frozenset({408, 429})
"""HTTP statuses transient whatever the error code (besides every 5xx)."""


def is_transient(exc: BaseException) -> bool:
    """Whether repeating the failed step may succeed (see the module table).

    Args:
        exc: any raised exception; a ``ClientError`` is judged by its error code and
            its HTTP status (``exc.response["ResponseMetadata"]["HTTPStatusCode"]``).
    """
    if isinstance(exc, OWN_TRANSIENT_ERRORS + TRANSIENT_EXCEPTIONS):
        return True
    if isinstance(exc, ClientError):
        code = exc.response.get("Error", {}).get("Code")
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        if code in THROTTLING_ERROR_CODES or code in TRANSIENT_ERROR_CODES:
            return True
        return isinstance(status, int) and (500 <= status <= 599 or status in TRANSIENT_STATUSES)
    return False


def describe(exc: BaseException) -> str:
    """``ClassName: message`` of a failure, with the code and HTTP status of a
    ``ClientError`` (``ClientError ServiceUnavailable (HTTP 503): …``)."""
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
        head, message = (
            f"ClientError {error.get('Code', '?')} (HTTP {status})",
            error.get("Message"),
        )
    else:
        head, message = type(exc).__name__, str(exc)
    return f"{head}: {message}" if message else head
