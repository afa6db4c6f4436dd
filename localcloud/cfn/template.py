"""Read ``template.yaml`` and ``samconfig.toml`` and resolve the intrinsics the template uses.

Parameters resolve as ``sam deploy`` resolves them, with SAM CLI's own classes: the
samconfig environment's ``parameter_overrides`` (``[<env>.global.parameters]`` merged
under ``[<env>.deploy.parameters]`` by ``SamConfig.get_all``, any form SAM
accepts: a string, a list, an inline table, ``file://``), or, when given, the
command line's ``--parameter-overrides``, which replaces samconfig's as it does for
``sam deploy``; both parsed by ``CfnParameterOverridesType``; then the template's
``Default`` for the rest. Supported intrinsics: ``Ref``, ``Fn::GetAtt``, ``Fn::Sub``
(string and list forms), ``Fn::Join``, ``Fn::If`` and ``Ref AWS::NoValue``; anything
else fails with :class:`UnsupportedTemplate` naming the resource and the property.

``Conditions`` are evaluated from the resolved parameters as CloudFormation evaluates
them (``Fn::Equals``, ``Fn::Not``, ``Fn::And``, ``Fn::Or`` and ``Condition``
references; "Conditions" in the CloudFormation User Guide). A resource or an Output
whose ``Condition`` is false is not part of the stack: :attr:`Template.resources` and
:attr:`Template.outputs` leave it out (``declared_resources`` and ``declared_outputs``
keep everything the file declares), and a ``Ref`` or ``GetAtt`` of it fails, as
CloudFormation refuses one outside an ``Fn::If`` on that condition.
"""

from __future__ import annotations

import contextlib
import functools
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import click
from cfnlint.decode import cfn_yaml
from samcli.cli.types import CfnParameterOverridesType
from samcli.lib.config.exceptions import SamConfigFileReadException, SamConfigVersionException
from samcli.lib.config.samconfig import SamConfig

from localcloud.project import SAMCONFIG_PATH, TEMPLATE_PATH

_SUB_VARIABLE = re.compile(r"\$\{([^}!][^}]*)\}")


class UnsupportedTemplate(Exception):
    """The local cloud cannot honour part of the template; the message names where."""

    def __init__(self, where: str, detail: str) -> None:
        super().__init__(f"{where}: {detail}")
        self.where = where


class NotCreated(KeyError):
    """A ``Ref`` or ``GetAtt`` of a resource whose ``Condition`` is false: it is not part
    of the stack, and CloudFormation refuses such a reference outside an ``Fn::If`` on
    that condition. A ``KeyError``, so resolvers raise it where they raise for unknown
    names; :func:`resolve` reports its reason."""

    def __init__(self, logical_id: str, condition: str) -> None:
        super().__init__(logical_id)
        self.reason = (
            f"{logical_id} is not created (its Condition {condition} is false with these "
            f"parameters); reference it only inside Fn::If [{condition}, ...]"
        )


class _NoValue:
    """``Ref AWS::NoValue``: the property (or list item) that resolves to it is removed."""

    def __repr__(self) -> str:
        return "AWS::NoValue"


NO_VALUE: Final = _NoValue()


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
    def declared_resources(self) -> Mapping[str, Mapping[str, Any]]:
        """Every resource of the file, whatever its ``Condition``."""
        resources: Mapping[str, Mapping[str, Any]] = self.body.get("Resources", {})
        return resources

    @functools.cached_property
    def resources(self) -> Mapping[str, Mapping[str, Any]]:
        """The resources of the stack these parameters deploy: those without a
        ``Condition`` or whose condition is true, in template order."""
        return {
            logical_id: resource
            for logical_id, resource in self.declared_resources.items()
            if self._holds(resource, f"Resources.{logical_id}")
        }

    @property
    def function_globals(self) -> Mapping[str, Any]:
        globals_: Mapping[str, Any] = self.body.get("Globals", {}).get("Function", {})
        return globals_

    @property
    def declared_outputs(self) -> Mapping[str, Mapping[str, Any]]:
        """Every Output of the file, whatever its ``Condition``."""
        outputs: Mapping[str, Mapping[str, Any]] = self.body.get("Outputs", {})
        return outputs

    @functools.cached_property
    def outputs(self) -> Mapping[str, Mapping[str, Any]]:
        """The Outputs the stack has with these parameters (a false ``Condition``: none)."""
        return {
            name: output
            for name, output in self.declared_outputs.items()
            if self._holds(output, f"Outputs.{name}")
        }

    @functools.cached_property
    def conditions(self) -> Mapping[str, bool]:
        """Every template condition, evaluated from the resolved parameters.

        Raises:
            UnsupportedTemplate: a condition function the local cloud does not implement,
                a reference to an unknown condition or parameter, a circular reference.
        """
        declared: Mapping[str, Any] = self.body.get("Conditions", {})
        return evaluate_conditions(declared, self.parameters)

    def condition_holds(self, name: str) -> bool:
        """The value of condition ``name`` (``KeyError`` if the template has none)."""
        return self.conditions[name]

    def condition_of(self, logical_id: str) -> str | None:
        """The ``Condition`` a declared resource is created under, if any."""
        condition = self.declared_resources[logical_id].get("Condition")
        return None if condition is None else str(condition)

    def _holds(self, declaration: Mapping[str, Any], where: str) -> bool:
        name = declaration.get("Condition")
        if name is None:
            return True
        if str(name) not in self.conditions:
            raise UnsupportedTemplate(f"{where}.Condition", f"no condition named {name}")
        return self.conditions[str(name)]

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
    if parameter_overrides is not None:
        given = _parse_overrides(parameter_overrides, COMMAND_LINE_SOURCE)
        source = COMMAND_LINE_SOURCE
    else:
        given = samconfig_parameter_overrides(samconfig, config_env, ["deploy"])
        source = f"{samconfig.name if samconfig else 'samconfig'} [{config_env}]"
    return from_body(body, given, source=source, path=path, config_env=config_env)


CHANGE_SET_SOURCE = "CreateChangeSet Parameters"


def parse_body(text: str) -> dict[str, Any]:
    """A template as CloudFormation receives it (YAML with or without short-form tags,
    or JSON), parsed with cfn-lint's decoder.

    Raises:
        UnsupportedTemplate: the text is not a template.
    """
    try:
        body = cfn_yaml.loads(text)
    except Exception as exc:  # noqa: BLE001 - cfn-lint raises its own error classes
        raise UnsupportedTemplate("Template format error", str(exc)) from exc
    if not isinstance(body, dict):
        raise UnsupportedTemplate("Template format error", "not a JSON or YAML mapping")
    return dict(body)


def from_body(
    body: Mapping[str, Any],
    given: Mapping[str, str],
    *,
    source: str = CHANGE_SET_SOURCE,
    path: Path = TEMPLATE_PATH,
    config_env: str = "default",
) -> Template:
    """A parsed template with its parameters resolved from ``given`` (by ``source``) and the
    template defaults, each checked against its constraints.

    Raises:
        UnsupportedTemplate: as :func:`load`.
    """
    declared: Mapping[str, Mapping[str, Any]] = body.get("Parameters", {})
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
    template = Template(
        path=path,
        body=body,
        parameters=values,
        config_env=config_env,
        parameter_sources=sources,
    )
    # An unknown condition function or Condition name fails here, before any deploy.
    _ = template.resources, template.outputs
    return template


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
    config = read_samconfig(samconfig)
    try:
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


def read_samconfig(path: Path) -> SamConfig:
    """The SAM CLI configuration file, read by SAM CLI's own ``SamConfig``.

    Raises:
        UnsupportedTemplate: the file cannot be parsed; one line with the file and what
            the parser said, its line and column included (``samconfig.toml: Unexpected
            character: 'x' at line 3 col 5``), as ``sam deploy`` prints it. SAM CLI's own
            exception holds the parser's error as its message, which ``str`` refuses.
    """
    try:
        return SamConfig(path.parent, path.name)
    except (SamConfigFileReadException, SamConfigVersionException) as exc:
        cause: BaseException = exc
        while cause.__cause__ is not None:  # SamConfigFileReadException → FileParseException
            cause = cause.__cause__  # → the TOML, YAML or JSON parser's own error
        detail = " ".join(str(cause.args[0] if cause is exc else cause).split())
        raise UnsupportedTemplate(str(path.name), detail) from exc


def samconfig_stack_name(config_env: str, samconfig: Path = SAMCONFIG_PATH) -> str:
    """``stack_name`` of a samconfig environment for ``sam deploy``.

    Raises:
        UnsupportedTemplate: no such environment, or it names no stack.
    """
    where = f"{samconfig.name} [{config_env}]"
    config = read_samconfig(samconfig)
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
    MinValue, MaxValue, AllowedValues, AllowedPattern, MinLength, MaxLength), so a value
    ``sam deploy`` would reject fails here too instead of deploying locally.
    ``AllowedPattern`` must match the whole value, as in CloudFormation."""
    where = f"Parameters.{name}"
    allowed = spec.get("AllowedValues")
    if allowed is not None and value not in [str(a) for a in allowed]:
        raise UnsupportedTemplate(where, f"{value!r} is not one of {list(allowed)}")
    pattern = spec.get("AllowedPattern")
    if pattern is not None and re.fullmatch(str(pattern), value) is None:
        constraint = spec.get("ConstraintDescription", f"AllowedPattern {pattern}")
        raise UnsupportedTemplate(where, f"{value!r} does not match: {constraint}")
    if "MinLength" in spec and len(value) < int(spec["MinLength"]):
        raise UnsupportedTemplate(where, f"{value!r} is shorter than MinLength {spec['MinLength']}")
    if "MaxLength" in spec and len(value) > int(spec["MaxLength"]):
        raise UnsupportedTemplate(where, f"{value!r} is longer than MaxLength {spec['MaxLength']}")
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
