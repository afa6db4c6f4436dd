"""SNS: ``AWS::SNS::Topic`` and ``Subscription``.

May import: the engine's provider contract.
"""

from typing import Final

from localcloud.services.service import Service
from localcloud.services.sns import providers

SERVICE: Final = Service("sns", providers=providers.PROVIDERS)

__all__ = ["SERVICE"]
