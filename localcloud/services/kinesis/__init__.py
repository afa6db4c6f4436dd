"""Kinesis Data Streams: ``AWS::Kinesis::Stream``.

May import: the engine's provider contract.
"""

from typing import Final

from localcloud.services.kinesis import providers
from localcloud.services.service import Service

SERVICE: Final = Service("kinesis", providers=providers.PROVIDERS)

__all__ = ["SERVICE"]
