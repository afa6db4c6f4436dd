"""A filter value with wildcards, matched as AWS matches it and never as a regular expression.

moto matches EC2's filter values (``DescribeSecurityGroups``' ``description``, ``group-id``,
``ip-permission.*`` …) with ``moto.core.utils.aws_api_matches``, which turns each ``*`` into
``.*`` and each ``?`` into ``.?`` and runs what is left as a regular expression: every
other character of the caller's value is regular-expression syntax there, so a
description filter of ``(a+)+b`` backtracked for minutes holding the interpreter lock, and
the whole server froze (issue 47's held-back attacks). The EC2 API reference ("Filter"):
"You can use a wildcard (*) to match zero or more characters, and a question mark (?) to
match zero or one character"; ``\\*`` and ``\\?`` are the characters themselves, and every
other character is itself.

:func:`glob_matches` runs the pattern as the automaton it is, a set of positions advanced
one character at a time: time proportional to the value's length times the pattern's,
whatever the pattern.

May import: the patch registry.
"""

from __future__ import annotations

from typing import Any, Final

from moto.ec2.models import security_groups

from localcloud.patches.registry import Method, Patch

__all__ = ["PATCHES", "glob_matches"]

_STAR: Final = object()
_OPTIONAL: Final = object()


def _tokens(pattern: str) -> list[object]:
    """The pattern as literal characters, :data:`_STAR` and :data:`_OPTIONAL`."""
    tokens: list[object] = []
    i = 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern) and pattern[i + 1] in "*?":
            tokens.append(pattern[i + 1])
            i += 2
            continue
        tokens.append(_STAR if c == "*" else _OPTIONAL if c == "?" else c)
        i += 1
    return tokens


def glob_matches(pattern: str, value: Any) -> bool:
    """Whether ``value`` (as text) matches ``pattern`` whole: ``*`` any run of characters,
    ``?`` zero or one character, ``\\*`` and ``\\?`` themselves, anything else itself."""
    tokens = _tokens(pattern)
    text = str(value)

    def closed(positions: set[int]) -> set[int]:
        """``positions`` with every position a ``*`` or ``?`` may match nothing at."""
        found, waiting = set(positions), list(positions)
        while waiting:
            at = waiting.pop()
            if at < len(tokens) and tokens[at] in (_STAR, _OPTIONAL) and at + 1 not in found:
                found.add(at + 1)
                waiting.append(at + 1)
        return found

    positions = closed({0})
    for character in text:
        following = set()
        for at in positions:
            if at == len(tokens):
                continue
            token = tokens[at]
            if token is _STAR:
                following.add(at)
            elif token is _OPTIONAL or token == character:
                following.add(at + 1)
        positions = closed(following)
        if not positions:
            return False
    return len(tokens) in positions


def _glob(_original: Method) -> Method:
    def aws_api_matches(pattern: str, string: Any) -> bool:
        return glob_matches(pattern, string)

    return aws_api_matches


PATCHES: Final = (
    Patch(
        security_groups,
        "aws_api_matches",
        ("pattern", "string"),
        _glob,
        "an EC2 filter value's * and ? are wildcards and every other character itself "
        "(moto ran the rest as a regular expression, which could freeze the server)",
    ),
)
