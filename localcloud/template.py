"""Read ``template.yaml`` and ``samconfig.toml`` and resolve the intrinsics the template uses.

Parameters resolve as ``sam deploy`` would for the chosen samconfig environment: the
template's ``Default`` overridden by ``[<env>.deploy.parameters].parameter_overrides``,
then by explicit overrides. Supported intrinsics: ``Ref``, ``Fn::GetAtt``, ``Fn::Sub``
(string and list forms) and ``Fn::Join``; anything else fails with
:class:`UnsupportedTemplate` naming the resource and the property.
"""

from __future__ import annotations

import math
import re
import shlex
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cfnlint.decode import cfn_yaml

ROOT = Path(__file__).resolve().parent.parent
TEMPLATE_PATH = ROOT / "template.yaml"
SAMCONFIG_PATH = ROOT / "samconfig.toml"

_SUB_VARIABLE = re.compile(r"\$\{([^}!][^}]*)\}")


class UnsupportedTemplate(Exception):
    """The local cloud cannot honour part of the template; the message names where."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(f"{where}: {detail}")
        self.where = where


@dataclass(frozen=True)
class Template:
    """A parsed template with its parameter values resolved (all values are strings)."""

    path: Path
    body: Mapping[str, Any]
    parameters: Mapping[str, str]
    config_env: str
    overrides_source: Mapping[str, str] = field(default_factory=dict)

    @property
    def resources(self) -> Mapping[str, Mapping[str, Any]]:
        resources: Mapping[str, Mapping[str, Any]] = self.body.get("Resources", {})
        return resources

    @property
    def function_globals(self) -> Mapping[str, Any]:
        globals_: Mapping[str, Any] = self.body.get("Globals", {}).get("Function", {})
        return globals_

    @property
    def outputs(self) -> Mapping[str, Mapping[str, Any]]:
        outputs: Mapping[str, Mapping[str, Any]] = self.body.get("Outputs", {})
        return outputs

    def of_type(self, resource_type: str) -> dict[str, Mapping[str, Any]]:
        """Resources of one CloudFormation/SAM type, by logical id, in template order."""
        return {
            logical_id: resource
            for logical_id, resource in self.resources.items()
            if resource.get("Type") == resource_type
        }


def load(
    path: Path = TEMPLATE_PATH,
    *,
    samconfig: Path | None = SAMCONFIG_PATH,
    config_env: str = "default",
    overrides: Mapping[str, str] | None = None,
) -> Template:
    """Parse the template (cfn-lint's decoder knows the ``!Ref``/``!GetAtt``/``!Sub`` tags).

    Raises:
        UnsupportedTemplate: an override names no parameter, or a parameter has neither
            a default nor an override, or samconfig's ``parameter_overrides`` is not in
            the ``Key="value"`` form.
    """
    body = cfn_yaml.load(str(path))
    declared: Mapping[str, Mapping[str, Any]] = body.get("Parameters", {})
    from_config = _samconfig_overrides(samconfig, config_env) if samconfig else {}
    values: dict[str, str] = {}
    for name, spec in declared.items():
        if "Default" in spec:
            values[name] = str(spec["Default"])
    for source, extra in (("samconfig.toml", from_config), ("overrides", overrides or {})):
        for name, value in extra.items():
            if name not in declared:
                raise UnsupportedTemplate(
                    f"{source} parameter {name}", "no such template parameter"
                )
            values[name] = str(value)
    for name, spec in declared.items():
        if name not in values:
            raise UnsupportedTemplate(f"Parameters.{name}", "needs a Default or an override")
        _check_parameter(name, spec, values[name])
    return Template(
        path=path,
        body=body,
        parameters=values,
        config_env=config_env,
        overrides_source=from_config,
    )


def _check_parameter(name: str, spec: Mapping[str, Any], value: str) -> None:
    """Apply the constraints CloudFormation applies before a deploy (Type Number,
    MinValue, MaxValue, AllowedValues), so a value ``sam deploy`` would reject fails here
    too instead of deploying locally."""
    where = f"Parameters.{name}"
    allowed = spec.get("AllowedValues")
    if allowed is not None and value not in [str(a) for a in allowed]:
        raise UnsupportedTemplate(where, f"{value!r} is not one of {list(allowed)}")
    if spec.get("Type") == "Number":
        try:
            number = float(value)
        except ValueError:
            raise UnsupportedTemplate(where, f"{value!r} is not a number") from None
        if not math.isfinite(number):
            raise UnsupportedTemplate(where, f"{value!r} is not a finite number")
        if "MinValue" in spec and number < float(spec["MinValue"]):
            raise UnsupportedTemplate(where, f"{value} is below MinValue {spec['MinValue']}")
        if "MaxValue" in spec and number > float(spec["MaxValue"]):
            raise UnsupportedTemplate(where, f"{value} is above MaxValue {spec['MaxValue']}")


def _samconfig_overrides(path: Path, config_env: str) -> dict[str, str]:
    if not path.exists():
        return {}
    config = tomllib.loads(path.read_text())
    raw = (
        config.get(config_env, {})
        .get("deploy", {})
        .get("parameters", {})
        .get("parameter_overrides")
    )
    if raw is None:
        return {}
    if isinstance(raw, list):
        raw = " ".join(raw)
    result: dict[str, str] = {}
    for token in shlex.split(raw):
        name, sep, value = token.partition("=")
        if not sep or not name or name.startswith("ParameterKey"):
            raise UnsupportedTemplate(
                f"samconfig.toml [{config_env}.deploy.parameters].parameter_overrides",
                f'expected Key="value" pairs, got {token!r}',
            )
        result[name] = value
    return result


Resolver = Callable[[str, str], Any]


def resolve(
    value: Any,
    *,
    where: str,
    ref: Callable[[str], Any],
    get_att: Callable[[str, str], Any],
) -> Any:
    """Resolve intrinsic functions inside ``value``.

    Args:
        value: a property value from the template.
        where: ``Resource.Property`` for error messages.
        ref: logical id or parameter name → value (raises ``KeyError`` when unknown).
        get_att: (logical id, attribute) → value (raises ``KeyError`` when unknown).

    Raises:
        UnsupportedTemplate: an intrinsic the local cloud does not implement, or a
            reference it cannot resolve.
    """
    if isinstance(value, Mapping):
        if len(value) == 1:
            ((key, arg),) = value.items()
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
                return _sub(arg, where=where, ref=ref, get_att=get_att)
            if key == "Fn::Join":
                separator, parts = arg
                resolved = resolve(parts, where=where, ref=ref, get_att=get_att)
                return str(separator).join(str(part) for part in resolved)
            if key.startswith("Fn::") or key == "Condition":
                raise UnsupportedTemplate(where, f"the local cloud does not implement {key}")
        return {
            str(k): resolve(v, where=f"{where}.{k}", ref=ref, get_att=get_att)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [
            resolve(item, where=f"{where}[{i}]", ref=ref, get_att=get_att)
            for i, item in enumerate(value)
        ]
    return value


def _sub(
    arg: Any, *, where: str, ref: Callable[[str], Any], get_att: Callable[[str, str], Any]
) -> str:
    if isinstance(arg, list):
        text, variables = arg[0], resolve(arg[1], where=where, ref=ref, get_att=get_att)
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
    except KeyError as exc:
        raise UnsupportedTemplate(where, f"cannot resolve {what}") from exc
