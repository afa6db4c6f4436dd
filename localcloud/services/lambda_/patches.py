"""moto's Lambda control plane, made to run the account's functions.

- the invoke API: :mod:`.invoke_patches`.
- ``LambdaBackend.create_function``, ``update_function_code`` and ``delete_function``:
  every function of the account runs its code, whoever made it (a template, ``sam
  deploy``, ``aws lambda create-function``): the package moto stores is run in a worker
  process (or in-process, for a from-source deploy's package), a new package in a new
  execution environment, and a deleted function's environment goes. A configuration past
  Lambda's quotas (``Timeout``, ``MemorySize``, ``EphemeralStorage``, 4 KB of
  ``Environment``: :func:`.limits.check_configuration`) is refused with Lambda's error.
- ``LambdaBackend.update_function_configuration``: moto records it; the local cloud
  applies it, or refuses what it cannot honour by name, and what Lambda refuses with
  Lambda's error.
- ``LambdaFunction.get_configuration``: ``LoggingConfig.LogGroup``, which ``sam logs -n``
  reads and moto does not keep.
- versions and aliases: :mod:`.version_patches`; the event source mapping API:
  :mod:`.mapping_patches`.
"""

from __future__ import annotations

import base64
import contextlib
import io
import zipfile
from typing import Any, Final

from moto.awslambda.models import LambdaBackend, LambdaFunction
from moto.core.exceptions import JsonRESTError

from localcloud.patches.registry import Method, Patch
from localcloud.services.lambda_.invoke_patches import EntityTooLarge
from localcloud.services.lambda_.limits import (
    DIRECT_UPLOAD_LIMIT,
    check_configuration,
    check_function_name,
    check_runtime,
    name_in,
)
from localcloud.services.lambda_.runtime import (
    Function,
    PackageError,
    lookup,
    register,
    runnable,
    unregister,
)
from localcloud.services.lambda_.runtime.environment import PLATFORM_KEYS, reserved_in
from localcloud.services.lambda_.runtime.packages import MAX_LAYERS

HONOURED: Final = frozenset({"FunctionName", "Environment", "Timeout", "MemorySize", "Description"})
IGNORED_LOCALLY: Final = frozenset({"Role", "RevisionId"})
"""Accepted: IAM is not enforced by the local cloud."""
RECORDED: Final = frozenset({"EphemeralStorage"})
"""Accepted and kept (``GetFunctionConfiguration`` shows it), not enforced: a function's
``/tmp`` is the machine's."""


def refuse(message: str) -> JsonRESTError:
    """400 ``InvalidParameterValueException`` with ``message``."""
    return JsonRESTError("InvalidParameterValueException", message)


def _package_error(error: PackageError) -> JsonRESTError:
    return JsonRESTError(error.code, str(error))


def _direct_upload(zip_file: Any, operation: str) -> bytes | None:
    """The package a request uploads directly (``ZipFile``, base64), within Lambda's 50 MB.

    Raises:
        EntityTooLarge: over 50 MB (52,428,800 bytes) zipped.
    """
    if not zip_file:
        return None
    package = base64.b64decode(zip_file) if isinstance(zip_file, str) else bytes(zip_file)
    if len(package) > DIRECT_UPLOAD_LIMIT:
        raise EntityTooLarge(
            f"Request must be smaller than {DIRECT_UPLOAD_LIMIT * 4 // 3 + 1} bytes for the "
            f"{operation} operation"
        )
    return package


def runnable_of(
    backend: LambdaBackend,
    function: LambdaFunction,
    log_group: str | None,
    version: str = "$LATEST",
) -> Function:
    """The function moto holds, as the local cloud runs it: its stored package, its
    layers' packages (moto checked that each exists) and its configuration.

    Raises:
        PackageError: the package or a layer is not one Lambda would run (not a zip, an
            entry outside its folder), or the two together are over 250 MB unzipped.
    """
    layers = []
    for layer in function.layers or []:
        stored = backend.layers_versions_by_arn(layer["Arn"])
        layers.append(stored.code_bytes if stored is not None else b"")
    reserved = function.reserved_concurrency
    runs = runnable(
        name=function.function_name,
        arn=function.function_arn,
        package=function.code_bytes,
        handler=str(function.handler),
        environment={k: str(v) for k, v in (function.environment_vars or {}).items()},
        timeout_s=int(function.timeout),
        memory_mb=int(function.memory_size),
        log_group=log_group or f"/aws/lambda/{function.function_name}",
        region=function.region,
        runtime=str(function.run_time or "python3.13"),
        version=version,
        layers=layers,
    )
    runs.reserved_concurrency = None if reserved is None else int(reserved)
    return runs


def _create_function(original: Method) -> Method:
    def create_function(self: LambdaBackend, spec: dict[str, Any]) -> LambdaFunction:
        name = spec.get("FunctionName")
        problem = check_function_name(name)
        if problem is not None:
            raise JsonRESTError("ValidationException", problem)
        arn_problem, plain_name = name_in(str(name), self.account_id, self.region_name)
        if arn_problem is not None:
            raise JsonRESTError("ValidationException", arn_problem)
        spec = {**spec, "FunctionName": plain_name}  # the name, out of a (partial) ARN
        refused = check_runtime(spec.get("Runtime"), spec.get("PackageType"))
        if refused is not None:
            raise refuse(refused)
        past_quota = check_configuration(spec)
        if past_quota is not None:
            raise JsonRESTError(*past_quota)
        _direct_upload((spec.get("Code") or {}).get("ZipFile"), "CreateFunction")
        if len(spec.get("Layers") or []) > MAX_LAYERS:
            raise refuse(f"Cannot reference more than {MAX_LAYERS} layers.")
        function: LambdaFunction = original(self, spec)
        logging_config = spec.get("LoggingConfig") or {}
        try:
            register(runnable_of(self, function, logging_config.get("LogGroup")))
        except PackageError as error:  # nothing of the function stays
            self._lambdas.del_function(function.function_name)
            raise _package_error(error) from None
        return function

    return create_function


def _update_code(original: Method) -> Method:
    def update_function_code(
        self: LambdaBackend, function_name: str, qualifier: str, body: dict[str, Any]
    ) -> dict[str, Any] | None:
        package = _direct_upload(body.get("ZipFile"), "UpdateFunctionCode")
        if package is not None and not zipfile.is_zipfile(io.BytesIO(package)):
            raise refuse(
                "Could not unzip uploaded file. Please check your file, then try to upload again."
            )
        function = self.get_function(function_name)
        saved = (
            function.code_bytes,
            dict(function.code),
            function.code_sha_256,
            function.code_size,
        )
        response: dict[str, Any] | None = original(self, function_name, qualifier, body)
        if body.get("DryRun"):
            return response
        function = self.get_function(function_name)
        try:
            log_group = lookup(function.function_name).log_group
        except KeyError:
            log_group = None
        try:
            runs = runnable_of(self, function, log_group)
        except PackageError as error:  # the function keeps the code it had
            function.code_bytes, function.code, function.code_sha_256, function.code_size = saved
            raise _package_error(error) from None
        register(runs)  # a new execution environment
        return response

    return update_function_code


def _delete_function(original: Method) -> Method:
    def delete_function(
        self: LambdaBackend, function_name: str, qualifier: str | None = None
    ) -> None:
        original(self, function_name, qualifier)
        name, _, in_name = function_name.split(":function:")[-1].partition(":")
        unregister(name, in_name or qualifier)

    return delete_function


def _update_configuration(original: Method) -> Method:
    def update_function_configuration(
        self: LambdaBackend, function_name: str, qualifier: str, body: dict[str, Any]
    ) -> dict[str, Any] | None:
        past_quota = check_configuration(body)
        if past_quota is not None:
            raise JsonRESTError(*past_quota)
        try:
            function = lookup(function_name)
        except KeyError:
            return original(self, function_name, qualifier, body)  # type: ignore[no-any-return]
        unsupported = sorted(set(body) - HONOURED - IGNORED_LOCALLY - RECORDED)
        if unsupported:
            raise refuse(
                f"the local cloud cannot apply {', '.join(unsupported)} to {function.name}; "
                "it applies Environment, Timeout, MemorySize, EphemeralStorage and Description"
            )
        variables = body.get("Environment", {}).get("Variables")
        if variables is not None:
            reserved = reserved_in(variables)
            if reserved:
                raise refuse(
                    "Lambda was unable to configure your environment variables because the "
                    "environment variables you have provided contains reserved keys that are "
                    "currently not supported for modification. Reserved keys used in this "
                    f"request: {', '.join(reserved)}"
                )
        if "EphemeralStorage" in body:  # moto's update leaves it out
            stored = self.get_function(function_name, qualifier)
            stored.ephemeral_storage = int(body["EphemeralStorage"]["Size"])
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


def _put_concurrency(original: Method) -> Method:
    def put_function_concurrency(
        self: LambdaBackend, function_name: str, reserved_concurrency: str
    ) -> str:
        reserved = original(self, function_name, reserved_concurrency)
        with contextlib.suppress(KeyError):
            lookup(function_name).reserved_concurrency = int(reserved)
        return reserved  # type: ignore[no-any-return]

    return put_function_concurrency


def _delete_concurrency(original: Method) -> Method:
    def delete_function_concurrency(self: LambdaBackend, function_name: str) -> str | None:
        deleted = original(self, function_name)
        with contextlib.suppress(KeyError):
            lookup(function_name).reserved_concurrency = None
        return deleted  # type: ignore[no-any-return]

    return delete_function_concurrency


PATCHES: Final = (
    Patch(
        LambdaBackend,
        "create_function",
        ("self", "spec"),
        _create_function,
        "every function of the account runs its code, whoever created it; a configuration "
        "past Lambda's quotas (Timeout, MemorySize, EphemeralStorage, 4 KB of Environment) "
        "is refused with Lambda's error",
    ),
    Patch(
        LambdaBackend,
        "update_function_code",
        ("self", "function_name", "qualifier", "body"),
        _update_code,
        "the uploaded package runs from the next invocation on",
    ),
    Patch(
        LambdaBackend,
        "delete_function",
        ("self", "function_name", "qualifier"),
        _delete_function,
        "a deleted function's execution environment goes",
    ),
    Patch(
        LambdaBackend,
        "update_function_configuration",
        ("self", "function_name", "qualifier", "body"),
        _update_configuration,
        "a configuration update must reach the function the local cloud runs, within "
        "Lambda's quotas",
    ),
    Patch(
        LambdaBackend,
        "put_function_concurrency",
        ("self", "function_name", "reserved_concurrency"),
        _put_concurrency,
        "reserved concurrency limits the function's execution environments (0 throttles)",
    ),
    Patch(
        LambdaBackend,
        "delete_function_concurrency",
        ("self", "function_name"),
        _delete_concurrency,
        "an unreserved function is limited by the account's concurrency only",
    ),
    Patch(
        LambdaFunction,
        "get_configuration",
        ("self", "on_create"),
        _configuration,
        "sam logs -n reads LoggingConfig.LogGroup",
    ),
)
