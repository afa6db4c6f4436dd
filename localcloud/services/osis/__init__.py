"""OpenSearch Ingestion (moto's ``osis``): a pipeline's configuration that is not YAML
answers ``400 ValidationException`` (:mod:`.patches`).

May import: the patch registry.
"""

from typing import Final

from localcloud.services.osis import patches
from localcloud.services.service import Service

SERVICE: Final = Service("osis", patches=patches.PATCHES)

__all__ = ["SERVICE"]
