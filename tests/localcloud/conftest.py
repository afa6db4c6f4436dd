"""Fixtures of the local cloud's own tests: the local cloud factory and its patches."""

from __future__ import annotations

from tests.support.cloud import make_cloud, patched

__all__ = ["make_cloud", "patched"]
