"""``python -m localcloud serve``: an empty account for the AWS tools, or a template's
stack, served until SIGINT; a command that cannot run as asked says why in one line."""

from __future__ import annotations

import queue
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import boto3
import pytest

from localcloud import cli
from tests.support.aws import free_port
from tests.support.paths import ROOT


def serve(*arguments: str) -> tuple[subprocess.Popen[str], queue.Queue[str | None]]:
    process = subprocess.Popen(
        [sys.executable, "-m", "localcloud", "serve", *arguments],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    lines: queue.Queue[str | None] = queue.Queue()

    def pump() -> None:  # readline() blocks: read on a thread, wait on the queue
        assert process.stdout is not None
        for line in process.stdout:
            lines.put(line)
        lines.put(None)

    threading.Thread(target=pump, daemon=True).start()
    return process, lines


def read_until(lines: queue.Queue[str | None], marker: str, timeout_s: float = 60) -> str:
    seen = []
    while (line := lines.get(timeout=timeout_s)) is not None:
        seen.append(line)
        if line.startswith(marker):
            break
    return "".join(seen)


def test_serve_answers_signed_calls_in_an_empty_account_and_stops_on_sigint() -> None:
    port = free_port()
    process, lines = serve("--port", str(port))
    try:
        printed = read_until(lines, "Ctrl-C stops the server")
        assert f"listening on http://127.0.0.1:{port}" in printed
        assert f"AWS_ENDPOINT_URL=http://127.0.0.1:{port}" in printed
        sqs = boto3.client(
            "sqs",
            endpoint_url=f"http://127.0.0.1:{port}",
            region_name="us-east-1",
            aws_access_key_id="localcloud",
            aws_secret_access_key="localcloud",
        )
        assert sqs.list_queues().get("QueueUrls", []) == []
        url = sqs.create_queue(QueueName="made-by-a-user")["QueueUrl"]
        assert url.endswith("/made-by-a-user")
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0
        assert "stopping" in read_until(lines, "stopping", timeout_s=5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_template_needs_the_stack_it_is_deployed_as(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["serve", "--template", str(ROOT / "template.yaml")]) == 2
    assert "error: --template needs --stack-name" in capsys.readouterr().out


def test_a_busy_port_is_refused_before_anything_starts() -> None:
    port = free_port()
    with socket.create_server(("127.0.0.1", port)):
        process, lines = serve("--port", str(port))
        assert process.wait(timeout=60) == 2
    printed = read_until(lines, "error")
    assert f"error: cannot listen on 127.0.0.1:{port}" in printed
    assert f"--port {port + 1}" in printed


def test_serve_deploys_a_template_and_prints_its_outputs(tmp_path: Path) -> None:
    (tmp_path / "template.yaml").write_text(
        "Parameters:\n  Retention: {Type: Number, Default: 60}\n"
        "Resources:\n  Inbox:\n    Type: AWS::SQS::Queue\n"
        "    Properties: {MessageRetentionPeriod: !Ref Retention}\n"
        "Outputs:\n  InboxUrl: {Value: !Ref Inbox}\n"
    )
    port = free_port()
    process, lines = serve(
        "--port",
        str(port),
        "--template",
        str(tmp_path / "template.yaml"),
        "--stack-name",
        "inbox-stack",
        "--parameter-overrides",
        "Retention=120",
    )
    try:
        printed = read_until(lines, "Ctrl-C stops the server")
        (url,) = [line.split()[1] for line in printed.splitlines() if "InboxUrl" in line]
        assert "/inbox-stack-Inbox-" in url
        sqs = boto3.client(
            "sqs",
            endpoint_url=f"http://127.0.0.1:{port}",
            region_name="us-east-1",
            aws_access_key_id="localcloud",
            aws_secret_access_key="localcloud",
        )
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])
        assert attributes["Attributes"]["MessageRetentionPeriod"] == "120"
    finally:
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
