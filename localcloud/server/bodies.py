"""What the server holds of request bodies: each one bounded before it is read, and all of
them together while they are handled.

Issue 47's held-back attacks found the server reading whatever it was sent: forty
concurrent 10 MB bodies to an API's route took it past 1.5 GB, each within API Gateway's
quota; a signed ``SendMessage``, ``PutItem`` or ``Invoke`` of 200 MB was read whole
(+500 to 800 MB) before the service refused it. So:

- a body is bounded by its destination before a byte of it is read (:func:`body_limit`):
  an API's route by API Gateway's 10 MB payload quota (the API answers that itself), an
  AWS API by the largest request that service takes (:data:`SERVICE_BODY_BYTES`; Lambda's
  ``CreateFunction`` of a 50 MB zip, base64 in JSON, is the largest), S3 not at all (an
  object is what the account stores, up to 5 GB a ``PutObject``);
- a chunked body, which declares no length, is read here up to that bound and handed on
  as if its length had been declared (:func:`read_bounded`);
- the bodies the server holds at once share :data:`IN_FLIGHT_BYTES` (:class:`InFlight`):
  past it a request is answered 429 at once, as a throttled AWS API is, and the SDKs
  retry it after a backoff.

May import: nothing of the local cloud.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "DEFAULT_SERVICE_BODY_BYTES",
    "IN_FLIGHT_BYTES",
    "SERVICE_BODY_BYTES",
    "InFlight",
    "body_limit",
    "read_bounded",
]

DEFAULT_SERVICE_BODY_BYTES: Final = 20 * 1024 * 1024
"""The most a request to an AWS API may carry, S3 and :data:`SERVICE_BODY_BYTES` aside:
above every such quota (DynamoDB's ``BatchWriteItem``, 16 MB, is the largest)."""
SERVICE_BODY_BYTES: Final[Mapping[str, int | None]] = {
    "s3": None,
    "lambda": 70 * 1024 * 1024,
}
"""The services whose requests may be larger (bytes; ``None``: not bounded here): S3's
objects; Lambda's ``CreateFunction`` and ``UpdateFunctionCode`` with a zip of up to 50 MB
("Lambda quotas", a direct upload), base64 in a JSON body (66.7 MB)."""
IN_FLIGHT_BYTES: Final = 128 * 1024 * 1024
"""The most the server holds of bounded bodies at once (bytes)."""


def body_limit(service: str | None) -> int | None:
    """The most a request to ``service`` (its signing name, from the credential scope;
    ``None`` for an unsigned or unscoped call) may carry, or ``None`` for no bound."""
    if service is None:
        return DEFAULT_SERVICE_BODY_BYTES
    return SERVICE_BODY_BYTES.get(service, DEFAULT_SERVICE_BODY_BYTES)


def read_bounded(environ: dict[str, Any], limit: int) -> int | None:
    """The length of the request's body if it is at most ``limit`` bytes, else ``None``.

    A declared ``Content-Length`` over the limit is refused unread. A chunked body
    (werkzeug's server sets ``wsgi.input_terminated``) is read here, at most one byte past
    the limit, and handed on in ``wsgi.input`` with its ``CONTENT_LENGTH`` set, so that
    whatever reads it next reads exactly that.
    """
    declared = environ.get("CONTENT_LENGTH")
    if "wsgi.input_terminated" not in environ:
        if not declared:
            return 0  # no length and no chunks: no body (werkzeug reads none either)
        if not declared.isdigit() or int(declared) > limit:
            return None
        return int(declared)
    stream, parts, size = environ["wsgi.input"], [], 0
    while size <= limit:
        part = stream.read(min(64 * 1024, limit + 1 - size))
        if not part:
            break
        parts.append(part)
        size += len(part)
    if size > limit:
        return None
    environ["wsgi.input"] = io.BytesIO(b"".join(parts))
    environ["CONTENT_LENGTH"] = str(size)
    del environ["wsgi.input_terminated"]
    return size


class InFlight:
    """The bytes of the bodies being handled, within ``capacity``."""

    def __init__(self, capacity: int = IN_FLIGHT_BYTES) -> None:
        self.capacity = capacity
        self._held = 0
        self._lock = threading.Lock()

    def take(self, size: int) -> bool:
        """Hold ``size`` bytes if they fit (a body larger than the whole capacity fits an
        idle server), else say no at once."""
        with self._lock:
            if self._held and self._held + size > self.capacity:
                return False
            self._held += size
            return True

    def give(self, size: int) -> None:
        with self._lock:
            self._held -= size
