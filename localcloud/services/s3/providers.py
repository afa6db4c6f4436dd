"""``AWS::S3::Bucket``: a bucket, kept (with its objects) by an update; and
``AWS::S3::BucketPolicy``, its policy (stored, not evaluated: IAM is not enforced locally).

Its name is the explicit ``BucketName`` or CloudFormation's derived one in lower case
(bucket names take no capitals). As on AWS, a bucket that still holds objects is not
deleted with its stack: the delete fails (``DELETE_FAILED``, "The bucket you tried to
delete is not empty") until it is emptied. ``NotificationConfiguration`` (Lambda, queue
and topic configurations, each one ``Event`` with an optional key ``Filter``, and
``EventBridgeConfiguration``) becomes the bucket's notification configuration, delivered
as S3 delivers it (:mod:`.notifications`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from botocore.exceptions import ClientError

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import (
    Deployment,
    Provider,
    physical_name,
    refuse_unknown,
)

_VERSIONING: Final = ("Enabled", "Suspended")


_DESTINATIONS: Final = {
    "LambdaConfigurations": ("LambdaFunctionConfigurations", "Function", "LambdaFunctionArn"),
    "QueueConfigurations": ("QueueConfigurations", "Queue", "QueueArn"),
    "TopicConfigurations": ("TopicConfigurations", "Topic", "TopicArn"),
}


def notification_configuration(written: Mapping[str, Any], where: str) -> dict[str, Any]:
    """CloudFormation's ``NotificationConfiguration`` as ``PutBucketNotificationConfiguration``
    takes it (``Event`` → ``Events``, ``Filter.S3Key.Rules`` → ``Filter.Key.FilterRules``,
    ``Function``/``Queue``/``Topic`` → the ARN keys).

    Raises:
        UnsupportedTemplate: a key CloudFormation does not define, named.
    """
    refuse_unknown(
        written, {*_DESTINATIONS, "EventBridgeConfiguration"}, where, "NotificationConfiguration"
    )
    made: dict[str, Any] = {}
    for key, (api_key, target, arn_key) in _DESTINATIONS.items():
        configurations = []
        for position, configuration in enumerate(written.get(key, [])):
            at = f"{where}.{key}[{position}]"
            refuse_unknown(configuration, {"Event", target, "Filter", "Id"}, at, key)
            api: dict[str, Any] = {
                arn_key: str(configuration[target]),
                "Events": [str(configuration["Event"])],
            }
            if "Id" in configuration:
                api["Id"] = str(configuration["Id"])
            rules = ((configuration.get("Filter") or {}).get("S3Key") or {}).get("Rules") or []
            if rules:
                api["Filter"] = {
                    "Key": {
                        "FilterRules": [
                            {"Name": str(rule["Name"]), "Value": str(rule["Value"])}
                            for rule in rules
                        ]
                    }
                }
            configurations.append(api)
        if configurations:
            made[api_key] = configurations
    bridge = written.get("EventBridgeConfiguration")
    if bridge is not None and str(bridge.get("EventBridgeEnabled", True)).lower() == "true":
        made["EventBridgeConfiguration"] = {}
    return made


class BucketProvider(Provider):
    TYPE = "AWS::S3::Bucket"
    PROPERTIES = frozenset(
        {
            "BucketName",
            "VersioningConfiguration",
            "PublicAccessBlockConfiguration",
            "BucketEncryption",
            "Tags",
            "NotificationConfiguration",
        }
    )
    KEPT = True
    NAME_PROPERTY = "BucketName"
    NAME_LIMIT = 63

    def exists(self, stack: Deployment, name: str) -> bool:
        # Bucket names are global: CreateBucket of one the account owns answers
        # BucketAlreadyOwnedByYou, or 200 in us-east-1, as if new.
        try:
            stack.client("s3").head_bucket(Bucket=name)
        except ClientError:
            return False
        return True

    def name(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> str:
        if "BucketName" in properties:
            return super().name(stack, logical_id, properties)
        return physical_name(
            stack, logical_id, self.NAME_LIMIT, lambda n: self.exists(stack, n.lower())
        ).lower()

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        s3 = stack.client("s3")
        name = self.name(stack, logical_id, properties)
        kwargs: dict[str, Any] = {"Bucket": name}
        if stack.region != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": stack.region}
        s3.create_bucket(**kwargs)
        stack.refs[logical_id] = name
        host = f"{name}.s3.amazonaws.com"
        regional = f"{name}.s3.{stack.region}.amazonaws.com"
        stack.attributes.update(
            {
                (logical_id, "Arn"): f"arn:aws:s3:::{name}",
                (logical_id, "DomainName"): host,
                (logical_id, "RegionalDomainName"): regional,
                (
                    logical_id,
                    "DualStackDomainName",
                ): f"{name}.s3.dualstack.{stack.region}.amazonaws.com",
                (
                    logical_id,
                    "WebsiteURL",
                ): f"http://{name}.s3-website-{stack.region}.amazonaws.com",
            }
        )
        self.update(stack, logical_id, properties)

    def update(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        s3 = stack.client("s3")
        name = stack.refs[logical_id]
        versioning = properties.get("VersioningConfiguration")
        if versioning is not None:
            where = f"{logical_id}.VersioningConfiguration"
            refuse_unknown(versioning, {"Status"}, where, self.TYPE)
            if versioning.get("Status") not in _VERSIONING:
                raise UnsupportedTemplate(f"{where}.Status", f"one of {', '.join(_VERSIONING)}")
            s3.put_bucket_versioning(
                Bucket=name, VersioningConfiguration={"Status": str(versioning["Status"])}
            )
        block = properties.get("PublicAccessBlockConfiguration")
        if block is not None:
            keys = {
                "BlockPublicAcls",
                "BlockPublicPolicy",
                "IgnorePublicAcls",
                "RestrictPublicBuckets",
            }
            refuse_unknown(block, keys, f"{logical_id}.PublicAccessBlockConfiguration", self.TYPE)
            s3.put_public_access_block(
                Bucket=name,
                PublicAccessBlockConfiguration={
                    key: str(value).lower() == "true" for key, value in block.items()
                },
            )
        encryption = properties.get("BucketEncryption")
        if encryption is not None:
            where = f"{logical_id}.BucketEncryption"
            refuse_unknown(encryption, {"ServerSideEncryptionConfiguration"}, where, self.TYPE)
            rules = []
            for position, rule in enumerate(encryption["ServerSideEncryptionConfiguration"]):
                at = f"{where}.ServerSideEncryptionConfiguration[{position}]"
                refuse_unknown(
                    rule, {"ServerSideEncryptionByDefault", "BucketKeyEnabled"}, at, self.TYPE
                )
                made: dict[str, Any] = {}
                if "ServerSideEncryptionByDefault" in rule:  # the API's ApplyServerSide…
                    made["ApplyServerSideEncryptionByDefault"] = {
                        key: str(value)
                        for key, value in rule["ServerSideEncryptionByDefault"].items()
                    }
                if "BucketKeyEnabled" in rule:
                    made["BucketKeyEnabled"] = str(rule["BucketKeyEnabled"]).lower() == "true"
                rules.append(made)
            s3.put_bucket_encryption(
                Bucket=name, ServerSideEncryptionConfiguration={"Rules": rules}
            )
        notification = properties.get("NotificationConfiguration")
        if notification is not None:
            s3.put_bucket_notification_configuration(
                Bucket=name,
                NotificationConfiguration=notification_configuration(
                    notification, f"{logical_id}.NotificationConfiguration"
                ),
            )
        tags = [
            {"Key": str(t["Key"]), "Value": str(t["Value"])} for t in properties.get("Tags", [])
        ]
        if tags:
            s3.put_bucket_tagging(Bucket=name, Tagging={"TagSet": tags})

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("s3").delete_bucket(Bucket=stack.refs[logical_id])


class BucketPolicyProvider(Provider):
    """A bucket's policy (``PutBucketPolicy``); as IAM, it is stored and readable, and
    the local S3 does not evaluate it."""

    TYPE = "AWS::S3::BucketPolicy"
    PROPERTIES = frozenset({"Bucket", "PolicyDocument"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        bucket = str(properties["Bucket"])
        stack.client("s3").put_bucket_policy(
            Bucket=bucket, Policy=json.dumps(properties["PolicyDocument"])
        )
        stack.refs[logical_id] = bucket

    def delete(self, stack: Deployment, logical_id: str) -> None:
        try:
            stack.client("s3").delete_bucket_policy(Bucket=stack.refs[logical_id])
        except ClientError as exc:  # the bucket went first: its policy with it
            if exc.response["Error"]["Code"] != "NoSuchBucket":
                raise


PROVIDERS: Final = (BucketProvider(), BucketPolicyProvider())
