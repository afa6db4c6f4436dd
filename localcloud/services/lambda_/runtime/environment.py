"""A function's environment variables: what Lambda sets, what it refuses, and how an
in-process invocation sees them.

The variables an invocation sees are the function's own (the template's ``Environment``,
or ``UpdateFunctionConfiguration``'s) and the ones the runtime sets
(``AWS_LAMBDA_FUNCTION_NAME``, ``AWS_REGION`` …), with ``AWS_CONFIG_FILE`` and
``AWS_SHARED_CREDENTIALS_FILE`` pointed at an empty file, as Lambda has no ``~/.aws``.
In-process the process environment is shared, so :func:`applied` sets them key by key
for the invocation and puts back what was there.
"""

from __future__ import annotations

import contextlib
import os
import uuid
from collections.abc import Iterator, Mapping
from typing import Any, Final

RESERVED_VARIABLES: Final = frozenset(
    {
        "_HANDLER",
        "_X_AMZN_TRACE_ID",
        "AWS_DEFAULT_REGION",
        "AWS_REGION",
        "AWS_EXECUTION_ENV",
        "AWS_LAMBDA_FUNCTION_NAME",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE",
        "AWS_LAMBDA_FUNCTION_VERSION",
        "AWS_LAMBDA_INITIALIZATION_TYPE",
        "AWS_LAMBDA_LOG_GROUP_NAME",
        "AWS_LAMBDA_LOG_STREAM_NAME",
        "AWS_ACCESS_KEY",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_LAMBDA_RUNTIME_API",
        "LAMBDA_TASK_ROOT",
        "LAMBDA_RUNTIME_DIR",
    }
)
"""Variables Lambda sets itself and refuses in a function's configuration (Lambda
developer guide, "Defined runtime environment variables": the reserved keys)."""

PLATFORM_KEYS: Final = frozenset(
    {"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_ENDPOINT_URL"}
)
"""What the local cloud adds to every function's environment (its credentials and, in
server mode, its endpoint); a configuration update keeps them."""

EXECUTION_ENV: Final = "AWS_Lambda_python3.13"


def reserved_in(variables: Mapping[str, Any]) -> list[str]:
    """The reserved names among ``variables`` (empty when none)."""
    return sorted(name for name in variables if name in RESERVED_VARIABLES)


def runtime_variables(
    *,
    name: str,
    memory_mb: int,
    log_group: str,
    log_stream: str,
    version: str = "$LATEST",
    region: str,
    task_root: str,
    handler: str,
    own: Mapping[str, str],
    traced: bool = False,
) -> dict[str, str]:
    """The variables an invocation (``traced``: with a new X-Ray trace id) or an init sees:
    the runtime's, then the function's ``own``."""
    base = {
        "AWS_LAMBDA_FUNCTION_NAME": name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
        "AWS_LAMBDA_FUNCTION_VERSION": version,
        "AWS_LAMBDA_LOG_GROUP_NAME": log_group,
        "AWS_LAMBDA_LOG_STREAM_NAME": log_stream,
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "AWS_EXECUTION_ENV": EXECUTION_ENV,
        "LAMBDA_TASK_ROOT": task_root,
        "_HANDLER": handler,
        # Lambda has no ~/.aws: the host's config and credentials files must not give a
        # handler another endpoint, profile or real credentials.
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    if traced:
        base["_X_AMZN_TRACE_ID"] = f"Root=1-{uuid.uuid4().hex[:8]}-{uuid.uuid4().hex[:24]}"
    return {**base, **own}


@contextlib.contextmanager
def applied(values: Mapping[str, str]) -> Iterator[None]:
    """Set ``values`` in the process environment for the block, key by key.

    Never ``clear()``: other threads (moto's interpreter, the server) read the process
    environment meanwhile and must not see it empty. A variable is put back only if it
    still holds the invocation's value, so another thread's change made meanwhile is
    kept. (The local cloud hides the host's own ``AWS_*`` variables for its whole
    lifetime: :mod:`localcloud.account`.)
    """
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in saved.items():
            if os.environ.get(name) != values[name]:
                continue
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
