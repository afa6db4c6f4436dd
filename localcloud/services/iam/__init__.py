"""IAM: ``AWS::IAM::Role`` with its inline and AWS managed policies (created, not
enforced locally; :mod:`.providers`); IAM's words for an entity that does not exist
(:mod:`.patches`).

May import: the engine's provider contract, the patch registry.
"""

from typing import Final

from localcloud.services.iam import patches, providers
from localcloud.services.service import Service

SERVICE: Final = Service("iam", providers=providers.PROVIDERS, patches=patches.PATCHES)

__all__ = ["SERVICE"]
