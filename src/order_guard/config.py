"""Configuration, read once per execution environment from the function's environment.

Names flow from ``template.yaml`` (``!Ref OrdersTable`` …) into environment variables;
nothing here has a default for a required name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from botocore.config import Config

from order_guard.errors import ConfigurationError

# DynamoDB answers in milliseconds; a call that hangs must fail inside the function
# timeout (10 s) instead of botocore's defaults (60 s read timeout, 10 attempts in legacy
# mode): at most 2 attempts of 1 s to connect + 2 s to read, about 7 s with the backoff.
# Standard retry mode retries throttling and 5xx errors; what still fails is raised, and
# the state machine's StoreOrder retrier retries those names (the write is idempotent).
DYNAMODB_CLIENT_CONFIG = Config(
    connect_timeout=1,
    read_timeout=2,
    retries={"mode": "standard", "max_attempts": 2},
)

_BOOLEANS = {"true": True, "false": False}


@dataclass(frozen=True, slots=True)
class QueueWorkerSettings:
    """``ORDERS_TABLE_NAME``: the orders table."""

    orders_table: str

    @classmethod
    def from_environ(cls, environ: Mapping[str, str]) -> QueueWorkerSettings:
        """Raises ConfigurationError naming a missing or empty variable."""
        return cls(orders_table=_required(environ, "ORDERS_TABLE_NAME"))


@dataclass(frozen=True, slots=True)
class WorkflowWorkerSettings:
    """``ORDERS_TABLE_NAME``, ``ATTEMPTS_TABLE_NAME`` and ``FAULT_MODES_ENABLED``.

    ``FAULT_MODES_ENABLED`` is ``"true"`` or ``"false"`` (the template's
    ``FaultModesEnabled`` parameter); anything else is a configuration error.
    """

    orders_table: str
    attempts_table: str
    fault_modes_enabled: bool

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
        )


def _required(environ: Mapping[str, str], name: str) -> str:
    value = environ.get(name, "")
    if not value:
        raise ConfigurationError(f"environment variable {name} is required and is not set")
    return value
