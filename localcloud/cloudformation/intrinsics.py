"""CloudFormation's intrinsic functions and conditions, as the local cloud resolves them.

Supported: ``Ref``, ``Fn::GetAtt``, ``Fn::Sub`` (string and list forms), ``Fn::Join``,
``Fn::If`` and ``Ref AWS::NoValue``; ``Conditions`` with ``Fn::Equals``, ``Fn::Not``,
``Fn::And``, ``Fn::Or`` and ``Condition`` references ("Conditions" and "Intrinsic
function reference" in the CloudFormation User Guide). Anything else fails with
:class:`~localcloud.cloudformation.exceptions.UnsupportedTemplate` naming the resource and the
property.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any, Final

from localcloud.cloudformation.exceptions import NotCreated, UnsupportedTemplate

_SUB_VARIABLE = re.compile(r"\$\{([^}!][^}]*)\}")


class _NoValue:
    """``Ref AWS::NoValue``: the property (or list item) that resolves to it is removed."""

    def __repr__(self) -> str:
        return "AWS::NoValue"


NO_VALUE: Final = _NoValue()


_CONDITION_FUNCTIONS = ("Fn::Equals", "Fn::Not", "Fn::And", "Fn::Or", "Condition")


def evaluate_conditions(
    declared: Mapping[str, Any], parameters: Mapping[str, str]
) -> dict[str, bool]:
    """Evaluate a template's ``Conditions`` section as CloudFormation does.

    Inside a condition, ``Ref`` names a parameter (CloudFormation allows nothing else
    but pseudo parameters, which the local cloud does not resolve here); ``Fn::Equals``
    compares two values as strings; ``Fn::And`` and ``Fn::Or`` take 2 to 10 conditions;
    ``Fn::Not`` takes one; ``{"Condition": name}`` is another condition's value.

    Raises:
        UnsupportedTemplate: naming ``Conditions.<name>``, for a function it does not
            implement, a malformed argument list, an unknown condition or parameter, or
            a circular reference.
    """
    values: dict[str, bool] = {}
    evaluating: list[str] = []

    def condition(name: str, where: str) -> bool:
        if name in values:
            return values[name]
        if name not in declared:
            raise UnsupportedTemplate(where, f"no condition named {name}")
        if name in evaluating:
            cycle = " -> ".join([*evaluating[evaluating.index(name) :], name])
            raise UnsupportedTemplate(where, f"circular condition reference: {cycle}")
        evaluating.append(name)
        values[name] = boolean(declared[name], f"Conditions.{name}")
        evaluating.pop()
        return values[name]

    def boolean(value: Any, where: str) -> bool:
        if not (isinstance(value, Mapping) and len(value) == 1):
            raise UnsupportedTemplate(where, f"not a condition function: {value!r}")
        ((key, arg),) = value.items()
        if key == "Condition":
            return condition(str(arg), where)
        if key not in _CONDITION_FUNCTIONS:
            raise UnsupportedTemplate(where, f"the local cloud does not implement {key}")
        if not isinstance(arg, list):
            raise UnsupportedTemplate(where, f"{key} takes a list")
        if key == "Fn::Equals":
            if len(arg) != 2:
                raise UnsupportedTemplate(where, "Fn::Equals takes exactly two values")
            left, right = (scalar(item, f"{where}.{key}[{i}]") for i, item in enumerate(arg))
            return left == right
        if key == "Fn::Not":
            if len(arg) != 1:
                raise UnsupportedTemplate(where, "Fn::Not takes exactly one condition")
            return not boolean(arg[0], f"{where}.Fn::Not[0]")
        if not 2 <= len(arg) <= 10:
            raise UnsupportedTemplate(where, f"{key} takes 2 to 10 conditions")
        results = [boolean(item, f"{where}.{key}[{i}]") for i, item in enumerate(arg)]
        return all(results) if key == "Fn::And" else any(results)

    def scalar(value: Any, where: str) -> str:
        if isinstance(value, Mapping):
            if set(value) == {"Ref"}:
                name = str(value["Ref"])
                if name not in parameters:
                    raise UnsupportedTemplate(
                        where, f"Ref {name}: a condition can only refer to a parameter here"
                    )
                return parameters[name]
            raise UnsupportedTemplate(where, f"the local cloud does not implement {value!r}")
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    for name in declared:
        condition(name, f"Conditions.{name}")
    return values


def resolve(
    value: Any,
    *,
    where: str,
    ref: Callable[[str], Any],
    get_att: Callable[[str, str], Any],
    condition: Callable[[str], bool] | None = None,
) -> Any:
    """Resolve intrinsic functions inside ``value``.

    Args:
        value: a property value from the template.
        where: ``Resource.Property`` for error messages.
        ref: logical id or parameter name → value (raises ``KeyError`` when unknown,
            :class:`NotCreated` for a resource whose condition is false).
        get_att: (logical id, attribute) → value (raises ``KeyError`` when unknown).
        condition: condition name → value (``KeyError`` when unknown), for ``Fn::If``.

    A key or list item that resolves to ``Ref AWS::NoValue`` (directly or through the
    branch ``Fn::If`` takes) is removed, as in CloudFormation; only the branch taken is
    resolved, so the other may refer to a resource that is not created.

    Raises:
        UnsupportedTemplate: an intrinsic the local cloud does not implement, or a
            reference it cannot resolve; ``value`` itself resolving to ``AWS::NoValue``.
    """
    resolved = _resolve(value, where=where, ref=ref, get_att=get_att, condition=condition)
    if resolved is NO_VALUE:
        raise UnsupportedTemplate(where, "resolves to AWS::NoValue: there is nothing to use")
    return resolved


def _resolve(
    value: Any,
    *,
    where: str,
    ref: Callable[[str], Any],
    get_att: Callable[[str, str], Any],
    condition: Callable[[str], bool] | None,
) -> Any:
    def inner(item: Any, at: str) -> Any:
        return _resolve(item, where=at, ref=ref, get_att=get_att, condition=condition)

    if isinstance(value, Mapping):
        if len(value) == 1:
            ((key, arg),) = value.items()
            if key == "Ref" and arg == "AWS::NoValue":
                return NO_VALUE
            if key == "Ref":
                return _lookup(where, f"Ref {arg}", lambda: ref(str(arg)))
            if key == "Fn::GetAtt":
                logical_id, attribute = arg if isinstance(arg, list) else str(arg).split(".", 1)
                return _lookup(
                    where,
                    f"GetAtt {logical_id}.{attribute}",
                    lambda: get_att(str(logical_id), str(attribute)),
                )
            if key == "Fn::Sub":
                return _sub(arg, where=where, ref=ref, get_att=get_att, condition=condition)
            if key == "Fn::Join":
                separator, parts = arg
                joined = resolve(parts, where=where, ref=ref, get_att=get_att, condition=condition)
                return str(separator).join(str(part) for part in joined)
            if key == "Fn::If":
                return inner(_if_branch(arg, where, condition), f"{where}.Fn::If")
            if key.startswith("Fn::") or key == "Condition":
                raise UnsupportedTemplate(where, f"the local cloud does not implement {key}")
        resolved = {str(k): inner(v, f"{where}.{k}") for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not NO_VALUE}
    if isinstance(value, list):
        items = [inner(item, f"{where}[{i}]") for i, item in enumerate(value)]
        return [item for item in items if item is not NO_VALUE]
    return value


def _if_branch(arg: Any, where: str, condition: Callable[[str], bool] | None) -> Any:
    """The branch ``Fn::If [name, when_true, when_false]`` takes."""
    if not (isinstance(arg, list) and len(arg) == 3):
        raise UnsupportedTemplate(where, "Fn::If takes [condition, value if true, value if false]")
    name, when_true, when_false = arg
    if condition is None:
        raise UnsupportedTemplate(where, "Fn::If needs the template's conditions here")
    try:
        holds = condition(str(name))
    except KeyError:
        raise UnsupportedTemplate(where, f"Fn::If: no condition named {name}") from None
    return when_true if holds else when_false


def _sub(
    arg: Any,
    *,
    where: str,
    ref: Callable[[str], Any],
    get_att: Callable[[str, str], Any],
    condition: Callable[[str], bool] | None,
) -> str:
    if isinstance(arg, list):
        text = arg[0]
        variables = resolve(arg[1], where=where, ref=ref, get_att=get_att, condition=condition)
    else:
        text, variables = arg, {}

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name in variables:
            return str(variables[name])
        if "." in name:
            logical_id, attribute = name.split(".", 1)
            return str(_lookup(where, f"Sub ${{{name}}}", lambda: get_att(logical_id, attribute)))
        return str(_lookup(where, f"Sub ${{{name}}}", lambda: ref(name)))

    return _SUB_VARIABLE.sub(replace, str(text)).replace("${!", "${")


def _lookup(where: str, what: str, get: Callable[[], Any]) -> Any:
    try:
        return get()
    except NotCreated as exc:
        raise UnsupportedTemplate(where, f"cannot resolve {what}: {exc.reason}") from exc
    except KeyError as exc:
        raise UnsupportedTemplate(where, f"cannot resolve {what}") from exc
