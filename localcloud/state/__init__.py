"""The state of the account, read through its public APIs: the one place that reads queue
depths, dead letters, log lines, invocations and execution histories for everything that
shows or checks them (a project's scenarios and checks, ``status``, the live view, the
tests), against AWS and the local cloud alike (:mod:`.reads`, and :mod:`.overview` for
the bounded account-at-a-glance of ``status`` and the live view); and the history of what
the account's functions did and every write DynamoDB decided (:mod:`.history`). Nothing
here knows an application: what a body or an item means is the caller's.

May import: :mod:`localcloud.services.lambda_.runtime` (the history listens to invocations).
"""

from localcloud.state.overview import (
    HISTORY_EVENTS_SHOWN,
    MAPPINGS_SHOWN,
    RESOURCES_SHOWN,
    TABLE_PAGE_ITEMS,
    TEXT_SHOWN,
    Seen,
    account_state,
    executions,
    mappings,
    queues,
    remember,
    table_page,
    task_events,
)
from localcloud.state.reads import (
    DLQ_SCAN_LIMIT,
    Target,
    TaskAttempt,
    dead_letters,
    invocations,
    log_messages,
    max_receive_count,
    now_ms,
    queue_depth,
    queue_empty,
    run_execution,
    start_execution,
    task_attempts,
    visibility_timeout,
    wait_for_execution,
)

__all__ = [
    "DLQ_SCAN_LIMIT",
    "HISTORY_EVENTS_SHOWN",
    "MAPPINGS_SHOWN",
    "RESOURCES_SHOWN",
    "TABLE_PAGE_ITEMS",
    "TEXT_SHOWN",
    "Seen",
    "Target",
    "TaskAttempt",
    "account_state",
    "dead_letters",
    "executions",
    "invocations",
    "log_messages",
    "mappings",
    "max_receive_count",
    "now_ms",
    "queue_depth",
    "queue_empty",
    "queues",
    "remember",
    "run_execution",
    "start_execution",
    "table_page",
    "task_attempts",
    "task_events",
    "visibility_timeout",
    "wait_for_execution",
]
