"""Fixtures of the local cloud's own tests: fake credentials, the local cloud factory and
its patches, and the markers the suite uses (registered here, so the suite runs the same
from a checkout as from an installed wheel, where no project configuration is around).

Every test here is marked ``localcloud``; ``slow`` marks a module of many seconds or a
browser, which the quick loop (``pytest -m "not slow"``) leaves out.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from moto import mock_aws

from localcloud.tests.support.aws import REGION
from localcloud.tests.support.cloud import make_cloud, patched
from localcloud.tests.support.paths import TESTS

__all__ = ["make_cloud", "patched"]

collect_ignore_glob = ["fixtures/*"]
"""The fixture apps' own tests (``fixtures/apps/*/tests``) are inputs, run by ``localcloud
test-app`` against a deployed stack, never collected by this suite."""

MARKERS = {
    "localcloud": "the local cloud itself, module by module (localcloud/tests)",
    "slow": "a local cloud test module of many seconds or a browser: the quick loop leaves it out",
}


UNRAISABLE = "error::pytest.PytestUnraisableExceptionWarning"
"""An exception nobody could catch (a ``__del__``, a thread's end) fails the test."""


def pytest_configure(config: pytest.Config) -> None:
    """The markers and warning filter the repository's configuration also sets, for a run
    from an installed wheel, where no project configuration is read."""
    registered = {line.split(":")[0] for line in config.getini("markers")}
    for name, description in MARKERS.items():
        if name not in registered:
            config.addinivalue_line("markers", f"{name}: {description}")
    if UNRAISABLE not in config.getini("filterwarnings"):
        config.addinivalue_line("filterwarnings", UNRAISABLE)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.is_relative_to(TESTS):
            item.add_marker("localcloud")


@pytest.fixture(autouse=True)
def aws_credentials(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fake credentials and region: no test can reach a real account."""
    for name, value in {
        "AWS_ACCESS_KEY_ID": "testing",
        "AWS_SECRET_ACCESS_KEY": "testing",
        "AWS_SECURITY_TOKEN": "testing",
        "AWS_SESSION_TOKEN": "testing",
        "AWS_DEFAULT_REGION": REGION,
    }.items():
        monkeypatch.setenv(name, value)
    for name in ("AWS_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def aws() -> Iterator[None]:
    """moto's in-memory AWS for the test (no local cloud around it)."""
    with mock_aws():
        yield
