"""The local cloud's commands, one function each: ``demo``, ``serve``, ``invoke``,
``verify``, ``status``, ``env-vars``, ``soak`` and ``bench``. Each takes the parsed
arguments of :mod:`order_guard_tools.cli` and returns the exit status; a command that
cannot run as asked raises :class:`CommandError` (one line, exit 2).
"""

from __future__ import annotations

import argparse
import base64
import json
import time
from pathlib import Path
from typing import Any

import requests
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    EndpointConnectionError,
    NoCredentialsError,
    NoRegionError,
)
from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from localcloud import cli as localcloud_cli
from localcloud.account import LocalCloud
from localcloud.cloudformation.parameters import samconfig_stack_name
from localcloud.server.app import free_port
from localcloud.services.lambda_ import log_lines
from localcloud.text import plain, printable
from order_guard_tools.cloud import OrderGuardCloud, order_guard_template
from order_guard_tools.project import SAMCONFIG_PATH
from order_guard_tools.report import dumps, live, render, render_parameters, summary
from order_guard_tools.scenarios import queue_scenario, workflow_scenario

console = Console(highlight=False)

DEMO_VISIBILITY_TIMEOUT = 1


class CommandError(Exception):
    """A command cannot run as asked; the message says what to do (one line, exit 2)."""


def _require_fault_modes(template: Any, command: str) -> None:
    """The seed workflow demonstrates the after-write fault: refuse up front, in one
    line, parameters that disable it (prod's), instead of failing its checks later."""
    value = template.parameters["FaultModesEnabled"]
    if value != "true":
        source = template.parameter_sources.get("FaultModesEnabled", "")
        raise CommandError(
            f"{command} plays the seed workflow, whose after-write step needs "
            f"FaultModesEnabled=true; these parameters give {value} (from {source}): use the "
            "default environment, or --parameter-overrides FaultModesEnabled=true"
        )


def aws_problem(exc: BotoCoreError | ClientError, args: argparse.Namespace) -> str:
    """One line for what keeps a command from reaching its stack, and what to run."""
    endpoint = getattr(args, "endpoint_url", None)
    if isinstance(exc, EndpointConnectionError) and endpoint:
        return f"nothing answers at {endpoint}: start the local cloud with `make serve`"
    if isinstance(exc, EndpointConnectionError):
        return f"cannot reach AWS ({exc}): check the network, or use ENDPOINT=… for make serve"
    if isinstance(exc, NoCredentialsError):
        return (
            "no AWS credentials: configure them (aws configure, or AWS_PROFILE / --profile), "
            "or run against the local cloud: make serve, then ENDPOINT=http://127.0.0.1:5000"
        )
    if isinstance(exc, NoRegionError):
        return "no AWS region: pass REGION=… (--region) or set AWS_REGION"
    if isinstance(exc, ClientError):
        error = exc.response.get("Error", {})
        message = str(error.get("Message", ""))
        if error.get("Code") == "ValidationError" and "does not exist" in message:
            stack = getattr(args, "stack_name", None) or "the stack"
            return f"{message}: deploy {stack} first (make deploy) or name another (STACK=…)"
        return f"{error.get('Code')}: {message}"
    return str(exc)


def demo(args: argparse.Namespace) -> int:
    """Both seed scenarios on a fresh in-process local cloud; exit 1 if any check fails."""
    started = time.monotonic()
    template = order_guard_template(args.config_env, args.parameter_overrides)
    _require_fault_modes(template, "demo")
    # served on a loopback port of its own, so that every function runs in execution
    # environments of its own, as on Lambda (an account with no endpoint runs them in-process)
    with OrderGuardCloud(
        template=template,
        visibility_timeout=args.visibility_timeout,
        server_port=free_port(),
    ) as cloud:
        console.print(
            f"[bold]Order Guard on the local cloud[/] — template.yaml + samconfig.toml "
            f"\\[{args.config_env}], moto on {cloud.endpoint_url}, handlers from src/ in "
            "execution environments of their own"
        )
        render_parameters(console, template, "parameters, as sam deploy would deploy them")
        for note in cloud.deployment.notes:
            console.print(f"[dim]note: {plain(note)}")
        show = live(console)
        reports = [queue_scenario(cloud, listener=show), workflow_scenario(cloud, listener=show)]
    passed, failed = summary(reports)
    elapsed = time.monotonic() - started
    console.rule()
    verdict = (
        "[green]all expectations met[/]"
        if not failed
        else f"[red]{failed} expectation(s) failed[/]"
    )
    console.print(f"{verdict}: {passed} ✓, {failed} ✗ in {elapsed:.1f} s")
    return 0 if not failed else 1


def serve(args: argparse.Namespace) -> int:
    """Keep the application deployed on 127.0.0.1:PORT until Ctrl-C."""
    template = order_guard_template(args.config_env, args.parameter_overrides)
    try:  # fail at once on a busy port, before anything starts
        localcloud_cli.check_port(
            args.host,
            args.port,
            f"pick another port: make serve PORT={args.port + 1} (or --port {args.port + 1})",
        )
    except localcloud_cli.ServeError as exc:
        console.print(f"[red]error:[/] {plain(exc)}", soft_wrap=True)
        return 2
    try:
        cloud = OrderGuardCloud(
            template=template,
            server_port=args.port,
            host=args.host,
            allow_hosts=args.allow_host,
            allow_origins=args.allow_origin,
            visibility_timeout=args.visibility_timeout,
            stack_name=args.stack_name,
        )
    except ValueError as exc:  # an --allow-origin that is not an origin
        raise CommandError(str(exc)) from exc

    def ready(cloud: LocalCloud) -> None:
        endpoint = cloud.endpoint_url
        console.print(
            f"[bold]Order Guard local cloud[/] listening on {endpoint} (stack {args.stack_name})"
        )
        console.print(f"[bold]live view:[/] {cloud.view_url}", soft_wrap=True)
        assert cloud.policy is not None
        console.print(
            f"[dim]answers Host {', '.join(cloud.policy.allowed_hosts())}; cross-origin "
            f"pages: {', '.join(sorted(cloud.policy.origins)) or 'none'} (--allow-host, "
            "--allow-origin); unsigned AWS calls and moto's /moto-api/ are refused",
            soft_wrap=True,
            markup=True,
        )
        render_parameters(console, template, "parameters, as sam deploy would deploy them")
        for note in cloud.deployment.notes:
            console.print(f"[dim]note: {plain(note)}")
        width = max(len(name) for name in cloud.outputs)
        for name, value in cloud.outputs.items():
            console.print(f"  {name:<{width}}  {printable(value)}", markup=False, soft_wrap=True)
        queue, table = cloud.outputs["JobsQueueUrl"], cloud.outputs["OrdersTableName"]
        group = cloud.outputs["QueueWorkerLogGroupName"]
        job = '{"id": "dedup-order", "quantity": 4}'
        try_lines = [
            "export AWS_ACCESS_KEY_ID=localcloud AWS_SECRET_ACCESS_KEY=localcloud "
            f"AWS_DEFAULT_REGION={cloud.region}",
            f"aws --endpoint-url {endpoint} sqs send-message --queue-url {queue} "
            f"--message-body '{job}'",
            f"aws --endpoint-url {endpoint} dynamodb scan --table-name {table}",
            f"aws --endpoint-url {endpoint} logs filter-log-events --log-group-name {group} "
            "--filter-pattern '\"RESULT\"'",
        ]
        console.print("\nTry:", markup=False)
        for line in try_lines:
            console.print(f"  {line}", markup=False, soft_wrap=True)
        console.print("Ctrl-C stops the server.")

    return localcloud_cli.run(cloud, ready)


def invoke(args: argparse.Namespace) -> int:
    """Invoke a function with event files; print each one's log lines and response.

    Like ``sam local invoke``, the command succeeds when the invocations ran, whether
    or not the function raised (the error envelope is printed); it fails (exit 2) only
    when it cannot invoke at all. Against a fresh local cloud the full log is shown;
    against ``--endpoint-url`` it is the invoke API's ``LogType=Tail`` (last 4 KB).
    """
    events = []
    for name in args.event:
        try:
            events.append((name, json.loads(Path(name).read_text())))
        except OSError as exc:
            raise CommandError(f"event file {name}: {exc.strerror}") from exc
        except json.JSONDecodeError as exc:
            raise CommandError(f"event file {name} is not JSON: {exc}") from exc
    if args.endpoint_url:
        from order_guard_tools.verify import StackTarget

        target: Any = StackTarget(
            args.stack_name, endpoint_url=args.endpoint_url, region=args.region
        )
        name = target.outputs.get(f"{args.function}Name", args.function)
        lambda_client = target.client("lambda")
        for event_file, event in events:
            try:
                response = lambda_client.invoke(
                    FunctionName=name, Payload=json.dumps(event).encode(), LogType="Tail"
                )
            except lambda_client.exceptions.ResourceNotFoundException:
                console.print(
                    f"[red]no function {plain(args.function)} on {plain(args.endpoint_url)}"
                )
                return 2
            log = base64.b64decode(response.get("LogResult", "")).decode(errors="replace")
            body = json.loads(response["Payload"].read() or b"null")
            _show(args.function, event_file, log_lines(log), body, response.get("FunctionError"))
        return 0
    template = order_guard_template(args.config_env, args.parameter_overrides)
    with OrderGuardCloud(template=template, server_port=free_port()) as cloud:
        try:
            function = cloud.function(args.function)
        except KeyError:
            known = ", ".join(template.of_type("AWS::Serverless::Function"))
            console.print(
                f"[red]no function {plain(args.function)} in template.yaml (have: {known})"
            )
            return 2
        for event_file, event in events:
            invocation = function.invoke(event)
            error = "Unhandled" if invocation.error else None
            _show(args.function, event_file, invocation.log_lines, invocation.payload, error)
    return 0


def _show(function: str, event_file: str, log: list[str], body: Any, error: str | None) -> None:
    console.rule(f"{function} ← {event_file}")
    console.print("[bold]logs")
    for line in log:
        console.print(printable(line), markup=False, soft_wrap=True)
    if error:
        console.print(f"[bold red]function error ({error})[/] — the error envelope:")
    else:
        console.print("[bold]response")
    console.print("\n".join(map(printable, dumps(body).splitlines())), markup=False, soft_wrap=True)


def verify(args: argparse.Namespace) -> int:
    """The seed scenarios against a deployed stack (or a local server with --endpoint-url)."""
    from order_guard_tools.verify import StackTarget
    from order_guard_tools.verify import verify as run

    started = time.monotonic()
    template = order_guard_template(args.config_env, args.parameter_overrides)
    render_parameters(console, template, "parameters the stack is expected to have")
    _require_fault_modes(template, "verify")
    stack_name = args.stack_name or samconfig_stack_name(args.config_env, SAMCONFIG_PATH)
    target = StackTarget(
        stack_name, region=args.region, endpoint_url=args.endpoint_url, profile=args.profile
    )
    console.print(
        f"[bold]verify[/] stack {plain(stack_name)} ({plain(args.endpoint_url or 'AWS')})"
    )
    reports = run(target, run_id=args.run_id, keep=args.keep, listener=live(console))
    passed, failed = summary(reports)
    console.rule()
    console.print(f"{passed} ✓, {failed} ✗ in {time.monotonic() - started:.1f} s")
    return 0 if not failed else 1


def status(args: argparse.Namespace) -> int:
    """Print what the live view shows, once: queues, mappings, decisions, tables,
    executions and invocations of a running ``serve``."""
    from localcloud.server.view import PATH
    from order_guard_tools.report import render_status

    url = f"{args.endpoint_url.rstrip('/')}{PATH}/state.json"
    try:
        response = requests.get(url, timeout=30)
    except requests.ConnectionError as exc:
        raise CommandError(
            f"nothing answers at {args.endpoint_url}: start the local cloud with `make serve`"
        ) from exc
    if response.status_code != 200:
        raise CommandError(f"{url} answered HTTP {response.status_code}: is it a local cloud?")
    render_status(console, response.json())
    return 0


def env_vars(args: argparse.Namespace) -> int:
    """Print the ``sam local invoke --env-vars`` file for a stack (AWS or a local server)."""
    from order_guard_tools.sam_local import env_vars as build
    from order_guard_tools.verify import StackTarget

    target = StackTarget(args.stack_name, region=args.region, endpoint_url=args.endpoint_url)
    container_endpoint = args.container_endpoint
    if args.endpoint_url and container_endpoint is None:
        port = args.endpoint_url.rstrip("/").rsplit(":", 1)[-1]
        container_endpoint = f"http://host.docker.internal:{port}"
    print(json.dumps(build(order_guard_template(), target.outputs, container_endpoint), indent=2))
    return 0


def soak(args: argparse.Namespace) -> int:
    """Push --messages through a fresh local cloud and account for every one."""
    from order_guard_tools import soak as soak_module

    with OrderGuardCloud(visibility_timeout=args.visibility_timeout) as cloud:
        console.print(
            f"[bold]soak[/]: {args.messages} messages, seed {args.seed}, batch size "
            f"{cloud.event_source.batch_size}, visibility timeout {args.visibility_timeout} s "
            "locally (template: 60 s)"
        )
        with Progress(
            TextColumn("sent {task.fields[sent]}, processed {task.fields[processed]} records "
                       "(redeliveries included), remaining {task.fields[remaining]}"),
            BarColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        ) as bar:  # fmt: skip
            task = bar.add_task("soak", total=args.messages, sent=0, processed=0, remaining="…")

            def show(sent: int, processed: int, remaining: int, _elapsed: float) -> None:
                done = args.messages - remaining
                bar.update(
                    task, completed=done, sent=sent, processed=processed, remaining=remaining
                )

            report, figures = soak_module.run(
                cloud, messages=args.messages, seed=args.seed, progress=show
            )
    width = max(len(name) for name in figures)
    for name, value in figures.items():
        console.print(f"  {name:<{width}}  {value}")
    render(console, [report])
    passed, failed = summary([report])
    console.print(f"{passed} ✓, {failed} ✗")
    return 0 if not failed else 1


def bench_env(args: argparse.Namespace) -> int:
    """``make bench-env``: the local cold start of an execution environment."""
    from order_guard_tools.bench import environment_start
    from order_guard_tools.report import render_environment_start

    console.print(f"[dim]… {args.rounds} cold starts per contestant, interleaved")
    render_environment_start(console, environment_start.figures(args.rounds))
    return 0


def bench(args: argparse.Namespace) -> int:
    """``make bench``: the figures as a table, and the JSON results file."""
    from order_guard_tools.bench import runner as bench_module
    from order_guard_tools.report import render_bench

    if args.cold_start_only:
        from order_guard_tools.bench import cold_start
        from order_guard_tools.report import render_cold_start

        environment = cold_start.queue_worker_environment()
        console.print(f"[dim]… cold start (INIT), {args.repeats} fresh processes per contestant")
        render_cold_start(console, cold_start.cold_start_figures(environment, args.repeats))
        return 0
    output = Path(args.output)
    results = bench_module.run(
        repeats=args.repeats,
        messages=args.messages,
        rounds=args.rounds,
        round_trip_ms=args.round_trip_ms,
        output=output,
        progress=lambda step: console.print(f"[dim]… {step}"),
    )
    render_bench(console, results)
    console.print(f"results: {output}")
    return 0
