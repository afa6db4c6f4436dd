"""The account's functions, by name and ARN, and who hears of their invocations.

Every function the local cloud runs is registered here, whoever made it (a template,
``sam deploy``, ``aws lambda create-function``): the Lambda API (``Invoke``, Step
Functions' ``lambda:invoke`` tasks, the event source mappings) finds it by name, partial
ARN or ARN (:func:`lookup`), a published version by its number and an alias by its name
(``PublishVersion`` and the alias API register them: :func:`register_version`,
:func:`set_alias`), and every invocation is handed to the listeners (the live view's
history).
"""

from __future__ import annotations

import hashlib
import shutil
import sysconfig
import threading
from collections.abc import Callable, Mapping, Sequence
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
from localcloud.services.lambda_.runtime.packages import (
    PackageError,
    extract,
    folder_size,
    layer_paths,
    source_of,
    unpack_layers,
)

_FUNCTIONS: dict[str, Function] = {}
"""Name → the function's ``$LATEST``."""
_VERSIONS: dict[tuple[str, str], Function] = {}
"""(name, version number) → a published version (``PublishVersion``)."""
_ALIASES: dict[tuple[str, str], str] = {}
"""(name, alias) → the version it points to (a number or ``$LATEST``)."""
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
    version: str = "$LATEST",
    layers: Sequence[bytes] = (),
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

    ``layers`` are the function's layer packages in the order it lists them, unzipped
    into a folder of their own (:func:`~localcloud.services.lambda_.runtime.packages.
    unpack_layers`) and importable after the task root. The unzipped limit counts a
    zipped package and its layers together; a from-source package's folder is not
    counted (``sam build`` would leave out what the folder holds besides the code).

    Raises:
        PackageError: ``package`` or a layer is not a zip archive, or Lambda would refuse
            it (:func:`~localcloud.services.lambda_.runtime.packages.extract`), or the
            two together are past the unzipped limit.
    """
    source = source_of(package)
    from_source: dict[str, Any] = {}
    if source is not None:
        from_source = {"extra_paths": (sysconfig.get_paths()["purelib"],), "owns_code": False}
    code_uri = source if source is not None else extract(package)
    layers_root = None
    if layers:
        try:
            code_size = 0 if source is not None else folder_size(code_uri)
            layers_root = unpack_layers(layers, code_size=code_size)
        except PackageError:
            if source is None:
                shutil.rmtree(code_uri, ignore_errors=True)
            raise
        from_source["layer_paths"] = layer_paths(layers_root, runtime)
    return ProcessFunction(
        **from_source,
        layers_root=layers_root,
        name=name,
        arn=arn,
        code_uri=code_uri,
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
        version=version,
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


def register_version(function: Function) -> None:
    """Make ``function`` the published version ``function.version`` of its name: it runs
    the code and configuration it was published with, whatever ``$LATEST`` becomes."""
    with _LOCK:
        earlier = _VERSIONS.get((function.name, function.version))
        _VERSIONS[(function.name, function.version)] = function
    if earlier is not None and earlier is not function:
        earlier.close()


def set_alias(name: str, alias: str, version: str | None) -> None:
    """Point the alias ``alias`` of the function ``name`` at ``version`` (a number or
    ``$LATEST``); ``None`` deletes the alias."""
    with _LOCK:
        if version is None:
            _ALIASES.pop((name, alias), None)
        else:
            _ALIASES[(name, alias)] = version


def unregister(name: str, version: str | None = None) -> None:
    """The function of that name is deleted, with every version and alias of it
    (``version=None``), or only its published version ``version``: forgotten and closed."""
    with _LOCK:
        if version is not None and version != "$LATEST":
            gone = [f for f in [_VERSIONS.pop((name, version), None)] if f is not None]
        else:
            gone = [f for f in [_FUNCTIONS.pop(name, None)] if f is not None]
            gone += [_VERSIONS.pop(key) for key in [k for k in _VERSIONS if k[0] == name]]
            for key in [k for k in _ALIASES if k[0] == name]:
                del _ALIASES[key]
    for function in gone:
        function.close()


def clear() -> list[tuple[str, str]]:
    """Forget every function and end its execution environments now, invocations in
    progress included (the account stops): (function name, request id) of each ended."""
    with _LOCK:
        functions = [*_FUNCTIONS.values(), *_VERSIONS.values()]
        _FUNCTIONS.clear()
        _VERSIONS.clear()
        _ALIASES.clear()
    return [
        (function.name, request_id) for function in functions for request_id in function.abort()
    ]


def lookup(name_or_arn: str, qualifier: str | None = None) -> Function:
    """The function a name, partial ARN (``123456789012:function:name``) or ARN names,
    each with or without a qualifier: none or ``$LATEST`` is ``$LATEST``, a number the
    version published under it, any other an alias, followed to its version. A qualifier
    in the name wins over ``qualifier`` (the Invoke API's ``Qualifier``).

    Raises:
        KeyError: no function of the local cloud has that name, version or alias.
    """
    if ":function:" in name_or_arn:
        name, _, in_name = name_or_arn.split(":function:", 1)[1].partition(":")
    else:  # a name, with or without a qualifier (``name:$LATEST``)
        name, _, in_name = name_or_arn.partition(":")
    wanted = in_name or qualifier or "$LATEST"
    with _LOCK:
        version = _ALIASES.get((name, wanted), wanted)
        if version == "$LATEST":
            return _FUNCTIONS[name]
        return _VERSIONS[(name, version)]


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
