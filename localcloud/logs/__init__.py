"""CloudWatch Logs: the filter-pattern language AWS documents (:mod:`.filter_pattern`,
applied to moto's ``FilterLogEvents`` by :mod:`localcloud.patches.logs`), and delivering a
function's lines to its log group (:mod:`.delivery`).

May import: :mod:`localcloud.text`.
"""

from localcloud.logs.delivery import Delivery
from localcloud.logs.filter_pattern import FilterPatternError, matches, parse

__all__ = ["Delivery", "FilterPatternError", "matches", "parse"]
