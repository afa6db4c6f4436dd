"""CloudWatch Logs: the filter-pattern language AWS documents (:mod:`.filter_pattern`,
applied to moto's ``FilterLogEvents`` by :mod:`.patches`), delivering a function's lines
to its log group (:mod:`.delivery`), and ``AWS::Logs::LogGroup`` and ``QueryDefinition``
(:mod:`.providers`).

May import: the engine's provider contract, the patch registry, :mod:`localcloud.text`.
"""

from typing import Final

from localcloud.services.logs import patches, providers
from localcloud.services.logs.delivery import Delivery
from localcloud.services.logs.filter_pattern import FilterPatternError, matches, parse
from localcloud.services.service import Service

SERVICE: Final = Service(
    "logs", providers=providers.PROVIDERS, patches=patches.PATCHES, checks=patches.CHECKS
)

__all__ = ["SERVICE", "Delivery", "FilterPatternError", "matches", "parse"]
