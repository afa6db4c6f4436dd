"""``python -m order_guard_tools demo | serve | status | invoke | verify | env-vars | soak |
bench | lab | lab-env | lab-check``: the argument parser; the commands are in
:mod:`order_guard_tools.commands`, :mod:`order_guard_tools.labs.serve` and
:mod:`order_guard_tools.labs.check` (``serve`` takes the local cloud's own server
options)."""

from __future__ import annotations

import argparse
import sys

from botocore.exceptions import BotoCoreError, ClientError

from localcloud.cli import server_options
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.text import plain
from order_guard_tools.commands import (
    DEMO_VISIBILITY_TIMEOUT,
    CommandError,
    aws_problem,
    bench,
    bench_env,
    console,
    demo,
    env_vars,
    invoke,
    serve,
    soak,
    status,
    verify,
)
from order_guard_tools.labs.check import lab_check
from order_guard_tools.labs.ports import DEFAULT_PORT, TEXTS
from order_guard_tools.labs.serve import lab, lab_env
from order_guard_tools.project import STACK_NAME


def _parameter_options(p: argparse.ArgumentParser) -> None:
    """``--config-env`` and ``--parameter-overrides`` with ``sam deploy``'s meaning."""
    p.add_argument(
        "--config-env",
        default="default",
        help="samconfig.toml environment whose parameters to use (default: default)",
    )
    p.add_argument(
        "--parameter-overrides",
        nargs="+",
        metavar="KEY=VALUE",
        help="as for sam deploy: replaces samconfig's parameter_overrides "
        "(e.g. BatchSize=1 FaultModesEnabled=true)",
    )


def _lab_texts_option(p: argparse.ArgumentParser) -> None:
    """``--lab-texts``: the folder holding the labs' text, read for the port their code
    calls."""
    p.add_argument(
        "--lab-texts",
        default=str(TEXTS),
        metavar="FOLDER",
        help=f"the labs' text (q05.zh.txt, ev05.zh.txt …), read for the port their code calls "
        f"(default: {TEXTS})",
    )


def _visibility_option(p: argparse.ArgumentParser, default: int | None, note: str) -> None:
    """``--visibility-timeout``: every local queue's, in seconds."""
    p.add_argument(
        "--visibility-timeout",
        type=int,
        default=default,
        help=f"local queue visibility timeout in seconds ({note})",
    )


def build_parser() -> argparse.ArgumentParser:
    """Every command and its options (each command's function is its ``run`` default)."""
    parser = argparse.ArgumentParser(prog="python -m order_guard_tools", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    p = commands.add_parser(
        "demo", help="play both seed scenarios on a fresh in-process local cloud"
    )
    _parameter_options(p)
    _visibility_option(p, DEMO_VISIBILITY_TIMEOUT, "template: 60")
    p.set_defaults(run=demo)

    p = commands.add_parser("serve", help="keep the application deployed on 127.0.0.1:PORT")
    server_options(p)
    p.add_argument("--stack-name", default=STACK_NAME)
    _parameter_options(p)
    p.set_defaults(run=serve)

    p = commands.add_parser("invoke", help="the Docker-free counterpart of `sam local invoke`")
    p.add_argument("function", help="logical id (QueueWorkerFunction) or physical name")
    p.add_argument(
        "-e",
        "--event",
        action="append",
        required=True,
        help="event file; repeat to invoke in sequence",
    )
    _parameter_options(p)
    p.add_argument(
        "--endpoint-url", help="a running `serve` (default: a fresh in-process local cloud)"
    )
    p.add_argument("--stack-name", default=STACK_NAME)
    p.add_argument("--region", default="us-east-1")
    p.set_defaults(run=invoke)

    p = commands.add_parser("verify", help="the seed scenarios against a deployed stack")
    p.add_argument("--stack-name", help="default: samconfig's stack_name for --config-env")
    _parameter_options(p)
    p.add_argument("--region")
    p.add_argument("--profile")
    p.add_argument("--endpoint-url", help="e.g. http://127.0.0.1:5000 for `serve`")
    p.add_argument(
        "--run-id", help="suffix for order ids and execution names (default: a timestamp)"
    )
    p.add_argument("--keep", action="store_true", help="leave this run's items in place")
    p.set_defaults(run=verify)

    p = commands.add_parser("status", help="print the live view's tables once (a running serve)")
    p.add_argument("--endpoint-url", default="http://127.0.0.1:5000")
    p.set_defaults(run=status)

    p = commands.add_parser(
        "env-vars", help="print the sam local invoke --env-vars file for a stack's resources"
    )
    p.add_argument("--stack-name", default=STACK_NAME)
    p.add_argument("--region")
    p.add_argument("--endpoint-url", help="a running `serve` (default: the stack on AWS)")
    p.add_argument(
        "--container-endpoint",
        help="the server as a container reaches it (default: host.docker.internal, same port)",
    )
    p.set_defaults(run=env_vars)

    p = commands.add_parser("bench", help="Order Guard against the floor and the field")
    p.add_argument("--messages", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--round-trip-ms", type=float, default=10.0)
    p.add_argument("--output", default="bench-results.json")
    p.add_argument(
        "--repeats", type=int, default=15, help="fresh processes per contestant (cold start)"
    )
    p.add_argument(
        "--cold-start-only", action="store_true", help="only the cold-start table (quick)"
    )
    p.set_defaults(run=bench)

    p = commands.add_parser(
        "bench-env", help="the local cold start of an execution environment (a zip function)"
    )
    p.add_argument("--rounds", type=int, default=15)
    p.set_defaults(run=bench_env)

    p = commands.add_parser("soak", help="thousands of messages through the local cloud")
    p.add_argument("--messages", type=int, default=5000)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--visibility-timeout", type=int, default=1)
    p.set_defaults(run=soak)

    p = commands.add_parser("lab", help="a seed lab's machine on 127.0.0.1:PORT (q05 or ev05)")
    p.add_argument("lab", metavar="LAB", help="q05 or ev05")
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"default {DEFAULT_PORT}; refused if the lab's code calls another port",
    )
    p.add_argument(
        "--any-port",
        action="store_true",
        help="serve on --port even where the lab's code calls another port (you edited that "
        "line; the test suite's workers call none)",
    )
    _lab_texts_option(p)
    p.set_defaults(run=lab)

    p = commands.add_parser("lab-env", help='for eval "$(...)": the lab\'s AWS CLI shell')
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"default {DEFAULT_PORT}; another port once a lab runs there",
    )
    p.set_defaults(run=lab_env)

    p = commands.add_parser("lab-check", help="the running lab's named checks: ✓, ✗ or not yet")
    p.add_argument("--port", type=int, default=DEFAULT_PORT)
    _lab_texts_option(p)
    p.set_defaults(run=lab_check)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return int(args.run(args))
    except (UnsupportedTemplate, CommandError) as exc:
        console.print(f"[red]error:[/] {plain(exc)}", soft_wrap=True)
        return 2
    except (BotoCoreError, ClientError) as exc:
        console.print(f"[red]error:[/] {plain(aws_problem(exc, args))}", soft_wrap=True)
        return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
