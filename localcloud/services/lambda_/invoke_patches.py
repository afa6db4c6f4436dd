"""moto's invoke API, made to run the account's functions within Lambda's payload quotas.

- ``LambdaSimpleBackend.invoke``: without Docker, moto's Lambda only echoes the event.
  The invoke API (``aws lambda invoke``, Step Functions' ``lambda:invoke`` tasks) reaches
  the function the local cloud runs (:mod:`localcloud.services.lambda_`) instead, with the
  runtime's error header (``X-Amz-Function-Error: Unhandled``) so retriers and catchers
  match by name, and ``LogType=Tail``'s last 4 KB of log. Nothing else in moto offers a
  hook for it. ``InvocationType=Event`` queues the event (:mod:`.asynchronous`) and
  answers 202 at once, as AWS does. A request over Lambda's payload quota (6,291,456
  bytes synchronous, 1,048,576 asynchronous: :mod:`.runtime.payloads`) is refused with
  HTTP 413 ``RequestEntityTooLargeException`` before anything runs or is queued.
- ``LambdaResponse.invoke``: Invoke's ``Qualifier`` (a version or an alias) reaches the
  backend (moto reads a lower-case ``qualifier`` no SDK sends), and a response is judged
  by Lambda's 6,291,556 bytes, which the Runtime API applies (moto fails any response
  whose ``sys.getsizeof`` is over 6,000,000).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from typing import Any, Final
from urllib.parse import unquote

from moto.awslambda.responses import LambdaResponse
from moto.awslambda_simple.models import LambdaSimpleBackend
from moto.core.exceptions import JsonRESTError
from moto.utilities.aws_headers import amz_crc32

from localcloud.patches.registry import Method, Patch
from localcloud.services.lambda_ import asynchronous
from localcloud.services.lambda_.runtime import (
    RequestTooLarge,
    Throttled,
    invoke_through_api,
    lookup,
)
from localcloud.services.lambda_.runtime.payloads import ASYNC_REQUEST_LIMIT, check_request

TAIL_BYTES: Final = 4096
"""``LogType=Tail``: the last 4 KB of the invocation's log (Lambda API reference, Invoke)."""


class TooManyRequests(JsonRESTError):
    """The Lambda API's throttle: 429 ``TooManyRequestsException``, ``Reason`` saying
    which concurrency is in use (Lambda API reference, Invoke, Errors)."""

    code = 429

    def __init__(self, reason: str) -> None:
        super().__init__("TooManyRequestsException", "Rate Exceeded.")
        self.description = json.dumps(
            {
                "__type": "TooManyRequestsException",
                "message": "Rate Exceeded.",
                "Reason": reason,
                "Type": "User",
            }
        )


class EntityTooLarge(JsonRESTError):
    """HTTP 413 ``RequestEntityTooLargeException`` with Lambda's ``message``: a payload or a
    package over its quota."""

    code = 413

    def __init__(self, message: str) -> None:
        super().__init__("RequestEntityTooLargeException", message)


def _invoke(original: Method) -> Method:
    def invoke(
        self: LambdaSimpleBackend,
        function_name: str,
        qualifier: str | None,
        body: Any,
        headers: Any,
        response_headers: Any,
    ) -> bytes:
        asynchronous_call = str(_header(headers, "X-Amz-Invocation-Type")) == "Event"
        try:  # Lambda's front door: nothing is looked up, run or queued past the quota
            check_request(_size(body), asynchronous=asynchronous_call)
        except RequestTooLarge as refused:
            raise EntityTooLarge(str(refused)) from None
        try:
            function = lookup(function_name, qualifier)
        except KeyError:  # not a function the local cloud runs: moto's own behaviour,
            # once the function exists (moto's simple backend echoes any name; AWS: 404)
            self.get_function(function_name, qualifier)
            echoed = original(self, function_name, qualifier, body, headers, response_headers)
            return echoed.encode() if isinstance(echoed, str) else echoed or b""
        event = json.loads(body) if body else {}
        if asynchronous_call:
            # queued, answered 202 with no body (moto sets the status from the header)
            request_id = asynchronous.submit(
                function_name,
                event,
                account_id=self.account_id,
                region=self.region_name,
                qualifier=qualifier,
            )
            response_headers["x-amzn-requestid"] = request_id
            return b""
        try:
            invocation = invoke_through_api(function, event)
        except Throttled as throttled:
            raise TooManyRequests(throttled.reason) from None
        except RequestTooLarge as refused:  # the event, as the runtime receives it
            raise EntityTooLarge(str(refused)) from None
        if invocation.error:
            response_headers["x-amz-function-error"] = "Unhandled"
        response_headers["x-amz-executed-version"] = function.version
        if str(_header(headers, "X-Amz-Log-Type")).lower() == "tail":
            # LogType=Tail: the last 4 KB of the invocation's log, base64, as on AWS.
            tail = log_tail(invocation.log_lines)
            response_headers["x-amz-log-result"] = base64.b64encode(tail).decode()
        return invocation.body

    return invoke


def _invoke_request(original: Method) -> Method:
    @amz_crc32
    def invoke(self: LambdaResponse) -> Any:
        """moto's ``LambdaResponse.invoke`` without its response check, which would fail
        a response of 6,000,000 to 6,291,556 bytes that Lambda answers."""
        query = self.querystring
        if "Qualifier" in query and "qualifier" not in query:
            query["qualifier"] = query["Qualifier"]
        response_headers: dict[str, str] = {}
        function_name = unquote(self.path.rsplit("/", 2)[-2])
        qualifier = self._get_param("qualifier")
        payload = self.backend.invoke(
            function_name, qualifier, self.body, self.headers, response_headers
        )
        if payload is None:
            return 404, response_headers, "{}"
        response_headers["content-type"] = "application/json"
        invocation_type = self.headers.get("X-Amz-Invocation-Type")
        if invocation_type == "Event":
            return 202, {**response_headers, "status": "202"}, payload
        if invocation_type == "DryRun":
            return 204, {**response_headers, "status": "204"}, payload
        if self.headers.get("X-Amz-Log-Type") != "Tail":
            response_headers.pop("x-amz-log-result", None)
        return 200, response_headers, payload

    return invoke


def _invoke_async_request(original: Method) -> Method:
    def invoke_async(self: LambdaResponse) -> Any:
        """The deprecated ``InvokeAsync`` within the asynchronous quota, as ``Invoke`` with
        ``InvocationType=Event`` is: moto ran any payload."""
        size = _size(self.body)
        if size > ASYNC_REQUEST_LIMIT:
            raise EntityTooLarge(str(RequestTooLarge(size, asynchronous=True)))
        return original(self)

    return invoke_async


def log_tail(lines: Sequence[str], limit: int = TAIL_BYTES) -> bytes:
    """The last ``limit`` bytes of an invocation's log lines joined by newlines (read
    from the end: the lines before them are never joined)."""
    picked: list[str] = []
    size = 0
    for line in reversed(lines):
        picked.append(line)
        size += len(line.encode("utf-8", "replace")) + 1
        if size > limit:
            break
    return "\n".join(reversed(picked)).encode("utf-8", "replace")[-limit:]


def _size(body: Any) -> int:
    """The request body's length in bytes (moto hands it on decoded from UTF-8)."""
    if not body:
        return 0
    if isinstance(body, str):
        return len(body) if body.isascii() else len(body.encode("utf-8", "surrogatepass"))
    return len(body)


def _header(headers: Any, name: str) -> str | None:
    try:
        value = headers.get(name)
    except AttributeError:
        return None
    return None if value is None else str(value)


PATCHES: Final = (
    Patch(
        LambdaResponse,
        "invoke",
        ("self",),
        _invoke_request,
        "Invoke's Qualifier query parameter (moto reads 'qualifier', which no SDK sends); "
        "a response judged by Lambda's 6,291,556 bytes, not moto's 6,000,000",
    ),
    Patch(
        LambdaResponse,
        "invoke_async",
        ("self",),
        _invoke_async_request,
        "the deprecated InvokeAsync within the 1 MB asynchronous payload quota (413 "
        "otherwise), as Invoke's Event type",
    ),
    Patch(
        LambdaSimpleBackend,
        "invoke",
        ("self", "function_name", "qualifier", "body", "headers", "response_headers"),
        _invoke,
        "the invoke API must run the function, not echo the event, within Lambda's "
        "payload quotas (6 MB synchronous, 1 MB asynchronous: 413 otherwise)",
    ),
)
