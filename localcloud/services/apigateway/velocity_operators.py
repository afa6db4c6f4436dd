"""Velocity's operators, as airspeed's ``BinaryOperator`` applies them once sandboxed
(:mod:`.velocity_patches`): arithmetic on numbers only (a string, a list or a map gives
``null``, as Velocity's ``MathUtils`` does: no ``'a' * 10**9``, no ``'%999999999d' % 1``),
integers within Java's ``long``, ``/`` and ``%`` as Java's (truncated toward zero; by zero
``null``), ``+`` joining strings when either side is one; ``==`` and ``!=`` by Java's
``equals`` (:func:`.velocity.equal`); ``<`` and the others on two numbers or two strings,
``false`` otherwise. Each operator Python would walk a template's values with is replaced,
so none runs on a list of lists built by doubling.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Mapping
from typing import Any, Final

from localcloud.services.apigateway.velocity import TemplateError, current, equal, java_text
from localcloud.services.apigateway.velocity_members import NULL

__all__ = ["OPERATORS"]


_LONG: Final = range(-(2**63), 2**63)


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _long(result: Any) -> Any:
    if isinstance(result, int) and result not in _LONG:
        raise TemplateError(f"an integer past Java's long: {str(result)[:40]}…")
    return result


def _add(left: Any, right: Any) -> Any:
    if _number(left) and _number(right):
        return _long(left + right)
    if isinstance(left, str) or isinstance(right, str):
        left, right = java_text(left), java_text(right)
        current().made_text(len(left) + len(right))
        return left + right
    return NULL


def _arithmetic(apply: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    def checked(left: Any, right: Any) -> Any:
        return _long(apply(left, right)) if _number(left) and _number(right) else NULL

    return checked


def _divide(left: Any, right: Any) -> Any:
    """Java's: integers truncated toward zero, any other number divided; by zero null."""
    if not (_number(left) and _number(right)) or right == 0:
        return NULL
    if isinstance(left, int) and isinstance(right, int):
        quotient = abs(left) // abs(right)
        return _long(quotient if (left < 0) == (right < 0) else -quotient)
    return left / right


def _remainder(left: Any, right: Any) -> Any:
    """Java's ``%``: the sign of the dividend; by zero null; numbers only (no
    ``'%999999999d' % 1``)."""
    if not (_number(left) and _number(right)) or right == 0:
        return NULL
    if isinstance(left, int) and isinstance(right, int):
        return _long(left - right * _divide(left, right))
    return math.fmod(left, right)


def _ordered(apply: Callable[[Any, Any], bool]) -> Callable[[Any, Any], bool]:
    def compared(left: Any, right: Any) -> bool:
        if (_number(left) and _number(right)) or (isinstance(left, str) and isinstance(right, str)):
            return apply(left, right)
        return False

    return compared


OPERATORS: Final[Mapping[Callable[..., Any], Callable[[Any, Any], Any]]] = {
    operator.add: _add,
    operator.sub: _arithmetic(operator.sub),
    operator.mul: _arithmetic(operator.mul),
    operator.floordiv: _divide,
    operator.mod: _remainder,
    operator.eq: equal,
    operator.ne: lambda left, right: not equal(left, right),
    operator.lt: _ordered(operator.lt),
    operator.le: _ordered(operator.le),
    operator.gt: _ordered(operator.gt),
    operator.ge: _ordered(operator.ge),
}
