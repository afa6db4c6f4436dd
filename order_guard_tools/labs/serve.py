"""``python -m order_guard_tools lab q05|ev05`` and ``lab-env``: a seed lab's machine on the
local cloud, and the shell line that points the lab's AWS CLI commands at it.

``lab`` starts a fresh, empty local AWS account on 127.0.0.1:PORT (5000: the Q05 lab's
own code calls that port), makes what the lab says its machine provides
(:mod:`order_guard_tools.labs`) and serves it, with the live view, until Ctrl-C.

``lab-env`` prints, for ``eval "$(make -s lab-env)"`` in bash or zsh: the endpoint, the
region ``us-east-1`` and the local credentials; a shell function ``aws`` that runs the
pinned AWS CLI with ``--endpoint-url`` (the AWS CLI v1 sends ``sqs`` calls in us-east-1
to ``queue.amazonaws.com`` even with ``AWS_ENDPOINT_URL`` set; ``--endpoint-url`` wins in
both CLI versions); and ``cd /home/labex/project`` going to a local folder, the only
path of the lab machine that is a folder here.
"""

from __future__ import annotations

import argparse
import shlex
from pathlib import Path

from localcloud import cli as localcloud_cli
from localcloud.account import FAKE_CREDENTIALS, LocalCloud
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.commands import CommandError, console
from order_guard_tools.labs import REGION, lab_named, provision
from order_guard_tools.project import ROOT

LAB_HOME = "/home/labex/project"
"""The lab machine's project folder, as the labs' ``cd`` lines name it."""
LAB_FOLDER = ROOT / ".lab" / "project"
"""Where ``cd /home/labex/project`` goes in a shell prepared by ``lab-env``."""
AWS_CLI = ROOT / ".venv-awscli" / "bin" / "aws"
"""The pinned AWS CLI (``requirements-awscli.txt``, installed by ``make lab-env``)."""


def lab(args: argparse.Namespace) -> int:
    """Serve the lab ``args.lab`` on 127.0.0.1:``args.port`` until Ctrl-C.

    Raises:
        CommandError: an unknown lab, or the port is busy.
    """
    try:
        chosen = lab_named(args.lab)
    except KeyError as exc:
        raise CommandError(str(exc.args[0])) from None
    try:  # fail at once on a busy port, before anything starts
        localcloud_cli.check_port(
            "127.0.0.1",
            args.port,
            "stop what uses it (another make serve or make lab?) or pick another port: "
            f"make lab LAB={chosen.name} PORT={args.port + 1}",
        )
    except localcloud_cli.ServeError as exc:
        raise CommandError(str(exc)) from None
    cloud = OrderGuardCloud(template=None, server_port=args.port, region=REGION, lab=chosen.name)

    def ready(cloud: LocalCloud) -> None:
        provision(chosen, cloud.client)
        cloud.remember_resources()
        port = "" if args.port == 5000 else f" PORT={args.port}"
        console.print(
            f"[bold]Lab {chosen.name.upper()}[/] ({chosen.title}) on {cloud.endpoint_url}: "
            f"{chosen.function}, its role {chosen.role}, tables {', '.join(chosen.tables)}",
            soft_wrap=True,
        )
        console.print(f"[bold]AWS View:[/] {cloud.view_url}", soft_wrap=True)
        console.print(
            f'[bold]in another terminal:[/] eval "$(make -s lab-env{port})"  '
            f"then type the lab's commands; [bold]make lab-check{port}[/] runs the "
            "checks the lab names; Ctrl-C here ends the lab",
            soft_wrap=True,
        )

    return localcloud_cli.run(cloud, ready)


def shell_lines(endpoint: str, *, cli: Path = AWS_CLI, folder: Path = LAB_FOLDER) -> str:
    """The lines ``lab-env`` prints (bash and zsh)."""
    variables = {
        **FAKE_CREDENTIALS,
        "AWS_DEFAULT_REGION": REGION,
        "AWS_REGION": REGION,
        "AWS_ENDPOINT_URL": endpoint,
        "AWS_PAGER": "",
        "LAB_PROJECT": str(folder),
    }
    exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in variables.items())
    home = shlex.quote(LAB_HOME)
    return "\n".join(
        [
            f"# the lab on {endpoint}: every aws call goes there, signed with local credentials",
            "unset AWS_PROFILE AWS_DEFAULT_PROFILE AWS_CONFIG_FILE AWS_SHARED_CREDENTIALS_FILE",
            f"export {exports}",
            'mkdir -p "$LAB_PROJECT"',
            f'aws() {{ command {shlex.quote(str(cli))} --endpoint-url "$AWS_ENDPOINT_URL" "$@"; }}',
            f'cd() {{ if [ "$#" -eq 1 ] && [ "$1" = {home} ]; then builtin cd "$LAB_PROJECT"; '
            'else builtin cd "$@"; fi; }',
        ]
    )


def lab_env(args: argparse.Namespace) -> int:
    """Print :func:`shell_lines` for the lab on 127.0.0.1:``args.port``."""
    print(shell_lines(f"http://127.0.0.1:{args.port}"))
    return 0
