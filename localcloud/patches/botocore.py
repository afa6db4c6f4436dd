"""botocore's answer from moto, with injectable faults around it.

moto answers botocore's ``before-send`` event through one handler,
``moto.core.models.botocore_stubber``, an instance of ``BotocoreStubber`` that moto puts
in botocore's ``BUILTIN_HANDLERS``; every client the process makes calls it. Its
``__call__`` runs inside :func:`localcloud.faults.around_request`, which passes straight
through unless a fault plan or a simulated network is in force (in-process only).
"""

from __future__ import annotations

from typing import Any, Final

from botocore.awsrequest import AWSPreparedRequest
from moto.core.botocore_stubber import BotocoreStubber

from localcloud import faults
from localcloud.patches.registry import Method, Patch


def _with_faults(original: Method) -> Method:
    def __call__(  # noqa: N807 - the method moto's handler is called through
        self: BotocoreStubber, event_name: str, request: AWSPreparedRequest, **kwargs: Any
    ) -> Any:
        return faults.around_request(request, lambda: original(self, event_name, request, **kwargs))

    return __call__


PATCHES: Final = (
    Patch(
        BotocoreStubber,
        "__call__",
        ("self", "event_name", "request"),
        _with_faults,
        "faults are injected between botocore and moto's answer",
    ),
)
