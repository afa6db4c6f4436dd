"""Fixtures of the tooling's own tests: Order Guard's cloud factory."""

from __future__ import annotations

from tests.support.order_guard import make_cloud

__all__ = ["make_cloud"]
