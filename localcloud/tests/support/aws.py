"""AWS-side constants and small shapes of the local cloud's tests."""

from __future__ import annotations

import socket

REGION = "us-east-1"
"""The region every test account is in unless a test names another."""


def free_port() -> int:
    """A free TCP port on 127.0.0.1 for a local-cloud server."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
