"""The state of the account, read through its public APIs: the one place that reads queue
depths, orders, dead letters, ``RESULT`` log lines and execution histories, for everything
that shows or checks them (the scenarios, ``verify``, ``status``, the live view, the
tests), against AWS and the local cloud alike (:mod:`~localcloud.state.reads`); and the
history of what the local cloud's functions did (:mod:`~localcloud.state.history`).

May import: :mod:`localcloud.lambda_runtime` (the history listens to invocations).
"""

from localcloud.state.reads import (
    DLQ_SCAN_LIMIT,
    MAPPINGS_SHOWN,
    TABLE_PAGE_ITEMS,
    Target,
    TaskAttempt,
    dead_letters,
    executions,
    invocations,
    log_messages,
    mappings,
    max_receive_count,
    now_ms,
    order_id_of,
    queue_depth,
    queue_empty,
    queues,
    results,
    run_execution,
    scan_ids,
    stack_state,
    start_execution,
    stored,
    table_page,
    task_attempts,
    task_events,
    visibility_timeout,
    wait_for_execution,
)

__all__ = [
    "Target",
    "now_ms",
    "log_messages",
    "results",
    "invocations",
    "stored",
    "scan_ids",
    "queue_depth",
    "queue_empty",
    "DLQ_SCAN_LIMIT",
    "dead_letters",
    "order_id_of",
    "max_receive_count",
    "visibility_timeout",
    "TaskAttempt",
    "task_attempts",
    "start_execution",
    "wait_for_execution",
    "run_execution",
    "queues",
    "mappings",
    "TABLE_PAGE_ITEMS",
    "MAPPINGS_SHOWN",
    "table_page",
    "executions",
    "task_events",
    "stack_state",
]
