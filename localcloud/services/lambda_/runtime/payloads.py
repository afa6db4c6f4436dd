"""Lambda's invocation payload quotas, and the event as the service hands it to a runtime.

Lambda quotas ("Lambda quotas", Function configuration, deployment, and execution:
"Invocation payload (request and response)"): 6 MB each for the request and the response
of a synchronous invocation, 1 MB for the request of an asynchronous one (256 KB before
2025). The figures and the answers, as Lambda gives them:

- a synchronous request over 6,291,456 bytes is refused before anything runs: HTTP 413
  ``RequestEntityTooLargeException``, "Request must be smaller than 6291456 bytes for the
  InvokeFunction operation";
- an asynchronous request over 1,048,576 bytes is refused before it is queued: HTTP 413
  ``RequestEntityTooLargeException``, "<n> byte payload is too large for the Event
  invocation type (limit 1048576 bytes)";
- a response over 6,291,556 bytes (6 MB and the runtime's 100 bytes) fails the invocation:
  ``Function.ResponseSizeTooLarge``, "Response payload size exceeded maximum allowed
  payload size (6291556 bytes)." (the Runtime API refuses the answer:
  :mod:`.runtime_api`).

Every way a function is invoked (the Invoke API, event source mappings, API Gateway, Step
Functions, asynchronous invocation) hands the event to the runtime through
:func:`event_body`, so none can pass a larger one.
"""

from __future__ import annotations

import json
from typing import Any, Final

SYNC_REQUEST_LIMIT: Final = 6_291_456
"""A synchronous invocation's request payload, at most (bytes: 6 MiB)."""
ASYNC_REQUEST_LIMIT: Final = 1_048_576
"""An asynchronous invocation's request payload, at most (bytes: 1 MiB)."""
RESPONSE_LIMIT: Final = 6_291_556
"""A synchronous invocation's response payload, at most (bytes: 6 MiB and 100)."""
RESPONSE_TOO_LARGE: Final = {
    "errorMessage": "Response payload size exceeded maximum allowed payload size "
    f"({RESPONSE_LIMIT} bytes).",
    "errorType": "Function.ResponseSizeTooLarge",
}
"""The error an invocation whose response is over :data:`RESPONSE_LIMIT` fails with."""


class RequestTooLarge(Exception):
    """An invocation's request payload is over Lambda's quota: nothing ran. The Invoke API
    answers it with HTTP 413 ``RequestEntityTooLargeException`` and ``str(self)``."""

    code: Final = "RequestEntityTooLargeException"

    def __init__(self, size: int, *, asynchronous: bool = False) -> None:
        if asynchronous:
            message = (
                f"{size} byte payload is too large for the Event invocation type "
                f"(limit {ASYNC_REQUEST_LIMIT} bytes)"
            )
        else:
            message = (
                f"Request must be smaller than {SYNC_REQUEST_LIMIT} bytes for the "
                "InvokeFunction operation"
            )
        super().__init__(message)
        self.size = size


def check_request(size: int, *, asynchronous: bool = False) -> None:
    """Refuse a request payload of ``size`` bytes over the quota of its invocation type.

    Raises:
        RequestTooLarge: over 6,291,456 bytes (synchronous) or 1,048,576 (asynchronous).
    """
    limit = ASYNC_REQUEST_LIMIT if asynchronous else SYNC_REQUEST_LIMIT
    if size > limit:
        raise RequestTooLarge(size, asynchronous=asynchronous)


def event_body(event: Any) -> bytes:
    """``event`` as the runtime receives it: compact JSON in UTF-8 (the invoker's own
    whitespace and ``\\u`` escapes are not counted against it; a string holding a lone
    surrogate, which UTF-8 cannot carry, is sent escaped).

    Raises:
        RequestTooLarge: the body is over the synchronous quota (6,291,456 bytes).
    """
    try:
        body = json.dumps(event, separators=(",", ":"), ensure_ascii=False).encode()
    except UnicodeEncodeError:
        body = json.dumps(event, separators=(",", ":")).encode()
    check_request(len(body))
    return body
