"""The seed labs' machines and a learner's moves on them, through boto3 (the AWS CLI is a
thin layer over the same API): a lab's account in-process, its named checks as
``lab-check`` judges them, and the lab's own steps (its queue and mapping, its workflow
role and state machine from the ASL its command sequence holds, an upload)."""

from __future__ import annotations

import io
import json
import re
import zipfile
from collections.abc import Callable
from typing import Any

from localcloud.state import run_execution
from order_guard_tools.cloud import OrderGuardCloud
from order_guard_tools.labs import EV05, Q05, Lab, provision
from order_guard_tools.labs.check import gather, judge
from order_guard_tools.labs.evidence import Check
from order_guard_tools.project import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "labs"
"""Each lab's command sequence (``<lab>.sh``) and the protected workers written for the
tests (``<lab>_protected.py``)."""


def lab_account(make_cloud: Callable[..., OrderGuardCloud], lab: Lab) -> OrderGuardCloud:
    """A lab's machine in-process, as ``make lab`` provisions it, and nothing else."""
    cloud = make_cloud(template=None, lab=lab.name)
    provision(lab, cloud.client)
    cloud.remember_resources()
    return cloud


def checks(cloud: OrderGuardCloud) -> dict[str, Check]:
    """The lab's named checks now, by name, in the lab's order."""
    return {check.name: check for check in judge(gather(cloud.view_data), cloud.client)}


def package(files: dict[str, str]) -> bytes:
    """A deployment package holding ``files`` (name → text)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return buffer.getvalue()


def upload(cloud: OrderGuardCloud, lab: Lab, files: dict[str, str] | None = None) -> None:
    """``update-function-code`` of the lab's worker: ``files``, by default the protected
    worker written for the tests as ``app.py``."""
    if files is None:
        files = {"app.py": (FIXTURES / f"{lab.name}_protected.py").read_text(encoding="utf-8")}
    cloud.client("lambda").update_function_code(FunctionName=lab.function, ZipFile=package(files))


def connect_q05(cloud: OrderGuardCloud, *, batch_size: int = 1) -> str:
    """Q05's first step: the queue and its mapping to the worker; the queue's URL."""
    sqs = cloud.client("sqs")
    url: str = sqs.create_queue(QueueName="labex-q05-jobs", Attributes={"VisibilityTimeout": "30"})[
        "QueueUrl"
    ]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    cloud.client("lambda").create_event_source_mapping(
        FunctionName=Q05.function, EventSourceArn=arn, BatchSize=batch_size, Enabled=True
    )
    return url


def send_q05(cloud: OrderGuardCloud, url: str, *bodies: str) -> None:
    """Send each body, one after the other as the learner does, each processed before the
    next is sent."""
    for body in bodies:
        cloud.client("sqs").send_message(QueueUrl=url, MessageBody=body)
        cloud.drain(timeout_s=60)


def ev05_definition() -> dict[str, Any]:
    """The lab's ASL (the ``workflow-template.json`` heredoc of ``ev05.sh``, as the lab
    prints it), with the worker's name put in as its ``jq`` line does."""
    script = (FIXTURES / "ev05.sh").read_text(encoding="utf-8")
    found = re.search(r"cat > workflow-template\.json <<'JSON'\n(.*?)\nJSON\n", script, re.S)
    assert found, "ev05.sh has no workflow-template.json heredoc"
    definition: dict[str, Any] = json.loads(found.group(1))
    for state in ("StoreOrder", "ReadSummary"):
        definition["States"][state]["Parameters"]["FunctionName"] = EV05.function
    return definition


def create_ev05_workflow(cloud: OrderGuardCloud, definition: dict[str, Any] | None = None) -> str:
    """EV05's workflow step: the role (trusting Step Functions, invoking the worker) and the
    state machine ``labex-ev05-orders`` of ``definition`` (default: the lab's); its ARN."""
    iam = cloud.client("iam")
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": "states.amazonaws.com"},
                "Action": "sts:AssumeRole",
            }
        ],
    }
    role = iam.create_role(
        RoleName="labex-ev05-workflow-role", AssumeRolePolicyDocument=json.dumps(trust)
    )["Role"]["Arn"]
    worker = cloud.client("lambda").get_function_configuration(FunctionName=EV05.function)
    invoke = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": "lambda:InvokeFunction",
                "Resource": worker["FunctionArn"],
            }
        ],
    }
    iam.put_role_policy(
        RoleName="labex-ev05-workflow-role",
        PolicyName="InvokeWorker",
        PolicyDocument=json.dumps(invoke),
    )
    arn: str = cloud.client("stepfunctions").create_state_machine(
        name="labex-ev05-orders",
        type="STANDARD",
        roleArn=role,
        definition=json.dumps(definition or ev05_definition()),
    )["stateMachineArn"]
    return arn


def run_ev05(cloud: OrderGuardCloud, machine: str, name: str) -> str:
    """One of the step's executions (``after-write-order``, ``repeated-order``,
    ``different-order``) with the lab's input, to its end; its status."""
    orders = {
        "after-write-order": {"id": "protected-order", "quantity": 4, "mode": "after-write"},
        "repeated-order": {"id": "protected-order", "quantity": 4, "mode": "after-write"},
        "different-order": {"id": "different-order", "quantity": 1, "mode": "normal"},
    }
    described, _ = run_execution(cloud, machine, name, orders[name], timeout_s=120)
    cloud.view_data({})  # an open AWS View reads it, and keeps it after a cleanup
    return str(described["status"])
