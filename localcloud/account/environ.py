"""The process environment while a local cloud runs: the host's own ``AWS_*`` variables
(a profile, an endpoint, real credentials) hidden from everything in this process, so the
handlers it runs reach only the emulator, and the cloud's own set; all put back as they
were when it stops."""

from __future__ import annotations

import os
from collections.abc import Mapping


class SavedEnviron:
    """Changes to ``os.environ`` that :meth:`restore` takes back, each variable to the
    value it had before the first change."""

    def __init__(self) -> None:
        self._saved: dict[str, str | None] = {}

    def hide(self, names: list[str]) -> None:
        """Remove ``names`` from the environment."""
        for name in names:
            self._saved.setdefault(name, os.environ.get(name))
            os.environ.pop(name, None)

    def set(self, values: Mapping[str, str]) -> None:
        """Set ``values`` in the environment."""
        for name, value in values.items():
            self._saved.setdefault(name, os.environ.get(name))
            os.environ[name] = value

    def only_ours(self, ours: Mapping[str, str]) -> None:
        """Hide every ``AWS_*`` variable but ``ours``, then set ``ours``."""
        self.hide([name for name in os.environ if name.startswith("AWS_") and name not in ours])
        self.set(ours)

    def restore(self) -> None:
        """Put every changed variable back (unset those that were unset)."""
        for name, value in self._saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        self._saved.clear()
