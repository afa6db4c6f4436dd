"""Whether the account changed: a count of the requests moto answered that are not reads.

Every AWS request moto answers through a service's query or JSON protocol, from the HTTP
server or from an in-process client, goes through ``BaseResponse.call_action``; the
patched one counts each whose action is not a read (``Describe*``, ``Get*``, ``List*``,
``BatchGet*``, ``Scan``, ``Query``, ``Head*``). The live view's watcher reads the account
only when the count moved (an idle account then costs nothing to watch), and now and then
regardless (a change moto makes on its own, or through a protocol that bypasses
``call_action``, such as S3's REST handlers).
"""

from __future__ import annotations

from typing import Any, Final

from moto.core.responses import BaseResponse
from moto.core.utils import camelcase_to_underscores

from localcloud.patches.registry import Method, Patch

READS: Final = ("describe", "get", "list", "batch_get", "scan", "query", "head")
"""Action prefixes that read (in moto's snake case)."""
_latest = 0


def generation() -> int:
    """How many changing requests moto has answered in this process (only ever grows)."""
    return _latest


def _counted(original: Method) -> Method:
    def call_action(self: BaseResponse) -> Any:
        global _latest
        if not camelcase_to_underscores(str(self._get_action() or "")).startswith(READS):
            _latest += 1  # a lost increment under a race still moves the count
        return original(self)

    return call_action


PATCHES: Final = (
    Patch(
        BaseResponse,
        "call_action",
        ("self",),
        _counted,
        "the live view's watcher reads the account only after it changed",
    ),
)
