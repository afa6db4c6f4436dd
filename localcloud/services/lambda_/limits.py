"""Lambda's limits and validation for a new function, with Lambda's answers.

- A function name (Lambda API reference, CreateFunction, ``FunctionName``): letters,
  digits, ``-`` and ``_``, 1 to 64 characters (the request may give a partial or full
  ARN that ends in such a name); anything else is a ``ValidationException``.
- A package uploaded directly (``ZipFile``) is at most 50 MB zipped (Lambda quotas,
  "Deployment package (.zip file archive) size"); unzipped, 250 MB, counted while it is
  extracted (:mod:`.runtime.packages`).
- A function's configuration (Lambda quotas, "Function configuration, deployment, and
  execution"; CreateFunction and UpdateFunctionConfiguration): ``Timeout`` 1 to 900
  seconds, ``MemorySize`` 128 to 10,240 MB, ``EphemeralStorage.Size`` 512 to 10,240 MB
  (``ValidationException``), and the ``Environment`` variables at most 4 KB, measured as
  their compact JSON (``InvalidParameterValueException``): :func:`check_configuration`.
- The runtime: the local cloud runs Python functions only: a ``python3.x`` function under
  that CPython where the machine has it with awslambdaric installed for it, else under
  this interpreter with one warning naming both versions (:mod:`.runtime.interpreters`);
  any other runtime, or an image package, is refused by name
  (``InvalidParameterValueException``), never run with Python.
"""

from __future__ import annotations

import json
import re
import sys
import threading
from collections.abc import Mapping
from typing import Any, Final

from localcloud.services.lambda_.runtime.environment import RESERVED_VARIABLES
from localcloud.services.lambda_.runtime.interpreters import interpreter_for
from localcloud.text import say

DIRECT_UPLOAD_LIMIT: Final = 52_428_800
"""50 MB (MiB): Lambda's quota on a zipped package uploaded directly (bytes)."""
NAME_LIMIT: Final = 64
FUNCTION_NAME: Final = re.compile(
    r"(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}(-gov)?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?"
    r"([a-zA-Z0-9-_]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?"
)
"""The ``FunctionName`` pattern of the Lambda API reference (CreateFunction)."""
TIMEOUT_S: Final = (1, 900)
"""A function's ``Timeout``, least and most (seconds)."""
MEMORY_MB: Final = (128, 10_240)
"""A function's ``MemorySize``, least and most (MB)."""
EPHEMERAL_STORAGE_MB: Final = (512, 10_240)
"""A function's ``EphemeralStorage.Size`` (``/tmp``), least and most (MB)."""
ENVIRONMENT_LIMIT: Final = 4_096
"""A function's ``Environment.Variables``, at most, as compact JSON (bytes)."""
DESCRIPTION_LIMIT: Final = 256
"""A function's ``Description``, at most (characters; CreateFunction's request syntax)."""
RUNS: Final = f"python{sys.version_info.major}.{sys.version_info.minor}"
_WARNED: set[str] = set()
_WARNED_LOCK = threading.Lock()


def _shown(value: str) -> str:
    """``value`` with control and bidirectional characters escaped, for an error message
    that reaches a terminal."""
    return "".join(
        ch
        if ch.isprintable() and not (0x202A <= ord(ch) <= 0x202E or 0x2066 <= ord(ch) <= 0x2069)
        else ch.encode("unicode_escape").decode("ascii")
        for ch in value
    )


def check_function_name(name: object) -> str | None:
    """Lambda's ``ValidationException`` message for a function name, or ``None`` if valid."""
    if not isinstance(name, str) or not name:
        return (
            "1 validation error detected: Value null at 'functionName' failed to satisfy "
            "constraint: Member must not be null"
        )
    matched = FUNCTION_NAME.fullmatch(name)
    if matched is None:
        return (
            f"1 validation error detected: Value '{_shown(name)}' at 'functionName' failed "
            "to satisfy constraint: Member must satisfy regular expression pattern: "
            f"{FUNCTION_NAME.pattern}"
        )
    if len(matched.group(7)) > NAME_LIMIT or len(name) > 140:
        return (
            f"1 validation error detected: Value '{_shown(name)}' at 'functionName' failed "
            f"to satisfy constraint: Member must have length less than or equal to {NAME_LIMIT}"
        )
    return None


def name_in(reference: str, account: str, region: str) -> tuple[str | None, str]:
    """(a problem, the function name) of a valid ``FunctionName`` (a name, a partial or a
    full ARN): the name out of the ARN, which must be this account's and region's."""
    matched = FUNCTION_NAME.fullmatch(reference)
    assert matched is not None, "check_function_name first"
    arn_region = (matched.group(3) or "").rstrip(":")
    arn_account = (matched.group(5) or "").rstrip(":")
    if arn_account and arn_account != account:
        return (
            f"The account in the function ARN ({arn_account}) is not this account ({account})",
            "",
        )
    if arn_region and arn_region != region:
        return (f"The region in the function ARN ({arn_region}) is not this region ({region})", "")
    return None, matched.group(7)


def check_runtime(runtime: object, package_type: object = None) -> str | None:
    """Why the local cloud cannot run a function of this ``Runtime`` and ``PackageType``
    (``InvalidParameterValueException``'s message), or ``None``: it runs it (a
    ``python3.x`` with no CPython of its version here with a one-time warning)."""
    if package_type not in (None, "Zip"):
        return (
            f"The package type {_shown(str(package_type))} is not run by the local cloud: "
            "it runs .zip packages"
        )
    if not isinstance(runtime, str) or re.fullmatch(r"python3\.\d+", runtime) is None:
        return (
            f"The runtime {_shown(str(runtime))} is not run by the local cloud: it runs "
            f"Python functions (python3.x) under {RUNS}"
        )
    _, warning = interpreter_for(runtime)
    if warning is not None:
        with _WARNED_LOCK:
            first = runtime not in _WARNED
            _WARNED.add(runtime)
        if first:
            say(warning)
    return None


def check_configuration(spec: Mapping[str, Any]) -> tuple[str, str] | None:
    """Lambda's (error code, message) for a ``CreateFunction`` or
    ``UpdateFunctionConfiguration`` request whose ``Description``, ``Timeout``,
    ``MemorySize``, ``EphemeralStorage`` or ``Environment`` is past its quota, or whose
    ``Environment`` sets a reserved variable (:data:`RESERVED_VARIABLES`: Lambda's
    ``InvalidParameterValueException`` "… contains reserved keys that are currently not
    supported for modification. Reserved keys used in this request: AWS_REGION"), or
    ``None``.

    The answers Lambda gives: the request validation's ``ValidationException`` ("1
    validation error detected: Value '901' at 'timeout' failed to satisfy constraint:
    Member must have value less than or equal to 900", every such error in one message),
    then ``ValidationException`` "'MemorySize' value failed to satisfy constraint: Member
    must have value less than or equal to 10240", then ``InvalidParameterValueException``
    "Lambda was unable to configure your environment variables because the environment
    variables you have provided exceeded the 4KB limit. String measured: <the variables
    as compact JSON>". A value that is not a whole number is a validation error of its own.
    """
    storage = spec.get("EphemeralStorage")
    ranged: list[tuple[str, object, tuple[int, int | None]]] = [
        ("timeout", spec.get("Timeout"), TIMEOUT_S),
        # above 10,240 MB is a check of its own, after the request's validation
        ("memorySize", spec.get("MemorySize"), (MEMORY_MB[0], None)),
        (
            "ephemeralStorage.size",
            storage.get("Size") if isinstance(storage, Mapping) else storage,
            EPHEMERAL_STORAGE_MB,
        ),
    ]
    errors = []
    description = spec.get("Description")
    if isinstance(description, str) and len(description) > DESCRIPTION_LIMIT:
        errors.append(
            f"Value '{_shown(description)}' at 'description' failed to satisfy constraint: "
            f"Member must have length less than or equal to {DESCRIPTION_LIMIT}"
        )
    for field, value, bounds in ranged:
        problem = _out_of_range(value, bounds)
        if problem is not None:
            errors.append(
                f"Value '{_shown(str(value))}' at '{field}' failed to satisfy constraint: {problem}"
            )
    if errors:
        counted = "1 validation error" if len(errors) == 1 else f"{len(errors)} validation errors"
        return "ValidationException", f"{counted} detected: {'; '.join(errors)}"
    memory = spec.get("MemorySize")
    if memory is not None and int(memory) > MEMORY_MB[1]:
        return (
            "ValidationException",
            "'MemorySize' value failed to satisfy constraint: Member must have value less "
            f"than or equal to {MEMORY_MB[1]}",
        )
    variables = (spec.get("Environment") or {}).get("Variables")
    reserved = sorted(RESERVED_VARIABLES.intersection(variables or {}))
    if reserved:
        return (
            "InvalidParameterValueException",
            "Lambda was unable to configure your environment variables because the "
            "environment variables you have provided contains reserved keys that are "
            "currently not supported for modification. Reserved keys used in this request: "
            + ", ".join(reserved),
        )
    if variables:
        measured = json.dumps(variables, separators=(",", ":"), ensure_ascii=False)
        if len(measured.encode("utf-8", "surrogatepass")) > ENVIRONMENT_LIMIT:
            return (
                "InvalidParameterValueException",
                "Lambda was unable to configure your environment variables because the "
                "environment variables you have provided exceeded the 4KB limit. String "
                f"measured: {_shown(measured)}",
            )
    return None


def _out_of_range(value: object, bounds: tuple[int, int | None]) -> str | None:
    """What a number outside ``bounds`` (least, most or ``None``) fails, or ``None``."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | str):
        return "Member must be a whole number"
    try:
        number = int(value)
    except ValueError:
        return "Member must be a whole number"
    least, most = bounds
    if number < least:
        return f"Member must have value greater than or equal to {least}"
    if most is not None and number > most:
        return f"Member must have value less than or equal to {most}"
    return None
