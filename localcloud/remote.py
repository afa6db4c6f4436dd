"""The commands that talk to a running ``localcloud serve``: ``status`` (the live view's
tables, once, in the terminal), ``invoke`` (a function, with event files, as ``sam local
invoke`` prints it), ``deploy`` (the stock ``sam deploy``, pointed at the server) and
``fire-schedule`` (a schedule rule or Scheduler schedule fired now, so a test need not
wait for it).

Each takes ``--endpoint-url`` (default ``http://127.0.0.1:5000``, the server's default
port) and signs its calls with the local account's fake credentials, as the AWS CLI
would with ``AWS_ENDPOINT_URL`` set. A server that does not answer, or a function it does
not hold, is exit status 2 with one line saying so.
"""

from __future__ import annotations

import argparse
import base64
import datetime
import json
import os
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError
from rich.console import Console
from rich.table import Table

from localcloud.account import FAKE_CREDENTIALS, SAM_CLI_SETTINGS
from localcloud.cloudformation.provider import ACCOUNT_ID
from localcloud.server.view import PATH as VIEW_PATH
from localcloud.services.events import delivery, schedules
from localcloud.text import plain, printable

__all__ = ["RemoteError", "add_parsers", "render_status", "shown", "table"]

DEFAULT_ENDPOINT = "http://127.0.0.1:5000"

Section = Callable[[Console, Mapping[str, Any]], None]
"""A project's own part of ``status``: drawn after the event source mappings."""


class RemoteError(Exception):
    """The command cannot run against the server as asked (exit status 2)."""


def table(
    console: Console,
    title: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    *,
    markup_column: int | None = None,
) -> None:
    """Print one table; every cell is data (escaped for the terminal: :func:`plain`) but
    ``markup_column``'s, which the caller styles itself."""
    drawn = Table(title=title, title_justify="left", box=None, pad_edge=False)
    for column in columns:
        drawn.add_column(plain(column))  # a table's attribute names are data
    for row in rows:
        drawn.add_row(
            *(
                str(cell) if index == markup_column else plain("" if cell is None else cell)
                for index, cell in enumerate(row)
            )
        )
    console.print(drawn)


def shown(page: Mapping[str, Any] | None) -> str:
    """``, page 1 of 17, 812 in all`` for a paged list (empty when it all fits)."""
    if not page or int(page.get("count", 1)) <= 1:
        return ""
    return f", page {int(page['page'])} of {int(page['count'])}, {int(page['total'])} in all"


def render_status(
    console: Console, state: Mapping[str, Any], sections: Sequence[Section] = ()
) -> None:
    """The live view's data (its ``state.json``) as terminal tables: queues, event source
    mappings, then each of ``sections``, then DynamoDB writes, tables, executions and
    invocations, newest first where the view pages them."""
    console.rule(f"[bold]AWS View, local cloud, {plain(state.get('title'))}")
    pages = state.get("pages", {})
    table(
        console,
        "Queues",
        ["queue", "visible", "in flight", "redrive"],
        [
            [q["name"], "gone", "", ""]
            if q.get("gone")
            else [q["name"], q["visible"], q["in_flight"], q["redrive"]]
            for q in state["queues"]
        ],
    )
    table(
        console,
        "Event source mappings",
        ["source", "function", "batch size", "state", "discarded to"],
        [
            [m["source"], m["function"], m["batch_size"], m["state"], m.get("on_failure") or "—"]
            for m in state["mappings"]
        ],
    )
    table(
        console,
        "Event sources (rules, schedules, subscriptions, bucket notifications)",
        ["kind", "source", "trigger", "targets", "state"],
        [
            [e["kind"], e["source"], e["trigger"], ", ".join(e["targets"]), e["state"]]
            for e in state.get("event_sources", [])
        ],
    )
    for section in sections:
        section(console, state)
    table(
        console,
        f"Writes to DynamoDB (newest first){shown(pages.get('writes'))}",
        ["table", "key", "from", "call", "outcome", "item before", "item after"],
        [
            [
                w["table"],
                w["key"],
                f"{w['function']} {w['source'] or ''}".strip()
                if w["function"]
                else "not a function",
                f"{w['operation']} {w['condition'] or '(no condition)'}",
                w["outcome"],
                json.dumps(w["before"]) if w["before"] is not None else "none",
                json.dumps(w["after"]) if w["after"] is not None else "none",
            ]
            for w in state.get("writes", [])
        ],
    )
    if state.get("tagged_writes"):
        table(
            console,
            "Written by a setup (tagged: not the code under test)",
            ["table", "key", "tag", "call", "outcome"],
            [
                [w["table"], w["key"], w["tag"], w["operation"], w["outcome"]]
                for w in state["tagged_writes"]
            ],
        )
    for shown_table in state["tables"]:
        columns = list(shown_table.get("columns", []))
        rows = [[item.get(c) for c in columns] for item in shown_table["items"]]
        counted = f", {len(rows)} of {shown_table.get('count', len(rows))} item(s) shown"
        gone = " (gone)" if shown_table["gone"] else counted
        table(console, f"Table {plain(shown_table['name'])}{gone}", columns, rows)
    for machine in state["state_machines"]:
        table(
            console,
            f"Executions of {plain(machine['name'])}{' (gone)' if machine['gone'] else ''}",
            ["execution", "status", "task events", "output, or error and cause"],
            [
                [
                    e["name"],
                    e["status"],
                    " ".join(
                        f"{t['state']}:{t['event']}{'(' + t['error'] + ')' if t['error'] else ''}"
                        for t in e["tasks"]
                    ),
                    _outcome(e),
                ]
                for e in machine["executions"]
            ],
        )
    table(
        console,
        f"Invocations (newest first){shown(pages.get('invocations'))}",
        ["function", "given", "result", "ms"],
        [[i["function"], i["given"], i["result"], i["duration_ms"]] for i in state["invocations"]],
    )


def _outcome(execution: Mapping[str, Any]) -> str:
    """An execution's output, or, when it failed, its error, failing state and cause."""
    if "error" not in execution:
        return str(execution.get("output") or "")
    where = f" in state {execution['failed_state']}" if execution.get("failed_state") else ""
    cause = f": {execution['cause']}" if execution.get("cause") else ""
    return f"{execution['error'] or 'no error'}{where}{cause}"


def checked_endpoint(endpoint_url: str) -> str:
    """``endpoint_url`` when it is an ``http`` or ``https`` URL with a host.

    Raises:
        RemoteError: it is not.
    """
    parsed = urllib.parse.urlsplit(endpoint_url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise RemoteError(
            f"--endpoint-url {plain(endpoint_url)} is not an http:// or https:// URL "
            "(e.g. http://127.0.0.1:5000)"
        )
    return endpoint_url


def fetch_state(endpoint_url: str) -> Mapping[str, Any]:
    """The live view's ``state.json`` of the server at ``endpoint_url``.

    Raises:
        RemoteError: nothing answers there, or it answers but is not a local cloud.
    """
    url = f"{checked_endpoint(endpoint_url).rstrip('/')}{VIEW_PATH}/state.json"
    try:
        with urllib.request.urlopen(url, timeout=30) as answer:  # noqa: S310 - http(s): checked_endpoint
            state: Mapping[str, Any] = json.load(answer)
    except urllib.error.HTTPError as exc:
        raise RemoteError(f"{url} answered HTTP {exc.code}: is it a local cloud?") from exc
    except (urllib.error.URLError, OSError) as exc:
        raise RemoteError(
            f"nothing answers at {endpoint_url}: start it with `localcloud serve`"
        ) from exc
    except json.JSONDecodeError as exc:
        raise RemoteError(f"{url} did not answer JSON: is it a local cloud?") from exc
    return state


def status(args: argparse.Namespace) -> int:
    """Print the live view's tables once."""
    render_status(Console(emoji=False), fetch_state(args.endpoint_url))
    return 0


def invoke(args: argparse.Namespace) -> int:
    """Invoke a function once per event file (``{}`` without one) and print its log tail
    (the invoke API's ``LogType=Tail``: the last 4 KB) and its response. As ``sam local
    invoke`` does, a function that raised still exits 0 (its error envelope is printed)."""
    events: list[tuple[str, Any]] = []
    for name in args.event or []:
        try:
            events.append((name, json.loads(Path(name).read_text(encoding="utf-8"))))
        except OSError as exc:
            raise RemoteError(f"event file {name}: {exc.strerror}") from exc
        except json.JSONDecodeError as exc:
            raise RemoteError(f"event file {name} is not JSON: {exc}") from exc
    client = boto3.client(
        "lambda",
        endpoint_url=checked_endpoint(args.endpoint_url),
        region_name=args.region,
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        # one invocation per event, waited for up to Lambda's 900 s limit: no SDK retry
        config=Config(read_timeout=910, retries={"total_max_attempts": 1}),
    )
    console = Console(emoji=False)
    for event_file, event in events or [("(no event)", {})]:
        try:
            response = client.invoke(
                FunctionName=args.function, Payload=json.dumps(event).encode(), LogType="Tail"
            )
        except EndpointConnectionError as exc:
            raise RemoteError(
                f"nothing answers at {args.endpoint_url}: start it with `localcloud serve`"
            ) from exc
        except ClientError as exc:
            raise RemoteError(
                f"{args.function} on {args.endpoint_url}: {exc.response['Error']['Message']}"
            ) from exc
        except BotoCoreError as exc:
            raise RemoteError(f"{args.function} on {args.endpoint_url}: {exc}") from exc
        log = base64.b64decode(response.get("LogResult", "")).decode(errors="replace")
        console.rule(f"{plain(args.function)} with {plain(event_file)}")
        for line in log.rstrip().splitlines():  # each log line as a line of its own
            console.print(plain(line), highlight=False, soft_wrap=True)
        error = response.get("FunctionError")
        label = f"[red]error ({plain(error)})[/]" if error else "[green]response[/]"
        payload = response["Payload"].read().decode(errors="replace")
        console.print(label, plain(payload), highlight=False, soft_wrap=True)
    return 0


def sam_cli() -> str:
    """The ``sam`` command: on ``PATH``, else beside this interpreter.

    Raises:
        RemoteError: neither has one.
    """
    found = shutil.which("sam") or shutil.which("sam", path=str(Path(sys.executable).parent))
    if found is None:
        raise RemoteError("no `sam` on PATH: install the AWS SAM CLI")
    return found


def deploy(args: argparse.Namespace) -> int:
    """``sam deploy`` with ``args.sam_arguments``, pointed at the server: its endpoint,
    region and the local account's credentials in the environment (the project's own
    ``AWS_*`` settings and profile left out), telemetry off. Its exit status is ``sam``'s."""
    fetch_state(args.endpoint_url)  # a clear error before sam's own retries
    environment = {
        **{k: v for k, v in os.environ.items() if not k.startswith("AWS_")},
        **FAKE_CREDENTIALS,
        "AWS_ENDPOINT_URL": args.endpoint_url,
        "AWS_DEFAULT_REGION": args.region,
        "AWS_REGION": args.region,
        "AWS_CONFIG_FILE": os.devnull,
        "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
        "SAM_CLI_TELEMETRY": "0",
        **{key: os.environ.get(key, value) for key, value in SAM_CLI_SETTINGS.items()},
    }
    arguments = list(args.sam_arguments)
    if arguments[:1] == ["--"]:  # the separator, not an argument of sam's
        arguments = arguments[1:]
    done = subprocess.run([sam_cli(), "deploy", *arguments], env=environment, check=False)  # noqa: S603 - the user's own sam deploy
    return done.returncode


def _client(service: str, args: argparse.Namespace) -> Any:
    return boto3.client(
        service,  # type: ignore[call-overload]
        endpoint_url=checked_endpoint(args.endpoint_url),
        region_name=args.region,
        aws_access_key_id=FAKE_CREDENTIALS["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=FAKE_CREDENTIALS["AWS_SECRET_ACCESS_KEY"],
        config=Config(retries={"total_max_attempts": 1}),
    )


def send_to_target(args: argparse.Namespace, target: Mapping[str, Any], text: str) -> None:
    """Hand one schedule target its input through the target service's own API, as the
    schedule does: a function asynchronously (``InvocationType=Event``), a queue, a topic,
    a state machine.

    Raises:
        RemoteError: another kind of target.
    """
    arn = str(target["Arn"])
    service = arn.split(":")[2] if arn.count(":") >= 5 else ""
    if service == "lambda":
        _client("lambda", args).invoke(FunctionName=arn, InvocationType="Event", Payload=text)
    elif service == "sqs":
        sqs = _client("sqs", args)
        account, name = arn.split(":")[4], arn.split(":")[5]
        url = sqs.get_queue_url(QueueName=name, QueueOwnerAWSAccountId=account)["QueueUrl"]
        extra = {}
        if group := (target.get("SqsParameters") or {}).get("MessageGroupId"):
            extra["MessageGroupId"] = group
        sqs.send_message(QueueUrl=url, MessageBody=text, **extra)
    elif service == "sns":
        _client("sns", args).publish(TopicArn=arn, Message=text)
    elif service == "states":
        _client("stepfunctions", args).start_execution(stateMachineArn=arn, input=text)
    else:
        raise RemoteError(
            f"{plain(arn)}: fire-schedule sends to Lambda, SQS, SNS and Step Functions"
        )


def fire_schedule(args: argparse.Namespace) -> int:
    """Fire a schedule rule (SAM's ``Schedule``) or an EventBridge Scheduler schedule
    (``ScheduleV2``) now: each target gets what the schedule would send it."""
    try:
        if args.group is None:
            events = _client("events", args)
            try:
                rule = events.describe_rule(Name=args.name)
            except events.exceptions.ResourceNotFoundException:
                rule = None
            if rule is not None:
                if not rule.get("ScheduleExpression"):
                    raise RemoteError(
                        f"rule {plain(args.name)} has no schedule: it is a pattern rule"
                    )
                source = argparse.Namespace(arn=rule["Arn"], name=rule["Name"])
                event = schedules.scheduled_event(source, ACCOUNT_ID, args.region)
                targets = events.list_targets_by_rule(Rule=args.name)["Targets"]
                for target in targets:
                    send_to_target(args, target, delivery.target_input(target, event, source))
                print(printable(f"fired {rule['Arn']}: {len(targets)} target(s)"))
                return 0
        scheduler = _client("scheduler", args)
        try:
            found = scheduler.get_schedule(Name=args.name, GroupName=args.group or "default")
        except ClientError as exc:
            raise RemoteError(
                f"no schedule rule or Scheduler schedule {plain(args.name)} on {args.endpoint_url}"
            ) from exc
        schedule = argparse.Namespace(arn=found["Arn"], target=found["Target"])
        now = datetime.datetime.now(datetime.UTC)
        send_to_target(args, found["Target"], schedules.scheduler_input(schedule, now))
        print(printable(f"fired {found['Arn']}"))
        return 0
    except EndpointConnectionError as exc:
        raise RemoteError(
            f"nothing answers at {args.endpoint_url}: start it with `localcloud serve`"
        ) from exc
    except (ClientError, BotoCoreError) as exc:
        raise RemoteError(f"{plain(args.name)} on {args.endpoint_url}: {exc}") from exc


def add_parsers(commands: Any) -> None:
    """Add ``status``, ``invoke``, ``deploy`` and ``fire-schedule`` to ``localcloud``'s
    subcommands."""

    def endpoint(parser: argparse.ArgumentParser) -> None:
        parser.add_argument(
            "--endpoint-url",
            default=DEFAULT_ENDPOINT,
            help=f"the running server (default {DEFAULT_ENDPOINT})",
        )
        parser.add_argument("--region", default="us-east-1")

    p = commands.add_parser("status", help="the live view's tables once, from a running server")
    endpoint(p)
    p.set_defaults(run=status)
    p = commands.add_parser("invoke", help="invoke a function of a running server")
    p.add_argument("function", help="the function's name or ARN")
    p.add_argument("-e", "--event", action="append", help="an event file (JSON); repeatable")
    endpoint(p)
    p.set_defaults(run=invoke)
    p = commands.add_parser(
        "deploy",
        help="the stock `sam deploy` to a running server",
        description="Runs `sam deploy` with the arguments after `--`, pointed at the server.",
    )
    endpoint(p)
    p.add_argument("sam_arguments", nargs=argparse.REMAINDER, help="sam deploy's own options")
    p.set_defaults(run=deploy)
    p = commands.add_parser(
        "fire-schedule",
        help="fire a schedule rule or EventBridge Scheduler schedule of a running server now",
    )
    p.add_argument("name", help="the rule's or the schedule's name")
    p.add_argument("--group", help="the Scheduler schedule's group (a rule is looked up first)")
    endpoint(p)
    p.set_defaults(run=fire_schedule)
