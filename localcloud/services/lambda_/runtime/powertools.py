"""Powertools' cold-start flags, one set per execution environment.

Powertools keeps "is this the first invocation" in module globals, set ``True`` at import
and cleared by the first decorated invocation. On Lambda each execution environment is a
process of its own; in-process the process is shared, so the first function would clear
the flag for all. :func:`cold_start` gives one environment its own flags for the length
of an invocation (invocations run one at a time), so each function's first invocation
logs ``cold_start: true`` and emits the ``ColdStart`` metric, whoever ran before it.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import Final

MODULES: Final = (
    "aws_lambda_powertools.logging.logger",
    "aws_lambda_powertools.tracing.tracer",
    "aws_lambda_powertools.metrics.provider.cold_start",
    "aws_lambda_powertools.metrics.base",
)
"""Each holds a module-level ``is_cold_start`` (aws-lambda-powertools 3.x):
``Logger.inject_lambda_context`` (``logging/logger.py``), ``Tracer.capture_lambda_handler``
(``tracing/tracer.py``), Metrics' ColdStart metric (``metrics/provider/cold_start.py``, read
by ``metrics/provider/base.py``) and the older MetricManager's (``metrics/base.py``)."""


@contextlib.contextmanager
def cold_start(flags: dict[str, bool]) -> Iterator[None]:
    """Give one execution environment its own Powertools cold-start flags meanwhile.

    During the block each flag holds ``flags``' value (``True`` for a new environment);
    afterwards what the invocation left is kept in ``flags`` and the process's value comes
    back. A Powertools module first imported during the block starts from its default.
    """
    saved: dict[str, bool] = {}
    for name in MODULES:
        namespace = vars(sys.modules[name]) if name in sys.modules else {}
        if "is_cold_start" in namespace:
            saved[name] = namespace["is_cold_start"]
            namespace["is_cold_start"] = flags.get(name, True)
    try:
        yield
    finally:
        for name in MODULES:
            namespace = vars(sys.modules[name]) if name in sys.modules else {}
            if "is_cold_start" not in namespace:
                continue
            flags[name] = bool(namespace["is_cold_start"])
            if name in saved:
                namespace["is_cold_start"] = saved[name]
