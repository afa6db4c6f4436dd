"""``AWS::IAM::Role``: a role with its inline and managed policies. The local cloud does
not enforce IAM: the role is created, readable, and grants nothing it checks.

AWS managed policies (``AWSLambdaBasicExecutionRole``, which SAM attaches to the roles it
makes, or a function's ``Policies: [AWSLambdaExecute]``) exist in every AWS account. moto
ships their documents but loads all of them (over a thousand) into every IAM backend it
makes or resets only when told to, which costs about a second each time; here only the
policies a role attaches are added to the account, from the same documents.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from moto.iam.models import AWSManagedPolicy, iam_backends

from localcloud.cloudformation.provider import ACCOUNT_ID, Deployment, Provider, physical_name
from localcloud.cloudformation.transform import aws_managed_documents


class RoleProvider(Provider):
    TYPE = "AWS::IAM::Role"
    PROPERTIES = frozenset(
        {"AssumeRolePolicyDocument", "Policies", "ManagedPolicyArns", "Tags", "Path", "Description"}
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        iam = stack.client("iam")
        name = physical_name(stack, logical_id, 64)
        extra: dict[str, Any] = {}
        for key in ("Path", "Description"):
            if key in properties:
                extra[key] = str(properties[key])
        if "Tags" in properties:
            extra["Tags"] = [
                {"Key": t["Key"], "Value": str(t["Value"])} for t in properties["Tags"]
            ]
        arn = iam.create_role(
            RoleName=name,
            AssumeRolePolicyDocument=json.dumps(properties["AssumeRolePolicyDocument"]),
            **extra,
        )["Role"]["Arn"]
        stack.refs[logical_id] = name
        stack.attributes[(logical_id, "Arn")] = arn
        for policy in properties.get("Policies", []):
            iam.put_role_policy(
                RoleName=name,
                PolicyName=policy["PolicyName"],
                PolicyDocument=json.dumps(versioned(policy["PolicyDocument"])),
            )
        for policy_arn in properties.get("ManagedPolicyArns", []):
            _add_if_aws_managed(str(policy_arn))
            iam.attach_role_policy(RoleName=name, PolicyArn=str(policy_arn))

    def delete(self, stack: Deployment, logical_id: str) -> None:
        iam = stack.client("iam")
        name = stack.refs[logical_id]
        for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
            iam.delete_role_policy(RoleName=name, PolicyName=policy)
        for attached in iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]:
            iam.detach_role_policy(RoleName=name, PolicyArn=attached["PolicyArn"])
        iam.delete_role(RoleName=name)


def versioned(document: Mapping[str, Any]) -> dict[str, Any]:
    """A policy document with a ``Version``. IAM takes one without (it then means
    2008-10-17), and SAM's policy templates write none; moto refuses it ("must be version
    2012-10-17 or greater"). IAM is not enforced locally, so the version only lets moto
    store the policy."""
    return {"Version": "2012-10-17", **document}


def _add_if_aws_managed(arn: str) -> None:
    """Add the AWS managed policy ``arn`` to the local account if it is one and is not
    there yet; any other ARN is left to IAM (which refuses one that does not exist)."""
    prefix = "arn:aws:iam::aws:policy"
    if not arn.startswith(prefix):
        return
    name = arn.rsplit("/", 1)[-1]
    document = aws_managed_documents().get(name)
    backend = iam_backends[ACCOUNT_ID]["aws"]
    if document is None or arn in backend.managed_policies:
        return
    policy = AWSManagedPolicy.from_data(name, ACCOUNT_ID, backend.region_name, document)
    backend.managed_policies[policy.arn] = policy


PROVIDERS: Final = (RoleProvider(),)
