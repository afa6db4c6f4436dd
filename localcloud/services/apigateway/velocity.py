"""The bounds of one mapping template's rendering, and Velocity's (Java's) ways of printing
and comparing values, made safe for values a template builds itself.

A template runs in the server process, so it may reach nothing but the values API Gateway
gives it (:mod:`.velocity_members` lists what each kind of value answers) and it may not
spend the server: :class:`Sandbox` counts what one rendering does and stops it, with
:class:`TemplateError` (API Gateway's ``500``), past the first of these:

================================  ==========  ==============================================
``#foreach`` iterations per loop  1,000       API Gateway's quota ("Number of iterations in a
                                              ``#foreach ... #end`` loop in mapping
                                              templates"); the loop stops there, as
                                              Velocity's ``directive.foreach.maxloops`` stops
                                              it, with no error
a template's size                 300 KB      API Gateway's "Maximum mapping template size"
the rendered body                 10 MB       API Gateway's "Payload size"
nested macro, ``#define`` and     20          Velocity's ``velocimacro.max.depth`` default
``#evaluate`` calls
steps (statements, members,       250,000     the local cloud's own bound; a template over
operators)                                    1,000 items of 50 statements each takes 50,000
text made in all                  20 M chars  the local cloud's: twice the body's bound,
                                              whatever the template does with it (a JSON
                                              text is counted as it is written, and stops
                                              there)
values made                       1,000,000   the local cloud's: JSON values copied
                                              (``$input.path``, ``$util.parseJson``) and
                                              the items of lists a method makes (``split``,
                                              ``keySet``, ``values``), counted before they
                                              are made
one regular expression            5 s         the local cloud's: each call's timeout, so
                                              that :mod:`regex`'s (loose under load) keeps
                                              the rendering near its deadline
time                              29 s        API Gateway's integration timeout: the caller
                                              has had its ``504`` by then
================================  ==========  ==============================================

A JSONPath (``$input.path``, ``$input.json``) is evaluated bounded as well
(:mod:`localcloud.patches.jsonpath`: no arithmetic, at most 262,144 values a query).

The quotas are those of "Quotas for configuring and running a REST API in API Gateway"
(https://docs.aws.amazon.com/apigateway/latest/developerguide/api-gateway-execution-service-limits-table.html).
"""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

__all__ = [
    "CALL_DEPTH",
    "FOREACH_ITERATIONS",
    "PAYLOAD_SIZE",
    "REGEX_SECONDS",
    "RENDER_SECONDS",
    "STEPS",
    "TEMPLATE_SIZE",
    "TEXT",
    "VALUES",
    "Sandbox",
    "TemplateError",
    "active",
    "current",
    "equal",
    "java_text",
    "started",
]

FOREACH_ITERATIONS: Final = 1_000
TEMPLATE_SIZE: Final = 300 * 1024
PAYLOAD_SIZE: Final = 10 * 1024 * 1024
CALL_DEPTH: Final = 20
STEPS: Final = 250_000
TEXT: Final = 2 * PAYLOAD_SIZE
VALUES: Final = 1_000_000
REGEX_SECONDS: Final = 5.0
RENDER_SECONDS: Final = 29.0


class TemplateError(ValueError):
    """A mapping template that does not render (bad syntax, a JSONPath that does not
    parse, ``$input.json`` of a body that is not JSON, a bound of :class:`Sandbox`
    passed); API Gateway answers the call with a 500."""


@dataclass
class Sandbox:
    """What one rendering has done so far, against the bounds of this module.

    Args:
        deadline: the ``time.monotonic()`` past which it stops.
    """

    deadline: float
    steps: int = 0
    text: int = 0
    values: int = 0
    depth: int = 0

    def step(self, count: int = 1) -> None:
        """Count ``count`` steps.

        Raises:
            TemplateError: past :data:`STEPS` steps or :data:`RENDER_SECONDS`.
        """
        self.steps += count
        if self.steps > STEPS:
            raise TemplateError(
                f"the mapping template took more than {STEPS:,} steps (statements, members "
                "and operators), the local cloud's bound on one transformation"
            )
        if time.monotonic() > self.deadline:
            raise TemplateError(
                f"the mapping template ran past {RENDER_SECONDS:g} s, API Gateway's "
                "integration timeout"
            )

    def made_text(self, characters: int) -> None:
        """Count ``characters`` of text made (written, interpolated, concatenated or
        returned by a method), before they are made where that can be known.

        Raises:
            TemplateError: past :data:`TEXT` characters in all.
        """
        self.text += characters
        if self.text > TEXT:
            raise TemplateError(
                f"the mapping template made more than {TEXT:,} characters of text, twice "
                "API Gateway's 10 MB payload"
            )

    def room_for_text(self, characters: int) -> None:
        """Check that ``characters`` more of text would stay within :data:`TEXT` (text
        being built, counted once made).

        Raises:
            TemplateError: they would not.
        """
        if self.text + characters > TEXT:
            raise TemplateError(
                f"the mapping template made more than {TEXT:,} characters of text, twice "
                "API Gateway's 10 MB payload"
            )

    def made_values(self, count: int) -> None:
        """Count ``count`` values made: JSON values copied, items of a list a method makes.

        Raises:
            TemplateError: past :data:`VALUES` in all.
        """
        self.values += count
        if self.values > VALUES:
            raise TemplateError(
                f"the mapping template made more than {VALUES:,} values (JSON values "
                "copied by $input.path and $util.parseJson, items of lists split, keySet "
                "and values made)"
            )

    def regex_timeout(self) -> float:
        """A regular expression's timeout: the time left before the deadline, at most
        :data:`REGEX_SECONDS` (and at least a millisecond)."""
        return min(max(self.deadline - time.monotonic(), 0.001), REGEX_SECONDS)

    @contextlib.contextmanager
    def deeper(self, what: str) -> Iterator[None]:
        """One more nested call (``what``: ``#macro``, ``#define``, ``#evaluate``).

        Raises:
            TemplateError: past :data:`CALL_DEPTH` nested calls.
        """
        if self.depth >= CALL_DEPTH:
            raise TemplateError(
                f"{what} nested more than {CALL_DEPTH} deep (Velocity's velocimacro.max.depth)"
            )
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1


_ACTIVE: contextvars.ContextVar[Sandbox | None] = contextvars.ContextVar(
    "mapping_template_sandbox", default=None
)


@contextlib.contextmanager
def started() -> Iterator[Sandbox]:
    """A fresh :class:`Sandbox` for the rendering run in this block (in this thread)."""
    sandbox = Sandbox(deadline=time.monotonic() + RENDER_SECONDS)
    token = _ACTIVE.set(sandbox)
    try:
        yield sandbox
    finally:
        _ACTIVE.reset(token)


def active() -> Sandbox | None:
    """The sandbox of the rendering running in this thread, if any."""
    return _ACTIVE.get()


def current() -> Sandbox:
    """The sandbox of the rendering running in this thread.

    Raises:
        TemplateError: none runs: a Velocity template evaluated outside
            :func:`localcloud.services.apigateway.mapping.render` is refused, never run
            unbounded.
    """
    sandbox = _ACTIVE.get()
    if sandbox is None:
        raise TemplateError("a Velocity template is evaluated only by a mapping template's render")
    return sandbox


def java_text(value: Any) -> str:
    """``value`` printed as Velocity prints it (Java's ``toString``): ``null``, ``true``,
    a string as it is, a list as ``[a, b]``, a map as ``{k=v}``, a collection inside
    itself as ``(this Collection)`` or ``(this Map)``; an object of the local cloud's as
    nothing. Every character is counted by the running :class:`Sandbox` as it is made,
    so a list of lists built by doubling cannot print without bound.

    Raises:
        TemplateError: a bound of the sandbox passed.
    """
    sandbox = active()
    pieces: list[str] = []

    def add(text: str) -> None:
        if sandbox is not None:
            sandbox.made_text(len(text))
        pieces.append(text)

    within: set[int] = set()  # the collections being printed, outermost first

    def walk(item: Any) -> None:
        if sandbox is not None:
            sandbox.step()
        if item is None:
            add("null")
        elif isinstance(item, bool):
            add("true" if item else "false")
        elif isinstance(item, str):
            add(item)
        elif isinstance(item, int | float):
            add(str(item))
        elif isinstance(item, Mapping | list | tuple | range):
            if id(item) in within:
                add("(this Map)" if isinstance(item, Mapping) else "(this Collection)")
                return
            within.add(id(item))
            if isinstance(item, Mapping):
                add("{")
                for index, (key, member) in enumerate(item.items()):
                    add(", " if index else "")
                    walk(key)
                    add("=")
                    walk(member)
                add("}")
            else:
                add("[")
                for index, member in enumerate(item):
                    add(", " if index else "")
                    walk(member)
                add("]")
            within.discard(id(item))

    walk(value)
    return "".join(pieces)


def equal(left: Any, right: Any) -> bool:
    """Whether two values are equal as Java's ``equals`` says (numbers by value, lists
    element by element, maps entry by entry), each value compared counted as a step, so
    comparing lists of lists built by doubling cannot run without bound.

    Raises:
        TemplateError: a bound of the sandbox passed.
    """
    sandbox = active()
    pending = [(left, right)]
    while pending:
        a, b = pending.pop()
        if sandbox is not None:
            sandbox.step()
        if a is b:
            continue
        numbers = int | float
        if isinstance(a, numbers) and isinstance(b, numbers):
            if isinstance(a, bool) != isinstance(b, bool) or a != b:
                return False
        elif isinstance(a, Mapping) and isinstance(b, Mapping):
            if a.keys() != b.keys():
                return False
            pending.extend((a[key], b[key]) for key in a)
        elif isinstance(a, list | tuple | range) and isinstance(b, list | tuple | range):
            if len(a) != len(b):
                return False
            pending.extend(zip(a, b, strict=True))
        elif (
            isinstance(a, list | tuple | range | Mapping)
            or isinstance(b, list | tuple | range | Mapping)
            or type(a) is not type(b)
            or a != b
        ):
            return False
    return True
