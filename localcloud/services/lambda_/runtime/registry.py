"""The account's functions, by name and ARN, and who hears of their invocations.

Every function the local cloud runs is registered here, whoever made it (a template,
``sam deploy``, ``aws lambda create-function``): the Lambda API (``Invoke``, Step
Functions' ``lambda:invoke`` tasks, the event source mappings) finds it by name, partial
ARN or ARN (:func:`lookup`), and every invocation is handed to the listeners (the live
view's history).
"""

from __future__ import annotations

import hashlib
import sysconfig
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from localcloud.services.lambda_.runtime.environments import ProcessFunction
from localcloud.services.lambda_.runtime.functions import (
    INVOCATION_LOCK,
    LISTENERS,
    Function,
    Invocation,
    InvocationListener,
    LogSink,
)
from localcloud.services.lambda_.runtime.packages import extract, source_of

_FUNCTIONS: dict[str, Function] = {}
_LOCK = threading.Lock()


@dataclass(frozen=True)
class Platform:
    """What the account adds to every function it runs: variables (its credentials and, in
    server mode, its endpoint) and where log lines go (CloudWatch Logs)."""

    environment: Mapping[str, str] = field(default_factory=dict)
    log_sink: LogSink | None = None


_PLATFORM = Platform()


def set_platform(platform: Platform) -> None:
    """Set what the account adds to the functions registered from now on."""
    global _PLATFORM
    _PLATFORM = platform


def platform() -> Platform:
    return _PLATFORM


def access_key_for(name: str) -> str:
    """The access key id the function ``name`` signs its calls with: one per function, as
    each function's role gives it credentials of its own on AWS, so that a call is known
    to be the function's (the live view's write rows). 20 characters, like AWS's
    temporary keys (``ASIA…``)."""
    return "ASIA" + hashlib.sha256(name.encode()).hexdigest()[:16].upper()


def by_access_key(access_key: str | None) -> Function | None:
    """The function whose calls are signed with ``access_key``, if any."""
    if not access_key:
        return None
    with _LOCK:
        functions = list(_FUNCTIONS.values())
    return next((f for f in functions if access_key_for(f.name) == access_key), None)


def invoking() -> Function | None:
    """The one function with an invocation in progress, if exactly one has (in-process
    invocations run one at a time), else ``None``."""
    with _LOCK:
        functions = list(_FUNCTIONS.values())
    busy = [f for f in functions if f.current is not None]
    return busy[0] if len(busy) == 1 else None


def runnable(
    *,
    name: str,
    arn: str,
    package: bytes,
    handler: str,
    environment: Mapping[str, str],
    timeout_s: int,
    memory_mb: int,
    log_group: str,
    region: str,
    runtime: str = "python3.13",
) -> Function:
    """The function a deployment package describes, with the platform's additions, in
    execution environments of its own (:mod:`~localcloud.services.lambda_.runtime.
    environments`): from the extracted zip, or, for a source package (:mod:`~localcloud.
    services.lambda_.runtime.packages`), from its source folder with this environment's
    packages after the runtime's on its path (what ``sam build`` would have put in the
    package is importable, and so is the rest). Every account runs its functions so,
    served or in-process (its functions reach it through a loopback server of its own);
    only the local cloud's own unit tests make a function that runs in this process
    (:mod:`~localcloud.services.lambda_.runtime.inprocess`).

    Raises:
        PackageError: ``package`` is not a zip archive, or Lambda would refuse it
            (:func:`~localcloud.services.lambda_.runtime.packages.extract`).
    """
    source = source_of(package)
    from_source: dict[str, Any] = {}
    if source is not None:
        from_source = {"extra_paths": (sysconfig.get_paths()["purelib"],), "owns_code": False}
    return ProcessFunction(
        **from_source,
        name=name,
        arn=arn,
        code_uri=source if source is not None else extract(package),
        handler=handler,
        environment={
            **environment,
            **_PLATFORM.environment,
            **(
                {"AWS_ACCESS_KEY_ID": access_key_for(name)}
                if "AWS_ACCESS_KEY_ID" in _PLATFORM.environment
                else {}
            ),
        },
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        log_group=log_group,
        region=region,
        log_sink=_PLATFORM.log_sink,
        runtime=runtime,
    )


InvokeWrapper = Callable[[Function, Any, Callable[[], Invocation]], Invocation]
"""(function, event, run the invocation) → the invocation the invoke API answers with."""
_INVOKE_WRAPPER: InvokeWrapper | None = None


def register(function: Function) -> None:
    """Make ``function`` the one its name and ARN stand for; an earlier one of that name
    is closed (its execution environment goes) and hands any later invocation to
    ``function`` (:attr:`Function.successor`)."""
    with _LOCK:
        earlier = _FUNCTIONS.get(function.name)
        _FUNCTIONS[function.name] = function
    if earlier is not None and earlier is not function:
        with INVOCATION_LOCK:  # an invocation in progress ends in the old environment
            earlier.successor = function
        earlier.close()


def unregister(name: str) -> None:
    """The function of that name is deleted: forgotten and closed."""
    with _LOCK:
        function = _FUNCTIONS.pop(name, None)
    if function is not None:
        function.close()


def clear() -> list[tuple[str, str]]:
    """Forget every function and end its execution environments now, invocations in
    progress included (the account stops): (function name, request id) of each ended."""
    with _LOCK:
        functions = list(_FUNCTIONS.values())
        _FUNCTIONS.clear()
    return [
        (function.name, request_id) for function in functions for request_id in function.abort()
    ]


def lookup(name_or_arn: str) -> Function:
    """The function a name, partial ARN (``123456789012:function:name``) or ARN names,
    each with or without a qualifier (``:$LATEST``).

    Raises:
        KeyError: no function of the local cloud has that name.
    """
    if ":function:" in name_or_arn:
        name = name_or_arn.split(":function:", 1)[1].split(":", 1)[0]
    else:  # a name, with or without a qualifier (``name:$LATEST``)
        name = name_or_arn.split(":", 1)[0]
    with _LOCK:
        return _FUNCTIONS[name]


def registered() -> list[Function]:
    """Every registered function."""
    with _LOCK:
        return list(_FUNCTIONS.values())


def add_listener(listener: InvocationListener) -> None:
    """Call ``listener`` after every invocation of any function."""
    LISTENERS.append(listener)


def remove_listener(listener: InvocationListener) -> None:
    if listener in LISTENERS:
        LISTENERS.remove(listener)


def set_invoke_wrapper(wrapper: InvokeWrapper | None) -> None:
    """Wrap every invocation made through the invoke API (fault injection uses it)."""
    global _INVOKE_WRAPPER
    _INVOKE_WRAPPER = wrapper


def invoke_through_api(function: Function, event: Any) -> Invocation:
    """One invocation as the invoke API makes it (the wrapper, if any, around it)."""
    wrapper = _INVOKE_WRAPPER
    if wrapper is None:
        return function.invoke(event)
    return wrapper(function, event, lambda: function.invoke(event))
