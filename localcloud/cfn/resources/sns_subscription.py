"""``AWS::SNS::Subscription``: a subscription; an e-mail endpoint is sent nothing locally."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Final

from localcloud.cfn.resources.base import Provider

if TYPE_CHECKING:
    from localcloud.cfn.deployer import Deployment


class SubscriptionProvider(Provider):
    TYPE = "AWS::SNS::Subscription"
    PROPERTIES = frozenset({"TopicArn", "Protocol", "Endpoint"})

    def create(self, stack: Deployment, logical_id: str, properties: Mapping[str, Any]) -> None:
        arn = stack.client("sns").subscribe(
            TopicArn=properties["TopicArn"],
            Protocol=properties["Protocol"],
            Endpoint=str(properties["Endpoint"]),
            ReturnSubscriptionArn=True,
        )["SubscriptionArn"]
        stack.refs[logical_id] = arn
        if properties["Protocol"] == "email":
            stack.notes.append(
                f"{logical_id}: SNS would e-mail {properties['Endpoint']} a confirmation "
                "request; locally nothing is sent"
            )

    def delete(self, stack: Deployment, logical_id: str) -> None:
        stack.client("sns").unsubscribe(SubscriptionArn=stack.refs[logical_id])


PROVIDER: Final = SubscriptionProvider()
