"""What an AWS API call must carry to reach the services, and AWS's answers when it does not.

The local cloud checks no signature's value (its credentials are fake), but it does check
the ``Authorization`` header's shape, as AWS does before it looks at the signature: an
unsigned call, a header missing a part, a credential scope of the wrong shape or in a
region that does not exist are each answered with the error AWS gives, in the caller's
protocol, instead of reaching moto (which answers a malformed header with HTTP 500 and an
HTML page). Sources: each service API reference's "Common Errors" page
(``IncompleteSignature`` 400, ``InvalidSignatureException`` 403,
``MissingAuthenticationToken`` 403), Amazon S3's error responses
(``AuthorizationHeaderMalformed`` 400, ``AccessDenied`` 403), and the Signature Version 4
reference (``Credential=<key>/<date>/<region>/<service>/aws4_request``; SigV4a omits the
region and names it in ``X-Amz-Region-Set``).
"""

from __future__ import annotations

import functools
import json
import re
import uuid
from typing import Final
from urllib.parse import parse_qs
from xml.sax.saxutils import escape

import botocore.session
from werkzeug.wrappers import Request, Response

from localcloud.server.request_path import decided_path

SIGV4: Final = "AWS4-HMAC-SHA256"
SIGV4A: Final = "AWS4-ECDSA-P256-SHA256"
SIGNATURE_SCHEMES: Final = (f"{SIGV4} ", f"{SIGV4A} ")
"""``Authorization`` schemes of a signed AWS request (SigV4 and SigV4a)."""
REQUIRED_PARTS: Final = ("Credential", "Signature", "SignedHeaders")
"""The parts of a SigV4 ``Authorization`` header, in the order AWS names the missing ones."""
TERMINATOR: Final = "aws4_request"
_REST_JSON_PATH = re.compile(r"^/\d{4}-\d{2}-\d{2}/")  # Lambda's /2015-03-31/functions …


@functools.cache
def _regions() -> tuple[frozenset[str], tuple[re.Pattern[str], ...]]:
    """Every region botocore's endpoint data names, and each partition's region pattern
    (a region newer than the data still matches its partition's pattern)."""
    partitions = botocore.session.get_session().get_data("endpoints")["partitions"]
    names = frozenset(name for p in partitions for name in p["regions"])
    return names, tuple(re.compile(p["regionRegex"]) for p in partitions)


def valid_region(region: str) -> bool:
    """Whether ``region`` is an AWS region (``us-east-1``, ``eu-central-2``, ``cn-north-1``
    …), as botocore's endpoint data knows them."""
    names, patterns = _regions()
    return region in names or any(pattern.fullmatch(region) for pattern in patterns)


def signed(request: Request) -> bool:
    """Whether a request carries a SigV4 (or SigV4a) ``Authorization`` header, or is a
    presigned S3 ``GET`` or ``HEAD`` of an object (``X-Amz-Signature`` in the query, an
    ``s3`` credential scope, a bucket and a key)."""
    authorization = request.headers.get("Authorization", "")
    if authorization.startswith(SIGNATURE_SCHEMES):
        return True
    if request.method not in ("GET", "HEAD"):
        return False
    query = parse_qs(request.query_string.decode("latin-1"))
    credential = (query.get("X-Amz-Credential") or [""])[0]
    if not query.get("X-Amz-Signature") or not credential.endswith("/s3/aws4_request"):
        return False
    host = str(request.headers.get("Host", "")).lower().rpartition(":")[0]
    segments = [s for s in decided_path(request.environ).split("/") if s]
    virtual_hosted = host.endswith(".localhost")
    return len(segments) >= (1 if virtual_hosted else 2)


def authorization_parts(authorization: str) -> dict[str, str] | None:
    """A SigV4 (or SigV4a) ``Authorization`` header's parts by name (``Credential``,
    ``SignedHeaders``, ``Signature``), or ``None`` for another scheme."""
    scheme, _, rest = authorization.partition(" ")
    if scheme not in (SIGV4, SIGV4A):
        return None
    return dict(
        (key.strip(), value.strip())
        for key, sep, value in (p.partition("=") for p in rest.split(","))
        if sep
    )


def signing_service(authorization: str) -> str | None:
    """The service a SigV4 ``Authorization`` header's credential scope names
    (``…/<service>/aws4_request``), or ``None``."""
    parts = authorization_parts(authorization)
    scope = (parts or {}).get("Credential", "").split("/")
    return scope[-2] if len(scope) >= 3 else None


def signature_refusal(request: Request) -> Response | None:
    """AWS's answer to a signed request whose ``Authorization`` header is malformed, or
    ``None`` when its shape is right (its signature is not checked).

    ===========================================  ============================================
    a part missing (``Credential``,              ``IncompleteSignature`` 400: "Authorization
    ``SignedHeaders``, ``Signature``)            header requires '<part>' parameter. …
                                                 Authorization=<header>"
    a scope not ending in ``aws4_request``       ``IncompleteSignature`` 400: "Credential
                                                 should be scoped with a valid terminator:
                                                 'aws4_request', not '<last>'."
    a scope of the wrong length                  ``IncompleteSignature`` 400: "Credential
                                                 should be scoped to a valid region."…
    a region that does not exist                 ``InvalidSignatureException`` 403 (query:
                                                 ``SignatureDoesNotMatch``; S3:
                                                 ``AuthorizationHeaderMalformed`` 400):
                                                 "Credential should be scoped to a valid
                                                 region."
    ===========================================  ============================================
    """
    authorization = str(request.headers.get("Authorization", ""))
    scheme = authorization.partition(" ")[0]
    parts = authorization_parts(authorization)
    if parts is None:
        return None
    missing = [part for part in REQUIRED_PARTS if not parts.get(part)]
    if missing:
        said = " ".join(f"Authorization header requires '{part}' parameter." for part in missing)
        message = f"{said} Authorization={authorization}"
        return aws_error(request, 400, "IncompleteSignature", "IncompleteSignature", message)
    scope = parts["Credential"].split("/")
    if scope[-1] != TERMINATOR:
        message = (
            f"Credential should be scoped with a valid terminator: '{TERMINATOR}', "
            f"not '{scope[-1]}'."
        )
        return aws_error(request, 400, "IncompleteSignature", "IncompleteSignature", message)
    length = 4 if scheme == SIGV4A else 5  # SigV4a: <key>/<date>/<service>/aws4_request
    if len(scope) != length:
        message = f"Credential should be scoped to a valid region, not '{parts['Credential']}'."
        return aws_error(request, 400, "IncompleteSignature", "IncompleteSignature", message)
    if scheme == SIGV4 and not valid_region(scope[2]):
        if _protocol(request) == "s3":
            message = (
                f"The authorization header is malformed; the region '{scope[2]}' is wrong; "
                "expecting 'us-east-1'"
            )
            return aws_error(request, 400, "", "AuthorizationHeaderMalformed", message)
        message = "Credential should be scoped to a valid region."
        return aws_error(
            request, 403, "InvalidSignatureException", "SignatureDoesNotMatch", message
        )
    return None


def unsigned_refusal(request: Request) -> Response:
    """HTTP 403 with the error AWS gives an unsigned call, in the caller's protocol.

    ==============================  ===================================================
    JSON protocol (``X-Amz-Target``: DynamoDB, SQS, Step Functions, Logs …)
                                    ``{"__type": "MissingAuthenticationTokenException",
                                    "message": …}``
    REST-JSON (Lambda's dated paths)  ``{"message": …}``, ``x-amzn-ErrorType``
    query protocol (form or ``Action=``: CloudFormation, IAM, SNS …)
                                    ``<ErrorResponse>`` with ``MissingAuthenticationToken``
    anything else: S3               ``<Error>`` with ``AccessDenied``
    ==============================  ===================================================
    """
    message = "Request is missing Authentication Token"
    if _protocol(request) == "s3":
        return aws_error(request, 403, "", "AccessDenied", "Access Denied")
    return aws_error(
        request, 403, "MissingAuthenticationTokenException", "MissingAuthenticationToken", message
    )


def _protocol(request: Request) -> str:
    """``json`` (``X-Amz-Target``), ``rest-json`` (Lambda's dated paths), ``query`` (a form
    or ``Action=``) or ``s3`` (anything else)."""
    if request.headers.get("X-Amz-Target"):
        return "json"
    if _REST_JSON_PATH.match(request.path):
        return "rest-json"
    form = str(request.headers.get("Content-Type", "")).startswith(
        "application/x-www-form-urlencoded"
    )
    if form or b"Action=" in request.query_string:
        return "query"
    return "s3"


def aws_error(
    request: Request, status: int, json_code: str, other_code: str, message: str
) -> Response:
    """An AWS error in the request's protocol: ``json_code`` for the JSON protocols,
    ``other_code`` for the query protocol and S3."""
    request_id = str(uuid.uuid4())
    protocol = _protocol(request)
    headers = {"x-amzn-RequestId": request_id}
    if protocol == "json":
        headers["x-amzn-ErrorType"] = json_code
        body = json.dumps({"__type": json_code, "message": message})
        return Response(body, status, headers, content_type="application/x-amz-json-1.0")
    if protocol == "rest-json":
        headers["x-amzn-ErrorType"] = json_code
        body = json.dumps({"message": message})
        return Response(body, status, headers, content_type="application/json")
    if protocol == "query":
        body = (
            f"<ErrorResponse><Error><Type>Sender</Type><Code>{other_code}</Code>"
            f"<Message>{escape(message)}</Message></Error><RequestId>{request_id}</RequestId>"
            "</ErrorResponse>"
        )
        return Response(body, status, headers, content_type="text/xml")
    body = (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{other_code}</Code>'
        f"<Message>{escape(message)}</Message><RequestId>{request_id}</RequestId></Error>"
    )
    return Response(body, status, {"x-amz-request-id": request_id}, content_type="application/xml")
