"""The proofs' fixtures: the local cloud the generated histories run on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from localcloud.account import LocalCloud
from tests.support.histories import history_cloud


@pytest.fixture(scope="module")
def cloud() -> Iterator[LocalCloud]:
    """One local cloud per module for the histories state machine."""
    with history_cloud() as running:
        yield running
