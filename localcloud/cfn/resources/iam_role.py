"""``AWS::IAM::Role``: a role with its inline and managed policies. The local cloud does
not enforce IAM: the role is created, readable, and grants nothing it checks."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from localcloud.cfn.resources.base import Provider, physical_name

if TYPE_CHECKING:
    from localcloud.cfn.deployer import Deployment


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


PROVIDER: Final = RoleProvider()
