"""What SAM CLI itself resolves, computed with its own classes (no Docker needed).

- :func:`container_environment`: the environment ``sam local invoke`` gives a function's
  container: parameters from samconfig's ``local_invoke`` and ``global`` sections,
  ``SamLocalStackProvider``/``SamFunctionProvider`` for the function,
  ``LocalLambdaRunner._make_env_vars`` with the ``--env-vars`` file, exactly the code
  path of ``InvokeContext`` before it would start a container.
(``deploy_parameter_overrides``, what ``sam deploy`` resolves, is the local cloud's own
suite's: ``localcloud/tests/support/sam_cli.py``.)
"""

from __future__ import annotations

from pathlib import Path

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
