"""Starting a local cloud for a test: in-process, or as a server on a free loopback port;
and the fixtures the local cloud's and the end-to-end tests share (their conftest files
import them)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from localcloud import patches
from localcloud.account import LocalCloud
from tests.support.aws import free_port


@contextlib.contextmanager
def started(*, server: bool = False, **options: Any) -> Iterator[LocalCloud]:
    """A running :class:`LocalCloud` with ``options`` (its keyword arguments:
    ``visibility_timeout``, ``template``, ``parameter_overrides`` …), stopped on exit;
    ``server=True`` serves it on a free port of 127.0.0.1."""
    with LocalCloud(server_port=free_port() if server else None, **options) as running:
        yield running


@pytest.fixture
def make_cloud() -> Iterator[Callable[..., LocalCloud]]:
    """The local cloud factory: ``make_cloud(server=False, **options)`` starts a
    :class:`LocalCloud` (:func:`started`) that stops after the test. Module-wide clouds
    use :func:`started` in a module fixture."""
    with contextlib.ExitStack() as stack:

        def make(*, server: bool = False, **options: Any) -> LocalCloud:
            return stack.enter_context(started(server=server, **options))

        yield make


@pytest.fixture
def patched() -> Iterator[None]:
    """The local cloud's patches of moto in force for the test (the refusals AWS makes,
    the filter-pattern language …), as a local cloud has them."""
    patches.install()
    yield
    patches.uninstall()
