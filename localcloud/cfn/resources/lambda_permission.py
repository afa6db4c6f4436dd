"""``AWS::Lambda::Permission``: a statement of a function's resource policy (the SAM
transform makes one per event source that invokes a function asynchronously, such as a
``Schedule``). Recorded with ``AddPermission``; IAM is not enforced locally."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from localcloud.cfn.resources.base import Provider

if TYPE_CHECKING:
    from localcloud.cfn.deployer import Deployment


class PermissionProvider(Provider):
    TYPE = "AWS::Lambda::Permission"
    PROPERTIES = frozenset({"Action", "FunctionName", "Principal", "SourceArn", "SourceAccount"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        statement = (
            f"{stack.stack_name}-{logical_id}-"
            + hashlib.sha256(f"{stack.stack_name}/{logical_id}".encode()).hexdigest()[:12]
        )
        kwargs = {
            "FunctionName": str(properties["FunctionName"]),
            "StatementId": statement,
            "Action": str(properties["Action"]),
            "Principal": str(properties["Principal"]),
        }
        for key in ("SourceArn", "SourceAccount"):
            if key in properties:
                kwargs[key] = str(properties[key])
        stack.client("lambda").add_permission(**kwargs)
        stack.refs[logical_id] = statement
        stack.attributes[(logical_id, "FunctionName")] = kwargs["FunctionName"]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("lambda").remove_permission(
            FunctionName=stack.attributes[(logical_id, "FunctionName")],
            StatementId=stack.refs[logical_id],
        )


PROVIDER: Final = PermissionProvider()
