"""EventBridge: ``AWS::Events::Rule`` (created; rules deliver nothing locally yet).

May import: the engine's provider contract.
"""

from typing import Final

from localcloud.services.events import providers
from localcloud.services.service import Service

SERVICE: Final = Service("events", providers=providers.PROVIDERS)

__all__ = ["SERVICE"]
