"""Read ``template.yaml`` and ``samconfig.toml`` and resolve the intrinsics the template uses.

Parameters resolve as ``sam deploy`` resolves them, with SAM CLI's own classes: the
samconfig environment's ``parameter_overrides`` (``[<env>.global.parameters]`` merged
under ``[<env>.deploy.parameters]`` by ``SamConfig.get_all``, any form SAM
accepts: a string, a list, an inline table, ``file://``), or, when given, the
command line's ``--parameter-overrides``, which replaces samconfig's as it does for
``sam deploy``; both parsed by ``CfnParameterOverridesType``; then the template's
``Default`` for the rest. Supported intrinsics: ``Ref``, ``Fn::GetAtt``, ``Fn::Sub``
(string and list forms) and ``Fn::Join``; anything else fails with
:class:`UnsupportedTemplate` naming the resource and the property.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
from cfnlint.decode import cfn_yaml
from samcli.cli.types import CfnParameterOverridesType
from samcli.lib.config.exceptions import SamConfigFileReadException
from samcli.lib.config.samconfig import SamConfig

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
    parameter_sources: Mapping[str, str] = field(default_factory=dict)
    """Where each parameter's value came from: ``template default``,
    ``samconfig.toml [default]`` or ``--parameter-overrides``."""

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


DEFAULT_SOURCE = "template default"
COMMAND_LINE_SOURCE = "--parameter-overrides"


def load(
    path: Path = TEMPLATE_PATH,
    *,
    samconfig: Path | None = SAMCONFIG_PATH,
    config_env: str = "default",
    parameter_overrides: str | Sequence[str] | Mapping[str, Any] | None = None,
) -> Template:
    """Parse the template (cfn-lint's decoder knows the ``!Ref``/``!GetAtt``/``!Sub`` tags)
    and resolve its parameters as ``sam deploy --config-env <config_env>`` would.

    Args:
        path: the template.
        samconfig: the SAM CLI configuration file (``None``: none).
        config_env: the samconfig environment; it must exist in the file.
        parameter_overrides: ``--parameter-overrides`` as on the ``sam deploy`` command
            line (``"BatchSize=1 FaultModesEnabled=false"``, a list of such strings, or a
            mapping); when given it replaces samconfig's ``parameter_overrides``.

    Raises:
        UnsupportedTemplate: the samconfig environment does not exist or cannot be read;
            an override is not in a form SAM CLI accepts, or names no parameter of the
            template (SAM CLI would drop it silently); a parameter has neither a value
            nor a default; a value breaks the parameter's constraints.
    """
    body = cfn_yaml.load(str(path))
    declared: Mapping[str, Mapping[str, Any]] = body.get("Parameters", {})
    if parameter_overrides is not None:
        given = _parse_overrides(parameter_overrides, COMMAND_LINE_SOURCE)
        source = COMMAND_LINE_SOURCE
    else:
        given = samconfig_parameter_overrides(samconfig, config_env, ["deploy"])
        source = f"{samconfig.name if samconfig else 'samconfig'} [{config_env}]"
    values: dict[str, str] = {}
    sources: dict[str, str] = {}
    for name, spec in declared.items():
        if "Default" in spec:
            values[name], sources[name] = str(spec["Default"]), DEFAULT_SOURCE
    for name, value in given.items():
        if name not in declared:
            raise UnsupportedTemplate(
                f"{source} parameter {name}",
                "no such template parameter (sam deploy would ignore it silently)",
            )
        values[name], sources[name] = value, source
    for name, spec in declared.items():
        if name not in values:
            raise UnsupportedTemplate(f"Parameters.{name}", "needs a Default or an override")
        _check_parameter(name, spec, values[name])
    return Template(
        path=path,
        body=body,
        parameters=values,
        config_env=config_env,
        parameter_sources=sources,
    )


def samconfig_parameter_overrides(
    samconfig: Path | None, config_env: str, cmd_names: Sequence[str]
) -> dict[str, str]:
    """``parameter_overrides`` of a samconfig environment for a SAM CLI command, read and
    parsed as SAM CLI does (``[<env>.global.parameters]`` merged under
    ``[<env>.<command>.parameters]``; ``cmd_names`` ``["deploy"]`` or ``["local",
    "invoke"]``). An absent file gives ``{}``, as in SAM CLI.

    Raises:
        UnsupportedTemplate: the file cannot be read, it has no ``config_env`` section
            (SAM CLI would go on without one, and ``sam deploy`` would then miss its
            stack name), or the value is not in a form SAM CLI accepts.
    """
    if samconfig is None or not samconfig.exists():
        return {}
    where = f"{samconfig.name} [{config_env}]"
    try:
        config = SamConfig(samconfig.parent, samconfig.name)
        environments = config.get_stage_configuration_names()
        if config_env not in environments:
            raise UnsupportedTemplate(
                where, f"no such environment (it has: {', '.join(environments) or 'none'})"
            )
        resolved = config.get_all(list(cmd_names), "parameters", env=config_env)
    except SamConfigFileReadException as exc:
        raise UnsupportedTemplate(where, str(exc)) from exc
    raw = resolved.get("parameter_overrides")
    if raw is None:
        return {}
    # sam deploy runs in the project directory: a relative file:// resolves from there.
    with contextlib.chdir(samconfig.parent):
        return _parse_overrides(raw, f"{where} parameter_overrides")


def samconfig_stack_name(config_env: str, samconfig: Path = SAMCONFIG_PATH) -> str:
    """``stack_name`` of a samconfig environment for ``sam deploy``.

    Raises:
        UnsupportedTemplate: no such environment, or it names no stack.
    """
    where = f"{samconfig.name} [{config_env}]"
    config = SamConfig(samconfig.parent, samconfig.name)
    if config_env not in config.get_stage_configuration_names():
        raise UnsupportedTemplate(where, "no such environment")
    name = config.get_all(["deploy"], "parameters", env=config_env).get("stack_name")
    if not name:
        raise UnsupportedTemplate(where, "no stack_name (give --stack-name)")
    return str(name)


def _parse_overrides(raw: Any, where: str) -> dict[str, str]:
    try:
        parsed = CfnParameterOverridesType().convert(raw, None, None)
    except click.ClickException as exc:
        raise UnsupportedTemplate(where, exc.format_message()) from exc
    return {str(name): str(value) for name, value in parsed.items()}


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
