"""Least privilege: every role statement in template.yaml against an allow-list."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.template import Template

XRAY = {"xray:PutTraceSegments", "xray:PutTelemetryRecords"}


def arn(logical_id: str) -> dict[str, list[str]]:
    return {"Fn::GetAtt": [logical_id, "Arn"]}


# role → {(action, resource)}; "*" is allowed only for X-Ray, which has no resource-level
# permissions.
ALLOWED: dict[str, set[tuple[str, str]]] = {
    "QueueWorkerRole": {
        ("sqs:ReceiveMessage", "JobsQueue"),
        ("sqs:DeleteMessage", "JobsQueue"),
        ("sqs:GetQueueAttributes", "JobsQueue"),
        ("dynamodb:PutItem", "OrdersTable"),
        ("logs:CreateLogStream", "QueueWorkerLogGroup"),
        ("logs:PutLogEvents", "QueueWorkerLogGroup"),
        ("xray:PutTraceSegments", "*"),
        ("xray:PutTelemetryRecords", "*"),
    },
    "WorkflowWorkerRole": {
        ("dynamodb:PutItem", "OrdersTable"),
        ("dynamodb:GetItem", "OrdersTable"),
        ("dynamodb:UpdateItem", "AttemptsTable"),
        ("logs:CreateLogStream", "WorkflowWorkerLogGroup"),
        ("logs:PutLogEvents", "WorkflowWorkerLogGroup"),
        ("xray:PutTraceSegments", "*"),
        ("xray:PutTelemetryRecords", "*"),
    },
    "OrdersStateMachineRole": {
        ("lambda:InvokeFunction", "WorkflowWorkerFunction"),
    },
}


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _resource_name(resource: Any) -> str:
    if resource == "*":
        return "*"
    if isinstance(resource, dict) and set(resource) == {"Fn::GetAtt"}:
        logical_id, attribute = resource["Fn::GetAtt"]
        assert attribute == "Arn", resource
        return str(logical_id)
    raise AssertionError(f"resource must be !GetAtt X.Arn or '*', got {resource!r}")


def grants(template: Template, role: str) -> set[tuple[str, str]]:
    properties = template.resources[role]["Properties"]
    assert "ManagedPolicyArns" not in properties, f"{role}: managed policies are not scoped"
    found = set()
    for policy in properties["Policies"]:
        for statement in policy["PolicyDocument"]["Statement"]:
            assert statement["Effect"] == "Allow"
            assert "NotAction" not in statement
            assert "NotResource" not in statement
            for action in _as_list(statement["Action"]):
                for resource in _as_list(statement["Resource"]):
                    found.add((action, _resource_name(resource)))
    return found


def test_every_role_is_in_the_allow_list(template: Template) -> None:
    assert set(template.of_type("AWS::IAM::Role")) == set(ALLOWED)


@pytest.mark.parametrize("role", sorted(ALLOWED))
def test_role_grants_exactly_the_allowed_actions_on_the_allowed_resources(
    template: Template, role: str
) -> None:
    assert grants(template, role) == ALLOWED[role]


@pytest.mark.parametrize("role", sorted(ALLOWED))
def test_no_wildcard_action_and_star_resources_only_for_xray(template: Template, role: str) -> None:
    for action, resource in grants(template, role):
        assert "*" not in action
        if resource == "*":
            assert action in XRAY


def test_functions_and_state_machine_use_the_declared_roles_and_no_sam_policies(
    template: Template,
) -> None:
    for logical_id, role in (
        ("QueueWorkerFunction", "QueueWorkerRole"),
        ("WorkflowWorkerFunction", "WorkflowWorkerRole"),
        ("OrdersStateMachine", "OrdersStateMachineRole"),
    ):
        properties = template.resources[logical_id]["Properties"]
        assert properties["Role"] == arn(role)
        assert "Policies" not in properties


@pytest.mark.parametrize("role", sorted(ALLOWED))
def test_roles_trust_only_their_service(template: Template, role: str) -> None:
    expected = (
        "states.amazonaws.com" if role == "OrdersStateMachineRole" else "lambda.amazonaws.com"
    )
    (statement,) = template.resources[role]["Properties"]["AssumeRolePolicyDocument"]["Statement"]
    assert statement["Principal"] == {"Service": expected}
    assert statement["Action"] == "sts:AssumeRole"


def test_the_alarm_topic_key_is_administered_through_iam_and_used_only_by_cloudwatch(
    template: Template,
) -> None:
    """A key policy is the key's own allow-list. The first statement is AWS's default
    one (the account's IAM policies decide who administers the key; without it the key
    cannot be managed at all); the only other grant lets CloudWatch alarms of this
    account encrypt alarm notifications for the topic (kms:GenerateDataKey*,
    kms:Decrypt: what SNS needs from a publisher to an encrypted topic)."""
    key = template.declared_resources["AlarmTopicKey"]
    assert key["Condition"] == "HasAlarmEmail"
    administer, cloudwatch = key["Properties"]["KeyPolicy"]["Statement"]
    assert administer["Principal"] == {
        "AWS": {"Fn::Sub": "arn:${AWS::Partition}:iam::${AWS::AccountId}:root"}
    }
    assert (administer["Action"], administer["Resource"]) == ("kms:*", "*")
    assert cloudwatch["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
    assert sorted(cloudwatch["Action"]) == ["kms:Decrypt", "kms:GenerateDataKey*"]
    assert cloudwatch["Condition"] == {
        "StringEquals": {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    }
    for statement in (administer, cloudwatch):
        assert statement["Effect"] == "Allow"
        assert "NotAction" not in statement
        assert "NotPrincipal" not in statement
