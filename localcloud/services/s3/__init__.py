"""S3: ``AWS::S3::Bucket`` (with its ``NotificationConfiguration``) and ``BucketPolicy``
(:mod:`.providers`); bucket policies stored, not evaluated (:mod:`.patches`); event
notifications to Lambda, SQS, SNS and EventBridge as S3 sends them (:mod:`.notifications`).

May import: the engine's provider contract, the patch registry, Lambda's asynchronous
invocation.
"""

from typing import Final

from localcloud.services.s3 import notifications, patches, providers
from localcloud.services.service import Service

SERVICE: Final = Service(
    "s3",
    providers=providers.PROVIDERS,
    patches=(*patches.PATCHES, *notifications.PATCHES),
    surfaces=(
        "S3 event notifications: Lambda (asynchronous), SQS, SNS, EventBridge "
        "(Object Created, Object Deleted)",
    ),
)

__all__ = ["SERVICE"]
