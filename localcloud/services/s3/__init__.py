"""S3: ``AWS::S3::Bucket``.

May import: the engine's provider contract.
"""

from typing import Final

from localcloud.services.s3 import providers
from localcloud.services.service import Service

SERVICE: Final = Service("s3", providers=providers.PROVIDERS)

__all__ = ["SERVICE"]
