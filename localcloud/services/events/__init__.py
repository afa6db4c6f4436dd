"""EventBridge: ``AWS::Events::Rule`` and ``AWS::Events::EventBus`` (:mod:`.providers`),
and the delivery of events to the rules' targets (:mod:`.delivery`): Lambda, SQS, SNS,
Step Functions and other buses, with ``Input``, ``InputPath`` and ``InputTransformer``;
the rules an event matches (:mod:`.patterns`); AWS's own service events
(:mod:`.service_events`: EC2 instance state changes).

May import: the engine's provider contract, the patch registry, Lambda's asynchronous
invocation.
"""

from typing import Final

from localcloud.services.events import delivery, patterns, providers, service_events
from localcloud.services.service import Service

SERVICE: Final = Service(
    "events",
    providers=providers.PROVIDERS,
    patches=(*delivery.PATCHES, *patterns.PATCHES, *service_events.PATCHES),
    surfaces=(
        "EventBridge targets: Lambda (asynchronous), SQS, SNS, Step Functions, event buses "
        "(one bus hop at most)",
        "EventBridge target input: Input, InputPath, InputTransformer",
        "AWS service events on the default bus: EC2 Instance State-change Notification",
    ),
)

__all__ = ["SERVICE"]
