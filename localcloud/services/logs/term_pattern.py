"""Unstructured CloudWatch Logs filter patterns: terms, ``?`` terms and ``-`` terms.

The guide's section "Using filter patterns to match terms in unstructured log events"
(:mod:`localcloud.services.logs.filter_pattern` names the guide and lists the rules). Also the home
of :class:`FilterPatternError` and of the quoted-string reader both pattern kinds share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

__all__ = ["FilterPatternError", "TermPattern", "parse_terms", "read_quoted"]


class FilterPatternError(ValueError):
    """A filter pattern this module does not implement, or that is not valid syntax."""


_BARE_TERM: Final = re.compile(r"[A-Za-z0-9_]+")
"""The guide: "Enclose exact phrases and terms that include non-alphanumeric characters in
double quotation marks"; the older text names the underscore as allowed unquoted."""


@dataclass(frozen=True)
class TermPattern:
    """An unstructured pattern: terms that must all appear (AND), ``?`` terms of which one
    must appear (OR) and ``-`` terms that must not appear.

    The guide gives each form on its own or, for exclusion, with plain terms
    (``ERROR -WARN``); :func:`parse` refuses ``?`` terms mixed with the others, whose
    meaning it does not give.
    """

    required: tuple[str, ...] = ()
    any_of: tuple[str, ...] = ()
    excluded: tuple[str, ...] = ()

    def matches(self, message: str) -> bool:
        """Whether ``message`` contains the terms. A term matches anywhere in the message,
        case sensitive: the guide's term ``ERROR`` matches "Exiting with ERRORCODE: -1"."""
        if any(term in message for term in self.excluded):
            return False
        if self.any_of and not any(term in message for term in self.any_of):
            return False
        return all(term in message for term in self.required)


def read_quoted(text: str, start: int) -> tuple[str, int]:
    """The string in double quotes at ``text[start]``, and the index after its closing
    quote. ``\\"`` and ``\\\\`` stand for a quote and a backslash; other escapes are
    refused rather than guessed."""
    chars: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == '"':
            return "".join(chars), index + 1
        if char == "\\":
            following = text[index + 1 : index + 2]
            if following not in ('"', "\\"):
                raise FilterPatternError(
                    f"unsupported escape {text[index : index + 2]!r} in a quoted term: "
                    'only \\" and \\\\ are implemented'
                )
            chars.append(following)
            index += 2
            continue
        chars.append(char)
        index += 1
    raise FilterPatternError(f"unterminated double quote at position {start}")


def parse_terms(pattern: str) -> TermPattern:
    """Split an unstructured pattern into its plain, ``?`` and ``-`` terms."""
    required: list[str] = []
    any_of: list[str] = []
    excluded: list[str] = []
    index = 0
    while index < len(pattern):
        if pattern[index].isspace():
            index += 1
            continue
        prefix = pattern[index] if pattern[index] in "?-" else ""
        index += len(prefix)
        if index < len(pattern) and pattern[index] == '"':
            term, index = read_quoted(pattern, index)
            if index < len(pattern) and not pattern[index].isspace():
                raise FilterPatternError(
                    f"a quoted term must be followed by a space or the end, not "
                    f"{pattern[index]!r} (position {index})"
                )
        else:
            end = index
            while end < len(pattern) and not pattern[end].isspace():
                end += 1
            term = pattern[index:end]
            if not term:
                raise FilterPatternError(f"{prefix!r} must be followed by a term")
            if not _BARE_TERM.fullmatch(term):
                raise FilterPatternError(
                    f"unquoted term {term!r} holds a character other than a letter, a digit "
                    'or "_": AWS requires such a term in double quotes'
                )
            index = end
        {"": required, "?": any_of, "-": excluded}[prefix].append(term)
    if any_of and (required or excluded):
        raise FilterPatternError(
            "?term (OR) mixed with plain or -excluded terms is not implemented: the AWS "
            "guide documents ?a ?b on its own"
        )
    return TermPattern(tuple(required), tuple(any_of), tuple(excluded))
