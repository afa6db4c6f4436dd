"""Screenshots of the page tests, kept in ``test-artifacts/`` for a reader of the run."""

from __future__ import annotations

from pathlib import Path

from playwright.sync_api import Page

from tests.support.paths import ROOT

ARTIFACTS = ROOT / "test-artifacts"


def screenshot(page: Page, name: str) -> Path:
    """The whole of ``page`` as ``test-artifacts/<name>`` (PNG); its path."""
    ARTIFACTS.mkdir(exist_ok=True)
    path = ARTIFACTS / name
    page.screenshot(path=str(path), full_page=True)
    return path
