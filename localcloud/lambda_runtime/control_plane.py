"""The Lambda control plane on the local cloud: what it accepts, it does; the rest it refuses.

moto records ``UpdateFunctionCode`` and ``UpdateFunctionConfiguration`` and answers as
Lambda does, but the functions run in-process from the template's ``CodeUri`` through
the bridge, so without this module an update would be accepted and then ignored.

- ``UpdateFunctionConfiguration``: ``Environment``, ``Timeout``, ``MemorySize`` and
  ``Description`` take effect on the next invocation, in a new execution environment
  (as on Lambda after a configuration change); a reserved variable is refused as Lambda
  refuses it; ``Handler``, ``Runtime``, ``Layers`` and the other settings the local cloud
  cannot honour are refused with an error naming them.
- ``UpdateFunctionCode``: refused with an error that says what to do instead; the local
  cloud runs ``CodeUri`` from the working tree, never an uploaded package.

Functions that are not the local cloud's (created with ``aws lambda create-function``)
keep moto's own behaviour.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from moto.awslambda.models import LambdaBackend, LambdaFunction
from moto.core.exceptions import JsonRESTError

from localcloud.lambda_runtime import bridge as lambda_bridge

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

HONOURED: Final = frozenset({"FunctionName", "Environment", "Timeout", "MemorySize", "Description"})
IGNORED_LOCALLY: Final = frozenset({"Role", "RevisionId"})
"""Accepted: IAM is not enforced by the local cloud (README, what is emulated)."""


def reserved_in(variables: Mapping[str, Any]) -> list[str]:
    """The reserved names among ``variables`` (empty when none)."""
    return sorted(name for name in variables if name in RESERVED_VARIABLES)


def _refuse(message: str) -> JsonRESTError:
    return JsonRESTError("InvalidParameterValueException", message)


_ORIGINAL_CODE = LambdaBackend.update_function_code
_ORIGINAL_CONFIGURATION = LambdaBackend.update_function_configuration


def _update_code(
    self: LambdaBackend, function_name: str, qualifier: str, body: dict[str, Any]
) -> dict[str, Any] | None:
    try:
        function = lambda_bridge.lookup(function_name)
    except KeyError:
        return _ORIGINAL_CODE(self, function_name, qualifier, body)
    raise _refuse(
        f"the local cloud runs {function.name} from template.yaml's CodeUri "
        f"({function.code_uri}) and cannot run an uploaded package: change the code there "
        "and restart `make serve` (to run a package, deploy it with sam deploy)"
    )


def _update_configuration(
    self: LambdaBackend, function_name: str, qualifier: str, body: dict[str, Any]
) -> dict[str, Any] | None:
    try:
        function = lambda_bridge.lookup(function_name)
    except KeyError:
        return _ORIGINAL_CONFIGURATION(self, function_name, qualifier, body)
    unsupported = sorted(set(body) - HONOURED - IGNORED_LOCALLY)
    if unsupported:
        raise _refuse(
            f"the local cloud cannot apply {', '.join(unsupported)} to {function.name}; it "
            "applies Environment, Timeout, MemorySize and Description"
        )
    variables = body.get("Environment", {}).get("Variables")
    if variables is not None:
        reserved = reserved_in(variables)
        if reserved:
            raise _refuse(
                "Lambda was unable to configure your environment variables because the "
                f"environment variables you have provided contains reserved keys that are "
                f"currently not supported for modification. Reserved keys used in this "
                f"request: {', '.join(reserved)}"
            )
    response = _ORIGINAL_CONFIGURATION(self, function_name, qualifier, body)
    if variables is not None:
        kept = {k: v for k, v in function.environment.items() if k in PLATFORM_KEYS}
        function.environment = {**{k: str(v) for k, v in variables.items()}, **kept}
    if "Timeout" in body:
        function.timeout_s = int(body["Timeout"])
    if "MemorySize" in body:
        function.memory_mb = int(body["MemorySize"])
    function.new_execution_environment()
    return response


_ORIGINAL_GET_CONFIGURATION = LambdaFunction.get_configuration


def _configuration(self: LambdaFunction, on_create: bool = False) -> dict[str, Any]:
    """moto's function configuration with ``LoggingConfig.LogGroup`` for the local
    cloud's functions (moto keeps no ``LoggingConfig``): ``sam logs -n`` reads it to find
    a function's log group when the template names one."""
    config = _ORIGINAL_GET_CONFIGURATION(self, on_create)
    try:
        function = lambda_bridge.lookup(self.function_name)
    except KeyError:
        return config
    config["LoggingConfig"] = {"LogFormat": "Text", "LogGroup": function.log_group}
    return config


def install() -> None:
    """Apply or refuse Lambda control-plane updates for the local cloud's functions
    (idempotent)."""
    LambdaFunction.get_configuration = _configuration  # type: ignore[method-assign]
    LambdaBackend.update_function_code = _update_code  # type: ignore[method-assign]
    LambdaBackend.update_function_configuration = _update_configuration  # type: ignore[method-assign]
