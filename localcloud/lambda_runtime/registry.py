"""The account's functions, by name and ARN, and who hears of their invocations.

Every function the local cloud runs is registered here, whoever made it (a template,
``sam deploy``, ``aws lambda create-function``): the Lambda API (``Invoke``, Step
Functions' ``lambda:invoke`` tasks, the event source mappings) finds it by name, partial
ARN or ARN (:func:`lookup`), and every invocation is handed to the listeners (the live
view's history).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from localcloud.lambda_runtime.functions import LISTENERS, Function, Invocation, InvocationListener

_FUNCTIONS: dict[str, Function] = {}
_LOCK = threading.Lock()

InvokeWrapper = Callable[[Function, Any, Callable[[], Invocation]], Invocation]
"""(function, event, run the invocation) → the invocation the invoke API answers with."""
_INVOKE_WRAPPER: InvokeWrapper | None = None


def register(function: Function) -> None:
    """Make ``function`` the one its name and ARN stand for (replacing an earlier one)."""
    with _LOCK:
        _FUNCTIONS[function.name] = function


def unregister(function: Function) -> None:
    """Forget ``function`` (deleted), unless another has taken its name since."""
    with _LOCK:
        if _FUNCTIONS.get(function.name) is function:
            del _FUNCTIONS[function.name]


def lookup(name_or_arn: str) -> Function:
    """The function a name, partial ARN (``123456789012:function:name``) or ARN (with or
    without a qualifier) names.

    Raises:
        KeyError: no function of the local cloud has that name.
    """
    name = name_or_arn
    if ":function:" in name_or_arn:
        name = name_or_arn.split(":function:", 1)[1].split(":", 1)[0]
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
