"""The service's CloudFormation types, one provider each:

- ``AWS::SQS::Queue``: a queue, kept (with its messages) by an update.
- ``AWS::SQS::QueuePolicy``: a resource policy on one or more queues (the ``Policy``
  queue attribute). IAM is not enforced locally, so the policy is stored, readable with
  ``get-queue-attributes``, and changes nothing else.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Mapping
from typing import Any, Final

from botocore.exceptions import ClientError

from localcloud.cloudformation.exceptions import UnsupportedTemplate
from localcloud.cloudformation.provider import Deployment, Provider, physical_name

DEFAULTS: Final = {
    "DelaySeconds": "0",
    "MaximumMessageSize": "262144",
    "MessageRetentionPeriod": "345600",
    "ReceiveMessageWaitTimeSeconds": "0",
    "VisibilityTimeout": "30",
}
"""What an attribute returns to when the template stops declaring it (SQS's defaults,
CreateQueue reference), so an update, or the rollback of one, never leaves a removed
property in force. A removed RedrivePolicy is not cleared locally."""


class QueueProvider(Provider):
    TYPE = "AWS::SQS::Queue"
    PROPERTIES = frozenset(
        {
            "VisibilityTimeout",
            "MessageRetentionPeriod",
            "DelaySeconds",
            "MaximumMessageSize",
            "ReceiveMessageWaitTimeSeconds",
            "SqsManagedSseEnabled",
            "RedrivePolicy",
            "QueueName",
            "FifoQueue",
            "ContentBasedDeduplication",
            "Tags",
        }
    )
    KEPT = True
    NAME_PROPERTY = "QueueName"
    NAME_LIMIT = 80

    def exists(self, stack: Deployment, name: str) -> bool:
        # CreateQueue returns an existing queue of that name (same attributes) as if
        # new: a stack must never adopt, and later delete, a queue it did not create.
        try:
            stack.client("sqs").get_queue_url(QueueName=name)
        except ClientError:
            return False
        return True

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        sqs = stack.client("sqs")
        fifo = str(properties.get("FifoQueue", "false")).lower() == "true"
        if "QueueName" in properties:
            name = self.name(stack, logical_id, properties)
            if fifo != name.endswith(".fifo"):
                raise UnsupportedTemplate(
                    f"{logical_id}.QueueName",
                    "a FIFO queue's name ends with .fifo, and only a FIFO queue's does",
                )
        else:
            # CloudFormation's derived name of a FIFO queue ends with .fifo.
            name = (
                physical_name(
                    stack,
                    logical_id,
                    80 - 5 * fifo,
                    lambda n: self.exists(stack, n + ".fifo" * fifo),
                )
                + ".fifo" * fifo
            )
        tags = {str(t["Key"]): str(t["Value"]) for t in properties.get("Tags", [])}
        url = sqs.create_queue(
            QueueName=name,
            Attributes=attributes(stack, logical_id, properties),
            **({"tags": tags} if tags else {}),
        )["QueueUrl"]
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"][
            "QueueArn"
        ]
        stack.refs[logical_id] = url
        stack.attributes[(logical_id, "Arn")] = arn
        stack.attributes[(logical_id, "QueueUrl")] = url
        stack.attributes[(logical_id, "QueueName")] = arn.rsplit(":", 1)[1]

    def update(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        changed = {**DEFAULTS, **attributes(stack, logical_id, properties)}
        changed.pop("FifoQueue", None)  # set at creation only
        stack.client("sqs").set_queue_attributes(
            QueueUrl=stack.refs[logical_id], Attributes=changed
        )

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("sqs").delete_queue(QueueUrl=stack.refs[logical_id])


def attributes(stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> dict[str, str]:
    """The queue's attributes as ``CreateQueue`` takes them, with the deployment's local
    visibility timeout, if any, for a queue that declares one (recorded in the notes)."""
    made: dict[str, str] = {}
    for name, value in properties.items():
        if name in ("QueueName", "Tags"):
            continue
        if name == "RedrivePolicy":
            made[name] = json.dumps(
                {
                    "deadLetterTargetArn": value["deadLetterTargetArn"],
                    "maxReceiveCount": int(value["maxReceiveCount"]),
                }
            )
        else:
            made[name] = str(value).lower() if isinstance(value, bool) else str(value)
    override = stack.visibility_timeout
    if override is not None and "VisibilityTimeout" in made:
        # Only queues that declare a visibility timeout (a consumer's queue); a
        # dead-letter queue nobody consumes keeps the SQS default.
        declared = made["VisibilityTimeout"]
        made["VisibilityTimeout"] = str(override)
        note = (
            f"{logical_id}: visibility timeout {override} s locally (template: {declared} s), "
            "so redelivery and redrive take seconds, not minutes"
        )
        if note not in stack.notes:
            stack.notes.append(note)
    return made


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


PROVIDERS: Final = (QueueProvider(), QueuePolicyProvider())
