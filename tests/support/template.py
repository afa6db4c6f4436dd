"""``template.yaml`` as the application's tests read it, with the SAM tooling's own classes
and nothing of the local cloud:

- the file as written, parsed by cfn-lint's loader (short-form intrinsics become their
  long forms: ``!Ref X`` is ``{"Ref": "X"}``);
- the parameters a samconfig environment deploys: the template's defaults under
  ``parameter_overrides`` as ``sam deploy`` reads them (SAM CLI's ``SamConfig``, its
  ``[<env>.global.parameters]`` merged under ``[<env>.deploy.parameters]``, parsed by its
  ``CfnParameterOverridesType``);
- each function as ``sam local invoke`` sees it (SAM CLI's ``SamLocalStackProvider`` and
  ``SamFunctionProvider``: the SAM transform applied, ``Globals`` merged, intrinsics
  resolved, a ``Ref`` to a resource given as its logical id).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cfnlint.decode import cfn_yaml
from samcli.cli.types import CfnParameterOverridesType
from samcli.lib.config.samconfig import SamConfig
from samcli.lib.providers.provider import Function
from samcli.lib.providers.sam_function_provider import SamFunctionProvider
from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider

from tests.support.paths import ROOT

TEMPLATE_PATH = ROOT / "template.yaml"
SAMCONFIG_PATH = ROOT / "samconfig.toml"


def samconfig_overrides(config_env: str, samconfig: Path = SAMCONFIG_PATH) -> dict[str, str]:
    """``parameter_overrides`` of a samconfig environment for ``sam deploy``, as SAM CLI
    reads and parses them (``{}`` when the environment sets none)."""
    config = SamConfig(samconfig.parent, samconfig.name)
    raw = config.get_all(["deploy"], "parameters", env=config_env).get("parameter_overrides")
    if raw is None:
        return {}
    parsed = CfnParameterOverridesType().convert(raw, None, None)
    return {str(name): str(value) for name, value in parsed.items()}


@dataclass(frozen=True)
class Template:
    """A SAM template as written, with the parameter values one environment deploys
    (every value a string, as CloudFormation passes them)."""

    path: Path
    body: Mapping[str, Any]
    parameters: Mapping[str, str]
    config_env: str

    @property
    def resources(self) -> Mapping[str, Mapping[str, Any]]:
        """Every resource the file declares, by logical id, as written (a ``Condition``
        is a key of the resource, not applied)."""
        resources: Mapping[str, Mapping[str, Any]] = self.body.get("Resources", {})
        return resources

    declared_resources = resources

    @property
    def outputs(self) -> Mapping[str, Mapping[str, Any]]:
        """Every Output the file declares, as written."""
        outputs: Mapping[str, Mapping[str, Any]] = self.body.get("Outputs", {})
        return outputs

    declared_outputs = outputs

    @property
    def conditions(self) -> Mapping[str, Any]:
        """The ``Conditions`` section, as written."""
        conditions: Mapping[str, Any] = self.body.get("Conditions", {})
        return conditions

    @property
    def function_globals(self) -> Mapping[str, Any]:
        """``Globals.Function``, as written."""
        globals_: Mapping[str, Any] = self.body.get("Globals", {}).get("Function", {})
        return globals_

    def of_type(self, resource_type: str) -> dict[str, Mapping[str, Any]]:
        """The resources of one CloudFormation or SAM type, by logical id, in file order."""
        return {
            logical_id: resource
            for logical_id, resource in self.resources.items()
            if resource.get("Type") == resource_type
        }

    def function(self, logical_id: str) -> Function:
        """The function as ``sam local invoke`` sees it: ``codeuri``, ``handler``,
        ``timeout`` (s), ``memory`` (MB) and ``environment`` after the SAM transform and
        SAM CLI's intrinsic resolution with these parameters.

        Raises:
            KeyError: no function of that logical id.
        """
        function = _functions(self.path, tuple(sorted(self.parameters.items()))).get(logical_id)
        if function is None:
            raise KeyError(logical_id)
        return function


@functools.cache
def _functions(path: Path, parameters: tuple[tuple[str, str], ...]) -> SamFunctionProvider:
    """SAM CLI's function provider for the template (the transform is the costly part,
    and the files do not change during a run)."""
    stacks, _ = SamLocalStackProvider.get_stacks(
        str(path),
        parameter_overrides=dict(parameters),
        global_parameter_overrides={"AWS::Region": "us-east-1"},
    )
    return SamFunctionProvider(stacks)


@functools.cache
def load(config_env: str = "default", path: Path = TEMPLATE_PATH) -> Template:
    """The template with the parameters ``config_env`` of ``samconfig.toml`` deploys:
    each override, else the parameter's ``Default``."""
    body: Mapping[str, Any] = cfn_yaml.load(str(path))
    overrides = samconfig_overrides(config_env, path.parent / "samconfig.toml")
    parameters = {
        name: overrides.get(name, _text(spec.get("Default", "")))
        for name, spec in body.get("Parameters", {}).items()
    }
    return Template(path=path, body=body, parameters=parameters, config_env=config_env)


def _text(value: Any) -> str:
    """A parameter value as CloudFormation passes it (a YAML ``true`` is ``"true"``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)
