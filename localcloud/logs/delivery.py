"""An invocation's lines into its function's CloudWatch Logs group, as Lambda delivers
them: one event per line, in the execution environment's log stream.

A log group that is gone loses the lines, as on AWS when the function's role may not
create it again (the template's roles grant only ``logs:CreateLogStream`` and
``logs:PutLogEvents``); it never fails the invocation, and it is said once per group
until the group is back.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from localcloud.text import say

ClientFactory = Callable[[str], Any]


class Delivery:
    """The log sink of an account's functions (``(group, stream, events)``)."""

    def __init__(self, client: ClientFactory) -> None:
        self._client = client
        self._lost: set[str] = set()
        self._lock = threading.Lock()

    def __call__(self, group: str, stream: str, events: list[tuple[int, str]]) -> None:
        if not events:
            return
        logs = self._client("logs")
        try:
            existing = logs.describe_log_streams(logGroupName=group, logStreamNamePrefix=stream)[
                "logStreams"
            ]
            if not any(s["logStreamName"] == stream for s in existing):
                logs.create_log_stream(logGroupName=group, logStreamName=stream)
            logs.put_log_events(
                logGroupName=group,
                logStreamName=stream,
                logEvents=[{"timestamp": ts, "message": message} for ts, message in events],
            )
        except logs.exceptions.ResourceNotFoundException:
            with self._lock:
                first = group not in self._lost
                self._lost.add(group)
            if first:
                say(
                    f"[logs] log group {group} does not exist: this function's log lines are "
                    "lost until it is created again (as on AWS)"
                )
            return
        with self._lock:
            self._lost.discard(group)
