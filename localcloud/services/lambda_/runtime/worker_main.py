"""One execution environment of a function deployed from its zip: the handler runs here,
in an interpreter of its own, as the Lambda Python runtime runs it.

Started by :mod:`localcloud.services.lambda_.runtime.worker` as ``python -I -S worker_main.py
TASK_ROOT RUNTIME_DIR HANDLER``: no site-packages, so the handler imports only what the
zip holds (``TASK_ROOT``, first on ``sys.path``), what the runtime ships (``RUNTIME_DIR``:
boto3, botocore and their dependencies, awslambdaric, and the contract module) and the
standard library. Loading and invoking are :mod:`~localcloud.services.lambda_.runtime.contract`'s,
the same as in-process; the root logger is set up as the runtime's ``bootstrap.run``
sets it up.

Standard library and the runtime folder only (this file runs outside the project's
environment). Protocol: one JSON request per line on stdin (``event``, ``env``,
``request_id``, ``function_arn``, ``deadline_ms``), one JSON reply per line on the
original stdout (``body`` base64, ``content_type``, ``error``, ``output``, ``init_ms``,
``exiting``). Everything the process writes, from any thread, goes into ``output``.
"""

from __future__ import annotations

import base64
import io
import json
import os
import sys
import threading
from typing import Any


class _Output(io.TextIOBase):
    """sys.stdout/sys.stderr: every write, from any thread, goes to the current
    invocation's output (a logger made at import keeps this object)."""

    def __init__(self) -> None:
        self._buffer = io.StringIO()
        self._lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self._lock:
            return self._buffer.write(text)

    def flush(self) -> None:
        return None

    def take(self) -> str:
        with self._lock:
            text, self._buffer = self._buffer.getvalue(), io.StringIO()
        return text


def main() -> None:
    task_root, runtime_dir, handler_name = sys.argv[1:4]
    sys.path[:0] = [task_root, runtime_dir]
    os.chdir(task_root)
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a C-level write to fd 1 must not corrupt the protocol
    output = _Output()
    sys.stdout = sys.stderr = output
    import _localcloud_contract as contract  # type: ignore[import-not-found]  # noqa: PLC0415

    contract.setup_logging()
    handler: Any = None
    for line in sys.stdin:
        request = json.loads(line)
        os.environ.update(request["env"])
        step = contract.run(
            handler,
            lambda: contract.load_handler(handler_name),
            request["event"].encode("utf-8"),
            request_id=request["request_id"],
            function_arn=request["function_arn"],
            deadline_ms=request["deadline_ms"],
        )
        handler, outcome, exiting = step.handler, step.outcome, step.exiting
        reply = {
            "body": base64.b64encode(outcome.body).decode(),
            "content_type": outcome.content_type,
            "error": outcome.error,
            "output": output.take(),
            "init_ms": step.init_ms,
            "exiting": exiting,
        }
        protocol.write(json.dumps(reply) + "\n")
        protocol.flush()
        if exiting:
            return


if __name__ == "__main__":
    main()
