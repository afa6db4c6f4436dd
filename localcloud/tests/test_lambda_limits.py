"""Lambda's quotas as documented today, each with Lambda's answer (issue 47): 6 MB for a
synchronous request and response, 1 MB for an asynchronous request (HTTP 413
``RequestEntityTooLargeException`` before anything runs), ``Timeout`` up to 900 s,
``MemorySize`` 128 to 10,240 MB, ``EphemeralStorage`` 512 to 10,240 MB and 4 KB of
environment variables, through the Lambda API and at deploy time (the function's
``CREATE_FAILED`` with the reason CloudFormation gives, and a rollback).

Sources: Lambda quotas ("Function configuration, deployment, and execution"), the Lambda
API reference (Invoke, CreateFunction), LocalStack's AWS-validated snapshots
(``Function.ResponseSizeTooLarge``, the 4 KB message).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from botocore.exceptions import ClientError

from localcloud.account import LocalCloud
from localcloud.tests.support.aws import handler_zip
from localcloud.tests.support.cloud import started

ROLE = "arn:aws:iam::123456789012:role/limits"
ECHO = "def handler(event, context):\n    return event\n"
SIX_MB = 6 * 1024 * 1024


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    with started(server=True, template=None) as running:
        running.client("iam").create_role(RoleName="limits", AssumeRolePolicyDocument="{}")
        yield running


def create(cloud: LocalCloud, source: str = ECHO, **configuration: Any) -> str:
    name = f"limits-{uuid.uuid4().hex[:8]}"
    cloud.client("lambda").create_function(
        FunctionName=name,
        Runtime="python3.13",
        Role=ROLE,
        Handler="app.handler",
        Code={"ZipFile": handler_zip(source)},
        **configuration,
    )
    return name


def refusal(raised: pytest.ExceptionInfo[ClientError]) -> tuple[int, str, str]:
    response = raised.value.response
    error = response["Error"]
    return response["ResponseMetadata"]["HTTPStatusCode"], error["Code"], error["Message"]


def json_string_of(size: int) -> bytes:
    """A JSON document of exactly ``size`` bytes (one string)."""
    return json.dumps("x" * (size - 2)).encode()


def test_a_synchronous_request_over_6_mb_is_refused_with_413_and_nothing_runs(
    cloud: LocalCloud,
) -> None:
    name = create(cloud)

    with pytest.raises(ClientError) as raised:
        cloud.client("lambda").invoke(FunctionName=name, Payload=json_string_of(SIX_MB + 1))

    assert refusal(raised) == (
        413,
        "RequestEntityTooLargeException",
        "Request must be smaller than 6291456 bytes for the InvokeFunction operation",
    )
    assert cloud.function(name).invocations == 0


def test_an_asynchronous_request_over_1_mb_is_refused_with_413_and_never_queued(
    cloud: LocalCloud,
) -> None:
    name = create(cloud)

    with pytest.raises(ClientError) as raised:
        cloud.client("lambda").invoke(
            FunctionName=name, InvocationType="Event", Payload=json_string_of(1_048_577)
        )

    assert refusal(raised) == (
        413,
        "RequestEntityTooLargeException",
        "1048577 byte payload is too large for the Event invocation type (limit 1048576 bytes)",
    )
    cloud.settle_events(timeout_s=30)  # whatever had been queued has run by now
    assert cloud.function(name).invocations == 0


def test_the_deprecated_invoke_async_keeps_the_asynchronous_quota(cloud: LocalCloud) -> None:
    """Found by the held-back attacks: InvokeAsync ran a 2 MB payload."""
    name = create(cloud)

    with pytest.raises(ClientError) as raised:
        cloud.client("lambda").invoke_async(FunctionName=name, InvokeArgs=json_string_of(1_048_577))

    assert refusal(raised) == (
        413,
        "RequestEntityTooLargeException",
        "1048577 byte payload is too large for the Event invocation type (limit 1048576 bytes)",
    )
    assert cloud.function(name).invocations == 0


def test_a_response_of_6_mb_is_answered_whole(cloud: LocalCloud) -> None:
    """6 MiB of text is 6,291,458 bytes of JSON: within Lambda's 6,291,556 (LocalStack's
    validated ``test_lambda_large_response``)."""
    name = create(cloud, f"def handler(event, context):\n    return 'a' * {SIX_MB}\n")

    answer = cloud.client("lambda").invoke(FunctionName=name, Payload=b"{}")

    assert "FunctionError" not in answer
    assert json.loads(answer["Payload"].read()) == "a" * SIX_MB


@pytest.mark.parametrize(
    ("configuration", "code", "message"),
    [
        (
            {"Timeout": 901},
            "ValidationException",
            "1 validation error detected: Value '901' at 'timeout' failed to satisfy "
            "constraint: Member must have value less than or equal to 900",
        ),
        (
            {"MemorySize": 10_241},
            "ValidationException",
            "'MemorySize' value failed to satisfy constraint: Member must have value less "
            "than or equal to 10240",
        ),
        (
            {"EphemeralStorage": {"Size": 10_241}},
            "ValidationException",
            "1 validation error detected: Value '10241' at 'ephemeralStorage.size' failed "
            "to satisfy constraint: Member must have value less than or equal to 10240",
        ),
        (
            {"Environment": {"Variables": {"BIG": "v" * 4_088}}},
            "InvalidParameterValueException",
            "Lambda was unable to configure your environment variables because the "
            "environment variables you have provided exceeded the 4KB limit. String "
            f'measured: {{"BIG":"{"v" * 4_088}"}}',
        ),
        (
            {"Description": "d" * 257},
            "ValidationException",
            f"1 validation error detected: Value '{'d' * 257}' at 'description' failed to "
            "satisfy constraint: Member must have length less than or equal to 256",
        ),
        (
            {"Environment": {"Variables": {"AWS_REGION": "eu-west-1", "MINE": "1"}}},
            "InvalidParameterValueException",
            "Lambda was unable to configure your environment variables because the "
            "environment variables you have provided contains reserved keys that are "
            "currently not supported for modification. Reserved keys used in this request: "
            "AWS_REGION",
        ),
    ],
    ids=["timeout", "memory", "ephemeral-storage", "environment", "description", "reserved"],
)
def test_create_function_past_a_quota_is_refused_with_lambdas_error(
    cloud: LocalCloud, configuration: dict[str, Any], code: str, message: str
) -> None:
    with pytest.raises(ClientError) as raised:
        create(cloud, **configuration)

    assert refusal(raised) == (400, code, message)


@pytest.mark.parametrize(
    ("configuration", "code"),
    [
        ({"Timeout": 100_000}, "ValidationException"),
        ({"MemorySize": 100_000}, "ValidationException"),
        ({"Environment": {"Variables": {"BIG": "v" * 10_000}}}, "InvalidParameterValueException"),
    ],
    ids=["timeout", "memory", "environment"],
)
def test_update_function_configuration_past_a_quota_is_refused_and_changes_nothing(
    cloud: LocalCloud, configuration: dict[str, Any], code: str
) -> None:
    name = create(cloud)
    lambda_client = cloud.client("lambda")
    before = lambda_client.get_function_configuration(FunctionName=name)

    with pytest.raises(ClientError) as raised:
        lambda_client.update_function_configuration(FunctionName=name, **configuration)

    after = lambda_client.get_function_configuration(FunctionName=name)
    assert refusal(raised)[:2] == (400, code)
    assert (after["Timeout"], after["MemorySize"]) == (before["Timeout"], before["MemorySize"])
    assert after.get("Environment", {}) == before.get("Environment", {})


def test_the_least_values_are_refused_as_lambdas_request_validation_refuses_them() -> None:
    """Below the least values (botocore refuses them before sending; the CLI without
    validation, or another SDK, reaches the server), every error in one message."""
    from localcloud.services.lambda_.limits import check_configuration  # the rule alone

    refused = check_configuration(
        {"Timeout": 0, "MemorySize": 127, "EphemeralStorage": {"Size": 511}}
    )

    assert refused == (
        "ValidationException",
        "3 validation errors detected: "
        "Value '0' at 'timeout' failed to satisfy constraint: Member must have value greater "
        "than or equal to 1; "
        "Value '127' at 'memorySize' failed to satisfy constraint: Member must have value "
        "greater than or equal to 128; "
        "Value '511' at 'ephemeralStorage.size' failed to satisfy constraint: Member must "
        "have value greater than or equal to 512",
    )


def template(properties: dict[str, Any]) -> str:
    function = {
        "Type": "AWS::Lambda::Function",
        "Properties": {
            "Runtime": "python3.13",
            "Handler": "index.handler",
            "Role": ROLE,
            "Code": {"ZipFile": ECHO},
            **properties,
        },
    }
    queue = {"Type": "AWS::SQS::Queue"}
    return json.dumps(
        {
            "Transform": "AWS::Serverless-2016-10-31",
            "Resources": {"Queue": queue, "Greeter": function},
        }
    )


def deployed(cloud: LocalCloud, body: str) -> tuple[str, list[tuple[str, str]]]:
    """Deploy ``body`` as ``sam deploy`` does (a change set): the stack's status and its
    resources' (logical id, reason) of ``CREATE_FAILED``."""
    cfn = cloud.client("cloudformation")
    name = f"limits-{uuid.uuid4().hex[:8]}"
    created = cfn.create_change_set(
        StackName=name,
        ChangeSetName="create",
        ChangeSetType="CREATE",
        TemplateBody=body,
        Capabilities=["CAPABILITY_IAM"],
    )
    cfn.execute_change_set(ChangeSetName=created["Id"])
    (stack,) = cfn.describe_stacks(StackName=name)["Stacks"]
    events = cfn.describe_stack_events(StackName=name)["StackEvents"]
    failed = [
        (e["LogicalResourceId"], e.get("ResourceStatusReason", ""))
        for e in events
        if e["ResourceStatus"] == "CREATE_FAILED"
    ]
    return str(stack["StackStatus"]), failed


@pytest.mark.parametrize(
    ("properties", "message"),
    [
        (
            {"Timeout": 901},
            "1 validation error detected: Value '901' at 'timeout' failed to satisfy "
            "constraint: Member must have value less than or equal to 900",
        ),
        (
            {"MemorySize": 10_241},
            "'MemorySize' value failed to satisfy constraint: Member must have value less "
            "than or equal to 10240",
        ),
        (
            {"EphemeralStorage": {"Size": 10_241}},
            "1 validation error detected: Value '10241' at 'ephemeralStorage.size' failed "
            "to satisfy constraint: Member must have value less than or equal to 10240",
        ),
        (
            {"Environment": {"Variables": {"BIG": "v" * 4_088}}},
            "Lambda was unable to configure your environment variables because the "
            "environment variables you have provided exceeded the 4KB limit. String "
            f'measured: {{"BIG":"{"v" * 4_088}"}}',
        ),
    ],
    ids=["timeout", "memory", "ephemeral-storage", "environment"],
)
def test_a_template_past_a_quota_fails_the_function_with_lambdas_reason_and_rolls_back(
    cloud: LocalCloud, properties: dict[str, Any], message: str
) -> None:
    status, failed = deployed(cloud, template(properties))

    assert status == "ROLLBACK_COMPLETE"
    ((logical_id, reason),) = failed
    assert logical_id == "Greeter"
    assert reason.startswith(f'Resource handler returned message: "{message} (Service: Lambda')
    assert reason.endswith("HandlerErrorCode: InvalidRequest)")
