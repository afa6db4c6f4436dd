"""Parameters, resolved as ``sam deploy`` resolves them, with SAM CLI's own classes.

The samconfig environment's ``parameter_overrides`` (``[<env>.global.parameters]`` merged
under ``[<env>.deploy.parameters]`` by ``SamConfig.get_all``, any form SAM accepts: a
string, a list, an inline table, ``file://``), or, when given, the command line's
``--parameter-overrides``, which replaces samconfig's as it does for ``sam deploy``; both
parsed by ``CfnParameterOverridesType``; then the template's ``Default`` for the rest,
each value checked against its constraints as CloudFormation checks it.
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import click
from samcli.cli.types import CfnParameterOverridesType
from samcli.lib.config.exceptions import SamConfigFileReadException, SamConfigVersionException
from samcli.lib.config.samconfig import SamConfig

from localcloud.cloudformation.exceptions import UnsupportedTemplate


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
        return parse_overrides(raw, f"{where} parameter_overrides")


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


def samconfig_stack_name(config_env: str, samconfig: Path) -> str:
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


def parse_overrides(raw: Any, where: str) -> dict[str, str]:
    try:
        parsed = CfnParameterOverridesType().convert(raw, None, None)
    except click.ClickException as exc:
        raise UnsupportedTemplate(where, exc.format_message()) from exc
    return {str(name): str(value) for name, value in parsed.items()}


def check_parameter(name: str, spec: Mapping[str, Any], value: str) -> None:
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
