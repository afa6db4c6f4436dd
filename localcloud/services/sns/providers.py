"""The service's CloudFormation types, one provider each:

- ``AWS::SNS::Topic``: a topic, kept (with its subscriptions) by an update.
- ``AWS::SNS::Subscription``: a subscription (``RawMessageDelivery``, ``FilterPolicy``
  and its scope as SNS applies them); an e-mail endpoint is sent nothing locally.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from botocore.exceptions import ClientError

from localcloud.cloudformation.provider import ACCOUNT_ID, Deployment, Provider


class TopicProvider(Provider):
    TYPE = "AWS::SNS::Topic"
    PROPERTIES = frozenset({"DisplayName", "KmsMasterKeyId", "TopicName"})
    KEPT = True
    NAME_PROPERTY = "TopicName"
    NAME_LIMIT = 256

    def exists(self, stack: Deployment, name: str) -> bool:
        # CreateTopic returns an existing topic of that name as if new.
        arn = f"arn:aws:sns:{stack.region}:{ACCOUNT_ID}:{name}"
        try:
            stack.client("sns").get_topic_attributes(TopicArn=arn)
        except ClientError:
            return False
        return True

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        name = self.name(stack, logical_id, properties)
        attributes = {key: str(value) for key, value in properties.items() if key != "TopicName"}
        arn = stack.client("sns").create_topic(Name=name, Attributes=attributes)["TopicArn"]
        stack.refs[logical_id] = arn
        stack.attributes[(logical_id, "TopicArn")] = arn
        stack.attributes[(logical_id, "TopicName")] = name

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("sns").delete_topic(TopicArn=stack.refs[logical_id])


class SubscriptionProvider(Provider):
    TYPE = "AWS::SNS::Subscription"
    PROPERTIES = frozenset(
        {
            "TopicArn",
            "Protocol",
            "Endpoint",
            "RawMessageDelivery",
            "FilterPolicy",
            "FilterPolicyScope",
            "Region",
        }
    )

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        attributes: dict[str, str] = {}
        if "RawMessageDelivery" in properties:
            attributes["RawMessageDelivery"] = str(properties["RawMessageDelivery"]).lower()
        if "FilterPolicy" in properties:
            policy = properties["FilterPolicy"]
            attributes["FilterPolicy"] = policy if isinstance(policy, str) else json.dumps(policy)
        if "FilterPolicyScope" in properties:
            attributes["FilterPolicyScope"] = str(properties["FilterPolicyScope"])
        arn = stack.client("sns").subscribe(
            TopicArn=properties["TopicArn"],
            Protocol=properties["Protocol"],
            Endpoint=str(properties["Endpoint"]),
            ReturnSubscriptionArn=True,
            **({"Attributes": attributes} if attributes else {}),
        )["SubscriptionArn"]
        stack.refs[logical_id] = arn
        if properties["Protocol"] == "email":
            stack.notes.append(
                f"{logical_id}: SNS would e-mail {properties['Endpoint']} a confirmation "
                "request; locally nothing is sent"
            )

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("sns").unsubscribe(SubscriptionArn=stack.refs[logical_id])


PROVIDERS: Final = (TopicProvider(), SubscriptionProvider())
