"""IAM's CloudFormation types. The local cloud does not enforce IAM: each is created,
readable, and grants nothing it checks.

- ``AWS::IAM::Role``: a role with its inline and managed policies;
- ``AWS::IAM::ManagedPolicy``: a customer managed policy attached to roles, users and
  groups (SAM Connectors generate one per connector);
- ``AWS::IAM::Policy``: an inline policy put on roles, users and groups.

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

from botocore.exceptions import ClientError
from moto.iam.models import AWSManagedPolicy, iam_backends

from localcloud.cloudformation.provider import ACCOUNT_ID, Deployment, Provider, physical_name
from localcloud.cloudformation.transform import aws_managed_documents


class RoleProvider(Provider):
    TYPE = "AWS::IAM::Role"
    PROPERTIES = frozenset(
        {
            "RoleName",
            "AssumeRolePolicyDocument",
            "Policies",
            "ManagedPolicyArns",
            "Tags",
            "Path",
            "Description",
            "MaxSessionDuration",
        }
    )
    NAME_PROPERTY = "RoleName"

    def exists(self, stack: Deployment, name: str) -> bool:
        return _found(stack.client("iam").get_role, RoleName=name)

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        iam = stack.client("iam")
        name = self.name(stack, logical_id, properties)
        extra: dict[str, Any] = {}
        for key in ("Path", "Description"):
            if key in properties:
                extra[key] = str(properties[key])
        if "MaxSessionDuration" in properties:
            extra["MaxSessionDuration"] = int(properties["MaxSessionDuration"])
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


_ATTACHED: Final = (("Roles", "role"), ("Users", "user"), ("Groups", "group"))
"""Where a policy resource is attached or put, and the IAM API's name for each."""


class ManagedPolicyProvider(Provider):
    TYPE = "AWS::IAM::ManagedPolicy"
    PROPERTIES = frozenset(
        {"ManagedPolicyName", "PolicyDocument", "Roles", "Users", "Groups", "Path", "Description"}
    )
    NAME_PROPERTY = "ManagedPolicyName"
    NAME_LIMIT = 128

    def exists(self, stack: Deployment, name: str) -> bool:
        arn = f"arn:aws:iam::{ACCOUNT_ID}:policy/{name}"
        return _found(stack.client("iam").get_policy, PolicyArn=arn)

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        iam = stack.client("iam")
        extra = {key: str(properties[key]) for key in ("Path", "Description") if key in properties}
        arn = iam.create_policy(
            PolicyName=self.name(stack, logical_id, properties),
            PolicyDocument=json.dumps(versioned(properties["PolicyDocument"])),
            **extra,
        )["Policy"]["Arn"]
        stack.refs[logical_id] = arn
        stack.attributes[(logical_id, "PolicyArn")] = arn
        for key, kind in _ATTACHED:
            for name in properties.get(key, []):
                attach = getattr(iam, f"attach_{kind}_policy")
                attach(**{f"{kind.capitalize()}Name": str(name), "PolicyArn": arn})

    def delete(self, stack: Deployment, logical_id: str) -> None:
        """Detach the policy wherever it is attached (a role deleted first counts as
        detached), then delete it."""
        iam = stack.client("iam")
        arn = stack.refs[logical_id]
        found = iam.list_entities_for_policy(PolicyArn=arn)
        for key, kind in _ATTACHED:
            for entity in found.get(f"Policy{key}", []):
                detach = getattr(iam, f"detach_{kind}_policy")
                name = entity[f"{kind.capitalize()}Name"]
                _found(detach, **{f"{kind.capitalize()}Name": name, "PolicyArn": arn})
        iam.delete_policy(PolicyArn=arn)


class PolicyProvider(Provider):
    TYPE = "AWS::IAM::Policy"
    PROPERTIES = frozenset({"PolicyName", "PolicyDocument", "Roles", "Users", "Groups"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        iam = stack.client("iam")
        name = str(properties["PolicyName"])
        document = json.dumps(versioned(properties["PolicyDocument"]))
        for key, kind in _ATTACHED:
            for entity in properties.get(key, []):
                put = getattr(iam, f"put_{kind}_policy")
                put(
                    **{f"{kind.capitalize()}Name": str(entity)},
                    PolicyName=name,
                    PolicyDocument=document,
                )
        stack.refs[logical_id] = physical_name(stack, logical_id, 128)
        stack.records[logical_id] = {
            "PolicyName": name,
            **{key: [str(e) for e in properties.get(key, [])] for key, _ in _ATTACHED},
        }

    def delete(self, stack: Deployment, logical_id: str) -> None:
        iam = stack.client("iam")
        record = stack.records[logical_id]
        for key, kind in _ATTACHED:
            for entity in record[key]:
                remove = getattr(iam, f"delete_{kind}_policy")
                _found(
                    remove,
                    **{f"{kind.capitalize()}Name": entity},
                    PolicyName=record["PolicyName"],
                )


def _found(call: Any, **kwargs: Any) -> bool:
    """Whether ``call(**kwargs)``, an IAM call, found what it names (``NoSuchEntity``:
    False)."""
    try:
        call(**kwargs)
    except ClientError as exc:
        if exc.response["Error"]["Code"] != "NoSuchEntity":
            raise
        return False
    return True


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


PROVIDERS: Final = (RoleProvider(), ManagedPolicyProvider(), PolicyProvider())
