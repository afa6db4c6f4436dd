"""Reading what a function printed, as the fixture apps' functions print it: one JSON
object a line in the function's log group (``{"received": <event>, …}``)."""

from __future__ import annotations

import json
from typing import Any

from localcloud.account import LocalCloud


def printed(cloud: LocalCloud, logical_id: str) -> list[dict[str, Any]]:
    """Every JSON line the function ``logical_id`` (of the cloud's stack) printed, oldest
    first (by the log event's time, then its place in its stream); ``[]`` when it has no
    log group yet (never invoked)."""
    function = cloud.function(logical_id)
    logs = cloud.client("logs")
    try:
        streams = logs.describe_log_streams(logGroupName=function.log_group)["logStreams"]
    except logs.exceptions.ResourceNotFoundException:
        return []
    found: list[tuple[int, int, dict[str, Any]]] = []
    for stream in streams:
        events = logs.get_log_events(
            logGroupName=function.log_group, logStreamName=stream["logStreamName"]
        )["events"]
        for index, event in enumerate(events):
            if event["message"].startswith("{"):
                found.append((event["timestamp"], index, json.loads(event["message"])))
    return [line for _, _, line in sorted(found, key=lambda item: item[:2])]
