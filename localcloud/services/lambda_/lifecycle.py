"""What Lambda does when an account starts and stops (the service's lifecycle hooks): the
functions and execution environments are this process's (:mod:`.runtime`), so a new
account starts with none of an earlier one's, and a stopping one ends every environment,
invocations in progress included (their callers get an error answer).
"""

from __future__ import annotations

from localcloud.services.lambda_ import asynchronous
from localcloud.services.lambda_.runtime import clear


def forget_earlier_account() -> None:
    """No function of an earlier account runs, and no event of its is delivered (the
    service's ``on_start``)."""
    clear()
    asynchronous.clear()


def stopped_with_the_account() -> list[str]:
    """End every function's execution environments now; a line for each invocation that
    was in progress, for the terminal (the service's ``on_stop``)."""
    return [
        f"[lambda] {function}: invocation {request_id} stopped with the local cloud"
        for function, request_id in clear()
    ]


__all__ = ["forget_earlier_account", "stopped_with_the_account"]
