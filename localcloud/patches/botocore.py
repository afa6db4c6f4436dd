"""botocore's answer from moto, with a hook around it (fault injection's).

moto answers botocore's ``before-send`` event through one handler,
``moto.core.models.botocore_stubber``, an instance of ``BotocoreStubber`` that moto puts
in botocore's ``BUILTIN_HANDLERS``; every client the process makes calls it. The patched
``__call__`` runs moto's answer through the handler set with :func:`around_requests`
(a project's own: a fault injector sets one when it is first used),
or answers directly when none is set.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from botocore.awsrequest import AWSPreparedRequest
from moto.core.botocore_stubber import BotocoreStubber

from localcloud.patches.registry import Method, Patch

AroundRequest = Callable[[AWSPreparedRequest, Callable[[], Any]], Any]
"""(request, moto's answer to it) → the answer botocore gets."""
_AROUND: AroundRequest | None = None


def around_requests(handler: AroundRequest | None) -> None:
    """Run every botocore request's answer from moto through ``handler`` (``None``: none)."""
    global _AROUND
    _AROUND = handler


def _with_hook(original: Method) -> Method:
    def __call__(  # noqa: N807 - the method moto's handler is called through
        self: BotocoreStubber, event_name: str, request: AWSPreparedRequest, **kwargs: Any
    ) -> Any:
        around = _AROUND
        if around is None:
            return original(self, event_name, request, **kwargs)
        return around(request, lambda: original(self, event_name, request, **kwargs))

    return __call__


PATCHES: Final = (
    Patch(
        BotocoreStubber,
        "__call__",
        ("self", "event_name", "request"),
        _with_hook,
        "a hook between botocore and moto's answer (faults are injected there)",
    ),
)
