"""One execution environment of a function deployed from its zip: the handler runs here,
in an interpreter of its own, as the Lambda Python runtime runs it.

Started by :mod:`localcloud.lambda_runtime.worker` as ``python -I -S runtime_worker.py TASK_ROOT
RUNTIME_DIR HANDLER``: no site-packages, so the handler imports only what the zip holds
(``TASK_ROOT``, first on ``sys.path``, as ``LAMBDA_TASK_ROOT`` is on Lambda), what the
runtime itself ships (``RUNTIME_DIR``: boto3 and botocore with their dependencies) and the
standard library. A package missing from the zip is therefore missing here too, and its
import fails as ``Runtime.ImportModuleError``.

Standard library only (this file runs outside the project's environment). Protocol: one
JSON request per line on stdin (``event``, ``env``, ``context``), one JSON reply per line
on the original stdout (``payload`` or ``payload_b64``, ``error``, ``output``); what the
handler prints goes into ``output``. The error mapping follows ``awslambdaric/bootstrap.py``
as :mod:`localcloud.lambda_runtime.bridge` does for in-process functions.
"""

from __future__ import annotations

import base64
import decimal
import importlib
import io
import json
import os
import sys
import threading
import time
import traceback
from typing import Any


class _Fault(Exception):
    def __init__(self, error_type: str, message: str, trace: list[str] | None = None) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message
        self.trace = trace or []


class _Output(io.TextIOBase):
    """sys.stdout/sys.stderr: every write, from any thread, goes to the current
    invocation's buffer (a logger created at import keeps this object)."""

    def __init__(self) -> None:
        self.buffer_ = io.StringIO()
        self.lock = threading.Lock()

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        with self.lock:
            return self.buffer_.write(text)

    def flush(self) -> None:
        return None

    def take(self) -> str:
        with self.lock:
            text, self.buffer_ = self.buffer_.getvalue(), io.StringIO()
        return text


class Context:
    """The runtime's context object (the attributes handlers read)."""

    def __init__(self, fields: dict[str, Any]) -> None:
        self.function_name = fields["function_name"]
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = fields["memory_limit_in_mb"]
        self.invoked_function_arn = fields["invoked_function_arn"]
        self.aws_request_id = fields["aws_request_id"]
        self.log_group_name = fields["log_group_name"]
        self.log_stream_name = fields["log_stream_name"]
        self._deadline = time.monotonic() + fields["remaining_ms"] / 1000

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self._deadline - time.monotonic()) * 1000))


def _envelope(exc: BaseException, request_id: str, error_type: str | None = None) -> dict[str, Any]:
    extracted = traceback.extract_tb(exc.__traceback__)
    frames = [f for f in extracted if f.filename != __file__] or list(extracted)
    return {
        "errorMessage": str(exc),
        "errorType": error_type or type(exc).__name__,
        "requestId": request_id,
        "stackTrace": traceback.format_list(frames),
    }


def _load(handler_name: str) -> Any:
    try:
        module_name, attribute = handler_name.rsplit(".", 1)
    except ValueError as exc:
        raise _Fault(
            "Runtime.MalformedHandlerName", f"Bad handler '{handler_name}': {exc}"
        ) from None
    module_name = module_name.replace("/", ".")
    if module_name.split(".")[0] in sys.builtin_module_names:
        raise _Fault(
            "Runtime.BuiltInModuleConflict",
            f"Cannot use built-in module {module_name} as a handler module",
        )
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise _Fault(
            "Runtime.ImportModuleError", f"Unable to import module '{module_name}': {exc}"
        ) from exc
    except SyntaxError as exc:
        trace = [f'  File "{exc.filename}" Line {exc.lineno}\n    {exc.text}']
        raise _Fault(
            "Runtime.UserCodeSyntaxError", f"Syntax error in module '{module_name}': {exc}", trace
        ) from exc
    try:
        return getattr(module, attribute)
    except AttributeError:
        raise _Fault(
            "Runtime.HandlerNotFound", f"Handler '{attribute}' missing on module '{module_name}'"
        ) from None


def _marshal_default(value: Any) -> Any:
    # The runtime writes a Decimal as its number (simplejson RawJSON); json here cannot,
    # so an integral Decimal becomes an int and any other a float.
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def main() -> None:
    task_root, runtime_dir, handler_name = sys.argv[1:4]
    sys.path[:0] = [task_root, runtime_dir]
    os.chdir(task_root)
    protocol = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)  # a C-level write to fd 1 must not corrupt the protocol
    output = _Output()
    sys.stdout = sys.stderr = output
    handler: Any = None
    for line in sys.stdin:
        request = json.loads(line)
        os.environ.update(request["env"])
        request_id = request["context"]["aws_request_id"]
        reply: dict[str, Any] = {"error": False}
        try:
            if handler is None:
                handler = _load(handler_name)
            result = handler(request["event"], Context(request["context"]))
            if isinstance(result, bytes):
                reply["payload_b64"] = base64.b64encode(result).decode()
            else:
                try:
                    reply["payload"] = json.loads(json.dumps(result, default=_marshal_default))
                except (TypeError, ValueError) as exc:
                    raise _Fault(
                        "Runtime.MarshalError", f"Unable to marshal response: {exc}"
                    ) from None
        except _Fault as fault:
            reply = {
                "error": True,
                "payload": {
                    "errorMessage": fault.message,
                    "errorType": fault.error_type,
                    "requestId": request_id,
                    "stackTrace": fault.trace,
                },
            }
        except SystemExit as exc:
            reply = {"error": True, "payload": _envelope(exc, request_id, "Runtime.ExitError")}
            handler = None
        except Exception as exc:  # noqa: BLE001 - the runtime reports every error
            reply = {"error": True, "payload": _envelope(exc, request_id)}
        reply["output"] = output.take()
        # A failed init or an exit leaves no environment behind: the next invocation
        # starts a new one (a cold start), as on Lambda.
        reply["exiting"] = handler is None
        protocol.write(json.dumps(reply) + "\n")
        protocol.flush()
        if handler is None:
            return


if __name__ == "__main__":
    main()
