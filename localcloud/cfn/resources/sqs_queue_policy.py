"""``AWS::SQS::QueuePolicy``: a resource policy on one or more queues (the ``Policy``
queue attribute). IAM is not enforced locally, so the policy is stored, readable with
``get-queue-attributes``, and changes nothing else."""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from localcloud.cfn.exceptions import UnsupportedTemplate
from localcloud.cfn.resources.base import Provider

if TYPE_CHECKING:
    from localcloud.cfn.deployer import Deployment


class QueuePolicyProvider(Provider):
    TYPE = "AWS::SQS::QueuePolicy"
    PROPERTIES = frozenset({"PolicyDocument", "Queues"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        queues = properties["Queues"]
        if not isinstance(queues, list) or not queues:
            raise UnsupportedTemplate(f"{logical_id}.Queues", "a list of queue URLs")
        policy = json.dumps(properties["PolicyDocument"])
        sqs = stack.client("sqs")
        for url in queues:
            sqs.set_queue_attributes(QueueUrl=str(url), Attributes={"Policy": policy})
        stack.refs[logical_id] = str(
            uuid.uuid5(uuid.NAMESPACE_URL, f"{stack.stack_name}/{logical_id}")
        )
        stack.attributes[(logical_id, "Queues")] = [str(url) for url in queues]

    def delete(self, stack: Deployment, logical_id: str) -> None:
        sqs = stack.client("sqs")
        for url in stack.attributes[(logical_id, "Queues")]:
            sqs.set_queue_attributes(QueueUrl=url, Attributes={"Policy": ""})


PROVIDER: Final = QueuePolicyProvider()
