"""``AWS::KMS::Key``: a customer managed key, kept by an update (what it encrypted stays
readable); deleting schedules its deletion in 7 days, the shortest window KMS allows.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from localcloud.cloudformation.provider import Deployment, Provider, flag


class KeyProvider(Provider):
    TYPE = "AWS::KMS::Key"
    PROPERTIES = frozenset({"Description", "EnableKeyRotation", "KeyPolicy"})
    KEPT = True

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        kms = stack.client("kms")
        kwargs: dict[str, Any] = {"Description": str(properties.get("Description", ""))}
        if "KeyPolicy" in properties:
            kwargs["Policy"] = json.dumps(properties["KeyPolicy"])
        metadata = kms.create_key(**kwargs)["KeyMetadata"]
        if flag(properties.get("EnableKeyRotation", False)):
            kms.enable_key_rotation(KeyId=metadata["KeyId"])
        stack.refs[logical_id] = metadata["KeyId"]
        stack.attributes[(logical_id, "Arn")] = metadata["Arn"]
        stack.attributes[(logical_id, "KeyId")] = metadata["KeyId"]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("kms").schedule_key_deletion(
            KeyId=stack.refs[logical_id], PendingWindowInDays=7
        )


PROVIDERS: Final = (KeyProvider(),)
