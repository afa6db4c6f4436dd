"""One execution environment's supervisor: starts the runtime, and when the environment
ends, no process it started outlives it.

Started by :mod:`localcloud.services.lambda_.runtime.environments` as ``python -I -S
supervisor_main.py TASK_ROOT RUNTIME_DIR HANDLER PYTHON N [LAYER_PATH ...] [PATH ...]`` in
a session of its own (``PYTHON``: the CPython of the function's runtime; the ``N``
``LAYER_PATH`` go on ``sys.path`` after the task root and before the runtime folder, as
Lambda puts ``/opt/python/lib/python3.x/site-packages`` and ``/opt/python``; each other
``PATH`` after the standard library: a from-source function's packages). It makes itself
a child subreaper (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux 3.4+, no root or cgroups
needed), so every process the function starts, at any depth, a daemon that forked twice
or started a new session included, becomes its child when its parent exits. It starts the
runtime, awslambdaric's own entry point (what ``python -m awslambdaric HANDLER`` runs), in
an interpreter that sees only the task root (first on ``sys.path``, as ``LAMBDA_TASK_ROOT``
is on Lambda), the runtime folder and the standard library (``-I`` ignores
``PYTHONPATH``, so the path is set by the ``-c`` bootstrap), with the task root as its
working directory and this process's stdout and stderr (the function's log stream).

The environment ends when the runtime exits, or when the local cloud writes a byte to, or
closes, this process's stdin (a timeout, a new environment, the server stopping, the
server gone). Then every descendant is killed with ``SIGKILL`` (which no process can
ignore) until none is left, and the supervisor exits with the runtime's exit status
(``128 + N`` when signal N ended it).

Standard library only: it runs outside the project's environment.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import subprocess
import sys
import threading
import time

PR_SET_CHILD_SUBREAPER = 36
PR_SET_PDEATHSIG = 1
BOOTSTRAP = (
    "import sys; n, m = int(sys.argv[1]), int(sys.argv[2]); "
    "sys.path[:0] = sys.argv[3:3 + n]; sys.path += sys.argv[3 + n:3 + n + m]; "
    "del sys.argv[1:3 + n + m]; import runpy; "
    "runpy.run_module('awslambdaric', run_name='__main__', alter_sys=True)"
)
"""The runtime's command: the path set (the task root, the layers' folders and the
runtime folder before the standard library, the rest after it), then awslambdaric's
``__main__`` with the handler as its one argument."""

_LIBC = ctypes.CDLL(None, use_errno=True)


def _prctl(option: int, value: int) -> None:
    if _LIBC.prctl(option, value, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), f"prctl({option}) failed")


def _die_with_parent() -> None:
    """In the runtime, before exec: killed if the supervisor is (``SIGKILL`` included)."""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def _children(pid: int | str) -> set[int]:
    found: set[int] = set()
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return found
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/children") as listed:
                found.update(int(child) for child in listed.read().split())
        except OSError:
            continue
    return found


def _descendants() -> set[int]:
    """Every process below this one, at any depth, as /proc shows them now."""
    found: set[int] = set()
    frontier = _children("self")
    while frontier:
        found |= frontier
        frontier = {grandchild for pid in frontier for grandchild in _children(pid)} - found
    return found


def _signal_all(pids: set[int], signum: int) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


def _kill_tree() -> None:
    """Stop every descendant (``SIGSTOP``: a stopped process cannot fork), until a look
    finds no new one, then ``SIGKILL`` them all and reap; again, until none is left (a
    killed process's children become this subreaper's)."""
    while True:
        stopped: set[int] = set()
        while new := _descendants() - stopped:
            _signal_all(new, signal.SIGSTOP)
            stopped |= new
        if not stopped:
            return
        _signal_all(stopped, signal.SIGKILL)
        while True:  # reap every child that has ended, without waiting on any one
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                if not _children("self"):
                    break
                time.sleep(0.001)


def main() -> int:
    task_root, runtime_dir, handler, python, count, *rest = sys.argv[1:]
    layers, extra = rest[: int(count)], rest[int(count) :]
    front = [task_root, *layers, runtime_dir]
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    runtime = subprocess.Popen(  # noqa: S603 - the runtime's CPython and awslambdaric
        [
            python,
            "-I",
            "-S",
            "-c",
            BOOTSTRAP,
            str(len(front)),
            str(len(extra)),
            *front,
            *extra,
            handler,
        ],
        stdin=subprocess.DEVNULL,
        cwd=task_root,
        process_group=0,  # os.killpg(0, …) in the function reaches the runtime, not this
        preexec_fn=_die_with_parent,  # noqa: PLW1509 - one thread here, before the watcher
    )
    # Only the local cloud ends an environment: every signal the function could send its
    # supervisor and that can be ignored is (set after the runtime started, which keeps
    # the default dispositions). SIGKILL and SIGSTOP cannot be: the local cloud then finds
    # the environment's processes by the variable each starts with (execution_environment.
    # sweep).
    for signum in (
        signal.SIGINT,
        signal.SIGTERM,
        signal.SIGHUP,
        signal.SIGQUIT,
        signal.SIGUSR1,
        signal.SIGUSR2,
        signal.SIGPIPE,
        signal.SIGALRM,
    ):
        signal.signal(signum, signal.SIG_IGN)
    ended = threading.Event()

    def watch_control() -> None:
        os.read(0, 1)  # a byte, or end of file: the environment ends
        if not ended.is_set():
            with contextlib.suppress(ProcessLookupError):
                os.kill(runtime.pid, signal.SIGKILL)

    threading.Thread(target=watch_control, daemon=True).start()
    while True:
        try:
            pid, status = os.waitpid(-1, 0)  # reaps the orphans it adopts too
        except ChildProcessError:
            return 1
        if pid == runtime.pid:
            ended.set()
            break
    _kill_tree()
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main())
