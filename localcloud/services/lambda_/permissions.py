"""What a function's role allows, as far as the local cloud needs it: whether Lambda may
create the function's log group on an invocation (AWS does when the role allows
``logs:CreateLogGroup``, as ``AWSLambdaBasicExecutionRole`` does; the template's roles
grant only ``logs:CreateLogStream`` and ``logs:PutLogEvents``, so a deleted group of
theirs stays deleted).

IAM is not enforced by the local cloud: this reads the role's inline and attached
policies through the IAM API and matches ``Allow`` statements' actions (wildcards
included); ``Deny``, resources and conditions are not evaluated.
"""

from __future__ import annotations

import fnmatch
import json
import urllib.parse
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from botocore.exceptions import ClientError


def _statements(document: Any) -> Iterator[Mapping[str, Any]]:
    if isinstance(document, str):
        document = json.loads(urllib.parse.unquote(document))
    statements = document.get("Statement", [])
    yield from [statements] if isinstance(statements, dict) else statements


def _allows(document: Any, action: str) -> bool:
    for statement in _statements(document):
        if statement.get("Effect") != "Allow":
            continue
        actions = statement.get("Action", [])
        for pattern in [actions] if isinstance(actions, str) else actions:
            if fnmatch.fnmatchcase(action.lower(), str(pattern).lower()):
                return True
    return False


def role_allows(client: Callable[[str], Any], role_arn: str, action: str) -> bool:
    """Whether an ``Allow`` statement of the role's policies names ``action``
    (``service:Action``); ``False`` for a role that does not exist."""
    iam = client("iam")
    name = role_arn.rsplit("/", 1)[-1]
    try:
        for policy in iam.list_role_policies(RoleName=name)["PolicyNames"]:
            document = iam.get_role_policy(RoleName=name, PolicyName=policy)["PolicyDocument"]
            if _allows(document, action):
                return True
        for attached in iam.list_attached_role_policies(RoleName=name)["AttachedPolicies"]:
            arn = attached["PolicyArn"]
            version = iam.get_policy(PolicyArn=arn)["Policy"]["DefaultVersionId"]
            document = iam.get_policy_version(PolicyArn=arn, VersionId=version)
            if _allows(document["PolicyVersion"]["Document"], action):
                return True
    except ClientError:
        return False
    return False


def log_group_creator(client: Callable[[str], Any]) -> Callable[[str], bool]:
    """group → whether Lambda creates it when a function writes to it and it is missing:
    the role of a function logging there allows ``logs:CreateLogGroup``."""

    def may_create(group: str) -> bool:
        pages = client("lambda").get_paginator("list_functions").paginate()
        for page in pages:
            for function in page["Functions"]:
                logging_config = function.get("LoggingConfig") or {}
                own = logging_config.get("LogGroup") or f"/aws/lambda/{function['FunctionName']}"
                if own == group and role_allows(client, function["Role"], "logs:CreateLogGroup"):
                    return True
        return False

    return may_create
