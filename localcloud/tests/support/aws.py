"""AWS-side constants and small shapes of the local cloud's tests."""

from __future__ import annotations

import io
import socket
import zipfile
from typing import Any

import boto3
from botocore.config import Config

REGION = "us-east-1"
"""The region every test account is in unless a test names another."""


def free_port() -> int:
    """A free TCP port on 127.0.0.1 for a local-cloud server."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def handler_zip(source: str) -> bytes:
    """A deployment package of one module, ``app.py`` holding ``source`` (its handler is
    ``app.handler``)."""
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        zipped.writestr("app.py", source)
    return archive.getvalue()


def served_client(service: str, port: int, config: Config | None = None) -> Any:
    """A boto3 client of a local-cloud server on ``127.0.0.1:port``, with its fake
    credentials."""
    return boto3.client(
        service,  # type: ignore[call-overload]
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name=REGION,
        aws_access_key_id="localcloud",
        aws_secret_access_key="localcloud",
        config=config,
    )
