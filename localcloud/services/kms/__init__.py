"""KMS: ``AWS::KMS::Key``.

May import: the engine's provider contract.
"""

from typing import Final

from localcloud.services.kms import providers
from localcloud.services.service import Service

SERVICE: Final = Service("kms", providers=providers.PROVIDERS)

__all__ = ["SERVICE"]
