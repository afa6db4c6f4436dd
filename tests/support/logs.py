"""The JSON lines a worker's Powertools logger writes, captured for a test."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import Any


class LogCapture:
    """The JSON lines a worker's Powertools logger wrote during a test."""

    def __init__(self, stream: io.StringIO) -> None:
        self._stream = stream

    def lines(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self._stream.getvalue().splitlines() if line]

    def results(self) -> list[dict[str, Any]]:
        return [line for line in self.lines() if line.get("message") == "RESULT"]

    @property
    def text(self) -> str:
        return self._stream.getvalue()


def capture(logger: Any) -> Iterator[LogCapture]:
    """Route ``logger``'s handler to a buffer while the generator is open."""
    handler = logger.registered_handler
    stream = io.StringIO()
    previous = handler.setStream(stream)
    try:
        yield LogCapture(stream)
    finally:
        handler.setStream(previous)
