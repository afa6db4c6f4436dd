"""What a stored or received string may put on a terminal: its printable characters.

Item keys, message bodies, function names and log lines come from whoever wrote them.
Printed raw, ``\\x1b[2J`` clears the screen, ``\\r`` or ``\\n`` fakes a line, and a
right-to-left override reorders what follows. :func:`printable` writes every such
character as an escape instead; :func:`plain` also escapes rich's markup, for text that
goes through a rich ``Console``.
"""

from __future__ import annotations

import functools
import unicodedata
from typing import Final

from rich.markup import escape

ESCAPED_CATEGORIES: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
"""Unicode categories never printed as themselves: controls (C0, DEL, C1: escape
sequences, carriage return, backspace …), format characters (bidirectional overrides,
zero-width characters), surrogates, private-use and unassigned code points, and the line
and paragraph separators."""


_NAMED: Final = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


@functools.lru_cache(maxsize=4096)
def _shown(character: str) -> str:
    if unicodedata.category(character) not in ESCAPED_CATEGORIES:
        return character
    if character in _NAMED:
        return _NAMED[character]
    code = ord(character)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def printable(text: object) -> str:
    """``str(text)`` with each character of :data:`ESCAPED_CATEGORIES` written as a
    Python-style escape (``\\x1b``, ``\\u202e``); everything else, accents and scripts
    included, is kept. One line in, one line out."""
    return "".join(map(_shown, str(text)))


def plain(text: object) -> str:
    """:func:`printable`, then rich's markup escaped: safe for ``Console.print``."""
    return escape(printable(text))


def say(line: object) -> None:
    """Print one line of the local cloud's own on the terminal, :func:`printable`."""
    print(printable(line), flush=True)
