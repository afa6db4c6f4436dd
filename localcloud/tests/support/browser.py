"""A real browser for page tests: Debian's chromium, which Playwright drives (its own
browser downloads cannot reach the internet here)."""

from __future__ import annotations

import shutil

import pytest

CHROMIUM_FLAGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def chromium() -> str:
    """The chromium executable; fails the test, saying how to install it, when absent."""
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.fail(
            "chromium not found: `make test` installs Debian's chromium as root, or run "
            "`sudo apt-get install chromium`",
            pytrace=False,
        )
    return path
