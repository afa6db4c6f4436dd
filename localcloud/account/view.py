"""What the live view of an account shows: the account as its public APIs answer it
(:func:`~localcloud.state.account_state`) and one page of each list of its history, as
the page's query arguments choose.

May import: :mod:`localcloud.state` and :mod:`localcloud.server.view` (the reader's
shape).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localcloud.server import view as view_module
from localcloud.state import Seen, Target, account_state
from localcloud.state.history import History


def _page(value: str | None) -> int:
    """A page number from a query argument: 1 unless a positive integer is given."""
    return int(value) if value is not None and value.isdigit() and int(value) > 0 else 1


TABLE_PAGE_ARGUMENT = "after."
"""``?after.<table>=<id>``: the page of ``<table>`` that starts after the key ``<id>``."""


def view_reader(
    target: Target,
    history: History,
    title: str,
    seen: Seen | None = None,
    *,
    lab: str | None = None,
) -> view_module.Reader:
    """The live view's reader: the account as ``target`` answers it
    (:func:`~localcloud.state.account_state`, ``seen`` what it held before) and one page
    of ``history`` (the page's query arguments, each optional, choose the pages)."""
    seen = seen if seen is not None else Seen()

    def read(args: Mapping[str, str]) -> Mapping[str, Any]:
        after = {
            name.removeprefix(TABLE_PAGE_ARGUMENT): value
            for name, value in args.items()
            if name.startswith(TABLE_PAGE_ARGUMENT)
        }
        return {
            "title": title,
            "lab": lab,
            **account_state(target, seen, after=after),
            **history.pages(
                decisions=_page(args.get("decisions")),
                writes=_page(args.get("writes")),
                invocations=_page(args.get("invocations")),
            ),
        }

    return read
