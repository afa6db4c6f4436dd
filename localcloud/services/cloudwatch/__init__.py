"""CloudWatch: ``AWS::CloudWatch::Alarm`` and ``Dashboard`` (created; no metric is
recorded locally, so an alarm never changes state).

May import: the engine's provider contract.
"""

from typing import Final

from localcloud.services.cloudwatch import providers
from localcloud.services.service import Service

SERVICE: Final = Service("cloudwatch", providers=providers.PROVIDERS)

__all__ = ["SERVICE"]
