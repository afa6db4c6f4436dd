"""A template as CloudFormation reads it: parsed (within CloudFormation's quotas,
:mod:`.template_limits`), its parameters resolved, its ``Conditions`` evaluated.

A resource or an Output whose ``Condition`` is false is not part of the stack:
:attr:`Template.resources` and :attr:`Template.outputs` leave it out
(``declared_resources`` and ``declared_outputs`` keep everything the file declares), and a
``Ref`` or ``GetAtt`` of it fails, as CloudFormation refuses one outside an ``Fn::If`` on
that condition. Parameters: :mod:`localcloud.cloudformation.parameters`; intrinsics and conditions:
:mod:`localcloud.cloudformation.intrinsics`.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.intrinsics import evaluate_conditions
from localcloud.cloudformation.parameters import (
    check_parameter,
    parse_overrides,
    samconfig_parameter_overrides,
)
from localcloud.cloudformation.template_limits import check_parameter_value, parse, read_file


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


SAMCONFIG: Final = Path("samconfig.toml")
"""SAM CLI's configuration file, in the template's folder (the project directory)."""


def load(
    path: Path,
    *,
    samconfig: Path | None = SAMCONFIG,
    config_env: str = "default",
    parameter_overrides: str | Sequence[str] | Mapping[str, Any] | None = None,
) -> Template:
    """Parse the template (cfn-lint's decoder knows the ``!Ref``/``!GetAtt``/``!Sub`` tags),
    read no further than CloudFormation's 1 MB, and resolve its parameters as ``sam deploy
    --config-env <config_env>`` would.

    Args:
        path: the template.
        samconfig: the SAM CLI configuration file, relative to the template's folder
            unless absolute (``None``: none; an absent file gives no overrides, as in
            SAM CLI).
        config_env: the samconfig environment; it must exist in the file.
        parameter_overrides: ``--parameter-overrides`` as on the ``sam deploy`` command
            line (``"BatchSize=1 FaultModesEnabled=false"``, a list of such strings, or a
            mapping); when given it replaces samconfig's ``parameter_overrides``.

    Raises:
        UnsupportedTemplate: the template is refused as CloudFormation refuses it
            (:func:`.template_limits.parse`: "Template format error: …", over 1 MB, more
            than 500 resources, a parameter value over 4,096 bytes);
            the samconfig environment does not exist or cannot be read;
            an override is not in a form SAM CLI accepts, or names no parameter of the
            template (SAM CLI would drop it silently); a parameter has neither a value
            nor a default; a value breaks the parameter's constraints.
    """
    body = parse(read_file(path))
    if samconfig is not None:
        samconfig = path.parent / samconfig
    if parameter_overrides is not None:
        given = parse_overrides(parameter_overrides, COMMAND_LINE_SOURCE)
        source = COMMAND_LINE_SOURCE
    else:
        given = samconfig_parameter_overrides(samconfig, config_env, ["deploy"])
        source = f"{samconfig.name if samconfig else 'samconfig'} [{config_env}]"
    return from_body(body, given, source=source, path=path, config_env=config_env)


CHANGE_SET_SOURCE = "CreateChangeSet Parameters"
RECEIVED: Final = Path("template.yaml")
"""The path of a template received through the API: local paths in it resolve from the
server's working directory."""


def parse_body(text: str) -> dict[str, Any]:
    """A template as CloudFormation receives it (YAML with or without short-form tags,
    or JSON), parsed within CloudFormation's quotas (:func:`.template_limits.parse`).

    Raises:
        UnsupportedTemplate: the text is not a template, or CloudFormation refuses it.
    """
    return parse(text)


def from_body(
    body: Mapping[str, Any],
    given: Mapping[str, str],
    *,
    source: str = CHANGE_SET_SOURCE,
    path: Path = RECEIVED,
    config_env: str = "default",
) -> Template:
    """A parsed template with its parameters resolved from ``given`` (by ``source``) and the
    template defaults, each checked against its constraints. ``path`` is where local paths
    in it (``CodeUri``) resolve from: a template received through the API has none of its
    own (:data:`RECEIVED`).

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
        check_parameter_value(name, values[name])
        check_parameter(name, spec, values[name])
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
