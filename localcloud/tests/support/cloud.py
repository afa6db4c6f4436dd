"""Starting a local cloud for the local cloud's own tests: in-process, or as a server on a
free loopback port, with the suite's jobs app (``fixtures/apps/jobs_app``) deployed unless
told otherwise; and the fixtures the local cloud's tests share (their conftest imports
them)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import pytest

from localcloud import services
from localcloud.account import LocalCloud
from localcloud.cloudformation.template import Template, load
from localcloud.tests.support.aws import free_port
from localcloud.tests.support.paths import JOBS_APP

STACK_NAME = "jobs-app"
"""The stack the jobs app is deployed as (its samconfig's default)."""


def app_template(
    config_env: str = "default",
    parameter_overrides: str | Sequence[str] | Mapping[str, Any] | None = None,
) -> Template:
    """The jobs app's ``template.yaml``, its parameters as ``sam deploy --config-env
    <config_env>`` resolves them (its own ``samconfig.toml``)."""
    return load(
        JOBS_APP / "template.yaml", config_env=config_env, parameter_overrides=parameter_overrides
    )


@contextlib.contextmanager
def started(
    *,
    server: bool = False,
    config_env: str = "default",
    parameter_overrides: str | Sequence[str] | Mapping[str, Any] | None = None,
    **options: Any,
) -> Iterator[LocalCloud]:
    """A running :class:`LocalCloud` with ``options`` (its keyword arguments:
    ``visibility_timeout``, ``template`` …; ``template`` defaults to :func:`app_template`
    of ``config_env`` and ``parameter_overrides``, ``template=None`` is an empty account),
    stopped on exit; ``server=True`` serves it on a free port of 127.0.0.1."""
    if "template" not in options:
        options["template"] = app_template(config_env, parameter_overrides)
    if options["template"] is not None:
        options.setdefault("stack_name", STACK_NAME)
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
    services.install()
    yield
    services.uninstall()
