"""The functions' dependencies as ``make wheelhouse`` downloaded them, for builds of Order
Guard that need no index (``make check`` runs with the network off)."""

from __future__ import annotations

import hashlib

from tests.support.paths import ROOT

WHEELHOUSE = ROOT / ".venv" / "wheelhouse"
"""The dependencies ``make wheelhouse`` downloaded for Lambda's platform (src/Makefile's
``download``), stamped with the requirements they were downloaded for."""


def offline() -> dict[str, str]:
    """pip's settings that install from :data:`WHEELHOUSE` with no index, when it holds
    the current requirements' download (else none: pip uses its index)."""
    digest = hashlib.sha256((ROOT / "src" / "requirements.txt").read_bytes()).hexdigest()
    if not (WHEELHOUSE / f".requirements-{digest[:16]}").is_file():
        return {}
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(WHEELHOUSE)}
