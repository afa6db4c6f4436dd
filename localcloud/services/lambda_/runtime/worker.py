"""An execution environment of its own: an interpreter that holds only the deployment
package and what the Lambda Python runtime ships.

Used for every function deployed from a zip (``sam deploy``, ``aws lambda
create-function`` and ``update-function-code``): the zip must be all the function sees.
In this process the application may already be imported from its source folder and every
package of the development environment is importable, so a dependency missing from
``requirements.txt`` (or a module left out of the package) would import fine; an isolated
``sys.modules`` cannot hide site-packages from one thread while the server's threads use
them. A worker started with ``python -I -S`` has only the extracted zip (the task root,
first on ``sys.path``, as ``LAMBDA_TASK_ROOT`` is on Lambda), the runtime folder
(:func:`runtime_dir`: boto3, botocore and their dependencies, awslambdaric, as
``/var/runtime`` holds them) and the standard library, so the packaging mistake fails as
``Runtime.ImportModuleError``, as on Lambda. Module scope runs once per worker, a timeout
is enforced (the worker is stopped), Powertools' cold-start flags are its own, and every
line the process writes, from any thread, is the current invocation's.

The worker (:mod:`~localcloud.services.lambda_.runtime.worker_main`) answers one JSON request per
line on its stdin with one JSON reply per line on its original stdout.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final

from localcloud.services.lambda_.runtime import contract
from localcloud.services.lambda_.runtime.functions import Function, Ran
from localcloud.services.lambda_.runtime.output import EnvironmentOutput

WORKER: Final = Path(__file__).with_name("worker_main.py")
CONTRACT_MODULE: Final = "_localcloud_contract"
"""The name :mod:`.contract` has in the worker's runtime folder."""
RUNTIME_PACKAGES: Final = (
    "boto3",
    "botocore",
    "s3transfer",
    "jmespath",
    "dateutil",
    "six",
    "urllib3",
    "awslambdaric",
    "simplejson",
)
"""What the Lambda Python runtime puts on ``sys.path`` besides the task root (its
``/var/runtime``): the SDK and the runtime interface client."""
_RUNTIME_DIR: Path | None = None
_RUNTIME_DIR_LOCK = threading.Lock()


def runtime_dir() -> Path:
    """A folder holding only the runtime's own packages (links into this environment) and
    the contract module."""
    global _RUNTIME_DIR
    with _RUNTIME_DIR_LOCK:
        if _RUNTIME_DIR is None:
            directory = Path(tempfile.mkdtemp(prefix="localcloud-runtime-"))
            for name in RUNTIME_PACKAGES:
                module = importlib.import_module(name)
                source = Path(str(module.__file__))
                source = source.parent if source.name == "__init__.py" else source
                (directory / source.name).symlink_to(source)
            (directory / f"{CONTRACT_MODULE}.py").symlink_to(Path(contract.__file__))
            _RUNTIME_DIR = directory
    return _RUNTIME_DIR


@dataclass(eq=False)
class WorkerFunction(Function):
    """A function that runs from its extracted deployment package in a worker process."""

    _worker: subprocess.Popen[str] | None = field(default=None, repr=False)

    @property
    def warm(self) -> bool:
        return self._worker is not None and self._worker.poll() is None

    def sibling(self) -> WorkerFunction:
        return replace(
            self, output=EnvironmentOutput(), invoking=False, invocations=0, _worker=None
        )

    def _discard(self) -> None:
        if self._worker is not None:
            self._worker.kill()
            self._worker.wait(timeout=10)
            self._worker = None

    def close(self) -> None:
        """Stop the worker and remove the extracted package."""
        super().close()
        shutil.rmtree(self.code_uri, ignore_errors=True)

    def _start(self) -> subprocess.Popen[str]:
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
            env={**base, **self.runtime_variables(traced=False)},
            text=True,
            encoding="utf-8",
        )

    def _run(self, event_body: bytes, request_id: str, deadline_ms: int) -> Ran:
        started = time.monotonic()
        if not self.warm:
            self._worker = self._start()
        worker = self._worker
        assert worker is not None
        assert worker.stdin is not None
        assert worker.stdout is not None
        request = {
            "event": event_body.decode("utf-8"),
            "env": self.runtime_variables(traced=True),
            "request_id": request_id,
            "function_arn": self.arn,
            "deadline_ms": deadline_ms,
        }
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
        if reply is None:  # timed out (stopped), or the process died
            timed_out = time.monotonic() - started >= self.timeout_s
            outcome = contract.error_outcome(
                contract.timeout_error(request_id, self.timeout_s)
                if timed_out
                else contract.exit_error(request_id, worker.poll())
            )
            return Ran(outcome, "", timed_out=timed_out, gone=True)
        outcome = contract.Outcome(
            base64.b64decode(reply["body"]), reply["content_type"], bool(reply["error"])
        )
        return Ran(
            outcome,
            reply.get("output", ""),
            init_ms=reply.get("init_ms"),
            gone=bool(reply.get("exiting")),
        )
