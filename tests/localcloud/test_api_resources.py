"""Everything in one account (issue 19, part 5): a function, an event source mapping and a
state machine made through the plain AWS APIs run as the template's do."""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Callable

import pytest
from botocore.exceptions import ClientError

from localcloud.account import LocalCloud
from localcloud.lambda_runtime import WorkerFunction, lookup

ROLE = "arn:aws:iam::123456789012:role/api-made"


def package(source: str) -> bytes:
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("app.py", source)
    return archive.getvalue()


HANDLER = (
    "import json\n"
    "SEEN = []\n"
    "def handler(event, context):\n"
    "    SEEN.append(event)\n"
    "    print(json.dumps({'message': 'handled', 'seen': len(SEEN)}))\n"
    "    return {'doubled': event.get('n', 0) * 2, 'seen': len(SEEN)}\n"
)


@pytest.fixture
def cloud(make_cloud: Callable[..., LocalCloud]) -> LocalCloud:
    """A local cloud with the role the API-made resources use (Lambda checks it exists)."""
    cloud = make_cloud(visibility_timeout=1)
    trust = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"Service": ["lambda.amazonaws.com", "states.amazonaws.com"]},
                "Action": "sts:AssumeRole",
            }
        ],
    }
    cloud.client("iam").create_role(RoleName="api-made", AssumeRolePolicyDocument=json.dumps(trust))
    return cloud


def create(cloud: LocalCloud, name: str) -> str:
    created = cloud.client("lambda").create_function(
        FunctionName=name,
        Runtime="python3.13",
        Role=ROLE,
        Handler="app.handler",
        Code={"ZipFile": package(HANDLER)},
        Timeout=5,
    )
    return str(created["FunctionArn"])


def test_a_function_created_through_the_api_runs_its_zip_until_it_is_deleted(
    cloud: LocalCloud,
) -> None:
    lam = cloud.client("lambda")
    create(cloud, "api-made")

    first = json.loads(lam.invoke(FunctionName="api-made", Payload=b'{"n": 21}')["Payload"].read())
    second = json.loads(lam.invoke(FunctionName="api-made", Payload=b'{"n": 1}')["Payload"].read())

    assert first == {"doubled": 42, "seen": 1}
    assert second == {"doubled": 2, "seen": 2}  # one warm execution environment
    assert isinstance(lookup("api-made"), WorkerFunction)

    lam.delete_function(FunctionName="api-made")
    with pytest.raises(ClientError, match="ResourceNotFoundException"):
        lam.invoke(FunctionName="api-made", Payload=b"{}")
    with pytest.raises(KeyError):
        lookup("api-made")


def test_a_state_machine_created_through_the_api_invokes_an_api_made_function(
    cloud: LocalCloud,
) -> None:
    arn = create(cloud, "api-task")
    definition = {
        "StartAt": "Double",
        "States": {
            "Double": {
                "Type": "Task",
                "Resource": "arn:aws:states:::lambda:invoke",
                "Parameters": {"FunctionName": arn, "Payload.$": "$"},
                "OutputPath": "$.Payload",
                "End": True,
            }
        },
    }
    sfn = cloud.client("stepfunctions")
    machine = sfn.create_state_machine(
        name="api-flow", definition=json.dumps(definition), roleArn=ROLE
    )["stateMachineArn"]

    execution = sfn.start_execution(stateMachineArn=machine, input='{"n": 5}')["executionArn"]
    deadline = time.monotonic() + 30
    while (described := sfn.describe_execution(executionArn=execution))["status"] == "RUNNING":
        assert time.monotonic() < deadline, "the execution did not finish"
        time.sleep(0.1)

    assert described["status"] == "SUCCEEDED", described
    assert json.loads(described["output"]) == {"doubled": 10, "seen": 1}
