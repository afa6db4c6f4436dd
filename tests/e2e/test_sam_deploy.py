"""The stock ``sam deploy`` against the local server: the built artifact, the stack, the
Outputs (issue 13).

Each test runs the real SAM CLI in a subprocess with ``AWS_ENDPOINT_URL`` pointing at a
fresh server on a free port; the server carries out the change set with its own deployer,
and the functions run from the zip ``sam deploy`` uploaded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localcloud.account import LocalCloud
from localcloud.services.lambda_ import ProcessFunction
from order_guard_tools.project import ROOT
from tests.support.order_guard import started
from tests.support.sam import deploy, outputs, sam


@pytest.fixture(scope="module")
def server() -> Iterator[LocalCloud]:
    # A short local visibility timeout (as `make serve VISIBILITY_TIMEOUT=2`), so that
    # verify's conflicting copy is redriven in seconds.
    with started(server=True, visibility_timeout=2) as running:
        running.start_event_sources()
        yield running


@pytest.fixture(scope="module")
def root_built(server: LocalCloud) -> None:
    """The project itself built by ``sam build`` (``.aws-sam/`` of the checkout), once for
    the tests that deploy it as it is."""
    built = sam(server, "build", wheelhouse=True)
    assert built.returncode == 0, built.stdout + built.stderr


def project_copy(tmp_path: Path) -> Path:
    """The files ``sam build`` and ``sam deploy`` read, in a folder of their own."""
    for name in ("template.yaml", "samconfig.toml"):
        shutil.copy(ROOT / name, tmp_path / name)
    for name in ("src", "statemachine"):
        shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


@pytest.mark.usefixtures("root_built")  # Given the application built by sam build
def test_sam_deploy_creates_the_stack_and_the_queue_worker_runs_from_the_uploaded_zip(
    server: LocalCloud,
) -> None:
    # When sam deploy (default environment, managed bucket) runs against the server
    deployed = deploy(server, "og-deployed", "--resolve-s3")

    # Then it succeeds and prints the stack's Outputs
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    assert "Successfully created/updated stack - og-deployed" in deployed.stdout
    found = outputs(server, "og-deployed")
    assert found["JobsQueueUrl"].endswith(found["JobsQueueArn"].rsplit(":", 1)[1])
    assert found["QueueWorkerFunctionName"].startswith("og-deployed-QueueWorkerFunction-")
    assert found["QueueWorkerFunctionName"] in deployed.stdout
    (stack,) = server.client("cloudformation").describe_stacks(StackName="og-deployed")["Stacks"]
    parameters = {p["ParameterKey"]: p["ParameterValue"] for p in stack["Parameters"]}
    assert parameters["FaultModesEnabled"] == "true"  # samconfig's default environment

    # and the function runs from the extracted zip, not from src/
    (deployment,) = [d for d in server.stacks if d.stack_name == "og-deployed"]
    function = server.function("QueueWorkerFunction", deployment)
    assert isinstance(function, ProcessFunction)
    assert (function.code_uri / "aws_lambda_powertools").is_dir()  # vendored by sam build
    assert not function.code_uri.is_relative_to(ROOT)

    # When a job is sent to the deployed queue
    server.client("sqs").send_message(
        QueueUrl=found["JobsQueueUrl"], MessageBody=json.dumps({"id": "zip-order", "quantity": 4})
    )

    # Then the event source mapping hands it to the zip function, which stores it once
    dynamodb = server.client("dynamodb")
    deadline = time.monotonic() + 60
    items: list[dict[str, Any]] = []
    while time.monotonic() < deadline and not items:
        items = dynamodb.scan(TableName=found["OrdersTableName"])["Items"]
        time.sleep(0.2)
    assert [(i["id"]["S"], i["quantity"]["N"], i["total_cents"]["N"]) for i in items] == [
        ("zip-order", "4", "1100")
    ]
    assert function.invocations >= 1

    # And a second deploy without changes is SAM's "no changes"
    again = deploy(server, "og-deployed", "--resolve-s3")
    assert again.returncode == 1
    assert "No changes to deploy. Stack og-deployed is up to date" in again.stderr


def test_a_dependency_missing_from_the_build_fails_as_import_module_error(
    server: LocalCloud, tmp_path: Path
) -> None:
    # Given a handler that imports a package of the development environment that
    # src/requirements.txt does not list (so src/ itself imports fine here)
    project = project_copy(tmp_path)
    worker = project / "src" / "order_guard" / "queue_worker.py"
    worker.write_text(
        worker.read_text().replace(
            "from __future__ import annotations\n",
            "from __future__ import annotations\n\nimport yaml  # noqa: F401\n",
            1,
        )
    )
    imports = subprocess.run(  # noqa: S603
        [sys.executable, "-c", "import order_guard.queue_worker"],
        env={**os.environ, "PYTHONPATH": str(project / "src")},
        capture_output=True,
        text=True,
        check=False,
    )
    assert imports.returncode == 0, imports.stderr
    built = sam(server, "build", cwd=project, wheelhouse=True)
    assert built.returncode == 0, built.stdout + built.stderr

    # When it is deployed with sam deploy
    deployed = deploy(server, "og-broken", "--resolve-s3", cwd=project)
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr

    # Then the deployed function fails as the Lambda runtime reports it
    response = server.client("lambda").invoke(
        FunctionName=outputs(server, "og-broken")["QueueWorkerFunctionName"],
        Payload=json.dumps({"Records": []}),
    )
    payload = json.loads(response["Payload"].read())
    assert response["FunctionError"] == "Unhandled"
    assert payload["errorType"] == "Runtime.ImportModuleError"
    assert payload["errorMessage"] == (
        "Unable to import module 'order_guard.queue_worker': No module named 'yaml'"
    )


def test_a_resource_the_local_cloud_cannot_create_rolls_the_stack_back_with_its_reason(
    server: LocalCloud, tmp_path: Path
) -> None:
    # Given a template with a resource type the local deployer does not create
    project = project_copy(tmp_path)
    template = project / "template.yaml"
    template.write_text(
        template.read_text().replace(
            "\nResources:\n", "\nResources:\n  ExtraCluster:\n    Type: AWS::ECS::Cluster\n\n", 1
        )
    )

    # When sam deploy runs (the template as it is, no build needed for this failure)
    deployed = deploy(
        server, "og-unsupported", "--resolve-s3", "--template-file", str(template), cwd=project
    )

    # Then the stack is rolled back and the reason is in its events, not a traceback
    assert deployed.returncode == 1
    (stack,) = server.client("cloudformation").describe_stacks(StackName="og-unsupported")["Stacks"]
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE"
    events = server.client("cloudformation").describe_stack_events(StackName="og-unsupported")[
        "StackEvents"
    ]
    failed = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED"]
    assert [(e["LogicalResourceId"], e["ResourceStatusReason"]) for e in failed] == [
        ("ExtraCluster", "ExtraCluster.Type: AWS::ECS::Cluster is not supported locally")
    ]
    # and sam deploy shows them (its table wraps the reason across lines)
    shown = " ".join(deployed.stdout.split())
    assert "CREATE_FAILED AWS::ECS::Cluster ExtraCluster ExtraCluster.Type:" in shown
    assert "ROLLBACK_COMPLETE" in shown
    assert "Waiter StackCreateComplete failed" in deployed.stderr


def test_a_failed_create_is_rolled_back_and_a_new_stack_of_that_name_gets_a_new_table(
    server: LocalCloud, tmp_path: Path
) -> None:
    # Given a template whose queue worker's SQS event has a property the local cloud
    # cannot honour: it fails after the queues, tables, roles and the function exist
    project = project_copy(tmp_path)
    template = project / "template.yaml"
    good = template.read_text()
    broken = good.replace(
        "            BatchSize: !Ref BatchSize\n",
        "            BatchSize: !Ref BatchSize\n"
        "            ScalingConfig:\n              MaximumConcurrency: 2\n",
        1,
    )
    assert broken != good
    template.write_text(broken)
    cloudformation, dynamodb = server.client("cloudformation"), server.client("dynamodb")
    tables_before = set(dynamodb.list_tables()["TableNames"])
    functions_before = {
        f["FunctionName"] for f in server.client("lambda").list_functions()["Functions"]
    }

    # When sam deploy creates the stack
    failed = deploy(
        server, "og-rollback", "--resolve-s3", "--template-file", str(template), cwd=project
    )

    # Then the function's event is CREATE_FAILED with the reason, and the rollback deletes
    # every resource created before it, except the orders table (DeletionPolicy Retain)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    (stack,) = cloudformation.describe_stacks(StackName="og-rollback")["Stacks"]
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE"
    events = cloudformation.describe_stack_events(StackName="og-rollback")["StackEvents"]
    statuses = {(e["LogicalResourceId"], e["ResourceStatus"]) for e in events}
    assert [
        (e["LogicalResourceId"], e["ResourceStatusReason"])
        for e in events
        if e["ResourceStatus"] == "CREATE_FAILED"
    ] == [
        (
            "QueueWorkerFunctionJobs",
            # after the SAM transform, as CloudFormation names it: the event's mapping
            "QueueWorkerFunctionJobs.ScalingConfig: "
            "AWS::Lambda::EventSourceMapping property not supported locally",
        )
    ]
    for logical_id in ("JobsQueue", "AttemptsTable", "QueueWorkerRole", "QueueWorkerFunction"):
        assert (logical_id, "CREATE_COMPLETE") in statuses
        assert (logical_id, "DELETE_COMPLETE") in statuses
    assert ("OrdersTable", "DELETE_SKIPPED") in statuses
    for logical_id, status in statuses:  # whatever was made before the failure is gone
        if status == "CREATE_COMPLETE" and logical_id != "OrdersTable":
            assert (logical_id, "DELETE_COMPLETE") in statuses, logical_id
    created_tables = set(dynamodb.list_tables()["TableNames"]) - tables_before
    (retained,) = created_tables
    assert retained.startswith("og-rollback-OrdersTable-")
    functions_after = {
        f["FunctionName"] for f in server.client("lambda").list_functions()["Functions"]
    }
    assert functions_after == functions_before
    assert not [
        q for q in server.client("sqs").list_queues().get("QueueUrls", []) if "og-rollback" in q
    ]
    shown = " ".join(failed.stdout.split())
    assert "DELETE_SKIPPED AWS::DynamoDB::Table OrdersTable" in shown

    # When sam deploy runs again with the template fixed
    template.write_text(good)
    again = deploy(
        server, "og-rollback", "--resolve-s3", "--template-file", str(template), cwd=project
    )

    # Then, as on AWS, a stack whose creation rolled back cannot be updated: delete it first
    assert again.returncode == 1
    assert "is in ROLLBACK_COMPLETE state and can not be updated" in again.stderr
    deleted = sam(server, "delete", "--stack-name", "og-rollback", "--no-prompts", cwd=project)
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr

    # and then the stack is created, with an orders table of its own: the retained one
    # keeps its name and its items outside any stack
    created = deploy(
        server, "og-rollback", "--resolve-s3", "--template-file", str(template), cwd=project
    )
    assert created.returncode == 0, created.stdout + created.stderr
    found = outputs(server, "og-rollback")
    assert found["OrdersTableName"].startswith("og-rollback-OrdersTable-")
    assert found["OrdersTableName"] != retained
    assert retained in dynamodb.list_tables()["TableNames"]
    deleted = sam(server, "delete", "--stack-name", "og-rollback", "--no-prompts", cwd=project)
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr


def wait_for(check: Any, timeout_s: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.3)
    raise AssertionError(f"nothing after {timeout_s} s")


def test_a_redeploy_updates_the_stack_and_sam_delete_keeps_the_orders_table(
    server: LocalCloud, tmp_path: Path
) -> None:
    # Given the stack built and deployed from a copy of the project
    project = project_copy(tmp_path)
    assert sam(server, "build", cwd=project, wheelhouse=True).returncode == 0
    created = deploy(server, "og-cycle", "--resolve-s3", cwd=project)
    assert created.returncode == 0, created.stdout + created.stderr
    found = outputs(server, "og-cycle")

    # When verify runs the seed scenarios against its Outputs
    assert server.endpoint_url is not None
    verified = subprocess.run(  # noqa: S603 - this project's own CLI
        [sys.executable, "-m", "order_guard_tools", "verify", "--endpoint-url", server.endpoint_url]
        + ["--stack-name", "og-cycle"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )

    # Then every check passes
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert re.search(r"\b[1-9]\d* ✓, 0 ✗ in ", verified.stdout), verified.stdout

    # Given an order stored by the first deployment
    sqs, dynamodb = server.client("sqs"), server.client("dynamodb")
    sqs.send_message(
        QueueUrl=found["JobsQueueUrl"], MessageBody=json.dumps({"id": "kept-order", "quantity": 1})
    )
    wait_for(
        lambda: dynamodb.get_item(
            TableName=found["OrdersTableName"], Key={"id": {"S": "kept-order"}}
        ).get("Item")
    )

    # When the handler's code and a parameter change and sam deploy runs again
    worker = project / "src" / "order_guard" / "queue_worker.py"
    source = worker.read_text()
    assert source.count("processed=processed,") == 1  # the edit below changes the code
    worker.write_text(
        source.replace("processed=processed,", 'processed=processed, marker="redeployed-v2",')
    )
    assert sam(server, "build", cwd=project, wheelhouse=True).returncode == 0
    updated = deploy(
        server,
        "og-cycle",
        "--resolve-s3",
        "--parameter-overrides",
        "FaultModesEnabled=true BatchSize=5 MaxReceiveCount=4",
        cwd=project,
    )

    # Then the change set lists what changed (the code, the users of BatchSize and
    # MaxReceiveCount), not the unchanged tables and dead-letter queue
    assert updated.returncode == 0, updated.stdout + updated.stderr
    table = updated.stdout.split("CloudFormation stack changeset")[1].split("Changeset created")[0]
    listed = {line.split()[2] for line in table.splitlines() if line.startswith("* Modify")}
    assert {"QueueWorkerFunction", "JobsQueue"} <= listed, table  # (the table wraps longer ids)
    assert not {"OrdersTable", "JobsDeadLetterQueue", "AttemptsTable"} & listed, table

    # and the stack is updated in place: same Outputs, the order still stored
    assert "Successfully created/updated stack - og-cycle" in updated.stdout
    (stack,) = server.client("cloudformation").describe_stacks(StackName="og-cycle")["Stacks"]
    assert stack["StackStatus"] == "UPDATE_COMPLETE"
    assert outputs(server, "og-cycle") == found
    assert dynamodb.get_item(
        TableName=found["OrdersTableName"], Key={"id": {"S": "kept-order"}}
    ).get("Item")
    lambda_client = server.client("lambda")
    (mapping,) = [
        m
        for m in lambda_client.list_event_source_mappings()["EventSourceMappings"]
        if m["FunctionArn"].endswith(f":function:{found['QueueWorkerFunctionName']}")
    ]
    assert mapping["BatchSize"] == 5

    # and the new code runs: its marker is in the function's log lines
    sqs.send_message(
        QueueUrl=found["JobsQueueUrl"], MessageBody=json.dumps({"id": "new-order", "quantity": 2})
    )
    logs = server.client("logs")
    wait_for(
        lambda: logs.filter_log_events(
            logGroupName=found["QueueWorkerLogGroupName"], filterPattern='"redeployed-v2"'
        )["events"]
    )
    shown = sam(
        server, "logs", "-n", "QueueWorkerFunction", "--stack-name", "og-cycle", cwd=project
    )
    assert shown.returncode == 0, shown.stderr
    assert "redeployed-v2" in shown.stdout
    listed = sam(server, "list", "resources", "--stack-name", "og-cycle", "--output", "json")
    assert listed.returncode == 0, listed.stderr
    physical = {r["LogicalResourceId"]: r["PhysicalResourceId"] for r in json.loads(listed.stdout)}
    assert physical["OrdersTable"] == found["OrdersTableName"]
    assert physical["QueueWorkerFunction"] == found["QueueWorkerFunctionName"]

    # When an update fails: the built template's SQS event gets a property the local
    # cloud cannot honour, so the queue worker fails after the update deleted the old one
    built = project / ".aws-sam" / "build" / "template.yaml"
    good = built.read_text()
    built.write_text(
        good.replace(
            "            BatchSize:\n              Ref: BatchSize\n",
            "            BatchSize:\n              Ref: BatchSize\n"
            "            ScalingConfig:\n              MaximumConcurrency: 2\n",
            1,
        )
    )
    assert built.read_text() != good
    failed = deploy(
        server,
        "og-cycle",
        "--resolve-s3",
        "--parameter-overrides",
        "FaultModesEnabled=true BatchSize=4 MaxReceiveCount=5",
        cwd=project,
    )

    # Then the update is rolled back: the previous template runs again, data intact
    assert failed.returncode == 1, failed.stdout + failed.stderr
    shown = " ".join(failed.stdout.split())
    assert "UPDATE_FAILED AWS::Lambda::EventSour" in shown  # SAM's table wraps at 24
    events = server.client("cloudformation").describe_stack_events(StackName="og-cycle")[
        "StackEvents"
    ]
    assert [
        (e["LogicalResourceId"], e["ResourceType"], e["ResourceStatusReason"])
        for e in events
        if e["ResourceStatus"] == "UPDATE_FAILED"
    ] == [
        (
            "QueueWorkerFunctionJobs",
            "AWS::Lambda::EventSourceMapping",
            # after the SAM transform, as CloudFormation names it: the event's mapping
            "QueueWorkerFunctionJobs.ScalingConfig: "
            "AWS::Lambda::EventSourceMapping property not supported locally",
        )
    ]
    (stack,) = server.client("cloudformation").describe_stacks(StackName="og-cycle")["Stacks"]
    assert stack["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    assert outputs(server, "og-cycle") == found
    assert dynamodb.get_item(
        TableName=found["OrdersTableName"], Key={"id": {"S": "new-order"}}
    ).get("Item")
    (mapping,) = [
        m
        for m in lambda_client.list_event_source_mappings()["EventSourceMappings"]
        if m["FunctionArn"].endswith(f":function:{found['QueueWorkerFunctionName']}")
    ]
    assert mapping["BatchSize"] == 5  # the previous parameters, not the failed update's
    sqs.send_message(
        QueueUrl=found["JobsQueueUrl"],
        MessageBody=json.dumps({"id": "after-rollback", "quantity": 3}),
    )
    wait_for(
        lambda: dynamodb.get_item(
            TableName=found["OrdersTableName"], Key={"id": {"S": "after-rollback"}}
        ).get("Item")
    )
    built.write_text(good)

    # When sam delete removes the stack
    deleted = sam(server, "delete", "--stack-name", "og-cycle", "--no-prompts", cwd=project)

    # Then the stack and its resources are gone, except the orders table (Retain)
    assert deleted.returncode == 0, deleted.stdout + deleted.stderr
    assert "Deleted successfully" in deleted.stdout
    names = [s["StackName"] for s in server.client("cloudformation").describe_stacks()["Stacks"]]
    assert "og-cycle" not in names
    tables = dynamodb.list_tables()["TableNames"]
    assert found["OrdersTableName"] in tables
    assert found["AttemptsTableName"] not in tables
    assert dynamodb.get_item(
        TableName=found["OrdersTableName"], Key={"id": {"S": "kept-order"}}
    ).get("Item")
    functions = [f["FunctionName"] for f in lambda_client.list_functions()["Functions"]]
    assert found["QueueWorkerFunctionName"] not in functions
    assert found["JobsQueueUrl"] not in sqs.list_queues().get("QueueUrls", [])
    assert not [d for d in server.stacks if d.stack_name == "og-cycle"]


@pytest.mark.usefixtures("root_built")
def test_a_bare_sam_deploy_updates_the_servers_own_stack_to_run_from_the_zip(
    server: LocalCloud,
) -> None:
    # Given the server's own stack, deployed from source under samconfig's stack_name
    assert server.stack_name == "order-guard"
    before = server.function("QueueWorkerFunction")
    assert isinstance(before, ProcessFunction)  # a served account's functions: processes
    assert not before.owns_code  # whose task root is the source folder
    served = dict(server.outputs)

    # When sam deploy runs with samconfig's defaults (no --stack-name)
    deployed = sam(server, "deploy", "--no-confirm-changeset")

    # Then it is an update of that stack: same Outputs, the functions now from the zip
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    assert "Successfully created/updated stack - order-guard" in deployed.stdout
    (stack,) = server.client("cloudformation").describe_stacks(StackName="order-guard")["Stacks"]
    assert stack["StackStatus"] == "UPDATE_COMPLETE"
    assert outputs(server, "order-guard") == served
    after = server.function("QueueWorkerFunction")
    assert isinstance(after, ProcessFunction)
    assert after.owns_code  # the extracted zip
    assert after.code_uri != before.code_uri
