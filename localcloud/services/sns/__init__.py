"""SNS: ``AWS::SNS::Topic`` and ``Subscription`` (:mod:`.providers`), and delivery to
Lambda subscribers as SNS makes it (:mod:`.patches`).

May import: the engine's provider contract, the patch registry, Lambda's asynchronous
invocation.
"""

from typing import Final

from localcloud.services.service import Service
from localcloud.services.sns import patches, providers

SERVICE: Final = Service(
    "sns",
    providers=providers.PROVIDERS,
    patches=patches.PATCHES,
    surfaces=(
        "SNS subscribers: Lambda (asynchronous, SNS's record), SQS (raw or enveloped), "
        "filter policies",
    ),
)

__all__ = ["SERVICE"]
