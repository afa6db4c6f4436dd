"""``python -m localcloud test-app``: a SAM application built, deployed with the stock SAM
CLI to a fresh local account, judged by its own ``tests/integration`` (or, without any, by
invoking each function and running each state machine), deleted, and one verdict line
(issue 29).

The end-to-end cases run the command as a user does, on the suite's fixture apps; the
integration tests' virtual environment is made once per machine and kept in
``~/.cache/localcloud/test-app``.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from localcloud import testapp
from localcloud.account import LocalCloud
from localcloud.cli import ServeError, main
from localcloud.cloudformation.template import load
from localcloud.tests.support.cloud import started
from localcloud.tests.support.paths import FIXTURES
from localcloud.tests.support.processes import importable

# Whole SAM apps deployed and run against their own integration tests: the quick loop
# (make check-localcloud) leaves this module to make test.
pytestmark = pytest.mark.slow

APPS = FIXTURES / "apps"


def run_test_app(*argv: str | Path, timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - this interpreter, argv built here
        [sys.executable, "-m", "localcloud", "test-app", *map(str, argv)],
        cwd=FIXTURES,
        env=importable(),
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def listing(folder: Path) -> list[str]:
    return sorted(str(path.relative_to(folder)) for path in folder.rglob("*"))


def test_an_app_passes_its_own_integration_tests_and_its_folder_is_left_as_it_was() -> None:
    app = APPS / "tested_app"
    before = listing(app)
    done = run_test_app(app, "--stack-name", "counter-b", "--region", "eu-west-1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.fullmatch(
        r"PASS tested_app \(stack counter-b, eu-west-1, port \d+\): deployed in \d+\.\d s; "
        r"tests/integration: 1 passed in [\d.]+s; deleted\n",
        done.stdout,
    ), done.stdout
    # Nothing written into the application (the build goes to a temporary folder), and
    # pytest stayed inside it: the suite's own conftest.py above it would be collected too.
    assert listing(app) == before
    assert "unpublished metrics" not in done.stderr


def no_tests_run(app: Path) -> testapp.Run:
    return testapp.Run(app, "greeter-local", "us-east-1", 0, time.monotonic() + 60, app)


def test_an_app_without_tests_gets_its_functions_invoked_and_its_state_machines_run() -> None:
    app = APPS / "invoked_app"
    with started(template=load(app / "template.yaml"), stack_name="greeter-local") as cloud:
        outcome = testapp.invoke_each(cloud, no_tests_run(app))
        executions = cloud.client("stepfunctions").list_executions(
            stateMachineArn=_only(cloud, "AWS::StepFunctions::StateMachine")
        )["executions"]
    assert outcome == (
        "1 function(s) invoked with events/event.json, 1 state machine(s) run: no error"
    )
    assert [execution["status"] for execution in executions] == ["SUCCEEDED"]


def test_a_function_error_with_the_first_event_fails_the_app_naming_both(tmp_path: Path) -> None:
    app = tmp_path / "greeter"
    shutil.copytree(APPS / "invoked_app", app)
    (app / "events" / "a-failing.json").write_text('{"fail": "on purpose"}')
    with (
        started(template=load(app / "template.yaml"), stack_name="greeter-local") as cloud,
        pytest.raises(testapp.StepFailed) as failed,
    ):
        testapp.invoke_each(cloud, no_tests_run(app))
    assert str(failed.value).startswith("GreeterFunction with events/a-failing.json: {")
    assert "asked to fail: on purpose" in str(failed.value)


def _only(cloud: LocalCloud, resource_type: str) -> str:
    resources = cloud.client("cloudformation").list_stack_resources(StackName="greeter-local")
    (found,) = [
        r["PhysicalResourceId"]
        for r in resources["StackResourceSummaries"]
        if r["ResourceType"] == resource_type
    ]
    return str(found)


def test_an_app_past_its_time_limit_fails_as_timed_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test-app", str(APPS / "tested_app"), "--timeout", "2"]) == 1
    assert re.fullmatch(
        r"FAIL tested_app \(stack tested-app-local, us-east-1, port \d+\): "
        r"timed out after 2 s; not deployed\n",
        capsys.readouterr().out,
    )


def runs(pid: str) -> bool:
    """Whether process ``pid`` exists and is not a zombie (``/proc/<pid>/stat``'s state)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_a_step_past_the_limit_is_killed_with_the_processes_it_started(tmp_path: Path) -> None:
    run = testapp.Run(tmp_path, "s", "us-east-1", 0, time.monotonic() + 1, tmp_path)
    run.env = dict(os.environ)
    with pytest.raises(testapp.TimedOut):
        run.step("sleeper", ["sh", "-c", "sleep 60 & echo $! > child; wait"])
    child = (tmp_path / "child").read_text().strip()
    settle = time.monotonic() + 5  # SIGKILL is delivered at once; init reaps a moment later
    while runs(child) and time.monotonic() < settle:
        time.sleep(0.05)
    assert not runs(child), "the step's child (sleep 60) outlived the step"


def test_a_folder_without_a_template_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["test-app", str(tmp_path)]) == 2
    assert capsys.readouterr().out == (
        f"error: {tmp_path} holds no template.yaml or template.yml: is it a SAM application?\n"
    )


def test_a_busy_port_is_refused_before_anything_is_built(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert main(["test-app", str(APPS / "invoked_app"), "--port", str(port)]) == 2
    out = capsys.readouterr().out
    assert out.startswith(f"error: cannot listen on 127.0.0.1:{port}: "), out
    assert f"--port {port + 1}" in out
    assert out.count("\n") == 1


def test_no_sam_cli_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ServeError, match=r"the SAM CLI \(sam\) is not installed"):
        testapp.find_sam()


@pytest.mark.parametrize(
    ("folder", "stack"),
    [
        ("step-func", "step-func-local"),
        ("my_app.v2", "my-app-v2-local"),
        ("2048", "app-2048-local"),
        ("x" * 200, "x" * 128),
    ],
)
def test_the_default_stack_name_is_one_cloudformation_takes(folder: str, stack: str) -> None:
    name = testapp.stack_name_for(Path("/apps") / folder)
    assert name == stack
    assert re.fullmatch(r"[a-zA-Z][-a-zA-Z0-9]{0,127}", name)


@pytest.mark.parametrize(
    ("requirements", "added"),
    [
        ("", [f"pytest=={pytest.__version__}"]),
        ("boto3==1.43.108\n", [f"pytest=={pytest.__version__}"]),
        ("pytest-xdist==3.8.0\n", [f"pytest=={pytest.__version__}"]),
        ("boto3\npytest==8.3.0\n", []),
        ("PyTest>=8\n", []),
    ],
)
def test_pytest_is_added_pinned_unless_the_app_names_it(
    requirements: str, added: list[str]
) -> None:
    assert testapp.pytest_requirement(requirements) == added


def test_a_test_failing_on_botocores_own_validation_is_said_to_fail_on_aws_too() -> None:
    # The SAM CLI's event-bridge template passes a log stream's description where its
    # name belongs (``return log_streams[0]``): botocore refuses before sending.
    output = "\n".join(
        [
            "E   botocore.exceptions.ParamValidationError: Parameter validation failed:",
            "E               Invalid type for parameter logStreamName, value: {'logStreamName': "
            "'2026/12/03/[$LATEST]ab', 'arn': 'x'}, type: <class 'dict'>, valid types: "
            "<class 'str'>",
            "FAILED tests/integration/test_ec2_event.py::TestEC2Event::test_ec2_event - bo...",
        ]
    )
    note = testapp.client_side_error(output)
    assert note == (
        "botocore refused the test's own request before sending it, as it would against AWS: "
        "Invalid type for parameter logStreamName: a dict where str is valid"
    )
    assert testapp.client_side_error("E   AssertionError: 1 != 2\nFAILED t.py::x") is None
