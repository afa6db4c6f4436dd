"""S3: ``AWS::S3::Bucket`` and ``BucketPolicy`` (:mod:`.providers`); bucket policies
stored, not evaluated (:mod:`.patches`).

May import: the engine's provider contract, the patch registry.
"""

from typing import Final

from localcloud.services.s3 import patches, providers
from localcloud.services.service import Service

SERVICE: Final = Service("s3", providers=providers.PROVIDERS, patches=patches.PATCHES)

__all__ = ["SERVICE"]
