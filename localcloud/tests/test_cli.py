"""``python -m localcloud serve``: an empty account for the AWS tools, or a template's
stack, served until SIGINT; a command that cannot run as asked says why in one line."""

from __future__ import annotations

import signal
import socket
from pathlib import Path
from typing import Any

import boto3
import pytest

from localcloud import cli
from localcloud.tests.support.aws import free_port
from localcloud.tests.support.paths import JOBS_APP
from localcloud.tests.support.processes import python_module


def client(service: str, port: int) -> Any:
    return boto3.client(
        service,  # type: ignore[call-overload]
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id="localcloud",
        aws_secret_access_key="localcloud",
    )


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
