"""``python -m order_guard_tools lab q05|ev05`` and ``lab-env``: a seed lab's machine on the
local cloud, and the shell line that points the lab's AWS CLI commands at it.

``lab`` starts a fresh, empty local AWS account on 127.0.0.1:PORT (5000 unless given),
makes what the lab says its machine provides (:mod:`order_guard_tools.labs`) and serves
it, with the live view, until Ctrl-C. It refuses a port other than the one the lab's own
code calls (Q05's worker calls ``http://127.0.0.1:5000`` itself;
:mod:`order_guard_tools.labs.ports`) unless ``--any-port`` is given, and a busy port.

``lab-env`` prints, for ``eval "$(make -s lab-env)"`` in bash or zsh: the endpoint, the
region ``us-east-1`` and the local credentials; a shell function ``aws`` that runs the
pinned AWS CLI with ``--endpoint-url`` (the AWS CLI v1 sends ``sqs`` calls in us-east-1
to ``queue.amazonaws.com`` even with ``AWS_ENDPOINT_URL`` set; ``--endpoint-url`` wins in
both CLI versions); and ``cd /home/labex/project`` going to a local folder, the only
path of the lab machine that is a folder here. On a port other than ``lab``'s own
(:data:`DEFAULT_PORT`) it prints them only once a lab answers there.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from pathlib import Path

from localcloud import cli as localcloud_cli
from localcloud.account import FAKE_CREDENTIALS, LocalCloud
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.commands import CommandError, console
from order_guard_tools.labs import REGION, Lab, lab_named, provision
from order_guard_tools.labs.check import read_state
from order_guard_tools.labs.ports import DEFAULT_PORT, busy_advice, lab_code, refusal
from order_guard_tools.project import ROOT

LAB_HOME = "/home/labex/project"
"""The lab machine's project folder, as the labs' ``cd`` lines name it."""
LAB_FOLDER = ROOT / ".lab" / "project"
"""Where ``cd /home/labex/project`` goes in a shell prepared by ``lab-env``."""
AWS_CLI = ROOT / ".venv-awscli" / "bin" / "aws"
"""The pinned AWS CLI (``requirements-awscli.txt``, installed by ``make lab-env``)."""


def lab_cloud(args: argparse.Namespace) -> tuple[Lab, OrderGuardCloud]:
    """The lab ``args.lab`` and its empty account on 127.0.0.1:``args.port``, not started:
    what ``lab`` serves and the suite's lab runs start (``args`` as ``lab``'s options
    parse them).

    Refused at once, before anything starts: a port other than the one the lab's code
    calls (:func:`~order_guard_tools.labs.ports.refusal`; ``args.any_port`` allows it),
    then a busy port.

    Raises:
        CommandError: an unknown lab, a port the lab's code does not call, or a busy port;
            the message says what works.
    """
    try:
        chosen = lab_named(args.lab)
    except KeyError as exc:
        raise CommandError(str(exc.args[0])) from None
    code = lab_code(chosen, Path(args.lab_texts))
    refused = refusal(code, args.port, any_port=args.any_port)
    if refused:
        raise CommandError(refused)
    try:
        localcloud_cli.check_port(
            "127.0.0.1", args.port, busy_advice(code, args.port, any_port=args.any_port)
        )
    except localcloud_cli.ServeError as exc:
        raise CommandError(str(exc)) from None
    return chosen, OrderGuardCloud(
        template=None, server_port=args.port, region=REGION, lab=chosen.name
    )


def lab(args: argparse.Namespace) -> int:
    """Serve the lab ``args.lab`` on 127.0.0.1:``args.port`` until Ctrl-C.

    Raises:
        CommandError: as :func:`lab_cloud`.
    """
    chosen, cloud = lab_cloud(args)
    texts = lab_code(chosen, Path(args.lab_texts)).texts

    def ready(cloud: LocalCloud) -> None:
        provision(chosen, cloud.client)
        cloud.remember_resources()
        port = "" if args.port == DEFAULT_PORT else f" PORT={args.port}"
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
        if not texts:
            console.print(
                f"[dim]note: no text of lab {chosen.name.upper()} in {args.lab_texts}: which "
                "port its code calls is not checked (make lab LAB_TEXTS=/path/to/labs)",
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
    """Print :func:`shell_lines` for the lab on 127.0.0.1:``args.port``; 2, with the
    reason on stderr (stdout is for ``eval``), when the port is not :data:`DEFAULT_PORT`
    and no lab answers there (on ``make lab``'s own port the lines may come first: the
    lab may still be starting)."""
    endpoint = f"http://127.0.0.1:{args.port}"
    if args.port != DEFAULT_PORT:
        try:
            read_state(endpoint)
        except CommandError as exc:
            print(
                f"error: {exc}; lab-env gives a port other than make lab's own "
                f"({DEFAULT_PORT}) only once a lab runs there",
                file=sys.stderr,
            )
            return 2
    print(shell_lines(endpoint))
    return 0
