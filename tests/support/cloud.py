"""Starting a local cloud for a test: in-process, or as a server on a free loopback port."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from localcloud.account import LocalCloud
from tests.support.aws import free_port


@contextlib.contextmanager
def started(*, server: bool = False, **options: Any) -> Iterator[LocalCloud]:
    """A running :class:`LocalCloud` with ``options`` (its keyword arguments:
    ``visibility_timeout``, ``template``, ``parameter_overrides`` …), stopped on exit;
    ``server=True`` serves it on a free port of 127.0.0.1."""
    with LocalCloud(server_port=free_port() if server else None, **options) as running:
        yield running
