"""What SAM CLI itself resolves, computed with its own classes (no Docker needed).

- :func:`container_environment`: the environment ``sam local invoke`` gives a function's
  container: parameters from samconfig's ``local_invoke`` and ``global`` sections,
  ``SamLocalStackProvider``/``SamFunctionProvider`` for the function,
  ``LocalLambdaRunner._make_env_vars`` with the ``--env-vars`` file, exactly the code
  path of ``InvokeContext`` before it would start a container.
- :func:`deploy_parameter_overrides`: the ``parameter_overrides`` that ``sam deploy``
  hands to its deploy step, from SAM CLI's click command with samconfig read by its
  configuration callback; only the final ``do_cli`` is replaced, to capture them.
"""

from __future__ import annotations

import contextlib
import inspect
from pathlib import Path
from typing import Any
from unittest import mock

from click.testing import CliRunner
from samcli.commands.deploy import command as deploy_command
from samcli.commands.local.cli_common.invoke_context import InvokeContext
from samcli.commands.local.lib.local_lambda import LocalLambdaRunner
from samcli.lib.providers.sam_function_provider import SamFunctionProvider
from samcli.lib.providers.sam_stack_provider import SamLocalStackProvider

from localcloud.cloudformation.parameters import samconfig_parameter_overrides


def container_environment(
    logical_id: str,
    *,
    template: Path,
    samconfig: Path,
    env_vars_file: Path | None,
    config_env: str = "default",
    region: str = "us-east-1",
) -> dict[str, str]:
    """The variables ``sam local invoke <logical_id> --env-vars <file> --region
    <region> [--config-env <env>]`` sets in the function's container."""
    overrides = samconfig_parameter_overrides(samconfig, config_env, ["local", "invoke"])
    stacks, _ = SamLocalStackProvider.get_stacks(
        str(template),
        parameter_overrides=overrides,
        global_parameter_overrides={"AWS::Region": region},
    )
    provider = SamFunctionProvider(stacks)
    function = provider.get(logical_id)
    assert function is not None, f"SAM CLI finds no function {logical_id}"
    runner = LocalLambdaRunner(
        local_runtime=None,  # type: ignore[arg-type]  # never reached: no container runs
        function_provider=provider,
        cwd=str(template.parent),
        real_path=str(template.parent),
        aws_region=region,
        env_vars_values=InvokeContext._get_env_vars_value(
            str(env_vars_file) if env_vars_file else None
        )
        or {},
    )
    resolved: dict[str, str] = runner._make_env_vars(function).resolve()
    return resolved


def deploy_parameter_overrides(project: Path, *arguments: str) -> dict[str, str]:
    """``parameter_overrides`` as ``sam deploy <arguments>``, run in ``project`` (with
    its ``samconfig.toml``), resolves them."""
    names = list(inspect.signature(deploy_command.do_cli).parameters)
    captured: dict[str, Any] = {}

    def capture(*args: Any, **kwargs: Any) -> None:
        captured.update(dict(zip(names, args, strict=False)), **kwargs)

    runner = CliRunner()
    with (
        mock.patch.object(deploy_command, "do_cli", side_effect=capture),
        contextlib.chdir(project),
    ):
        result = runner.invoke(deploy_command.cli, list(arguments), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    overrides: dict[str, str] = captured["parameter_overrides"] or {}
    return overrides
