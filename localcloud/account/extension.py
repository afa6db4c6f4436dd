"""What a project hands a local account: the one interface through which an application's
tooling adds to the local cloud without the local cloud knowing it.

An :class:`Extension` is given to :class:`~localcloud.account.LocalCloud` (``extensions=``)
and lives as long as the cloud does: its invocation listeners hear every invocation of
the account's functions from ``start()`` to ``stop()``; its view part adds sections to the
live view, and its reader the data they show (also in ``state.json``). The other hooks a
project may set are the local cloud's own, documented where they are: around the server's
answer to every AWS API request a function's process makes
(:func:`localcloud.server.hooks.around_served`), around moto's answer to every request of
a client in this process (:func:`localcloud.patches.botocore.around_requests`) and around
every invocation through the invoke API (:func:`localcloud.services.lambda_.set_invoke_wrapper`),
which is how fault injection is built; and what an account holds at the start is made
through its own APIs, as a learner's machine would be (``cloud.client(...)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localcloud.server.view import Reader, ViewPart
from localcloud.services.lambda_ import InvocationListener


@dataclass(frozen=True)
class Extension:
    """A project's additions to one local account.

    Args:
        listeners: called as ``listener(function, event, invocation)`` after each
            invocation of the account's functions (:data:`~localcloud.services.lambda_.
            InvocationListener`), in the invoking thread: it must be quick and must not
            raise (what it raises reaches the invocation's caller).
        view: sections of the live view (:class:`~localcloud.server.view.ViewPart`).
        read: the data those sections show, from the page's query arguments: merged over
            the account's own (its ``pages`` entries are added to the account's
            ``pages``).
    """

    listeners: Sequence[InvocationListener] = ()
    view: ViewPart | None = None
    read: Reader | None = None


def merged(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``extra`` over it, their ``pages`` entries combined."""
    pages = {**base.get("pages", {}), **extra.get("pages", {})}
    return {**base, **extra, "pages": pages}
