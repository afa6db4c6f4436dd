"""The real SAM CLI against a local server, as a user runs it: in a subprocess, with
``AWS_ENDPOINT_URL`` pointing at the server, fake credentials and the settings the local
cloud gives the SAM CLI itself (``SAM_CLI_SETTINGS``: no 5 s sleeps between polls)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from localcloud.account import SAM_CLI_SETTINGS, LocalCloud
from tests.support.paths import ROOT
from tests.support.wheelhouse import offline

BIN = Path(sys.executable).parent
SAM = BIN / "sam"


def sam(
    server: LocalCloud, *args: str, cwd: Path = ROOT, wheelhouse: bool = False
) -> subprocess.CompletedProcess[str]:
    """``sam <args>`` in ``cwd``, reaching ``server``; with ``wheelhouse``, a build of
    Order Guard's own functions (src/requirements.txt) installs their dependencies from
    :func:`offline`'s download, with no index."""
    assert server.endpoint_url is not None
    env = {
        **os.environ,
        "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}",
        "AWS_ENDPOINT_URL": server.endpoint_url,
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_DEFAULT_REGION": server.region,
        "SAM_CLI_TELEMETRY": "0",
        **SAM_CLI_SETTINGS,
        **(offline() if wheelhouse else {}),
    }
    env.pop("AWS_PROFILE", None)
    return subprocess.run(  # noqa: S603 - the environment's own SAM CLI
        [str(SAM), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def deploy(server: LocalCloud, stack_name: str, *extra: str, cwd: Path = ROOT) -> Any:
    """``sam deploy`` of ``stack_name`` without confirmation, IAM capabilities granted."""
    return sam(
        server,
        "deploy",
        "--stack-name",
        stack_name,
        "--no-confirm-changeset",
        "--capabilities",
        "CAPABILITY_IAM",
        *extra,
        cwd=cwd,
    )


def outputs(server: LocalCloud, stack_name: str) -> dict[str, str]:
    """A stack's Outputs, as ``describe-stacks`` gives them."""
    (stack,) = server.client("cloudformation").describe_stacks(StackName=stack_name)["Stacks"]
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}
