"""Functions deployed from the zip ``sam deploy`` uploaded: each execution environment is
an interpreter of its own (:mod:`localcloud.lambda_runtime.worker_main`).

Why a subprocess, not the in-process bridge: the zip must be all the function sees. In
this process ``order_guard`` is already imported from ``src/`` and every package of the
development environment is importable, so a dependency missing from
``src/requirements.txt`` (or a module left out of ``CodeUri``) would import fine. An
isolated ``sys.modules`` cannot hide site-packages from one thread while the server's
threads use them. A worker started with ``python -I -S`` has only the extracted zip, the
runtime's own packages (boto3, botocore and their dependencies, which the Lambda Python
runtime ships) and the standard library, so the packaging mistake fails here as
``Runtime.ImportModuleError``, as it would on Lambda. A worker is also a real execution
environment: module scope runs once per worker, a timeout is enforced (the worker is
stopped), and Powertools' cold-start flags are its own.
"""

from __future__ import annotations

import base64
import importlib
import io
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
import zipfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from localcloud.lambda_runtime import bridge as lambda_bridge
from localcloud.lambda_runtime.bridge import Invocation, LocalFunction

WORKER = Path(__file__).with_name("worker_main.py")
# What the Lambda Python runtime puts on sys.path besides the task root (/var/runtime).
RUNTIME_PACKAGES = ("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "six", "urllib3")
_RUNTIME_DIR: Path | None = None


def runtime_dir() -> Path:
    """A directory holding only the runtime's own packages (links into this environment)."""
    global _RUNTIME_DIR
    if _RUNTIME_DIR is None:
        directory = Path(tempfile.mkdtemp(prefix="localcloud-runtime-"))
        for name in RUNTIME_PACKAGES:
            module = importlib.import_module(name)
            source = Path(str(module.__file__))
            source = source.parent if source.name == "__init__.py" else source
            (directory / source.name).symlink_to(source)
        _RUNTIME_DIR = directory
    return _RUNTIME_DIR


def extract(archive: bytes, prefix: str) -> Path:
    """Unzip a deployment package into a new directory (the task root).

    Raises:
        zipfile.BadZipFile: not a zip archive.
    """
    root = Path(tempfile.mkdtemp(prefix=f"localcloud-{prefix}-"))
    with zipfile.ZipFile(io.BytesIO(archive)) as zipped:
        zipped.extractall(root)
    return root


@dataclass
class ZipFunction(LocalFunction):
    """A function that runs from its extracted deployment package in a worker process."""

    _worker: subprocess.Popen[str] | None = field(default=None, repr=False)

    def new_execution_environment(self) -> None:
        with lambda_bridge._INVOCATION_LOCK:
            self._stop_worker()

    def close(self) -> None:
        """Stop the worker and remove the extracted package."""
        self.new_execution_environment()
        shutil.rmtree(self.code_uri, ignore_errors=True)

    def _stop_worker(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker.wait(timeout=10)
            self._worker = None

    def _start_worker(self, environment: dict[str, str]) -> subprocess.Popen[str]:
        base = {k: os.environ[k] for k in ("PATH", "LANG", "TZ") if k in os.environ}
        return subprocess.Popen(  # noqa: S603 - our interpreter and our worker file
            [
                sys.executable,
                "-I",
                "-S",
                str(WORKER),
                str(self.code_uri),
                str(runtime_dir()),
                self.handler,
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env={**base, **environment},
            text=True,
            encoding="utf-8",
        )

    def _invoke_locked(self, event: Any) -> Invocation:
        request_id = str(uuid.uuid4())
        started = time.monotonic()
        if self._worker is None or self._worker.poll() is not None:  # a cold start
            self._log_stream = f"{datetime.now(UTC):%Y/%m/%d}/[$LATEST]{uuid.uuid4().hex}"
            self._worker = self._start_worker(self.runtime_environment())
        worker = self._worker
        request = {
            "event": json.loads(json.dumps(event)),
            "env": self.runtime_environment(request_id),
            "context": {
                "function_name": self.name,
                "memory_limit_in_mb": self.memory_mb,
                "invoked_function_arn": self.arn,
                "aws_request_id": request_id,
                "log_group_name": self.log_group,
                "log_stream_name": self._log_stream,
                "remaining_ms": self.timeout_s * 1000,
            },
        }
        assert worker.stdin is not None
        assert worker.stdout is not None
        lines = [f"START RequestId: {request_id} Version: $LATEST"]
        reply: dict[str, Any] | None = None
        try:
            worker.stdin.write(json.dumps(request) + "\n")
            worker.stdin.flush()
            ready, _, _ = select.select([worker.stdout], [], [], self.timeout_s)
            if ready:
                text = worker.stdout.readline()
                reply = json.loads(text) if text else None
        except (BrokenPipeError, ValueError):
            reply = None
        payload: Any
        if reply is None:
            elapsed = time.monotonic() - started
            self._stop_worker()
            if elapsed >= self.timeout_s:
                message = f"Task timed out after {self.timeout_s:.2f} seconds"
                payload = {
                    "errorMessage": f"RequestId: {request_id} Error: {message}",
                    "errorType": "Sandbox.Timedout",
                }
                lines.append(f"{datetime.now(UTC).isoformat()} {request_id} {message}")
            else:
                payload = {
                    "errorMessage": f"RequestId: {request_id} Error: Runtime exited without "
                    "providing a reason",
                    "errorType": "Runtime.ExitError",
                }
            error = True
        else:
            lines.extend(lambda_bridge.log_lines(reply.get("output", "")))
            error = bool(reply["error"])
            payload = (
                base64.b64decode(reply["payload_b64"])
                if "payload_b64" in reply
                else reply["payload"]
            )
            if reply.get("exiting"):  # a failed init or an exit: the next call starts anew
                self._stop_worker()
        duration_ms = (time.monotonic() - started) * 1000
        if error:
            lines.append(f"[ERROR] {payload['errorType']}: {payload['errorMessage']}")
        lines.append(f"END RequestId: {request_id}")
        lines.append(
            f"REPORT RequestId: {request_id}\tDuration: {duration_ms:.2f} ms\t"
            f"Memory Size: {self.memory_mb} MB"
        )
        self.invocations += 1
        if self.log_sink is not None:
            now = int(time.time() * 1000)
            self.log_sink(self.log_group, self._log_stream, [(now, x) for x in lines if x.strip()])
        invocation = Invocation(self.name, request_id, payload, error, lines, duration_ms)
        for listener in list(lambda_bridge._LISTENERS):
            listener(self, event, invocation)
        return invocation
