"""AWS service integrations run against the local cloud's own services: a REST API's
``AWS`` integration (its request mapped by templates and parameters, the service's
answer mapped back by integration responses) and an HTTP API's first-class integrations
(``SQS-SendMessage``, ``StepFunctions-StartExecution``).

API Gateway calls the service as any client does: an HTTP request signed with the
integration's role (API Gateway's "Set up an API integration request" and "Integration
subtype reference"). Locally the request goes to the local cloud's own endpoint, signed
for the URI's region and service; the role is not assumed (the local account allows every
call), which docs/local-cloud.md lists as a difference.

URIs (``arn:aws:apigateway:{region}:{service}:{action|path}/{…}``) run for the services
in :data:`SERVICES`: SQS (query protocol: ``path/{account}/{queue}`` or
``action/{Action}``), Step Functions and DynamoDB (JSON protocol: ``action/{Action}``,
sent with the ``X-Amz-Target`` the service's API names).
"""

from __future__ import annotations

import http.client
import json
import re
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode

from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

__all__ = [
    "SERVICES",
    "SUBTYPES",
    "Answer",
    "ServiceCallFailed",
    "ServiceUri",
    "call_service",
    "parse_uri",
    "refused_service",
    "refused_subtype",
    "subtype_call",
]

SERVICES: Final = {
    "sqs": None,  # the query protocol: a form body with Action=…
    "states": "AWSStepFunctions",
    "dynamodb": "DynamoDB_20120810",
}
"""Services an ``AWS`` integration reaches locally, each with its JSON protocol's target
prefix (``None``: the query protocol)."""
SUBTYPES: Final = {
    "SQS-SendMessage": ("sqs", "AmazonSQS.SendMessage", ("QueueUrl", "MessageBody")),
    "StepFunctions-StartExecution": (
        "states",
        "AWSStepFunctions.StartExecution",
        ("StateMachineArn",),
    ),
}
"""HTTP API integration subtypes that run locally: service, ``X-Amz-Target``, required
parameters ("Integration subtype reference")."""
SUBTYPE_PARAMETERS: Final = {
    "SQS-SendMessage": {
        "QueueUrl",
        "MessageBody",
        "DelaySeconds",
        "MessageAttributes",
        "MessageDeduplicationId",
        "MessageGroupId",
        "MessageSystemAttributes",
        "Region",
    },
    "StepFunctions-StartExecution": {"StateMachineArn", "Name", "Input", "Region"},
}
URI: Final = re.compile(r"^arn:aws[a-z-]*:apigateway:([a-z0-9-]+):([a-z0-9-]+):(action|path)/(.+)$")
CREDENTIALS: Final = Credentials("apigateway", "apigateway")
"""What the calls are signed with: the local cloud checks a signature's shape only."""


@dataclass(frozen=True)
class ServiceUri:
    """An integration URI, read: ``region``, ``service``, ``kind`` (``action`` or
    ``path``) and what follows it."""

    region: str
    service: str
    kind: str
    rest: str


def parse_uri(uri: str) -> ServiceUri | None:
    """The parts of an ``arn:aws:apigateway:…`` service URI, or ``None``."""
    matched = URI.match(uri)
    return None if matched is None else ServiceUri(*matched.groups())


def refused_service(uri: str) -> str | None:
    """Why an ``AWS`` integration to ``uri`` cannot run locally, or ``None``."""
    parsed = parse_uri(uri)
    if parsed is None:
        return f"an AWS integration's uri must be arn:aws:apigateway:…, not {uri!r}"
    if parsed.service == "lambda":
        return "a Lambda custom (non-proxy) integration is not run locally yet (aws_proxy is)"
    if parsed.service not in SERVICES:
        known = ", ".join(sorted(SERVICES))
        return f"an AWS integration to {parsed.service} is not run locally ({known} are)"
    if SERVICES[parsed.service] is not None and parsed.kind != "action":
        return f"an AWS integration to {parsed.service} is run locally by action/…, not path/…"
    return None


def refused_subtype(subtype: str, parameters: Mapping[str, Any]) -> str | None:
    """Why an HTTP API integration of ``subtype`` with ``parameters`` cannot run, or
    ``None`` (API Gateway's own checks at creation: the subtype and its parameters)."""
    if subtype not in SUBTYPES:
        known = ", ".join(sorted(SUBTYPES))
        return f"integration subtype {subtype} is not run locally ({known} are)"
    unknown = sorted(set(parameters) - SUBTYPE_PARAMETERS[subtype])
    if unknown:
        return f"{subtype} has no parameter {', '.join(unknown)}"
    missing = [name for name in SUBTYPES[subtype][2] if name not in parameters]
    if missing:
        return f"{subtype} needs the parameter {', '.join(missing)}"
    return None


@dataclass
class Answer:
    """A service's answer: ``status``, ``headers`` (names lower case), ``body`` (bytes)."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""


class ServiceCallFailed(Exception):
    """The service did not answer (refused, reset, a header ``http.client`` will not
    send): API Gateway's 500."""


def call_service(
    endpoint: str,
    uri: ServiceUri,
    *,
    method: str = "POST",
    body: str = "",
    headers: Mapping[str, str] | None = None,
    query: Mapping[str, str] | None = None,
    content_type: str = "application/json",
    target: str | None = None,
) -> Answer:
    """Send ``body`` to the service ``uri`` names at the local cloud's ``endpoint``
    (``http://127.0.0.1:4566``), as API Gateway sends it, and return its answer (an error
    answer too: the caller maps it).

    ``content_type`` is the method request's (a ``Content-Type`` in ``headers``, mapped
    by the integration, wins). An ``action/{Action}&name=value…`` URI's action is the one
    run: the query protocol's ``Action`` (a form body's own ``Action`` is replaced by
    it), or the JSON protocol's ``X-Amz-Target`` (with its ``Content-Type``); ``target``
    asks for the JSON protocol by that target (SQS speaks both).

    Raises:
        ServiceCallFailed: the service did not answer.
    """
    sent = {str(k): str(v) for k, v in (headers or {}).items()}
    if not any(name.lower() == "content-type" for name in sent):
        sent["Content-Type"] = content_type
    parameters = dict(query or {})
    prefix = SERVICES.get(uri.service)
    path = "/"
    if uri.kind == "path":
        path = "/" + uri.rest.lstrip("/")
    else:
        action, _, extra = uri.rest.partition("&")
        parameters.update(parse_qsl(extra, keep_blank_values=True))
        if target is None and prefix is not None:
            target = f"{prefix}.{action}"
        if target is None:
            parameters["Action"] = action
            if _is_form(sent):
                fields = [(k, v) for k, v in parse_qsl(body, keep_blank_values=True)]
                body = urlencode([(k, action if k == "Action" else v) for k, v in fields])
        else:
            for name in [k for k in sent if k.lower() in ("content-type", "x-amz-target")]:
                del sent[name]
            sent["X-Amz-Target"] = target
            sent["Content-Type"] = "application/x-amz-json-1.0"
    if target is None and prefix is None and not _is_form(sent):
        # a query-protocol service reads its parameters from a form or the query string
        # alone: a body of another type is not read, and is not sent
        body = ""
        sent = {k: v for k, v in sent.items() if k.lower() != "content-type"}
        sent["Content-Type"] = "application/x-www-form-urlencoded"
    url = f"{endpoint}{path}" + (f"?{urlencode(parameters)}" if parameters else "")
    request = AWSRequest(method=method, url=url, data=body.encode(), headers=sent)
    SigV4Auth(CREDENTIALS, uri.service, uri.region).add_auth(request)
    prepared = urllib.request.Request(  # noqa: S310 - the loopback endpoint
        url, data=body.encode(), method=method, headers=dict(request.headers.items())
    )
    try:
        with urllib.request.urlopen(prepared, timeout=60) as answer:  # noqa: S310 - loopback
            return Answer(answer.status, _lower(answer.headers), answer.read())
    except urllib.error.HTTPError as error:
        return Answer(error.code, _lower(error.headers), error.read())
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise ServiceCallFailed(f"{uri.service} did not answer: {exc}") from exc


def _is_form(headers: Mapping[str, str]) -> bool:
    return any(
        k.lower() == "content-type" and v.lower().startswith("application/x-www-form-urlencoded")
        for k, v in headers.items()
    )


def _lower(headers: Any) -> dict[str, str]:
    return {str(k).lower(): str(v) for k, v in headers.items()}


def subtype_call(endpoint: str, subtype: str, parameters: Mapping[str, str], region: str) -> Answer:
    """Run an HTTP API first-class integration with its mapped ``parameters`` (values
    already evaluated): the service's JSON API call, its answer returned as it is."""
    service, target, _ = SUBTYPES[subtype]
    arguments: dict[str, Any] = {
        # the service API's member names: Step Functions' are lower camel case
        (k[0].lower() + k[1:] if service == "states" else k): v
        for k, v in parameters.items()
        if k != "Region"
    }
    for name in ("MessageAttributes", "MessageSystemAttributes"):
        if name in arguments:
            arguments[name] = json.loads(arguments[name])
    if "DelaySeconds" in arguments:
        arguments["DelaySeconds"] = int(arguments["DelaySeconds"])
    action = target.partition(".")[2]
    uri = ServiceUri(parameters.get("Region", region), service, "action", action)
    return call_service(endpoint, uri, body=json.dumps(arguments), target=target)
