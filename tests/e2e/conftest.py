"""Fixtures of the end-to-end tests: the local cloud factory, and a headless Chromium for
the page tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, sync_playwright

from localcloud.tests.support.browser import CHROMIUM_FLAGS, chromium
from tests.support.order_guard import make_cloud

__all__ = ["browser", "make_cloud"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's chromium, driven by Playwright, for the tests of one file."""
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=CHROMIUM_FLAGS)
        yield launched
        launched.close()
