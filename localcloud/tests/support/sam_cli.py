"""What ``sam deploy`` itself resolves, computed with SAM CLI's own classes: the
``parameter_overrides`` it hands to its deploy step, from its click command with samconfig
read by its configuration callback; only the final ``do_cli`` is replaced, to capture
them."""

from __future__ import annotations

import contextlib
import inspect
from pathlib import Path
from typing import Any
from unittest import mock

from click.testing import CliRunner
from samcli.commands.deploy import command as deploy_command


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
