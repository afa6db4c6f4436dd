"""The seed labs' own CLI steps behave on the local cloud as they would on AWS.

Each step is the AWS CLI call the lab makes, sent through boto3 (the CLI is a thin layer
over the same API), against a local cloud deployed from template.yaml.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import socket
import time
import zipfile
from collections.abc import Callable
from typing import Any

import jmespath
import jq
import pytest
from botocore.exceptions import ClientError

from localcloud.account import LocalCloud
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.services.lambda_ import ProcessFunction, access_key_for, lookup
from localcloud.state import log_messages, queue_depth
from order_guard_tools import cli, commands
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.project import ROOT, SAMCONFIG_PATH
from order_guard_tools.reads import dead_letters, scan_ids
from tests.support.aws import free_port
from tests.support.order_guard import started


@pytest.fixture
def cloud(make_cloud: Callable[..., LocalCloud]) -> LocalCloud:
    return make_cloud(visibility_timeout=1)


def send(cloud: LocalCloud, *orders: tuple[str, int]) -> None:
    sqs = cloud.client("sqs")
    for order_id, quantity in orders:
        sqs.send_message(
            QueueUrl=cloud.outputs["JobsQueueUrl"],
            MessageBody=json.dumps({"id": order_id, "quantity": quantity}),
        )


def the_mapping(cloud: LocalCloud) -> dict[str, Any]:
    (mapping,) = cloud.client("lambda").list_event_source_mappings(
        EventSourceArn=cloud.outputs["JobsQueueArn"]
    )["EventSourceMappings"]
    return dict(mapping)


# --- 1. one emulated event source mapping, whoever creates it ---------------------------


def test_the_templates_mapping_is_listed_with_source_function_batch_size_and_state(
    cloud: LocalCloud,
) -> None:
    mapping = the_mapping(cloud)
    assert mapping["EventSourceArn"] == cloud.outputs["JobsQueueArn"]
    assert mapping["FunctionArn"].endswith(cloud.outputs["QueueWorkerFunctionName"])
    assert (mapping["BatchSize"], mapping["State"]) == (10, "Enabled")
    assert mapping["FunctionResponseTypes"] == ["ReportBatchItemFailures"]


def test_a_disabled_mapping_leaves_the_queue_alone_until_enabled_again(cloud: LocalCloud) -> None:
    lam = cloud.client("lambda")
    uuid = the_mapping(cloud)["UUID"]
    lam.update_event_source_mapping(UUID=uuid, Enabled=False)
    send(cloud, ("paused-order", 1))

    assert cloud.event_source.poll_once().invocation is None
    assert queue_depth(cloud, cloud.outputs["JobsQueueUrl"]) == (1, 0)

    lam.update_event_source_mapping(UUID=uuid, Enabled=True)
    cloud.drain(timeout_s=30)
    assert scan_ids(cloud, ["paused-order"]) == {"paused-order": (1, 350)}


def test_a_batch_size_update_applies_from_the_next_poll(cloud: LocalCloud) -> None:
    cloud.client("lambda").update_event_source_mapping(UUID=the_mapping(cloud)["UUID"], BatchSize=1)
    send(cloud, ("one-a", 1), ("one-b", 2), ("one-c", 3))

    outcomes = cloud.drain(timeout_s=30)

    assert [len(outcome.records) for outcome in outcomes] == [1, 1, 1]


def test_a_batch_size_over_ten_needs_a_batching_window_as_on_aws(cloud: LocalCloud) -> None:
    lam = cloud.client("lambda")
    with pytest.raises(ClientError, match="Maximum batch window"):
        lam.update_event_source_mapping(UUID=the_mapping(cloud)["UUID"], BatchSize=20)


def test_a_mapping_created_through_the_api_never_acknowledges_a_conflict(
    cloud: LocalCloud,
) -> None:
    """The lab's own create-event-source-mapping step, after deleting the template's:
    the new mapping is the local cloud's (partial batch responses honoured), not moto's
    trigger, so a conflicting copy is listed on every receive and ends in the DLQ."""
    lam = cloud.client("lambda")
    lam.delete_event_source_mapping(UUID=the_mapping(cloud)["UUID"])
    created = lam.create_event_source_mapping(
        FunctionName=cloud.outputs["QueueWorkerFunctionName"],
        EventSourceArn=cloud.outputs["JobsQueueArn"],
        BatchSize=5,
        FunctionResponseTypes=["ReportBatchItemFailures"],
    )
    send(cloud, ("lab-order", 4))
    cloud.drain(timeout_s=30)
    send(cloud, ("lab-order", 5))  # the conflicting copy

    cloud.drain(timeout_s=60)

    assert the_mapping(cloud)["UUID"] == created["UUID"]
    assert scan_ids(cloud, ["lab-order"]) == {"lab-order": (4, 1100)}
    assert dead_letters(cloud, ["lab-order"]) == [json.dumps({"id": "lab-order", "quantity": 5})]


def test_a_deleted_mapping_polls_no_more(cloud: LocalCloud) -> None:
    cloud.client("lambda").delete_event_source_mapping(UUID=the_mapping(cloud)["UUID"])
    send(cloud, ("orphan-order", 1))

    assert cloud.event_source.poll_once().invocation is None
    assert cloud.event_source.deleted
    assert queue_depth(cloud, cloud.outputs["JobsQueueUrl"]) == (1, 0)


# --- 2. the control plane does what it says, or refuses --------------------------------


def test_update_function_code_runs_the_uploaded_package_from_the_next_invocation(
    cloud: LocalCloud,
) -> None:
    """Issue 19: a function updated through the Lambda API runs its code (it was refused:
    "cannot run an uploaded package")."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr(
            "order_guard/queue_worker.py",
            "def lambda_handler(event, context):\n"
            "    print('the uploaded handler')\n"
            "    return {'batchItemFailures': [], 'uploaded': True}\n",
        )
    lam = cloud.client("lambda")
    name = cloud.outputs["QueueWorkerFunctionName"]
    updated = lam.update_function_code(FunctionName=name, ZipFile=archive.getvalue())
    digest = base64.b64encode(hashlib.sha256(archive.getvalue()).digest()).decode()
    assert updated["CodeSha256"] == digest  # AWS's: base64 of the zip's SHA-256

    answer = json.loads(lam.invoke(FunctionName=name, Payload=b'{"Records": []}')["Payload"].read())

    assert answer == {"batchItemFailures": [], "uploaded": True}
    assert isinstance(lookup(name), ProcessFunction)  # its own interpreter, as on Lambda


def test_update_function_configuration_takes_effect_in_a_new_execution_environment(
    cloud: LocalCloud,
) -> None:
    lam = cloud.client("lambda")
    name = cloud.outputs["WorkflowWorkerFunctionName"]
    variables = lam.get_function_configuration(FunctionName=name)["Environment"]["Variables"]
    worker = cloud.function("WorkflowWorkerFunction")
    worker.invoke({"id": "before-update", "quantity": 1, "mode": "flaky"})  # a warm module

    lam.update_function_configuration(
        FunctionName=name,
        Timeout=7,
        Environment={"Variables": {**variables, "FAULT_MODES_ENABLED": "false"}},
    )
    after = worker.invoke({"id": "after-update", "quantity": 1, "mode": "flaky"})

    assert after.error_type == "InvalidOrder"  # the new FAULT_MODES_ENABLED, read at cold start
    assert worker.timeout_s == 7
    assert worker.environment["AWS_ACCESS_KEY_ID"] == access_key_for(worker.name)  # its own


@pytest.mark.parametrize(
    ("update", "message"),
    [
        ({"Handler": "other.handler"}, "cannot apply Handler"),
        ({"Environment": {"Variables": {"AWS_REGION": "eu-west-1"}}}, "reserved keys"),
    ],
)
def test_configuration_the_local_cloud_cannot_honour_is_refused(
    cloud: LocalCloud, update: dict[str, Any], message: str
) -> None:
    with pytest.raises(ClientError, match=message):
        cloud.client("lambda").update_function_configuration(
            FunctionName=cloud.outputs["QueueWorkerFunctionName"], **update
        )


def test_a_reserved_variable_in_the_template_fails_the_deploy(tmp_path: Any) -> None:
    from localcloud.cloudformation.template import load

    text = (ROOT / "template.yaml").read_text()
    edited = text.replace(
        "        POWERTOOLS_LOG_LEVEL: INFO\n",
        "        POWERTOOLS_LOG_LEVEL: INFO\n        AWS_REGION: eu-west-1\n",
    )
    path = tmp_path / "template.yaml"
    path.write_text(edited)
    with (
        pytest.raises(UnsupportedTemplate, match=r"Variables\.AWS_REGION: AWS_REGION reserved"),
        OrderGuardCloud(template=load(path, samconfig=SAMCONFIG_PATH)),
    ):
        pass


def test_a_deleted_log_group_loses_lines_never_a_message(
    cloud: LocalCloud, capsys: pytest.CaptureFixture[str]
) -> None:
    cloud.client("logs").delete_log_group(logGroupName=cloud.outputs["QueueWorkerLogGroupName"])
    send(cloud, ("unlogged-order", 2), ("unlogged-other", 3))

    cloud.drain(timeout_s=30)

    assert scan_ids(cloud, ["unlogged-order", "unlogged-other"]) == {
        "unlogged-order": (2, 600),
        "unlogged-other": (3, 850),
    }
    assert dead_letters(cloud, ["unlogged-order", "unlogged-other"]) == []
    assert capsys.readouterr().out.count("does not exist: this function's log lines") == 1


def test_the_stack_shows_its_parameters_and_every_resource_with_its_physical_id(
    cloud: LocalCloud,
) -> None:
    cloudformation = cloud.client("cloudformation")
    (stack,) = cloudformation.describe_stacks(StackName="order-guard")["Stacks"]
    parameters = {p["ParameterKey"]: p["ParameterValue"] for p in stack["Parameters"]}
    assert parameters == dict(cloud.template.parameters)
    resources = {
        r["LogicalResourceId"]: (r["PhysicalResourceId"], r["ResourceType"])
        for r in cloudformation.describe_stack_resources(StackName="order-guard")["StackResources"]
    }
    assert resources["OrdersTable"] == (cloud.outputs["OrdersTableName"], "AWS::DynamoDB::Table")
    assert resources["QueueWorkerFunction"] == (
        cloud.outputs["QueueWorkerFunctionName"],
        "AWS::Lambda::Function",
    )
    assert resources["QueueWorkerFunctionJobs"] == (
        the_mapping(cloud)["UUID"],
        "AWS::Lambda::EventSourceMapping",
    )
    assert set(cloud.template.resources) <= set(resources)
    summaries = cloudformation.list_stack_resources(StackName="order-guard")
    assert len(summaries["StackResourceSummaries"]) == len(resources)


def test_a_deleted_queue_is_reported_once_and_the_server_keeps_serving(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with started(server=True) as server:
        server.start_event_sources(idle_wait_seconds=0.1)
        server.client("sqs").delete_queue(QueueUrl=server.outputs["JobsQueueUrl"])
        time.sleep(3)
        tables = server.client("dynamodb").list_tables()["TableNames"]
    assert server.outputs["OrdersTableName"] in tables
    assert capsys.readouterr().out.count("does not exist (deleted?)") == 1


# --- 3. the server starts, stops and fails like a tool ---------------------------------


def test_serve_on_a_busy_port_exits_at_once_naming_another_port(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """At once: the port is found busy before anything is deployed."""

    def deploy(**_: object) -> None:
        raise AssertionError("the application was deployed before the port was checked")

    monkeypatch.setattr(commands, "OrderGuardCloud", deploy)
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        assert cli.main(["serve", "--port", str(port)]) == 2
    assert f"make serve PORT={port + 1}" in capsys.readouterr().out


def test_verify_without_a_server_says_so_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["verify", "--endpoint-url", f"http://127.0.0.1:{free_port()}"]) == 2
    error = [line for line in capsys.readouterr().out.splitlines() if line.startswith("error")]
    assert len(error) == 1
    assert "start the local cloud with `make serve`" in error[0]


def test_invoke_with_a_missing_event_file_says_so_in_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert cli.main(["invoke", "QueueWorkerFunction", "-e", "events/no-such.json"]) == 2
    assert capsys.readouterr().out.strip() == (
        "error: event file events/no-such.json: No such file or directory"
    )


# --- 4. the labs' read-outs --------------------------------------------------------------

# The read-out in docs/local-cloud.md, verbatim ("Read the write decisions").
FILTER_PATTERN = '{ $.message = "RESULT" }'
CLI_QUERY = "events[].message"
JQ_PROGRAM = '.[] | fromjson | "RESULT \\(.stage) \\(.decision // .outcome) \\(.id)"'


def test_the_docs_show_the_read_out_these_tests_run() -> None:
    page = (ROOT / "docs" / "local-cloud.md").read_text()
    for text in (FILTER_PATTERN, CLI_QUERY, JQ_PROGRAM):
        assert text in page


def test_the_cli_and_jq_read_out_prints_one_result_line_per_invocation(cloud: LocalCloud) -> None:
    send(cloud, ("read-out", 4), ("read-out", 4))
    cloud.drain(timeout_s=30)
    worker = cloud.function("WorkflowWorkerFunction")
    worker.invoke({"id": "read-out", "quantity": 4})
    worker.invoke({"stage": "summary", "id": "read-out"})

    printed = []
    for group in ("QueueWorkerLogGroupName", "WorkflowWorkerLogGroupName"):
        page = cloud.client("logs").filter_log_events(
            logGroupName=cloud.outputs[group], filterPattern=FILTER_PATTERN
        )
        messages = jmespath.search(CLI_QUERY, page)  # what --query gives jq
        printed += jq.compile(JQ_PROGRAM).input_value(messages).all()

    assert printed == [
        "RESULT queue accepted read-out",
        "RESULT queue duplicate read-out",
        "RESULT store duplicate read-out",
        "RESULT summary found read-out",
    ]
    assert all(
        json.loads(message)["message"] == "RESULT"
        for message in log_messages(cloud, cloud.outputs["QueueWorkerLogGroupName"], 0, '"RESULT"')
    )
