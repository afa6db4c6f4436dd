"""A handler run cold, as a new execution environment runs it: its module imported anew
with exactly the environment it is given (module-scope configuration, clients and
Powertools' settings are read then, as on Lambda's INIT), then called once with a Lambda
context. A raised exception becomes the error envelope the Lambda Python runtime makes
(awslambdaric's ``build_fault_result``: ``errorType`` is the class's unqualified name).
What it writes is captured as Lambda sends it to the log group: what it prints (the EMF
metrics Powertools flushes) and what its module's Powertools ``logger`` writes (a logger
of the same service reuses the handler it had, so its stream is pointed here for the call).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from unittest import mock

from aws_lambda_powertools import Logger
from awslambdaric import bootstrap

from tests.support.aws import LambdaContext


@dataclass(frozen=True)
class ColdInvocation:
    """One invocation: the handler's return value or the error envelope, the error's
    ``errorType`` (``None`` on success) and the lines it wrote, in order."""

    payload: Any
    error_type: str | None
    lines: list[str]


def invoke_cold(handler: str, environment: Mapping[str, str], event: Any) -> ColdInvocation:
    """Import ``handler``'s module (``package.module.function``) anew with ``environment``
    added to the process's for the length of the call, and call it with ``event``. The
    module the process had comes back afterwards."""
    module_name, _, function_name = handler.rpartition(".")
    previous = sys.modules.pop(module_name, None)
    printed = io.StringIO()
    try:
        with (
            mock.patch.dict(os.environ, environment),
            contextlib.redirect_stdout(printed),
            contextlib.ExitStack() as logging_to,
        ):
            try:
                module = importlib.import_module(module_name)
                logger = getattr(module, "logger", None)
                if isinstance(logger, Logger):
                    handler = logger.registered_handler
                    logging_to.callback(handler.setStream, handler.setStream(printed))
                payload = getattr(module, function_name)(event, LambdaContext())
                error_type = None
            except Exception:
                payload = bootstrap.build_fault_result(sys.exc_info(), None)
                error_type = str(payload["errorType"])
    finally:
        sys.modules.pop(module_name, None)
        if previous is not None:
            sys.modules[module_name] = previous
    return ColdInvocation(payload, error_type, printed.getvalue().splitlines())
