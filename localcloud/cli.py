"""``python -m localcloud serve``: one local AWS account on 127.0.0.1:PORT for the stock AWS
CLI, the SDKs and ``sam deploy``, with its live view, until Ctrl-C; a template given with
``--template`` is deployed first, with its parameters resolved as ``sam deploy`` resolves
them.

:func:`check_port` and :func:`run` are what every server command shares (a project's own
``serve`` deploys its stack and prints its own lines around them).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import ipaddress
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from localcloud import coverage, remote, testapp
from localcloud.account import FAKE_CREDENTIALS, SAM_CLI_SETTINGS, LocalCloud
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.template import load
from localcloud.server.ports import ServeError, check_port
from localcloud.text import say

__all__ = [  # ServeError and check_port are here for the commands built on this one
    "STOP_DEADLINE_S",
    "ServeError",
    "announce",
    "check_port",
    "main",
    "parameter_options",
    "run",
    "serve",
    "server_options",
]


STOP_DEADLINE_S: Final = 8.0
"""Seconds the server has to stop in order after SIGINT or SIGTERM (its executions
stopped, its functions' processes ended, its answers in flight written) before it exits
anyway: whatever runs, the process is gone within 10 s of the signal."""


EXIT_LINE_WAIT_S: Final = 0.25
"""How long the line saying why the process exits at once may take to be written."""
STDOUT: Final = 1
"""The standard output's file descriptor."""


def _exit_now(why: str) -> None:
    """End the process at once, whatever it is doing (its functions' processes end with it:
    each one's supervisor watches the server). The line saying ``why`` goes straight to the
    standard output's descriptor from a thread of its own, best effort: not through
    ``print``, which a signal arriving while the stop's lines print would enter a second
    time (``RuntimeError``: reentrant call), and without waiting more than
    :data:`EXIT_LINE_WAIT_S` for an output nobody reads."""
    line = f"{why}: exiting now\n".encode()
    writer = threading.Thread(target=_write_quietly, args=(line,), daemon=True)
    writer.start()
    writer.join(EXIT_LINE_WAIT_S)
    os._exit(1)


def _write_quietly(data: bytes) -> None:
    with contextlib.suppress(OSError):  # best effort: a closed or broken output says nothing
        os.write(STDOUT, data)


def run(cloud: LocalCloud, ready: Callable[[LocalCloud], None]) -> int:
    """Start ``cloud`` (a server: ``server_port`` set), poll every event source mapping,
    read the account every second for the live view, call ``ready`` (what the command
    prints or makes first), and serve until SIGINT or SIGTERM; then stop in order, within
    :data:`STOP_DEADLINE_S` seconds, or at once on a second signal. Returns 0 (1 is the
    exit status of a stop cut short)."""
    logging.getLogger("werkzeug").setLevel(logging.WARNING)  # no line per HTTP request
    stop = threading.Event()

    def stopping(*_: object) -> None:
        if stop.is_set():
            _exit_now("a second signal")
        stop.set()

    # Both signals, explicitly: a shell that backgrounds a job may start it with SIGINT
    # ignored, and `kill -INT` must still stop the server.
    signal.signal(signal.SIGTERM, stopping)
    signal.signal(signal.SIGINT, stopping)
    with cloud:
        cloud.start_event_sources()
        cloud.watch()
        ready(cloud)
        sys.stdout.flush()
        while not stop.wait(0.5):
            pass
        say("stopping… (a second Ctrl-C stops at once)")
        deadline = threading.Timer(
            STOP_DEADLINE_S, _exit_now, (f"not stopped after {STOP_DEADLINE_S:g} s",)
        )
        deadline.daemon = True  # armed through the exit: non-daemon threads, atexit handlers
        deadline.start()
    # The process ends now: its heap (moto's backends, executions' histories) need not be
    # collected object by object on the way out, which took a second or more.
    gc.freeze()
    return 0


def announce(cloud: LocalCloud) -> None:
    """The lines every server prints: where it listens, its live view, whom it answers,
    and how to point the AWS tools at it."""
    assert cloud.policy is not None
    assert cloud.endpoint_url is not None
    say(f"local cloud listening on {cloud.endpoint_url} (region {cloud.region})")
    say(f"live view: {cloud.view_url}")
    say(
        f"answers Host {', '.join(cloud.policy.allowed_hosts())}; cross-origin pages: "
        f"{', '.join(sorted(cloud.policy.origins)) or 'none'} (--allow-host, --allow-origin); "
        "unsigned AWS calls and moto's /moto-api/ are refused"
    )
    credentials = " ".join(f"{name}={value}" for name, value in FAKE_CREDENTIALS.items())
    sam_settings = " ".join(f"{name}={value}" for name, value in SAM_CLI_SETTINGS.items())
    say(
        f"point the AWS CLI, SDKs and SAM CLI here: export AWS_ENDPOINT_URL={cloud.endpoint_url} "
        f"{credentials} AWS_DEFAULT_REGION={cloud.region} {sam_settings}"
    )
    say(
        "an API's pages open in a browser on an origin of their own: "
        f"http://<api-id>.execute-api.localhost:{cloud.server_port}/<stage>/ (a stack's "
        "path-style URLs send a browser there)"
    )
    if not loopback(cloud.host):
        say(
            f"warning: listening on {cloud.host}, not on loopback: anyone who can reach this "
            f"machine on port {cloud.server_port} gets the whole account (every function's "
            "code and environment, every table, queue, bucket and secret), since the local "
            "cloud checks no signature; bind 127.0.0.1 (the default) unless a container "
            "must reach it"
        )


def loopback(host: str) -> bool:
    """Whether an address to bind is loopback only (``127.0.0.0/8``, ``::1``, ``localhost``);
    ``0.0.0.0``, ``::`` and every other address or name is not."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def server_options(parser: argparse.ArgumentParser, *, port: int = 5000) -> None:
    """``--port``, ``--host``, ``--allow-host``, ``--allow-origin``, ``--visibility-timeout``."""
    parser.add_argument("--port", type=int, default=port)
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback)")
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME[:PORT]",
        help="another Host name the server answers for (repeat), e.g. host.docker.internal; "
        "by default only 127.0.0.1, localhost and the bound address, with the port",
    )
    parser.add_argument(
        "--allow-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web origin whose pages may call the server cross-origin (repeat), e.g. "
        "http://localhost:3000; by default none",
    )
    parser.add_argument(
        "--visibility-timeout",
        type=int,
        help="every local queue's visibility timeout in seconds (default: the template's)",
    )


def parameter_options(parser: argparse.ArgumentParser) -> None:
    """``--config-env`` and ``--parameter-overrides`` with ``sam deploy``'s meaning."""
    parser.add_argument(
        "--config-env",
        default="default",
        help="samconfig.toml environment whose parameters to use (default: default)",
    )
    parser.add_argument(
        "--parameter-overrides",
        nargs="+",
        metavar="KEY=VALUE",
        help="as for sam deploy: replaces samconfig's parameter_overrides",
    )


def serve(args: argparse.Namespace) -> int:
    """Serve an account (and the ``--template`` stack) until Ctrl-C."""
    template = None
    if args.template is not None:
        if not args.stack_name:
            raise ServeError("--template needs --stack-name (the stack it is deployed as)")
        template = load(
            Path(args.template),
            config_env=args.config_env,
            parameter_overrides=args.parameter_overrides,
        )
    check_port(args.host, args.port, f"pick another port (--port {args.port + 1})")
    try:
        cloud = LocalCloud(
            template=template,
            stack_name=args.stack_name,
            region=args.region,
            server_port=args.port,
            host=args.host,
            allow_hosts=args.allow_host,
            allow_origins=args.allow_origin,
            visibility_timeout=args.visibility_timeout,
        )
    except ValueError as exc:  # an --allow-origin that is not an origin
        raise ServeError(str(exc)) from exc

    def ready(running: LocalCloud) -> None:
        announce(running)
        if template is not None:
            for name, value in running.outputs.items():
                say(f"  {name}  {value}")
        say("Ctrl-C stops the server.")

    return run(cloud, ready)


def show_coverage(args: argparse.Namespace) -> int:
    """Print the coverage page, or write it to ``--write``."""
    page = coverage.render()
    if args.write:
        Path(args.write).write_text(page, encoding="utf-8")
        say(f"wrote {args.write}")
    else:
        sys.stdout.write(page)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m localcloud", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("serve", help="one local AWS account on 127.0.0.1:PORT")
    server_options(p)
    p.add_argument("--region", default="us-east-1")
    p.add_argument("--template", help="a SAM or CloudFormation template to deploy first")
    p.add_argument("--stack-name", help="the stack the template is deployed as")
    parameter_options(p)
    p.set_defaults(run=serve)
    testapp.add_parser(commands)
    remote.add_parsers(commands)
    p = commands.add_parser("coverage", help="what the local cloud runs, as a Markdown page")
    p.add_argument(
        "--write",
        metavar="PATH",
        help=f"write the page to PATH (the repository's: {coverage.PAGE})",
    )
    p.set_defaults(run=show_coverage)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except (UnsupportedTemplate, ServeError, remote.RemoteError) as exc:
        say(f"error: {exc}")
        return 2
