"""``python -m localcloud serve`` stops within 10 s of SIGTERM whatever runs in it: state
machines that never end (one of them growing its history as fast as it can, which the live
view reads), an inline Map whose iterations wait, functions busy in synchronous,
asynchronous and event-source invocations, a schedule. It stops in order: its executions
stopped, then its functions' invocations, then their processes ended (exit status 0, or 1
with its line when the 8 s deadline cut the orderly stop short). The promise is the 10 s;
whether the orderly stop beats its deadline on a loaded machine does not matter here
(``test_cli_exit.py`` tests the deadline itself).

One server, started as a user starts it, made busy through the AWS APIs, then sent SIGTERM.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from botocore.config import Config

from localcloud.tests.support.aws import free_port, handler_zip, served_client
from localcloud.tests.support.processes import Running, python_module

pytestmark = pytest.mark.slow  # a server process: seconds

STOPPED_WITHIN_S = 10
"""What the server promises: gone this many seconds after SIGTERM, whatever runs."""
BUSY = "import time\ndef handler(event, context):\n    time.sleep(600)\n"
TRUST = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": ["lambda.amazonaws.com", "states.amazonaws.com"]},
            "Action": "sts:AssumeRole",
        }
    ],
}


def clients(port: int) -> Callable[[str], Any]:
    config = Config(retries={"total_max_attempts": 1}, read_timeout=900)

    def client(service: str) -> Any:
        return served_client(service, port, config)

    return client


def until(probe: Callable[[], bool], what: str, guard_s: float = 60) -> None:
    """Poll ``probe`` until it holds (``guard_s``: a hang guard far above the wait)."""
    deadline = time.monotonic() + guard_s
    while not probe():
        if time.monotonic() > deadline:
            pytest.fail(f"{what}: not within {guard_s} s")
        time.sleep(0.1)


def environments(server_pid: int) -> set[int]:
    """The server's execution environments now: the supervisor processes it started."""
    children: list[str] = []
    for task in Path(f"/proc/{server_pid}/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that ended since the listing
            children.extend((task / "children").read_text().split())
    found = set()
    for child in children:
        with contextlib.suppress(OSError):  # a process that ended since
            if b"supervisor_main" in Path(f"/proc/{child}/cmdline").read_bytes():
                found.add(int(child))
    return found


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/stat").read_text().split(") ")[-1].startswith("Z")


def waiting(seconds: int, *, then: str | None = None) -> dict[str, Any]:
    """A state machine of one Wait state, ending or going on to ``then`` (itself)."""
    state: dict[str, Any] = {"Type": "Wait", "Seconds": seconds}
    state.update({"Next": then} if then else {"End": True})
    return {"StartAt": "Again", "States": {"Again": state}}


def make_busy(client: Callable[[str], Any]) -> None:
    """Two never-ending loops (one slow, one growing its history as fast as it can), a Map
    of 100 waiting items, a function busy in two synchronous invocations, one asynchronous
    and one from a queue, and a schedule: all running."""
    role = client("iam").create_role(RoleName="busy", AssumeRolePolicyDocument=json.dumps(TRUST))
    role_arn = role["Role"]["Arn"]
    lam, sfn, sqs = client("lambda"), client("stepfunctions"), client("sqs")
    function = lam.create_function(
        FunctionName="busy",
        Runtime="python3.13",
        Role=role_arn,
        Handler="app.handler",
        Code={"ZipFile": handler_zip(BUSY)},
        Timeout=900,
    )["FunctionArn"]
    for _ in range(2):  # callers that wait: the stop answers them with an error
        threading.Thread(
            target=lambda: _quietly(lam.invoke, FunctionName="busy", Payload=b"{}"), daemon=True
        ).start()
    lam.invoke(FunctionName="busy", InvocationType="Event", Payload=b"{}")
    queue = sqs.create_queue(QueueName="work")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])
    lam.create_event_source_mapping(
        FunctionName="busy", EventSourceArn=queue_arn["Attributes"]["QueueArn"], BatchSize=1
    )
    sqs.send_message(QueueUrl=queue, MessageBody="{}")
    events = client("events")
    events.put_rule(Name="every-minute", ScheduleExpression="rate(1 minute)")
    events.put_targets(Rule="every-minute", Targets=[{"Id": "busy", "Arn": function}])

    machines = {
        "loop": waiting(1, then="Again"),  # forever, far below the history quota
        "spin": waiting(0, then="Again"),  # as many events as moto makes, to the quota
        "each": {
            "StartAt": "Each",
            "States": {"Each": {"Type": "Map", "ItemProcessor": waiting(600), "End": True}},
        },
    }
    for name, definition in machines.items():
        machine = sfn.create_state_machine(
            name=name, definition=json.dumps(definition), roleArn=role_arn
        )["stateMachineArn"]
        items = list(range(100)) if name == "each" else {}
        sfn.start_execution(stateMachineArn=machine, name="running", input=json.dumps(items))


def _quietly(call: Callable[..., Any], **arguments: Any) -> None:
    try:
        call(**arguments)
    except Exception:  # noqa: BLE001 - the stop ends the call; its answer is no matter here
        return


def test_sigterm_stops_a_busy_server_in_order_within_10_s() -> None:
    port = free_port()
    with python_module("localcloud", "serve", "--port", str(port)) as server:
        server.read_until("Ctrl-C stops the server")
        make_busy(clients(port))
        until(lambda: len(environments(server.process.pid)) == 4, "four busy environments")
        busy = environments(server.process.pid)

        server.process.send_signal(signal.SIGTERM)
        try:
            status = server.process.wait(timeout=STOPPED_WITHIN_S)  # the promise
        except subprocess.TimeoutExpired:
            server.process.kill()
            pytest.fail(f"still running {STOPPED_WITHIN_S} s after SIGTERM:\n{said(server)}")

        lines = said(server).splitlines()
        # in order: the executions first, then the functions' invocations; the stop is
        # orderly (0) unless the deadline cut it short, which it says
        assert status == 0 or lines[-1] == "not stopped after 8 s: exiting now", lines
        stopping = lines.index("stopping… (a second Ctrl-C stops at once)")
        executions = [n for n, line in enumerate(lines) if line.startswith("[states] execution")]
        invocations = [n for n, line in enumerate(lines) if line.startswith("[lambda] busy:")]
        stopped = {lines[n].split()[2] for n in executions}
        assert {"loop:running", "each:running"} <= stopped  # spin too, unless at its quota
        assert stopped <= {"loop:running", "each:running", "spin:running"}, lines
        assert len(invocations) == 4, lines
        assert stopping < min(executions)
        assert max(executions) < min(invocations)
        until(lambda: all(gone(pid) for pid in busy), "the environments' processes ended")


def said(server: Running) -> str:
    """What the server printed since it was ready, to its end (its output closed)."""
    lines = []
    while (line := server.lines.get(timeout=10)) is not None:
        lines.append(line)
    return "".join(lines)
