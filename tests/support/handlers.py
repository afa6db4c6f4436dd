"""A handler run cold, as a new execution environment runs it: its module imported anew
with the function's environment and the variables Lambda itself defines (module-scope
configuration, clients and Powertools' settings are read then, as on Lambda's INIT),
then called once with a Lambda context. A raised exception becomes the error envelope
the Lambda Python runtime makes (awslambdaric's ``build_fault_result``: ``errorType`` is
the class's unqualified name).
What it writes is captured as Lambda sends it to the log group: what it prints (the EMF
metrics Powertools flushes) and what its module's Powertools ``logger`` writes (a logger
of the same service reuses the handler it had, so its stream is pointed here for the call).
Logging is left as it was found (:func:`logging_as_found`): Powertools configures the
standard logger of a service once per process and every later ``Logger`` of that service
reuses its handler, so a handler made during the call, bound to the call's buffer, would
swallow every later line of that service in the process (an in-process local cloud's
functions' included).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any
from unittest import mock

from aws_lambda_powertools import Logger
from awslambdaric import bootstrap

from tests.support.aws import LambdaContext


@contextlib.contextmanager
def logging_as_found() -> Iterator[None]:
    """Every standard logger's handlers and attributes, and the root handlers' filters, as
    they were before the block: what the block added is taken away (a logger made in the
    block is left with no handler and none of the attributes Powertools marks it with)."""
    loggers = {
        name: (list(found.handlers), set(vars(found)))
        for name, found in logging.Logger.manager.loggerDict.items()
        if isinstance(found, logging.Logger)
    }
    root_filters = {id(h): list(h.filters) for h in logging.root.handlers}
    try:
        yield
    finally:
        for name, found in list(logging.Logger.manager.loggerDict.items()):
            if not isinstance(found, logging.Logger):
                continue
            handlers, attributes = loggers.get(name, ([], set(vars(logging.Logger("x")))))
            found.handlers[:] = handlers
            for added in set(vars(found)) - attributes:
                delattr(found, added)
        for handler in logging.root.handlers:
            if id(handler) in root_filters:
                handler.filters[:] = root_filters[id(handler)]


@dataclass(frozen=True)
class ColdInvocation:
    """One invocation: the handler's return value or the error envelope, the error's
    ``errorType`` (``None`` on success) and the lines it wrote, in order."""

    payload: Any
    error_type: str | None
    lines: list[str]


def runtime_variables(
    handler: str, *, function_name: str, memory_mb: int, task_root: str, region: str
) -> dict[str, str]:
    """What Lambda sets in every Python function's environment (Lambda developer guide,
    "Defined runtime environment variables"); a function may set none of them."""
    return {
        "_HANDLER": handler,
        "AWS_EXECUTION_ENV": "AWS_Lambda_python3.13",
        "AWS_LAMBDA_FUNCTION_NAME": function_name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": str(memory_mb),
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function_name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": "2026/12/01/[$LATEST]cold",
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "LAMBDA_TASK_ROOT": task_root,
    }


def invoke_cold(
    handler: str,
    environment: Mapping[str, str],
    event: Any,
    *,
    function_name: str = "test-function",
    memory_mb: int = 256,
    task_root: str = "/var/task",
    region: str = "us-east-1",
) -> ColdInvocation:
    """Import ``handler``'s module (``package.module.function``) anew with ``environment``
    and Lambda's own variables (:func:`runtime_variables`) added to the process's for the
    length of the call (a test removes the process's own values of the variables it
    means), and call it with ``event``. The module the process had comes back afterwards.
    """
    runtime = runtime_variables(
        handler,
        function_name=function_name,
        memory_mb=memory_mb,
        task_root=task_root,
        region=region,
    )
    environment = {**environment, **runtime}
    module_name, _, function_name = handler.rpartition(".")
    previous = sys.modules.pop(module_name, None)
    printed = io.StringIO()
    try:
        with (
            logging_as_found(),
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
