"""GetExecutionHistory one page at a time, as Step Functions answers it.

moto 5.2.5 ignores ``maxResults``, ``nextToken`` and ``reverseOrder``: every call answers
the whole history, deep-copied under the lock the interpreter records with (a reader of a
long history held the execution up, and took a minute for 19,160 events). Step Functions
answers at most ``maxResults`` events (default 100, at most 1,000; 0 is the default),
oldest first or, with ``reverseOrder``, newest first, and a ``nextToken`` while more
remain; the same call with that token answers the next page. Source: the
GetExecutionHistory API reference (request parameters ``maxResults``, ``nextToken``,
``reverseOrder``; errors ``InvalidToken``, ``ExecutionDoesNotExist``, ``InvalidArn``).

A ``maxResults`` above 1,000 is refused with ``ValidationException`` ("1 validation error
detected: Value '1001' at 'maxResults' failed to satisfy constraint: Member must have value
less than or equal to 1000"), a token this call did not make with ``InvalidToken`` (400).
The tokens are moto's own paginator's (:class:`moto.utilities.paginator.Paginator`): the
id of the page's next event, bound to the execution and the order asked for.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any, Final

from moto.core.exceptions import InvalidToken as PaginatorToken
from moto.core.responses import ActionResult
from moto.stepfunctions.exceptions import InvalidToken
from moto.stepfunctions.parser.asl.eval.event.event_manager import EventManager
from moto.stepfunctions.parser.models import StepFunctionsParserBackend
from moto.stepfunctions.responses import StepFunctionResponse
from moto.utilities.paginator import Paginator

from localcloud.patches.registry import Method, Patch, PatchMismatch
from localcloud.services.stepfunctions.quotas import validation_error

PAGE_DEFAULT: Final = 100
"""Events a page holds when ``maxResults`` is absent or 0."""
PAGE_MAX: Final = 1000
"""The most ``maxResults`` may ask for."""


def max_results_violation(max_results: int | None) -> str | None:
    """What is wrong with ``maxResults`` (in the words of AWS's validation message), or
    ``None``."""
    if max_results is None or 0 <= max_results <= PAGE_MAX:
        return None
    if max_results < 0:
        return (
            f"Value '{max_results}' at 'maxResults' failed to satisfy constraint: Member must "
            "have value greater than or equal to 0"
        )
    return (
        f"Value '{max_results}' at 'maxResults' failed to satisfy constraint: Member must have "
        f"value less than or equal to {PAGE_MAX}"
    )


def page(
    events: Sequence[dict[str, Any]],
    *,
    execution_arn: str,
    max_results: int | None = None,
    next_token: str | None = None,
    reverse_order: bool = False,
) -> tuple[list[dict[str, Any]], str | None]:
    """One page of ``events`` (oldest first, each with its ``id``) and the token of the
    next, ``None`` after the last.

    Raises:
        ValidationException: ``max_results`` outside 0-1,000.
        InvalidToken: ``next_token`` was not made by this call for this execution and order.
    """
    violation = max_results_violation(max_results)
    if violation is not None:
        raise validation_error([violation])
    ordered = list(reversed(events)) if reverse_order else list(events)
    try:
        paginator = Paginator(
            max_results=max_results or PAGE_DEFAULT,
            max_results_default=PAGE_DEFAULT,
            starting_token=next_token,
            unique_attribute="id",
            param_values_to_check={"executionArn": execution_arn, "reverseOrder": reverse_order},
        )
        shown, token = paginator.paginate(ordered)
    except PaginatorToken:
        raise InvalidToken(f"'{next_token}' is not a token of this history") from None
    return copy.deepcopy(shown), token


def recorded(manager: EventManager) -> list[Any]:
    """The events ``manager`` has recorded so far, in order (the list, not its events,
    copied: a page deep-copies only what it answers)."""
    lock: Any = manager._mutex  # noqa: SLF001 - see interpreter_keeps_its_history
    with lock:
        return list(manager._history_event_list)  # noqa: SLF001


def history_events(backend: Any, execution_arn: str) -> list[dict[str, Any]]:
    """Every event of the execution's history so far, oldest first.

    Raises:
        ExecutionDoesNotExist, InvalidArn: as DescribeExecution does.
    """
    if isinstance(backend, StepFunctionsParserBackend):
        execution: Any = backend.describe_execution(execution_arn=execution_arn)
        worker = execution.exec_worker
        env = worker.env if worker is not None else None
        return [] if env is None else recorded(env.event_manager)
    return list(backend.get_execution_history(execution_arn)["events"])  # moto's canned one


def _paged(_original: Method) -> Method:
    def get_execution_history(self: StepFunctionResponse) -> ActionResult:
        """GetExecutionHistory answering one page (see the module docstring)."""
        arn = str(self._get_param("executionArn"))
        shown, token = page(
            history_events(self.stepfunction_backend, arn),
            execution_arn=arn,
            max_results=self._get_param("maxResults"),
            next_token=self._get_param("nextToken"),
            reverse_order=bool(self._get_param("reverseOrder", False)),
        )
        answer: dict[str, Any] = {"events": shown}
        if token is not None:
            answer["nextToken"] = token
        return ActionResult(answer)

    return get_execution_history


def interpreter_keeps_its_history() -> None:
    """The pages are read from the interpreter's own list, under its own lock, while
    moto's ``EventManager`` declares both.

    Raises:
        PatchMismatch: it declares them no longer.
    """
    declared = getattr(EventManager, "__annotations__", {})
    missing = [name for name in ("_mutex", "_history_event_list") if name not in declared]
    if missing:
        raise PatchMismatch(
            "moto changed: moto.stepfunctions.parser.asl.eval.event.event_manager.EventManager "
            f"no longer declares {', '.join(missing)}, which GetExecutionHistory's pages read"
        )


PATCHES: Final = (
    Patch(
        StepFunctionResponse,
        "get_execution_history",
        ("self",),
        _paged,
        "GetExecutionHistory answers a page of maxResults events with a nextToken, in either order",
    ),
)
CHECKS: Final = (interpreter_keeps_its_history,)

__all__ = ["CHECKS", "PAGE_DEFAULT", "PAGE_MAX", "PATCHES", "history_events", "page"]
