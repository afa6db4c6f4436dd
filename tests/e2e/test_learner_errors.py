"""A learner's mistakes, answered as AWS answers them, through the stock AWS CLI.

Each test makes a mistake the seed labs invite (deleting a mapping twice, creating it
twice, a workflow input without ``quantity``, input that is not JSON, deleting a role
twice, taking a state machine's name) with the pinned AWS CLI v1 that ``make lab-env``
puts on PATH, against a served local cloud with Order Guard deployed, and checks the
CLI's exit status and the error line AWS's answer gives: ``An error occurred (<code>) when
calling the <operation> operation: <message>``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
import uuid
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localcloud.account import FAKE_CREDENTIALS, LocalCloud
from order_guard_tools.labs.serve import AWS_CLI
from tests.support.order_guard import started
from tests.support.outside import INPUTS
from tests.support.paths import FIXTURES

LAB_TEXT = INPUTS["labs"].folder / "ev05.zh.txt"
"""The EV05 lab as published (kept outside the repository); its state machine is read
from there, else from the suite's replay of the lab, which types the same here-doc."""
CLI_ERROR = 255
"""The AWS CLI's exit status when the service answered with an error."""


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(server=True) as running:
        yield running


def aws(cloud: LocalCloud, *args: str) -> subprocess.CompletedProcess[str]:
    """``aws <args>`` (AWS CLI v1, ``requirements-awscli.txt``) against ``cloud``."""
    assert AWS_CLI.is_file(), f"{AWS_CLI} is missing: make lab-tools installs it"
    environment = {
        "PATH": os.environ["PATH"],
        "HOME": os.environ.get("HOME", "/root"),
        **FAKE_CREDENTIALS,
        "AWS_DEFAULT_REGION": cloud.region,
        "AWS_PAGER": "",
    }
    return subprocess.run(  # noqa: S603 - the pinned CLI, our arguments
        [str(AWS_CLI), "--endpoint-url", str(cloud.endpoint_url), *args, "--output", "json"],
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def ok(cloud: LocalCloud, *args: str) -> Any:
    done = aws(cloud, *args)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout) if done.stdout.strip() else None


def refused(cloud: LocalCloud, *args: str) -> tuple[str, str, str]:
    """``(code, operation, message)`` of the error the CLI printed; the call must fail."""
    done = aws(cloud, *args)
    assert done.returncode == CLI_ERROR, (done.returncode, done.stdout, done.stderr)
    found = re.search(
        r"An error occurred \(([^)]*)\) when calling the (\w+) operation(?: \(reached max "
        r"retries: \d+\))?: (.*)",
        done.stderr,
    )
    assert found, done.stderr
    code, operation, message = found.groups()
    return code, operation, message.strip()


def queue_worker(cloud: LocalCloud) -> str:
    return str(cloud.outputs["QueueWorkerFunctionName"])


def a_queue(cloud: LocalCloud) -> str:
    url = ok(cloud, "sqs", "create-queue", "--queue-name", f"lab-{uuid.uuid4().hex[:8]}")
    attributes = ok(
        cloud, "sqs", "get-queue-attributes", "--queue-url", url["QueueUrl"],
        "--attribute-names", "QueueArn",
    )  # fmt: skip
    return str(attributes["Attributes"]["QueueArn"])


# --- Lambda: event source mappings --------------------------------------------------------


def test_deleting_a_mapping_that_is_gone_is_resource_not_found(cloud: LocalCloud) -> None:
    queue = a_queue(cloud)
    mapping = ok(
        cloud, "lambda", "create-event-source-mapping", "--function-name", queue_worker(cloud),
        "--event-source-arn", queue, "--batch-size", "5",
    )  # fmt: skip
    ok(cloud, "lambda", "delete-event-source-mapping", "--uuid", mapping["UUID"])

    for operation in ("delete-event-source-mapping", "update-event-source-mapping"):
        extra = ("--batch-size", "3") if operation.startswith("update") else ()
        code, _, message = refused(cloud, "lambda", operation, "--uuid", mapping["UUID"], *extra)
        assert (code, message) == (
            "ResourceNotFoundException",
            "The resource you requested does not exist.",
        )
    code, _, _ = refused(
        cloud, "lambda", "delete-event-source-mapping", "--uuid", str(uuid.uuid4())
    )
    assert code == "ResourceNotFoundException"


def test_a_second_mapping_of_the_same_queue_and_function_is_a_conflict_naming_the_first(
    cloud: LocalCloud,
) -> None:
    queue, function = a_queue(cloud), queue_worker(cloud)
    first = ok(
        cloud, "lambda", "create-event-source-mapping", "--function-name", function,
        "--event-source-arn", queue,
    )  # fmt: skip
    function_arn = first["FunctionArn"]

    for named in (function, function_arn):  # however the learner names the function
        code, operation, message = refused(
            cloud, "lambda", "create-event-source-mapping", "--function-name", named,
            "--event-source-arn", queue,
        )  # fmt: skip
        assert (code, operation) == ("ResourceConflictException", "CreateEventSourceMapping")
        assert message == (
            f'An event source mapping with SQS arn (" {queue} ") and function (" {function} ") '
            "already exists. Please update or delete the existing mapping with UUID "
            f"{first['UUID']}"
        )
    listed = ok(cloud, "lambda", "list-event-source-mappings", "--event-source-arn", queue)
    assert [m["UUID"] for m in listed["EventSourceMappings"]] == [first["UUID"]]
    ok(cloud, "lambda", "delete-event-source-mapping", "--uuid", first["UUID"])


# --- Step Functions -----------------------------------------------------------------------


def lab_state_machine() -> str:
    """EV05's ``workflow-template.json``, as the lab's here-doc writes it."""
    source = LAB_TEXT if LAB_TEXT.is_file() else FIXTURES / "labs" / "ev05.sh"
    text = source.read_text(encoding="utf-8")
    found = re.search(r"^cat > workflow-template\.json <<'JSON'\n(.*?)^JSON$", text, re.S | re.M)
    assert found, f"no workflow-template.json here-doc in {source}"
    return found.group(1)


def finished(cloud: LocalCloud, execution_arn: str) -> dict[str, Any]:
    deadline = time.monotonic() + 60  # a hang guard, not a speed claim
    while True:
        described = ok(
            cloud, "stepfunctions", "describe-execution", "--execution-arn", execution_arn
        )
        if described["status"] != "RUNNING" or time.monotonic() > deadline:
            return dict(described)
        time.sleep(0.2)


def a_state_machine(cloud: LocalCloud, definition: str, name: str) -> str:
    created = ok(
        cloud, "stepfunctions", "create-state-machine", "--name", name, "--type", "STANDARD",
        "--role-arn", "arn:aws:iam::123456789012:role/lab-workflow", "--definition", definition,
    )  # fmt: skip
    return str(created["stateMachineArn"])


def test_the_labs_choice_on_a_missing_quantity_fails_the_execution_with_states_runtime(
    cloud: LocalCloud,
) -> None:
    definition = lab_state_machine().replace("WORKER_NAME", queue_worker(cloud))
    machine = a_state_machine(cloud, definition, "labex-ev05-orders")
    started_execution = ok(
        cloud, "stepfunctions", "start-execution", "--state-machine-arn", machine,
        "--name", "no-quantity", "--input", '{"id":"no-quantity-order"}',
    )  # fmt: skip

    described = finished(cloud, started_execution["executionArn"])

    assert (described["status"], described["error"]) == ("FAILED", "States.Runtime")
    assert described["cause"] == (
        "An error occurred while executing the state 'CheckQuantity' (entered at the event id "
        "#2). Invalid path '$.quantity': The choice state's condition path references an "
        "invalid value."
    )
    history = ok(
        cloud, "stepfunctions", "get-execution-history", "--execution-arn",
        started_execution["executionArn"],
    )  # fmt: skip
    kinds = [event["type"] for event in history["events"]]
    assert kinds[-2:] == ["ChoiceStateEntered", "ExecutionFailed"]
    assert "TaskStateEntered" not in kinds  # nothing was stored


def test_a_failed_execution_shows_error_cause_and_state_in_the_view_and_one_terminal_line(
    cloud: LocalCloud, capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    definition = lab_state_machine().replace("WORKER_NAME", queue_worker(cloud))
    machine = a_state_machine(cloud, definition, "labex-ev05-viewed")
    capfd.readouterr()
    started_execution = ok(
        cloud, "stepfunctions", "start-execution", "--state-machine-arn", machine,
        "--name", "viewed-failure", "--input", '{"id":"viewed-order"}',
    )  # fmt: skip
    assert finished(cloud, started_execution["executionArn"])["status"] == "FAILED"

    shown = next(
        e
        for m in cloud.view_data({})["state_machines"]
        if m["name"] == "labex-ev05-viewed"
        for e in m["executions"]
    )
    assert (shown["error"], shown["failed_state"]) == ("States.Runtime", "CheckQuantity")
    assert "Invalid path '$.quantity'" in shown["cause"]
    with urllib.request.urlopen(f"{cloud.view_url}sections", timeout=30) as page:  # noqa: S310
        html = page.read().decode()
    assert "States.Runtime</span> in state <b>CheckQuantity</b>" in html

    printed = capfd.readouterr()
    said = [line for line in printed.out.splitlines() if "viewed-failure" in line]
    assert said == [
        "[states] labex-ev05-viewed: execution viewed-failure FAILED: States.Runtime: An error "
        "occurred while executing the state 'CheckQuantity' (entered at the event id #2). "
        "Invalid path '$.quantity': The choice state's condition path references an invalid "
        "value."
    ]
    assert "ComparisonVariable" not in printed.out + printed.err  # the parser's internals
    assert not [r for r in caplog.records if r.levelno >= 30 and r.name.startswith("moto")]


def test_order_guards_choice_guards_the_comparison_with_is_present_and_rejects(
    cloud: LocalCloud,
) -> None:
    started_execution = ok(
        cloud, "stepfunctions", "start-execution", "--state-machine-arn",
        str(cloud.outputs["OrdersStateMachineArn"]), "--name", "og-no-quantity",
        "--input", '{"id":"og-no-quantity-order"}',
    )  # fmt: skip

    described = finished(cloud, started_execution["executionArn"])

    assert (described["status"], described["error"]) == ("FAILED", "OrderRejected")


def test_input_that_is_not_json_is_invalid_execution_input(cloud: LocalCloud) -> None:
    machine = str(cloud.outputs["OrdersStateMachineArn"])

    code, operation, message = refused(
        cloud, "stepfunctions", "start-execution", "--state-machine-arn", machine,
        "--name", "not-json", "--input", "{id: 1}",
    )  # fmt: skip

    assert (code, operation) == ("InvalidExecutionInput", "StartExecution")
    assert message.startswith("Invalid State Machine Execution Input: '")


def test_a_taken_state_machine_name_with_another_definition_already_exists(
    cloud: LocalCloud,
) -> None:
    definition = lab_state_machine().replace("WORKER_NAME", queue_worker(cloud))
    first = a_state_machine(cloud, definition, "labex-ev05-taken")

    assert a_state_machine(cloud, definition, "labex-ev05-taken") == first  # the same request
    other = json.dumps({"StartAt": "Done", "States": {"Done": {"Type": "Succeed"}}})
    code, operation, message = refused(
        cloud, "stepfunctions", "create-state-machine", "--name", "labex-ev05-taken",
        "--role-arn", "arn:aws:iam::123456789012:role/lab-workflow", "--definition", other,
    )  # fmt: skip
    assert (code, operation) == ("StateMachineAlreadyExists", "CreateStateMachine")
    assert message == f"State Machine Already Exists: '{first}'"


def test_an_invalid_definition_is_answered_with_its_code(cloud: LocalCloud) -> None:
    code, operation, _ = refused(
        cloud, "stepfunctions", "create-state-machine", "--name", "labex-broken",
        "--role-arn", "arn:aws:iam::123456789012:role/lab-workflow", "--definition", "{}",
    )  # fmt: skip
    assert (code, operation) == ("InvalidDefinition", "CreateStateMachine")


# --- IAM ----------------------------------------------------------------------------------


def a_role(cloud: LocalCloud, name: str, folder: Path) -> str:
    """A role Lambda may assume, made as the labs make theirs; its ARN."""
    trust = folder / f"{name}-trust.json"
    statement = {
        "Effect": "Allow",
        "Principal": {"Service": "lambda.amazonaws.com"},
        "Action": "sts:AssumeRole",
    }
    trust.write_text(json.dumps({"Version": "2012-10-17", "Statement": [statement]}))
    created = ok(
        cloud, "iam", "create-role", "--role-name", name,
        "--assume-role-policy-document", f"file://{trust}",
    )  # fmt: skip
    return str(created["Role"]["Arn"])


def test_deleting_a_role_twice_says_the_role_cannot_be_found(
    cloud: LocalCloud, tmp_path: Path
) -> None:
    a_role(cloud, "labex-twice", tmp_path)
    ok(cloud, "iam", "delete-role", "--role-name", "labex-twice")

    code, operation, message = refused(cloud, "iam", "delete-role", "--role-name", "labex-twice")

    assert (code, operation) == ("NoSuchEntity", "DeleteRole")
    assert message == "The role with name labex-twice cannot be found."


# --- the server: a malformed signature ----------------------------------------------------


@pytest.mark.parametrize(
    ("authorization", "status", "code"),
    [
        ("AWS4-HMAC-SHA256 garbage", 400, "IncompleteSignature"),
        (
            "AWS4-HMAC-SHA256 Credential=localcloud/20261201/xx-nowhere-1/sqs/aws4_request, "
            "SignedHeaders=host, Signature=0",
            403,
            "InvalidSignatureException",
        ),
    ],
)
def test_a_malformed_authorization_header_gets_an_aws_error_not_a_server_error(
    cloud: LocalCloud, authorization: str, status: int, code: str
) -> None:
    request = urllib.request.Request(
        f"{cloud.endpoint_url}/",
        data=b"{}",
        method="POST",
        headers={
            "Authorization": authorization,
            "X-Amz-Target": "AmazonSQS.ListQueues",
            "Content-Type": "application/x-amz-json-1.0",
        },
    )
    with pytest.raises(urllib.error.HTTPError) as answered:
        urllib.request.urlopen(request, timeout=30)  # noqa: S310 - our loopback server

    assert answered.value.code == status
    assert json.loads(answered.value.read())["__type"] == code


# --- Lambda: the package GetFunction links to ---------------------------------------------


def test_get_functions_code_location_downloads_the_package_with_curl(
    cloud: LocalCloud, tmp_path: Path
) -> None:
    package = tmp_path / "function.zip"
    with zipfile.ZipFile(package, "w") as archive:
        archive.writestr("app.py", "def handler(event, context):\n    return event\n")
    ok(
        cloud, "lambda", "create-function", "--function-name", "labex-download",
        "--runtime", "python3.13", "--handler", "app.handler", "--zip-file", f"fileb://{package}",
        "--role", a_role(cloud, "labex-download-worker", tmp_path),
    )  # fmt: skip
    location = ok(cloud, "lambda", "get-function", "--function-name", "labex-download")["Code"][
        "Location"
    ]
    assert location.startswith(f"{cloud.endpoint_url}/")

    downloaded = tmp_path / "downloaded.zip"
    fetched = subprocess.run(  # noqa: S603 - curl, as the learner types it
        [shutil.which("curl") or "curl", "-sSf", "-o", str(downloaded), location],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert fetched.returncode == 0, fetched.stderr
    assert downloaded.read_bytes() == package.read_bytes()

    with zipfile.ZipFile(package, "w") as archive:  # a new package: the old link is stale
        archive.writestr("app.py", "def handler(event, context):\n    return 2\n")
    ok(
        cloud, "lambda", "update-function-code", "--function-name", "labex-download",
        "--zip-file", f"fileb://{package}",
    )  # fmt: skip
    with pytest.raises(urllib.error.HTTPError) as stale:
        urllib.request.urlopen(location, timeout=30)  # noqa: S310 - our loopback server
    assert stale.value.code == 404
