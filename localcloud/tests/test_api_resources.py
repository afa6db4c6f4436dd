"""Everything in one account (issue 19, part 5): a function, an event source mapping and a
state machine made through the plain AWS APIs run as the template's do."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import time
import zipfile
from collections.abc import Callable

import pytest
from botocore.exceptions import ClientError

from localcloud.account import LocalCloud
from localcloud.services.lambda_ import ProcessFunction, lookup

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
    assert isinstance(lookup("api-made"), ProcessFunction)

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


@pytest.mark.parametrize(
    ("files", "error_type"),
    [
        ({"other.py": HANDLER}, "Runtime.ImportModuleError"),  # no app.py in the zip
        ({"app.py": "def handler(event, context)\n    return 1\n"}, "Runtime.UserCodeSyntaxError"),
    ],
    ids=["no handler module", "syntax error"],
)
def test_an_uploaded_zip_that_cannot_load_fails_the_invocation_as_lambda_does(
    cloud: LocalCloud, files: dict[str, str], error_type: str
) -> None:
    lam = cloud.client("lambda")
    create(cloud, "uploaded")
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        for name, source in files.items():
            zipped.writestr(name, source)

    updated = lam.update_function_code(FunctionName="uploaded", ZipFile=archive.getvalue())
    answer = lam.invoke(FunctionName="uploaded", Payload=b"{}")

    expected_sha = base64.b64encode(hashlib.sha256(archive.getvalue()).digest()).decode()
    assert updated["CodeSha256"] == expected_sha  # base64 SHA-256 of the zip, as AWS
    assert answer["FunctionError"] == "Unhandled"
    assert json.loads(answer["Payload"].read())["errorType"] == error_type


def test_list_event_source_mappings_filters_by_name_partial_arn_or_arn(cloud: LocalCloud) -> None:
    arn = create(cloud, "mapped")
    sqs, lam = cloud.client("sqs"), cloud.client("lambda")
    url = sqs.create_queue(QueueName="mapped-jobs")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
        "QueueArn"
    ]
    uuid = lam.create_event_source_mapping(
        FunctionName="mapped", EventSourceArn=queue_arn, BatchSize=1
    )["UUID"]

    for reference in ("mapped", "123456789012:function:mapped", arn, f"{arn}:$LATEST"):
        listed = lam.list_event_source_mappings(FunctionName=reference)["EventSourceMappings"]
        assert [m["UUID"] for m in listed] == [uuid], reference
    assert lam.list_event_source_mappings(FunctionName="other")["EventSourceMappings"] == []
    lam.delete_event_source_mapping(UUID=uuid)
    assert lam.list_event_source_mappings(FunctionName="mapped")["EventSourceMappings"] == []


@pytest.mark.parametrize("may_create", [True, False], ids=["role allows", "role does not"])
def test_a_missing_log_group_is_created_on_invocation_when_the_role_allows_it(
    cloud: LocalCloud, may_create: bool
) -> None:
    actions = ["logs:CreateLogStream", "logs:PutLogEvents"]
    policy = {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Action": ["logs:CreateLogGroup", *actions] if may_create else actions,
                "Resource": "*",
            }
        ],
    }
    cloud.client("iam").put_role_policy(
        RoleName="api-made", PolicyName="logs", PolicyDocument=json.dumps(policy)
    )
    create(cloud, "logged")
    logs = cloud.client("logs")
    group = "/aws/lambda/logged"
    assert logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"] == []

    cloud.client("lambda").invoke(FunctionName="logged", Payload=b'{"n": 1}')

    created = logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"]
    assert [g["logGroupName"] for g in created] == ([group] if may_create else [])
    if may_create:
        messages = [e["message"] for e in logs.filter_log_events(logGroupName=group)["events"]]
        assert messages[0].startswith("START RequestId:")
        assert any('"handled"' in m for m in messages)


def test_an_invocation_after_update_function_code_runs_the_new_code_even_from_an_old_lookup(
    cloud: LocalCloud,
) -> None:
    lam = cloud.client("lambda")
    create(cloud, "updated")
    before = lookup("updated")  # as an event source mapping holds it across a long poll
    assert before.invoke({"n": 1}).payload == {"doubled": 2, "seen": 1}

    lam.update_function_code(
        FunctionName="updated",
        ZipFile=package("def handler(event, context):\n    return {'new': event['n']}\n"),
    )
    invocation = before.invoke({"n": 3})

    assert not invocation.error, invocation.payload  # was: the old package's folder, gone
    assert invocation.payload == {"new": 3}
    assert lookup("updated").invoke({"n": 4}).payload == {"new": 4}
