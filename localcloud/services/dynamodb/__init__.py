"""DynamoDB: conditional writes made atomic (moto's check and write are two unlocked
steps), every ``PutItem``, ``UpdateItem`` and ``DeleteItem`` handed to the write
listeners as DynamoDB decided it (:mod:`.patches`), and ``AWS::DynamoDB::Table``
(:mod:`.providers`).

May import: the engine's provider contract, the patch registry, :mod:`localcloud.text`.
"""

from typing import Final

from localcloud.services.dynamodb import patches, providers
from localcloud.services.service import Service

SERVICE: Final = Service("dynamodb", providers=providers.PROVIDERS, patches=patches.PATCHES)

__all__ = ["SERVICE"]
