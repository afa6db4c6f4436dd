"""The intrinsic functions that build something, bounded before they build it, as Step
Functions bounds them (Developer Guide, "Intrinsic functions for JSONPath states in Step
Functions").

moto 5.2.5 builds first and checks after, or not at all:

* ``States.ArrayRange`` -- "The newly generated array can't contain more than 1000
  items". moto made the whole list, then counted it: ``States.ArrayRange(0, 30000000, 1)``
  took the server 1.15 GB before it failed. The count comes first here (moto's error,
  ``ValueError`` "Arrays cannot contain more than 1000 items, size: N.", which fails the
  state with ``States.Runtime``).
* ``States.Format`` -- each ``{}`` of the template takes the next argument, and "there must
  be as many remaining arguments … as there are occurrences of {}". moto handed the
  template to Python's ``str.format``: a template ``{:>999999999}`` (one ``$.template``
  away from any caller) asked for a gigabyte of padding, ``{0.__class__}`` read Python
  attributes, and nothing bounded the text that one argument repeated many times makes.
  Here only ``{}`` is a placeholder (any other brace is text, as on AWS), a count that
  differs fails the state (``ValueError``: ``States.Runtime``), and the text stops at the
  payload quota.
* ``States.JsonToString`` -- its text stops at the payload quota too.

A text past the payload quota, 256 KiB, fails the state with ``States.DataLimitExceeded``
(:mod:`.payload`): no state could take it as input or give it as output.
``States.Base64Encode``, ``States.Base64Decode`` and ``States.Hash`` refuse more than
10,000 characters in moto already, as AWS documents; ``States.StringSplit``,
``States.ArrayPartition``, ``States.ArrayUnique`` and the others make no more than their
arguments hold.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, Final

from moto.stepfunctions.parser.asl.component.intrinsic.function.statesfunction.array.array_range import (  # noqa: E501
    ArrayRange,
)
from moto.stepfunctions.parser.asl.component.intrinsic.function.statesfunction.generic.string_format import (  # noqa: E501
    StringFormat,
)
from moto.stepfunctions.parser.asl.component.intrinsic.function.statesfunction.json_manipulation.json_to_string import (  # noqa: E501
    JsonToString,
)
from moto.stepfunctions.parser.asl.eval.environment import Environment

from localcloud.patches.registry import Method, Patch
from localcloud.services.stepfunctions.payload import PAYLOAD_MAX_BYTES, too_large

ARRAY_RANGE_MAX_ITEMS: Final = 1_000
"""Items of the array ``States.ArrayRange`` makes, at most."""
PLACEHOLDER: Final = "{}"
"""What ``States.Format`` replaces, one argument each."""


def array_range(first: Any, last: Any, step: Any) -> list[int]:
    """``States.ArrayRange(first, last, step)``: ``first``, ``first + step``, … up to
    ``last`` included, each argument rounded to an integer.

    Raises:
        TypeError: an argument that is not a number.
        ValueError: a step of 0 or less; more than :data:`ARRAY_RANGE_MAX_ITEMS` items
            (counted, never made).
    """
    for value in (first, last, step):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(
                f"Expected 3 integer arguments for function type 'States.ArrayRange', but got: "
                f"'{[first, last, step]}'."
            )
    items = range(round(first), round(last) + 1, _positive(round(step)))
    if len(items) > ARRAY_RANGE_MAX_ITEMS:  # a range's length is arithmetic, not a list
        raise ValueError(
            f"Arrays cannot contain more than {ARRAY_RANGE_MAX_ITEMS} items, size: {len(items)}."
        )
    return list(items)


def _positive(step: int) -> int:
    if step <= 0:
        raise ValueError(f"Expected step argument to be non negative, but got: '{step}'.")
    return step


def _text(value: Any) -> Iterator[str]:
    """The pieces of ``value`` as ``States.Format`` writes it (moto's form: a string as it
    is, ``[a, b]``, ``{key=value, …}``, anything else as JSON)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        yield "["
        for index, item in enumerate(value):
            if index:
                yield ", "
            yield from _text(item)
        yield "]"
    elif isinstance(value, dict):
        yield "{"
        for index, (key, item) in enumerate(value.items()):
            yield f"{', ' if index else ''}{key}="
            yield from _text(item)
        yield "}"
    else:
        yield json.dumps(value)


def bounded_text(pieces: Iterable[str], env: Environment, function: str) -> str:
    """``pieces`` joined, as long as they stay within the payload quota.

    Raises:
        FailureEventException: ``States.DataLimitExceeded`` for the state ``env`` runs,
            once the text passes :data:`.payload.PAYLOAD_MAX_BYTES` bytes of UTF-8 (no
            more of it is made).
    """
    kept: list[str] = []
    size = 0
    for piece in pieces:
        size += len(piece.encode("utf-8", "surrogatepass"))
        if size > PAYLOAD_MAX_BYTES:
            raise too_large(env, f"a {function} result")
        kept.append(piece)
    return "".join(kept)


def formatted(template: str, values: list[Any], env: Environment) -> str:
    """``States.Format(template, *values)``: each ``{}`` of ``template`` replaced by the
    next value's text.

    Raises:
        ValueError: not as many values as ``{}``.
        FailureEventException: ``States.DataLimitExceeded``, the text past the quota.
    """
    parts = template.split(PLACEHOLDER)
    if len(parts) - 1 != len(values):
        raise ValueError(
            f"States.Format's template holds {len(parts) - 1} '{PLACEHOLDER}' and "
            f"{len(values)} argument(s) follow it: there must be one argument for each"
        )

    def pieces() -> Iterator[str]:
        for index, part in enumerate(parts):
            if index:
                yield from _text(values[index - 1])
            yield part

    return bounded_text(pieces(), env, "States.Format")


def _counted_range(_original: Method) -> Method:
    def _eval_body(self: ArrayRange, env: Environment) -> None:
        """``States.ArrayRange``, counted before it is made (:func:`array_range`)."""
        self.argument_list.eval(env=env)
        first, last, step = env.stack.pop()
        env.stack.append(array_range(first, last, step))

    return _eval_body


def _placeholders_only(_original: Method) -> Method:
    def _eval_body(self: StringFormat, env: Environment) -> None:
        """``States.Format`` as AWS documents it (:func:`formatted`)."""
        self.argument_list.eval(env=env)
        template, *values = env.stack.pop()
        if not isinstance(template, str):
            raise ValueError(
                f"Expected the first argument for function type 'States.Format' to be a "
                f"string, but got: '{template}'."
            )
        env.stack.append(formatted(template, values, env))

    return _eval_body


_JSON: Final = json.JSONEncoder(separators=(",", ":"))
"""moto's ``States.JsonToString`` text: compact, non-ASCII escaped."""


def _bounded_json(_original: Method) -> Method:
    def _eval_body(self: JsonToString, env: Environment) -> None:
        """``States.JsonToString``, written no further than the payload quota."""
        self.argument_list.eval(env=env)
        value = env.stack.pop().pop()
        env.stack.append(bounded_text(_JSON.iterencode(value), env, "States.JsonToString"))

    return _eval_body


PATCHES: Final = (
    Patch(
        ArrayRange,
        "_eval_body",
        ("self", "env"),
        _counted_range,
        "States.ArrayRange counts its items before it makes them (at most 1,000)",
    ),
    Patch(
        StringFormat,
        "_eval_body",
        ("self", "env"),
        _placeholders_only,
        "States.Format fills each {} with an argument, nothing else, within 256 KiB",
    ),
    Patch(
        JsonToString,
        "_eval_body",
        ("self", "env"),
        _bounded_json,
        "States.JsonToString writes no more than 256 KiB",
    ),
)

__all__ = [
    "ARRAY_RANGE_MAX_ITEMS",
    "PATCHES",
    "PLACEHOLDER",
    "array_range",
    "bounded_text",
    "formatted",
]
