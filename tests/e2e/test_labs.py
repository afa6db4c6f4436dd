"""The seed labs, as a learner types them: each lab's command sequence
(``tests/fixtures/labs/*.sh``, the lab's command blocks as its text prints them) through
the stock AWS CLI v1 and a shell prepared by ``lab-env``, against the lab's machine
(``make lab``) on a free port; ``make lab-replay`` runs the same on port 5000 with the
labs' own workers, taken from their text in ``LAB_TEXTS`` (``../shared/labs/`` beside
the clone; the texts are not in the repository; the Q05 worker calls port 5000 itself, so
only the free-port runs pass ``make lab``'s ``--any-port``).

Each replay first shows the unprotected starter overwriting a conflicting repeat, then
uploads a protected worker written for the test and checks what the lab says the learner
should see after each block, down to the empty cleanup listings. EV05's replay runs once
per run of this file: its steps' output is checked as the terminal shows it, and the lab's
AWS View after the cleanup in headless Chromium (``test_labs_browser.py`` watches Q05's
view from the lab's start).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, expect

from localcloud.account import LocalCloud
from order_guard_tools import cli
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.labs import EV05, Q05, Lab, provision
from order_guard_tools.labs.check import judge, read_state
from order_guard_tools.labs.evidence import Verdict
from order_guard_tools.labs.serve import lab_cloud
from order_guard_tools.project import ROOT
from tests.support.aws import free_port
from tests.support.pages import screenshot

FIXTURES = ROOT / "tests" / "fixtures" / "labs"


def lab_cloud_for_the_suite(lab: Lab) -> OrderGuardCloud:
    """``lab``'s empty account as ``make lab`` makes it, through the command's own options
    and checks: on ``LOCALCLOUD_LAB_PORT`` (``make lab-replay``: 5000, the port the Q05
    worker in ``LOCALCLOUD_LAB_TEXTS`` calls, checked against that text), else on a free
    port with ``--any-port``: the suite's workers (``*_protected.py``) and the starters
    call no port of their own."""
    port = os.environ.get("LOCALCLOUD_LAB_PORT")
    options = ["--port", port] if port else ["--port", str(free_port()), "--any-port"]
    if os.environ.get("LOCALCLOUD_LAB_TEXTS"):
        options += ["--lab-texts", os.environ["LOCALCLOUD_LAB_TEXTS"]]
    _, cloud = lab_cloud(cli.build_parser().parse_args(["lab", lab.name, *options]))
    return cloud


@contextlib.contextmanager
def machine_for(lab: Lab) -> Iterator[LocalCloud]:
    """``lab``'s machine, provisioned and running as ``make lab`` runs it."""
    cloud = lab_cloud_for_the_suite(lab)
    with cloud:
        provision(lab, cloud.client)
        cloud.remember_resources()
        cloud.start_event_sources()
        cloud.watch()  # as make lab does
        yield cloud


@pytest.fixture
def lab_machine(request: pytest.FixtureRequest) -> Iterator[LocalCloud]:
    with machine_for(request.param) as cloud:
        yield cloud


@pytest.fixture(scope="module")
def ev05_replayed() -> Iterator[tuple[LocalCloud, dict[str, str]]]:
    """Lab EV05's machine after its replay (``ev05.sh``), and each step's output: read by
    the test of what the terminal shows and by the test of what the view shows."""
    with machine_for(EV05) as cloud:
        yield cloud, replay(cloud, "ev05.sh")


def replay(cloud: LocalCloud, script: str) -> dict[str, str]:
    """Run ``script`` in bash against ``cloud``: the output of each ``### step``."""
    environment = {
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "HOME": os.environ.get("HOME", "/root"),
        "LAB_PORT": str(cloud.server_port),
        "LAB_FIXTURES": str(FIXTURES),
    }
    if os.environ.get("LOCALCLOUD_LAB_TEXTS"):  # make lab-replay: the labs' own workers
        lab = script.removesuffix(".sh")
        text = Path(os.environ["LOCALCLOUD_LAB_TEXTS"]) / f"{lab}.zh.txt"
        assert text.is_file(), (
            f"no lab text at {text}: LOCALCLOUD_LAB_TEXTS (make lab-replay's LAB_TEXTS) names "
            "the folder holding the labs' q05.zh.txt and ev05.zh.txt"
        )
        environment["LAB_TEXT"] = str(text)
    done = subprocess.run(  # noqa: S603 - our own script, our own bash
        ["/bin/bash", str(FIXTURES / script)],
        cwd=ROOT,
        env=environment,
        capture_output=True,
        text=True,
        timeout=600,  # a hang guard, not a speed claim
        check=False,
    )
    assert done.returncode == 0, f"{script} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    steps: dict[str, str] = {}
    name = ""
    for line in done.stdout.splitlines():
        if line.startswith("### "):
            name = line[4:].strip()
            steps[name] = ""
        elif name:
            steps[name] += line + "\n"
    assert "end" in steps, done.stdout[-2000:]
    return steps


def writes_by_key(cloud: LocalCloud) -> dict[str, list[dict[str, Any]]]:
    """The live view's rows of DynamoDB writes, oldest first, per item key."""
    state = cloud.view_data({})
    assert state["pages"]["writes"]["count"] == 1, "more writes than one page"
    found: dict[str, list[dict[str, Any]]] = {}
    for write in reversed(state["writes"]):
        found.setdefault(write["key"], []).append(write)
    return found


def plain_items(output: str) -> list[dict[str, str]]:
    return [{k: next(iter(v.values())) for k, v in item.items()} for item in json.loads(output)]


@pytest.mark.parametrize("lab_machine", [Q05], ids=["q05"], indirect=True)
def test_the_q05_lab_as_written(lab_machine: LocalCloud) -> None:
    steps = replay(lab_machine, "q05.sh")

    assert json.loads(steps["mapping"]) == {
        "Source": "arn:aws:sqs:us-east-1:123456789012:labex-q05-jobs",
        "Function": "arn:aws:lambda:us-east-1:123456789012:function:labex-q05-worker",
        "Batch": 1,
        "State": "Enabled",
    }
    assert steps["starter"].strip() == "2"  # the starter's plain PutItem overwrote quantity 1
    uploaded, computed = steps["code"].split()
    assert uploaded == computed  # CodeSha256: base64 SHA-256 of the zip
    assert plain_items(steps["first"].join("[]")) == [
        {"id": "dedup-order", "quantity": "4", "total_cents": "1100"}
    ]
    stored = sorted(plain_items(steps["scan"]), key=lambda item: item["id"])
    assert stored == [
        {"id": "dedup-order", "quantity": "4", "total_cents": "1100"},
        {"id": "other-order", "quantity": "1", "total_cents": "350"},
    ]
    results = [
        json.loads(line.removeprefix("RESULT ")) for line in steps["results"].split("\n")[:-1]
    ]
    assert results == [
        {"duplicate": False, "id": "dedup-order", "processed": True, "quantity": 4},
        {"duplicate": True, "id": "dedup-order", "processed": False, "quantity": 4},
        {"duplicate": True, "id": "dedup-order", "processed": False, "quantity": 4},
        {"duplicate": False, "id": "other-order", "processed": True, "quantity": 1},
    ]
    assert json.loads(steps["depth"])["Attributes"] == {
        "ApproximateNumberOfMessages": "0",
        "ApproximateNumberOfMessagesNotVisible": "0",
    }
    assert json.loads(steps["mappings after"]) == []
    assert "labex-q05-jobs" not in steps["queues after"]
    assert json.loads(steps["orders after"]) == []
    assert plain_items(steps["reference after"]) == [{"id": "reference", "note": "keep unchanged"}]

    writes = writes_by_key(lab_machine)
    starter_first, starter_overwrite, cli_delete = writes["starter-order"]
    assert starter_overwrite["condition"] is None  # the starter's plain PutItem …
    assert starter_overwrite["before"]["quantity"] == 1  # … overwrote the first order
    assert starter_overwrite["after"]["quantity"] == 2
    assert cli_delete["function"] is None  # the learner's own aws dynamodb delete-item
    first, *repeats, deleted = writes["dedup-order"]
    assert first["condition"] == "attribute_not_exists(id)"
    assert (first["outcome"], first["before"]) == ("Accepted", None)
    assert first["after"] == {"id": "dedup-order", "quantity": 4, "total_cents": 1100}
    assert first["function"] == "labex-q05-worker"
    assert first["request_id"]
    assert first["source"].startswith("message ")
    assert [w["outcome"] for w in repeats] == ["ConditionalCheckFailedException"] * 2
    assert all(w["before"] == w["after"] == first["after"] for w in repeats)
    assert (deleted["operation"], deleted["after"]) == ("DeleteItem", None)

    assert cli.main(["lab-check", "--port", str(lab_machine.server_port)]) == 0
    checks = judge(read_state(str(lab_machine.endpoint_url)), lab_machine.client)
    assert [(c.name, c.verdict) for c in checks] == [
        ("检查连接 (connection)", Verdict.HOLDS),
        ("检查实际工作程序结果 (worker results)", Verdict.HOLDS),
        ("检查消息确认情况 (message acknowledgement)", Verdict.HOLDS),
        ("清理检查 (cleanup)", Verdict.HOLDS),
    ], [c.detail for c in checks]


def test_the_ev05_lab_as_written(ev05_replayed: tuple[LocalCloud, dict[str, str]]) -> None:
    lab_machine, steps = ev05_replayed

    starter = steps["starter.0"].split("\n")
    assert json.loads(starter[0])["errorType"] == "TransientOrderError"
    assert starter[-2] == "2"  # the retry's plain PutItem wrote the order again
    assert len(steps["upload.0"].split()[-1]) == 44  # CodeSha256: base64 of 32 bytes
    assert json.loads(steps["workflow.0"]) == {
        "Name": "labex-ev05-worker",
        "Role": "arn:aws:iam::123456789012:role/labex-ev05-worker-role",
        "Runtime": "python3.13",
        "Timeout": 30,
    }
    assert json.loads(steps["workflow.1"]) == {"stateMachines": []}
    first = json.loads(steps["first.0"])
    assert first["Status"] == "SUCCEEDED"
    assert json.loads(first["Output"]) == {
        "id": "protected-order",
        "total_cents": 1100,
        "completed": True,
    }
    tasks = json.loads(steps["first.1"])
    assert [(t["Type"], t["Error"]) for t in tasks] == [
        ("TaskFailed", "TransientOrderError"),
        ("TaskSucceeded", None),
        ("TaskSucceeded", None),
    ]
    assert json.loads(tasks[1]["Output"])["Payload"]["duplicate"] is True  # the raw task output
    assert plain_items(f"[{steps['first.2']}]") == [
        {"id": "protected-order", "quantity": "4", "total_cents": "1100"}
    ]
    repeat = json.loads(steps["repeat.0"])
    assert repeat["Status"] == "SUCCEEDED"
    assert json.loads(repeat["Output"])["total_cents"] == 1100
    store, summary = (json.loads(output) for output in json.loads(steps["repeat.1"]))
    assert store["Payload"]["duplicate"] is True
    assert summary["Payload"]["total_cents"] == 1100
    new = json.loads(steps["new.0"])
    assert new["Status"] == "SUCCEEDED"
    assert json.loads(new["Output"])["total_cents"] == 350
    stored = sorted(plain_items(steps["new.1"]), key=lambda item: item["id"])
    assert stored == [
        {"id": "different-order", "quantity": "1", "total_cents": "350"},
        {"id": "protected-order", "quantity": "4", "total_cents": "1100"},
    ]
    logged = json.loads(steps["new.2"])
    results = [m for m in logged if m.startswith("RESULT ")]
    assert len([m for m in logged if m.startswith("START ")]) == 7  # seven worker invocations
    assert len(results) == 6  # the failed attempt printed none
    assert json.loads(steps["after.0"]) == {"stateMachines": []}
    assert json.loads(steps["after.1"]) == ["labex-ev05-worker-role"]
    assert json.loads(steps["after.2"]) == []
    assert json.loads(steps["after.3"]) == []
    assert plain_items(steps["after.4"]) == [{"id": "reference", "note": "keep unchanged"}]

    writes = writes_by_key(lab_machine)
    puts = [
        w
        for w in writes["protected-order"]
        if w["table"] == "labex-ev05-orders" and w["operation"] == "PutItem"
    ]
    assert [w["outcome"] for w in puts] == [
        "Accepted",  # the first execution's first attempt, which then failed after its write
        "ConditionalCheckFailedException",  # its retry
        "ConditionalCheckFailedException",  # the new execution of the same order
    ]
    assert all(w["function"] == "labex-ev05-worker" and w["request_id"] for w in puts)
    assert puts[1]["before"] == puts[1]["after"] == puts[0]["after"]
    counted = [w for w in writes["protected-order"] if w["table"] == "labex-ev05-attempts"]
    assert [w["after"]["attempts"] for w in counted if w["operation"] == "UpdateItem"] == [1, 2, 3]
    (machine,) = lab_machine.view_data({})["state_machines"]
    assert machine["gone"]  # deleted in the cleanup, and still listed with its executions
    assert {e["name"] for e in machine["executions"]} == {
        "after-write-order",
        "repeated-order",
        "different-order",
    }

    assert cli.main(["lab-check", "--port", str(lab_machine.server_port)]) == 0
    checks = judge(read_state(str(lab_machine.endpoint_url)), lab_machine.client)
    assert [(c.name, c.verdict) for c in checks] == [
        ("部署检查 (deployment)", Verdict.HOLDS),
        ("工作流配置检查 (workflow configuration)", Verdict.HOLDS),
        ("业务保护检查 (business protection)", Verdict.HOLDS),
        ("清理检查 (cleanup)", Verdict.HOLDS),
    ], [c.detail for c in checks]


def test_the_ev05_view_keeps_the_state_machine_and_its_executions_after_cleanup(
    ev05_replayed: tuple[LocalCloud, dict[str, str]], browser: Browser
) -> None:
    """The AWS View a learner opens after the lab's cleanup (in headless Chromium): the
    deleted state machine with its three executions, the retry's refused writes."""
    cloud, _ = ev05_replayed
    assert cloud.view_url is not None
    page = browser.new_page(viewport={"width": 1440, "height": 1000})
    try:
        page.goto(cloud.view_url)
        machine = page.locator('table.executions[data-state-machine="labex-ev05-orders"]')
        expect(machine.locator("tr.execution")).to_have_count(3, timeout=20_000)
        expect(page.get_by_text("labex-ev05-orders").first).to_be_visible()
        first = machine.locator('tr.execution[data-name="after-write-order"]')
        expect(first).to_contain_text("StoreOrder failed: TransientOrderError")
        expect(first).to_contain_text("SUCCEEDED")
        refused = page.locator(
            'tr.write[data-key="protected-order"][data-outcome="ConditionalCheckFailedException"]'
        )
        expect(refused).to_have_count(2)
        assert screenshot(page, "lab-ev05-after-cleanup.png").stat().st_size > 10_000
    finally:
        page.close()


@pytest.mark.parametrize("lab_machine", [Q05, EV05], ids=["q05", "ev05"], indirect=True)
def test_lab_check_on_a_fresh_lab_says_not_yet_for_each_named_check(
    lab_machine: LocalCloud, capsys: pytest.CaptureFixture[str]
) -> None:
    """Only what the lab's setup made (its reference item included): no step has
    happened, so no check holds and none fails."""
    assert cli.main(["lab-check", "--port", str(lab_machine.server_port)]) == 1

    # after the heading; the suite's free port brings a note on where Q05's own code writes
    lines = [ln for ln in capsys.readouterr().out.splitlines()[1:] if "note:" not in ln]
    assert len(lines) == 4
    assert all(line.startswith("  not yet ") for line in lines), lines
