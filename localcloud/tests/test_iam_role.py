"""``AWS::IAM::Role``: AWS managed policies a role attaches exist in the local account, as
in every AWS account, without loading all of them into every IAM backend."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from botocore.exceptions import ClientError

from localcloud.account import LocalCloud
from localcloud.cloudformation.template import from_body
from localcloud.tests.support.paths import JOBS_APP

BASIC = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"
EXECUTE = "arn:aws:iam::aws:policy/AWSLambdaExecute"


def function(policies: list[Any]) -> dict[str, Any]:
    return {
        "Transform": "AWS::Serverless-2016-10-31",
        "Resources": {
            "Fn": {
                "Type": "AWS::Serverless::Function",
                "Properties": {
                    "CodeUri": "src/",
                    "Handler": "queue_worker.handler",
                    "Runtime": "python3.13",
                    "Policies": policies,
                },
            }
        },
    }


@pytest.fixture
def cloud(make_cloud: Callable[..., LocalCloud]) -> LocalCloud:
    return make_cloud(template=None)


def test_sams_role_attaches_the_basic_execution_role_and_a_named_managed_policy(
    cloud: LocalCloud,
) -> None:
    template = from_body(function(["AWSLambdaExecute"]), {}, path=JOBS_APP / "template.yaml")
    deployment = cloud.deploy(template, stack_name="managed")
    iam = cloud.client("iam")
    role = deployment.refs["FnRole"]

    attached = iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"]
    assert {p["PolicyArn"] for p in attached} == {BASIC, EXECUTE}
    document = iam.get_policy_version(PolicyArn=BASIC, VersionId="v1")["PolicyVersion"]
    assert "logs:PutLogEvents" in str(document["Document"])
    # Only what a role attached was added: the account does not hold AWS's whole list.
    assert {p["Arn"] for p in iam.list_policies(Scope="AWS")["Policies"]} == {BASIC, EXECUTE}


def test_an_aws_managed_policy_that_does_not_exist_is_refused_by_iam(cloud: LocalCloud) -> None:
    body = {
        "Resources": {
            "R": {
                "Type": "AWS::IAM::Role",
                "Properties": {
                    "AssumeRolePolicyDocument": {"Version": "2012-10-17", "Statement": []},
                    "ManagedPolicyArns": ["arn:aws:iam::aws:policy/NoSuchPolicy"],
                },
            }
        }
    }
    with pytest.raises(ClientError, match="NoSuchPolicy does not exist"):
        cloud.deploy(from_body(body, {}), stack_name="missing")
