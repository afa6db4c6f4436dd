"""What the live view of an account shows: the account as its public APIs answer it
(:func:`~localcloud.state.account_state`), one page of each list of its history, as the
page's query arguments choose, and what the account's extensions add.

May import: :mod:`localcloud.state`, :mod:`localcloud.server.view` (the reader's shape),
:mod:`.extension` and :mod:`localcloud.text`.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from localcloud.account.extension import Extension, merged
from localcloud.server import view as view_module
from localcloud.state import Seen, Target, account_state
from localcloud.state.history import History
from localcloud.text import say


def page_number(value: str | None) -> int:
    """A page number from a query argument: 1 unless a positive integer is given."""
    return int(value) if value is not None and value.isdigit() and int(value) > 0 else 1


TABLE_PAGE_ARGUMENT = "after."
"""``?after.<table>=<key>``: the page of ``<table>`` that starts after ``<key>``."""


def view_reader(
    target: Target,
    history: History,
    title: str,
    seen: Seen | None = None,
    *,
    extensions: Sequence[Extension] = (),
) -> view_module.Reader:
    """The live view's reader: the account as ``target`` answers it
    (:func:`~localcloud.state.account_state`, ``seen`` what it held before), one page of
    ``history`` (the page's query arguments, each optional, choose the pages), then each
    extension's data over it."""
    seen = seen if seen is not None else Seen()

    def read(args: Mapping[str, str]) -> Mapping[str, Any]:
        after = {
            name.removeprefix(TABLE_PAGE_ARGUMENT): value
            for name, value in args.items()
            if name.startswith(TABLE_PAGE_ARGUMENT)
        }
        data: dict[str, Any] = {
            "title": title,
            **account_state(target, seen, after=after),
            **history.pages(
                writes=page_number(args.get("writes")),
                invocations=page_number(args.get("invocations")),
            ),
        }
        for extension in extensions:
            if extension.read is not None:
                data = merged(data, extension.read(args))
        return data

    return read


class Watcher:
    """Reads the account through ``read`` on a thread of its own, as an open live view
    would, so that what is created and deleted between two looks (a state machine a
    cleanup deleted, its executions) is still shown, as gone, afterwards: every
    ``interval_s`` seconds while ``changed()`` (a count of changing requests) moves, and
    every ``idle_read_s`` seconds regardless. An idle account is not read every second:
    with 100 queues a read costs about 0.1 s of CPU."""

    def __init__(
        self,
        read: view_module.Reader,
        interval_s: float = 1.0,
        *,
        changed: Callable[[], int] = lambda: 0,
        idle_read_s: float = 10.0,
    ) -> None:
        self._stop = threading.Event()

        def run() -> None:
            seen, last_read = changed(), time.monotonic()
            while not self._stop.wait(interval_s):
                now, count = time.monotonic(), changed()
                if count == seen and now - last_read < idle_read_s:
                    continue
                seen, last_read = count, now
                try:
                    read({})
                except Exception as exc:  # noqa: BLE001 - a read that fails now is retried
                    say(f"[view] reading the account failed: {type(exc).__name__}: {exc}")

        self._thread = threading.Thread(target=run, name="localcloud-watch", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop reading, and wait (at most 2 s) for a read in progress: a longer one goes on
        alone, against an account that is stopping (the thread is a daemon)."""
        self._stop.set()
        self._thread.join(timeout=2)
