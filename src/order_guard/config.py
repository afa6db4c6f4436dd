"""Configuration, read once per execution environment from the function's environment.

Names flow from ``template.yaml`` (``!Ref OrdersTable`` …) into environment variables;
nothing here has a default for a required name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar, Final

from botocore.config import Config

from order_guard.exceptions import ConfigurationError

__all__ = [
    "CONNECT_TIMEOUT_S",
    "DYNAMODB_CALL_WORST_CASE_S",
    "DYNAMODB_CLIENT_CONFIG",
    "MAX_BACKOFF_S",
    "MAX_RECORD_CONCURRENCY",
    "READ_TIMEOUT_S",
    "RECORD_BUDGET_S",
    "RESULT_MARGIN_S",
    "STORE_ATTEMPT_WORST_CASE_S",
    "TOTAL_MAX_ATTEMPTS",
    "QueueWorkerSettings",
    "WorkflowWorkerSettings",
    "worst_case_call_s",
]

# The time budget (docs/failures.md, "The time budget"). DynamoDB answers a PutItem in
# milliseconds; a call that hangs must fail inside the function timeout (template
# Globals.Function.Timeout, 10 s) instead of after botocore's defaults (60 s read timeout).
CONNECT_TIMEOUT_S: Final = 0.5
"""Seconds to open a connection (TCP and TLS) to DynamoDB."""
READ_TIMEOUT_S: Final = 1.0
"""Seconds to wait for any read on the socket once the request is sent."""
TOTAL_MAX_ATTEMPTS: Final = 2
"""Attempts per call in all, the first included (botocore's ``total_max_attempts``;
its ``max_attempts`` would count retries only)."""
MAX_BACKOFF_S: Final = 20.0
"""botocore's standard retry mode sleeps ``random() × min(2 ** (n - 1), 20)`` seconds
after failed attempt ``n`` (``botocore.retries.standard.ExponentialBackoff``)."""

MAX_RECORD_CONCURRENCY: Final = 10
"""The most records of one batch the queue worker runs at once (``RECORD_CONCURRENCY``
is 1 to this; SQS batches without a batching window hold at most 10)."""

DYNAMODB_CLIENT_CONFIG: Final = Config(
    connect_timeout=CONNECT_TIMEOUT_S,
    read_timeout=READ_TIMEOUT_S,
    retries={"mode": "standard", "total_max_attempts": TOTAL_MAX_ATTEMPTS},
    max_pool_connections=MAX_RECORD_CONCURRENCY,  # one connection per concurrent record
)


def worst_case_call_s(
    attempts: int = TOTAL_MAX_ATTEMPTS,
    connect_timeout_s: float = CONNECT_TIMEOUT_S,
    read_timeout_s: float = READ_TIMEOUT_S,
) -> float:
    """The longest one DynamoDB call can take before it raises, in seconds.

    ``attempts × (connect + read)`` plus the largest backoff botocore's standard mode
    sleeps between them (``min(2 ** (n - 1), 20)`` after failed attempt ``n``): with the
    defaults, ``2 × (0.5 + 1.0) + 1 = 4.0`` s. It assumes the endpoint name resolves to
    one address (urllib3 tries each address with the full connect timeout) and that a
    stalled server sends nothing (the read timeout applies to each read).
    """
    backoff = sum(min(2.0 ** (n - 1), MAX_BACKOFF_S) for n in range(1, attempts))
    return attempts * (connect_timeout_s + read_timeout_s) + backoff


DYNAMODB_CALL_WORST_CASE_S: Final = worst_case_call_s()
"""4.0 s: one call, every attempt timed out (see :func:`worst_case_call_s`)."""
RESULT_MARGIN_S: Final = 0.5
"""Seconds kept for what follows the last call: the RESULT line, the metrics flush, the
response."""
RECORD_BUDGET_S: Final = DYNAMODB_CALL_WORST_CASE_S + RESULT_MARGIN_S
"""4.5 s: the queue worker starts a record only with at least this much time left (one
conditional PutItem per record)."""
STORE_ATTEMPT_WORST_CASE_S: Final = 2 * DYNAMODB_CALL_WORST_CASE_S + RESULT_MARGIN_S
"""8.5 s: one StoreOrder invocation (the attempts counter's UpdateItem, then the
conditional PutItem), under the 10 s function timeout."""

_BOOLEANS = {"true": True, "false": False}


@dataclass(frozen=True, slots=True)
class QueueWorkerSettings:
    """``ORDERS_TABLE_NAME`` (the orders table), ``RECORD_CONCURRENCY`` (records of one
    batch run at once, 1 to ``MAX_RECORD_CONCURRENCY``), ``POWERTOOLS_METRICS_NAMESPACE``
    and ``POWERTOOLS_SERVICE_NAME``.

    Powertools reads the last two when the handler module is imported and needs them
    only when it flushes the metrics, after the writes; they are checked here, with the
    table name, so that a missing one fails the invocation before any DynamoDB call.
    """

    orders_table: str
    metrics_namespace: str
    service_name: str
    record_concurrency: int

    REQUIRED: ClassVar[tuple[str, ...]] = (
        "ORDERS_TABLE_NAME",
        "RECORD_CONCURRENCY",
        "POWERTOOLS_METRICS_NAMESPACE",
        "POWERTOOLS_SERVICE_NAME",
    )

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> QueueWorkerSettings:
        """Raises ConfigurationError naming a missing, empty or malformed variable."""
        concurrency = _required(environ, "RECORD_CONCURRENCY")
        if not concurrency.isdigit() or not 1 <= int(concurrency) <= MAX_RECORD_CONCURRENCY:
            raise ConfigurationError(
                f"RECORD_CONCURRENCY must be an integer from 1 to {MAX_RECORD_CONCURRENCY}, "
                f"got {concurrency!r}"
            )
        return cls(
            orders_table=_required(environ, "ORDERS_TABLE_NAME"),
            metrics_namespace=_required(environ, "POWERTOOLS_METRICS_NAMESPACE"),
            service_name=_required(environ, "POWERTOOLS_SERVICE_NAME"),
            record_concurrency=int(concurrency),
        )


@dataclass(frozen=True, slots=True)
class WorkflowWorkerSettings:
    """``ORDERS_TABLE_NAME``, ``ATTEMPTS_TABLE_NAME``, ``FAULT_MODES_ENABLED``,
    ``POWERTOOLS_METRICS_NAMESPACE`` and ``POWERTOOLS_SERVICE_NAME``.

    ``FAULT_MODES_ENABLED`` is ``"true"`` or ``"false"`` (the template's
    ``FaultModesEnabled`` parameter); anything else is a configuration error. The
    Powertools variables are checked for the reason given in :class:`QueueWorkerSettings`.
    """

    orders_table: str
    attempts_table: str
    fault_modes_enabled: bool
    metrics_namespace: str
    service_name: str

    REQUIRED: ClassVar[tuple[str, ...]] = (
        "ORDERS_TABLE_NAME",
        "ATTEMPTS_TABLE_NAME",
        "FAULT_MODES_ENABLED",
        "POWERTOOLS_METRICS_NAMESPACE",
        "POWERTOOLS_SERVICE_NAME",
    )

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> WorkflowWorkerSettings:
        """Raises ConfigurationError naming a missing, empty or malformed variable."""
        flag = _required(environ, "FAULT_MODES_ENABLED")
        if flag not in _BOOLEANS:
            raise ConfigurationError(f"FAULT_MODES_ENABLED must be 'true' or 'false', got {flag!r}")
        return cls(
            orders_table=_required(environ, "ORDERS_TABLE_NAME"),
            attempts_table=_required(environ, "ATTEMPTS_TABLE_NAME"),
            fault_modes_enabled=_BOOLEANS[flag],
            metrics_namespace=_required(environ, "POWERTOOLS_METRICS_NAMESPACE"),
            service_name=_required(environ, "POWERTOOLS_SERVICE_NAME"),
        )


def _required(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name, "")
    if not value:
        raise ConfigurationError(f"environment variable {name} is required and is not set")
    return value
