"""moto's Lambda, made to run the account's functions.

- ``LambdaSimpleBackend.invoke``: without Docker, moto's Lambda only echoes the event.
  The invoke API (``aws lambda invoke``, Step Functions' ``lambda:invoke`` tasks) reaches
  the function the local cloud runs (:mod:`localcloud.lambda_runtime`) instead, with the
  runtime's error header (``X-Amz-Function-Error: Unhandled``) so retriers and catchers
  match by name, and ``LogType=Tail``'s last 4 KB of log. Nothing else in moto offers a
  hook for it.
- ``LambdaBackend.update_function_configuration`` and ``update_function_code``: moto
  records them; the local cloud applies them, or refuses what it cannot honour by name.
- ``LambdaFunction.get_configuration``: ``LoggingConfig.LogGroup``, which ``sam logs -n``
  reads and moto does not keep.
- ``LambdaBackend.create_event_source_mapping`` and ``update_event_source_mapping``: a
  batch size over 10 needs a batching window, as on AWS, and moto's own SQS trigger (one
  record per call, partial batch responses ignored) never runs: the local cloud polls
  (:mod:`localcloud.sqs`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any, Final

from moto.awslambda.models import LambdaBackend, LambdaFunction
from moto.awslambda_simple.models import LambdaSimpleBackend
from moto.core.exceptions import JsonRESTError
from moto.sqs.models import sqs_backends

from localcloud.lambda_runtime import invoke_through_api, lookup
from localcloud.lambda_runtime.environment import PLATFORM_KEYS, reserved_in
from localcloud.patches.registry import Method, Patch

HONOURED: Final = frozenset({"FunctionName", "Environment", "Timeout", "MemorySize", "Description"})
IGNORED_LOCALLY: Final = frozenset({"Role", "RevisionId"})
"""Accepted: IAM is not enforced by the local cloud."""


def _invoke(original: Method) -> Method:
    def invoke(
        self: LambdaSimpleBackend,
        function_name: str,
        qualifier: str | None,
        body: Any,
        headers: Any,
        response_headers: Any,
    ) -> bytes:
        try:
            function = lookup(function_name)
        except KeyError:  # not a function the local cloud runs: moto's own behaviour
            echoed = original(self, function_name, qualifier, body, headers, response_headers)
            return echoed.encode() if isinstance(echoed, str) else echoed or b""
        event = json.loads(body) if body else {}
        invocation = invoke_through_api(function, event)
        if invocation.error:
            response_headers["x-amz-function-error"] = "Unhandled"
        response_headers["x-amz-executed-version"] = "$LATEST"
        if str(_header(headers, "X-Amz-Log-Type")).lower() == "tail":
            # LogType=Tail: the last 4 KB of the invocation's log, base64, as on AWS.
            tail = "\n".join(invocation.log_lines).encode()[-4096:]
            response_headers["x-amz-log-result"] = base64.b64encode(tail).decode()
        return invocation.body

    return invoke


def _header(headers: Any, name: str) -> str | None:
    try:
        value = headers.get(name)
    except AttributeError:
        return None
    return None if value is None else str(value)


def _refuse(message: str) -> JsonRESTError:
    return JsonRESTError("InvalidParameterValueException", message)


def _update_code(original: Method) -> Method:
    def update_function_code(
        self: LambdaBackend, function_name: str, qualifier: str, body: dict[str, Any]
    ) -> dict[str, Any] | None:
        try:
            function = lookup(function_name)
        except KeyError:
            return original(self, function_name, qualifier, body)  # type: ignore[no-any-return]
        raise _refuse(
            f"the local cloud runs {function.name} from template.yaml's CodeUri "
            f"({function.code_uri}) and cannot run an uploaded package: change the code there "
            "and restart `make serve` (to run a package, deploy it with sam deploy)"
        )

    return update_function_code


def _update_configuration(original: Method) -> Method:
    def update_function_configuration(
        self: LambdaBackend, function_name: str, qualifier: str, body: dict[str, Any]
    ) -> dict[str, Any] | None:
        try:
            function = lookup(function_name)
        except KeyError:
            return original(self, function_name, qualifier, body)  # type: ignore[no-any-return]
        unsupported = sorted(set(body) - HONOURED - IGNORED_LOCALLY)
        if unsupported:
            raise _refuse(
                f"the local cloud cannot apply {', '.join(unsupported)} to {function.name}; "
                "it applies Environment, Timeout, MemorySize and Description"
            )
        variables = body.get("Environment", {}).get("Variables")
        if variables is not None:
            reserved = reserved_in(variables)
            if reserved:
                raise _refuse(
                    "Lambda was unable to configure your environment variables because the "
                    "environment variables you have provided contains reserved keys that are "
                    "currently not supported for modification. Reserved keys used in this "
                    f"request: {', '.join(reserved)}"
                )
        response: dict[str, Any] | None = original(self, function_name, qualifier, body)
        if variables is not None:
            kept = {k: v for k, v in function.environment.items() if k in PLATFORM_KEYS}
            function.environment = {**{k: str(v) for k, v in variables.items()}, **kept}
        if "Timeout" in body:
            function.timeout_s = int(body["Timeout"])
        if "MemorySize" in body:
            function.memory_mb = int(body["MemorySize"])
        function.new_execution_environment()
        return response

    return update_function_configuration


def _configuration(original: Method) -> Method:
    def get_configuration(self: LambdaFunction, on_create: bool = False) -> dict[str, Any]:
        config: dict[str, Any] = original(self, on_create)
        try:
            function = lookup(self.function_name)
        except KeyError:
            return config
        config["LoggingConfig"] = {"LogFormat": "Text", "LogGroup": function.log_group}
        return config

    return get_configuration


def _check_batching(spec: Mapping[str, Any], current: Any = None) -> None:
    batch_size = spec.get("BatchSize", getattr(current, "batch_size", None))
    window = spec.get("MaximumBatchingWindowInSeconds", getattr(current, "max_batch_window", None))
    if batch_size is not None and int(batch_size) > 10 and not (window and int(window) >= 1):
        raise JsonRESTError(
            "InvalidParameterValueException",
            "Maximum batch window in seconds must be greater than 0 if maximum batch size is "
            "greater than 10",
        )


def _create_mapping(original: Method) -> Method:
    def create_event_source_mapping(self: LambdaBackend, spec: dict[str, Any]) -> Any:
        _check_batching(spec)
        esm = original(self, spec)
        for queue in sqs_backends[self.account_id][self.region_name].queues.values():
            if queue.queue_arn == esm.event_source_arn:
                # moto would invoke the function itself on every SendMessage, one record
                # at a time, and delete the message whatever the response: we poll.
                queue.lambda_event_source_mappings.pop(esm.function_arn, None)
        return esm

    return create_event_source_mapping


def _update_mapping(original: Method) -> Method:
    def update_event_source_mapping(self: LambdaBackend, uuid: str, spec: dict[str, Any]) -> Any:
        _check_batching(spec, self.get_event_source_mapping(uuid))
        return original(self, uuid, spec)

    return update_event_source_mapping


PATCHES: Final = (
    Patch(
        LambdaSimpleBackend,
        "invoke",
        ("self", "function_name", "qualifier", "body", "headers", "response_headers"),
        _invoke,
        "the invoke API must run the function, not echo the event",
    ),
    Patch(
        LambdaBackend,
        "update_function_code",
        ("self", "function_name", "qualifier", "body"),
        _update_code,
        "an update must reach the function the local cloud runs",
    ),
    Patch(
        LambdaBackend,
        "update_function_configuration",
        ("self", "function_name", "qualifier", "body"),
        _update_configuration,
        "a configuration update must reach the function the local cloud runs",
    ),
    Patch(
        LambdaFunction,
        "get_configuration",
        ("self", "on_create"),
        _configuration,
        "sam logs -n reads LoggingConfig.LogGroup",
    ),
    Patch(
        LambdaBackend,
        "create_event_source_mapping",
        ("self", "spec"),
        _create_mapping,
        "the local cloud polls SQS as Lambda does; moto's own trigger must not run",
    ),
    Patch(
        LambdaBackend,
        "update_event_source_mapping",
        ("self", "uuid", "spec"),
        _update_mapping,
        "a batch size over 10 needs a batching window, as on AWS",
    ),
)
