"""What a function prints is bounded in the local cloud's memory (issue 47): a function
that printed 400 MB took the server 894 MB further. The local cloud keeps the first 3 MiB
and the last 1 MiB of an invocation's output for its log and says how much it dropped
between them; a line longer than a CloudWatch Logs event (1 MB with its 26 bytes of
overhead) is cut into several events, as Lambda cuts it; ``START``, ``END``, ``REPORT``
and ``LogType=Tail``'s last 4 KB stay as Lambda writes them.

The server runs in this process, so ``tracemalloc`` measures what it holds while the
function prints (the function's own process is not traced).
"""

from __future__ import annotations

import base64
import json
import tracemalloc
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.tests.support.aws import handler_zip
from localcloud.tests.support.cloud import started

MIB = 1_048_576
LOG_EVENT_BYTES = 1_048_576 - 26
"""CloudWatch Logs' event quota (1 MB), less the 26 bytes PutLogEvents counts per event."""
PRINTED_MIB = 128
FLOOD = """
import sys

def handler(event, context):
    print("first line")
    block = ("x" * 1023 + "\\n") * 1024
    for _ in range(event["mib"]):
        sys.stdout.write(block)
    print("last line")
    return "printed"
"""
LONG_LINE = """
def handler(event, context):
    print("y" * event["bytes"])
    return "printed"
"""


@dataclass(frozen=True)
class Flood:
    """One invocation that printed :data:`PRINTED_MIB` MiB: how far the server's memory
    rose while it ran, its ``LogType=Tail``, and its log events' messages."""

    grew_bytes: int
    tail: str
    messages: list[str]


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(template=None) as running:
        running.client("iam").create_role(RoleName="printer", AssumeRolePolicyDocument="{}")
        yield running


def create(cloud: LocalCloud, name: str, source: str) -> None:
    cloud.client("logs").create_log_group(logGroupName=f"/aws/lambda/{name}")
    cloud.client("lambda").create_function(
        FunctionName=name,
        Runtime="python3.13",
        Role="arn:aws:iam::123456789012:role/printer",
        Handler="app.handler",
        Code={"ZipFile": handler_zip(source)},
        Timeout=60,
    )


def invoke(cloud: LocalCloud, name: str, event: dict[str, Any]) -> dict[str, Any]:
    answer = cloud.client("lambda").invoke(
        FunctionName=name, Payload=json.dumps(event).encode(), LogType="Tail"
    )
    assert json.loads(answer["Payload"].read()) == "printed"
    return dict(answer)


def messages(cloud: LocalCloud, name: str) -> list[str]:
    """Every message of the function's log group, stream by stream, oldest first."""
    logs = cloud.client("logs")
    group = f"/aws/lambda/{name}"
    found: list[str] = []
    for stream in logs.describe_log_streams(logGroupName=group)["logStreams"]:
        kwargs: dict[str, Any] = {"startFromHead": True}
        while True:
            page = logs.get_log_events(
                logGroupName=group, logStreamName=stream["logStreamName"], **kwargs
            )
            found += [event["message"] for event in page["events"]]
            if not page["events"] or page["nextForwardToken"] == kwargs.get("nextToken"):
                break
            kwargs["nextToken"] = page["nextForwardToken"]
    return found


@pytest.fixture(scope="module")
def flood(cloud: LocalCloud) -> Flood:
    create(cloud, "flood", FLOOD)
    invoke(cloud, "flood", {"mib": 0})  # warm: the environment and the clients exist
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        answer = invoke(cloud, "flood", {"mib": PRINTED_MIB})
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    tail = base64.b64decode(answer["LogResult"]).decode()
    return Flood(peak - before, tail, messages(cloud, "flood"))


def test_a_function_printing_128_mib_raises_the_servers_memory_by_under_a_quarter_of_it(
    flood: Flood,
) -> None:
    assert flood.grew_bytes < PRINTED_MIB * MIB // 4, f"{flood.grew_bytes / MIB:.1f} MiB"


def test_its_log_keeps_the_first_and_last_lines_and_says_how_much_it_dropped(
    flood: Flood,
) -> None:
    # the second invocation's lines, after the warm one's
    second = [i for i, line in enumerate(flood.messages) if line == "first line"][1]
    start, report = flood.messages[second - 1], flood.messages[-1]
    kept = flood.messages[second:-2]
    dropped = [line for line in kept if line.startswith("[localcloud] ")]
    printed = len("first line\n") + PRINTED_MIB * MIB + len("last line\n")
    kept_bytes = sum(len(line) + 1 for line in kept if not line.startswith("[localcloud] "))

    assert start.startswith("START RequestId: ")
    assert (kept[0], kept[-1]) == ("first line", "last line")
    assert flood.messages[-2].startswith("END RequestId: ")
    assert report.startswith("REPORT RequestId: ")
    assert "\tDuration: " in report
    assert dropped == [
        f"[localcloud] {printed - 4 * MIB:,} bytes of this invocation's output are not kept: "
        "the local cloud keeps the first 3 MiB and the last 1 MiB of what an invocation "
        "prints (docs/local-cloud.md)"
    ]
    assert kept_bytes == 4 * MIB + 1  # a line cut at each end: one newline more


def test_log_type_tail_is_the_last_4_kb_of_the_log(flood: Flood) -> None:
    lines = flood.tail.split("\n")

    assert len(flood.tail.encode()) == 4096
    assert lines[-3:-1] == ["last line", flood.messages[-2]]
    assert lines[-1] == flood.messages[-1]


def test_a_line_longer_than_a_log_event_is_cut_into_events_of_at_most_1_mb(
    cloud: LocalCloud,
) -> None:
    create(cloud, "long-line", LONG_LINE)

    invoke(cloud, "long-line", {"bytes": 2 * LOG_EVENT_BYTES + 10})

    printed = [m for m in messages(cloud, "long-line") if m.startswith("y")]
    assert [len(m) for m in printed] == [LOG_EVENT_BYTES, LOG_EVENT_BYTES, 10]
    assert set("".join(printed)) == {"y"}
