"""The state of the account, read through its public APIs: the one place that reads queue
depths, orders, dead letters, ``RESULT`` log lines and execution histories for everything
that shows or checks them (the scenarios, ``verify``, ``status``, the live view, the
tests), against AWS and the local cloud alike (:mod:`.reads`, and :mod:`.overview` for
the bounded account-at-a-glance of ``status`` and the live view); and the history of what
the local cloud's functions did (:mod:`.history`).

May import: :mod:`localcloud.lambda_runtime` (the history listens to invocations).
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
    order_id_of,
    queue_depth,
    queue_empty,
    results,
    run_execution,
    scan_ids,
    start_execution,
    stored,
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
    "Target",
    "Seen",
    "TaskAttempt",
    "account_state",
    "dead_letters",
    "executions",
    "invocations",
    "log_messages",
    "mappings",
    "max_receive_count",
    "now_ms",
    "order_id_of",
    "queue_depth",
    "queue_empty",
    "queues",
    "remember",
    "results",
    "run_execution",
    "scan_ids",
    "start_execution",
    "stored",
    "table_page",
    "task_attempts",
    "task_events",
    "visibility_timeout",
    "wait_for_execution",
]
