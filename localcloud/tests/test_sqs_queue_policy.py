"""``AWS::SQS::QueuePolicy``: the queue's ``Policy`` attribute, set by a template and
removed with the stack."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from localcloud.account import LocalCloud
from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.template import from_body
from localcloud.cloudformation.update import delete_resource

POLICY = {
    "Version": "2012-10-17",
    "Statement": [
        {
            "Effect": "Allow",
            "Principal": {"Service": "sns.amazonaws.com"},
            "Action": "sqs:SendMessage",
            "Resource": {"Fn::GetAtt": ["Q", "Arn"]},
        }
    ],
}


def body(policy: dict[str, object]) -> dict[str, object]:
    return {
        "Resources": {
            "Q": {"Type": "AWS::SQS::Queue", "Properties": {}},
            "P": {"Type": "AWS::SQS::QueuePolicy", "Properties": policy},
        }
    }


@pytest.fixture
def cloud(make_cloud: Callable[..., LocalCloud]) -> LocalCloud:
    return make_cloud()


def test_a_queue_policy_is_the_queues_policy_until_it_is_deleted(cloud: LocalCloud) -> None:
    template = from_body(body({"PolicyDocument": POLICY, "Queues": [{"Ref": "Q"}]}), {})
    deployment = cloud.deploy(template, stack_name="qp")
    url = deployment.refs["Q"]
    sqs = cloud.client("sqs")

    stored = json.loads(
        sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]["Policy"]
    )
    assert stored["Statement"][0]["Resource"] == deployment.attributes[("Q", "Arn")]

    delete_resource(deployment, "P", cloud.client)
    left = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"]).get("Attributes", {})
    assert not left.get("Policy")


def test_a_property_the_local_cloud_does_not_honour_is_refused_by_name(cloud: LocalCloud) -> None:
    template = from_body(body({"PolicyDocument": POLICY, "Queues": [{"Ref": "Q"}], "X": 1}), {})
    with pytest.raises(UnsupportedTemplate, match=r"^P\.X: AWS::SQS::QueuePolicy property"):
        cloud.deploy(template, stack_name="qp-x")
