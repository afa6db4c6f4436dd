"""``python -m localcloud serve``: an empty account for the AWS tools, or a template's
stack, served until SIGINT; ``status``, ``invoke`` and ``deploy`` against a running
server; a command that cannot run as asked says why in one line."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localcloud import cli
from localcloud.account import LocalCloud
from localcloud.tests.support.aws import free_port, served_client
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import JOBS_APP
from localcloud.tests.support.processes import python_module


def client(service: str, port: int) -> Any:
    return served_client(service, port)


@pytest.mark.slow  # seconds: the quick loop leaves it to make test
def test_serve_deploys_a_template_answers_signed_calls_and_stops_on_sigint(
    tmp_path: Path,
) -> None:
    """One server run: the template's stack with its Outputs printed and its parameter
    overridden, the account answering the SDK like any other (a queue made by a user
    beside the stack's), then a clean stop on SIGINT."""
    (tmp_path / "template.yaml").write_text(
        "Parameters:\n  Retention: {Type: Number, Default: 60}\n"
        "Resources:\n  Inbox:\n    Type: AWS::SQS::Queue\n"
        "    Properties: {MessageRetentionPeriod: !Ref Retention}\n"
        "Outputs:\n  InboxUrl: {Value: !Ref Inbox}\n"
    )
    port = free_port()
    template = ("--template", str(tmp_path / "template.yaml"), "--stack-name", "inbox-stack")
    overrides = ("--parameter-overrides", "Retention=120")
    with python_module("localcloud", "serve", "--port", str(port), *template, *overrides) as server:
        printed = server.read_until("Ctrl-C stops the server")
        assert f"listening on http://127.0.0.1:{port}" in printed
        assert f"AWS_ENDPOINT_URL=http://127.0.0.1:{port}" in printed
        (url,) = [line.split()[1] for line in printed.splitlines() if "InboxUrl" in line]
        assert "/inbox-stack-Inbox-" in url
        sqs = client("sqs", port)
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
        assert attributes["Attributes"]["MessageRetentionPeriod"] == "120"
        made = sqs.create_queue(QueueName="made-by-a-user")["QueueUrl"]
        assert sorted(sqs.list_queues()["QueueUrls"]) == sorted([url, made])
        server.process.send_signal(signal.SIGINT)
        assert server.process.wait(timeout=30) == 0
        assert "stopping" in server.read_until("stopping", timeout_s=5)


def test_a_template_needs_the_stack_it_is_deployed_as(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["serve", "--template", str(JOBS_APP / "template.yaml")]) == 2
    assert "error: --template needs --stack-name" in capsys.readouterr().out


def test_a_busy_port_is_refused_before_anything_starts(
    capsys: pytest.CaptureFixture[str],
) -> None:
    port = free_port()
    with socket.create_server(("127.0.0.1", port)):
        assert cli.main(["serve", "--port", str(port)]) == 2
    printed = capsys.readouterr().out
    assert f"error: cannot listen on 127.0.0.1:{port}" in printed
    assert f"--port {port + 1}" in printed


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.20"])
def test_a_server_bound_beyond_loopback_warns_that_the_network_gets_the_account(
    host: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 47: ``--host 0.0.0.0`` hands the account to the network without a word."""
    cli.announce(LocalCloud(server_port=5000, host=host))
    warning = [line for line in capsys.readouterr().out.splitlines() if "warning" in line]
    assert len(warning) == 1
    assert f"listening on {host}, not on loopback" in warning[0]
    assert "gets the whole account" in warning[0]


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "::1", "localhost"])
def test_a_server_on_loopback_gives_no_warning(
    host: str, capsys: pytest.CaptureFixture[str]
) -> None:
    cli.announce(LocalCloud(server_port=5000, host=host))
    assert "warning" not in capsys.readouterr().out


# --- the commands against a running server: status, invoke, deploy ----------------------


@pytest.fixture(scope="module")
def served() -> Iterator[LocalCloud]:
    with started(server=True) as running:
        yield running


def test_status_prints_the_live_views_tables_of_a_running_server(
    served: LocalCloud, capsys: pytest.CaptureFixture[str]
) -> None:
    served.client("dynamodb").put_item(
        TableName=served.outputs["ItemsTableName"],
        Item={"id": {"S": "[red]shown-as-text"}, "note": {"S": "a:smiley:b \x1b[2J"}},
    )
    assert cli.main(["status", "--endpoint-url", served.endpoint_url]) == 0
    printed = capsys.readouterr().out
    queue = served.outputs["TaskQueueUrl"].rsplit("/", 1)[-1]
    assert queue[:20] in printed
    assert "Event source mappings" in printed
    assert served.outputs["ConsumerFunctionName"][:20] in printed
    assert "[red]shown-as-text" in printed  # data, never terminal markup
    assert "a:smiley:b" in printed  # nor an emoji code
    assert "\x1b" not in printed  # nor a control character


def test_invoke_prints_the_log_tail_and_the_response(
    served: LocalCloud, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"id": "cli-job", "quantity": 2}))
    function = served.outputs["TaskFunctionName"]
    arguments = ["--endpoint-url", served.endpoint_url]

    assert cli.main(["invoke", function, "-e", str(event), *arguments]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines if "RequestId: " in line] == [
        "START",
        "END",
        "REPORT",
    ]  # each log line on a line of its own
    assert 'response {"id": "cli-job", "total": 600, "completed": true}' in lines

    event.write_text(json.dumps({"id": "cli-job", "quantity": 0}))
    assert cli.main(["invoke", function, "-e", str(event), *arguments]) == 0  # as sam local invoke
    printed = capsys.readouterr().out
    assert "error (Unhandled)" in printed
    (answer,) = [line for line in printed.splitlines() if line.startswith("error (Unhandled)")]
    envelope = json.loads(answer.removeprefix("error (Unhandled) "))
    assert (envelope["errorType"], envelope["errorMessage"]) == (
        "InvalidJob",
        "quantity must be from 1 to 10",
    )


def test_invoke_of_what_cannot_run_says_why_in_one_line(
    served: LocalCloud, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = ["--endpoint-url", served.endpoint_url]
    assert cli.main(["invoke", "no-such-function", *arguments]) == 2
    assert "error: no-such-function on http://127.0.0.1:" in capsys.readouterr().out
    (tmp_path / "bad.json").write_text("{not json")
    assert cli.main(["invoke", "f", "-e", str(tmp_path / "bad.json"), *arguments]) == 2
    assert "bad.json is not JSON" in capsys.readouterr().out


@pytest.mark.parametrize("command", [["status"], ["invoke", "f"], ["deploy"]])
def test_an_endpoint_that_is_not_a_url_is_refused_by_name(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([*command, "--endpoint-url", "127.0.0.1:5000"]) == 2
    assert "error: --endpoint-url 127.0.0.1:5000 is not an http:// or https:// URL" in (
        capsys.readouterr().out
    )


@pytest.mark.parametrize("command", [["status"], ["invoke", "f"], ["deploy"]])
def test_a_command_with_no_server_there_says_so(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    assert cli.main([*command, "--endpoint-url", url]) == 2
    assert f"error: nothing answers at {url}: start it with `localcloud serve`" in (
        capsys.readouterr().out
    )


@pytest.mark.slow  # the SAM CLI starts in a process of its own: seconds
def test_deploy_runs_the_stock_sam_deploy_against_the_server(
    served: LocalCloud, tmp_path: Path
) -> None:
    (tmp_path / "template.yaml").write_text(
        "Transform: AWS::Serverless-2016-10-31\n"
        "Resources:\n  Inbox:\n    Type: AWS::SQS::Queue\n"
        "Outputs:\n  InboxUrl: {Value: !Ref Inbox}\n"
    )
    with contextlib.chdir(tmp_path):
        code = cli.main(
            ["deploy", "--endpoint-url", served.endpoint_url, "--",
             "--stack-name", "deployed-by-cli", "--no-confirm-changeset"]
        )  # fmt: skip
    assert code == 0
    (stack,) = served.client("cloudformation").describe_stacks(StackName="deployed-by-cli")[
        "Stacks"
    ]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    assert "/deployed-by-cli-Inbox-" in stack["Outputs"][0]["OutputValue"]


@pytest.mark.parametrize(("ours", "given"), [(None, "0.2"), ("3", "3")])
def test_deploy_gives_sam_a_short_poll_delay_unless_the_user_set_one(
    monkeypatch: pytest.MonkeyPatch, ours: str | None, given: str
) -> None:
    """The local ``ExecuteChangeSet`` returns once the stack is complete: ``sam deploy``'s
    default ``SAM_CLI_POLL_DELAY`` of 5 s would be a sleep for nothing on every deploy."""
    from localcloud import remote

    seen: list[dict[str, str]] = []

    def run(command: list[str], *, env: dict[str, str], check: bool) -> Any:
        seen.append(env)
        return type("Done", (), {"returncode": 0})()

    monkeypatch.setattr(remote, "fetch_state", lambda endpoint: {})
    monkeypatch.setattr(remote.subprocess, "run", run)
    if ours is None:
        monkeypatch.delenv("SAM_CLI_POLL_DELAY", raising=False)
    else:
        monkeypatch.setenv("SAM_CLI_POLL_DELAY", ours)
    assert cli.main(["deploy", "--endpoint-url", "http://127.0.0.1:1", "--", "--guided"]) == 0
    (environment,) = seen
    assert environment["SAM_CLI_POLL_DELAY"] == given


@pytest.mark.slow  # a second stack in the served account
def test_fire_schedule_fires_a_rule_and_a_scheduler_schedule_through_the_api(
    served: LocalCloud, capsys: pytest.CaptureFixture[str]
) -> None:
    from localcloud.cloudformation.template import load
    from localcloud.tests.support.paths import APPS

    deployment = served.deploy(
        load(APPS / "scheduled_app" / "template.yaml"), stack_name="scheduled-cli"
    )
    arguments = ["--endpoint-url", str(served.endpoint_url)]
    assert cli.main(["fire-schedule", "scheduled-cli-daily", *arguments]) == 0
    assert cli.main(["fire-schedule", "scheduled-cli-every-five-minutes", *arguments]) == 0
    printed = capsys.readouterr().out
    daily = "arn:aws:scheduler:us-east-1:123456789012:schedule/default/scheduled-cli-daily"
    assert f"fired {daily}" in printed
    assert ":rule/scheduled-cli-every-five-minutes: 1 target(s)" in printed
    sqs = client("sqs", served.server_port or 0)
    url = deployment.outputs["DailyQueueUrl"]
    (message,) = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=5)["Messages"]
    assert message["Body"] == "daily message"
    served.settle_events(30)
    logs = client("logs", served.server_port or 0)
    group = f"/aws/lambda/{deployment.refs['Ticker']}"
    messages = [
        event["message"]
        for stream in logs.describe_log_streams(logGroupName=group)["logStreams"]
        for event in logs.get_log_events(logGroupName=group, logStreamName=stream["logStreamName"])[
            "events"
        ]
    ]
    assert any('"received": {"tick": "rate"}' in message for message in messages)
    assert cli.main(["fire-schedule", "no-such-schedule", *arguments]) == 2
    said = capsys.readouterr()
    assert "no schedule rule or Scheduler schedule no-such-schedule" in said.err + said.out
