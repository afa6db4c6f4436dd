"""Starting Order Guard on the local cloud for the end-to-end tests: in-process, or as a
server on a free loopback port (:class:`~order_guard_tools.cloud.OrderGuardCloud`: the
stack and its write decisions in the live view); and their cloud factory fixture (the
end-to-end conftest imports it)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from order_guard_tools.cloud import OrderGuardCloud
from tests.support.aws import free_port


@contextlib.contextmanager
def started(*, server: bool = False, **options: Any) -> Iterator[OrderGuardCloud]:
    """A running :class:`OrderGuardCloud` with ``options`` (its keyword arguments:
    ``visibility_timeout``, ``template``, ``parameter_overrides`` …), stopped on exit;
    ``server=True`` serves it on a free port of 127.0.0.1."""
    with OrderGuardCloud(server_port=free_port() if server else None, **options) as running:
        yield running


@pytest.fixture
def make_cloud() -> Iterator[Callable[..., OrderGuardCloud]]:
    """The cloud factory: ``make_cloud(server=False, **options)`` starts an
    :class:`OrderGuardCloud` (:func:`started`) that stops after the test. Module-wide
    clouds use :func:`started` in a module fixture."""
    with contextlib.ExitStack() as stack:

        def make(*, server: bool = False, **options: Any) -> OrderGuardCloud:
            return stack.enter_context(started(server=server, **options))

        yield make
