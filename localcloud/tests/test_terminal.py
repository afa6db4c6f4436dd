"""A stored or received string reaches a terminal with its control characters escaped."""

from __future__ import annotations

import sys
import unicodedata

import pytest

from localcloud.text import plain, printable

BIDI_CONTROLS = [
    *map(chr, range(0x202A, 0x202F)),  # embeddings, overrides and their pop
    *map(chr, range(0x2066, 0x206A)),  # isolates and their pop
    "\u200e",  # left-to-right mark
    "\u200f",  # right-to-left mark
    "\u061c",  # Arabic letter mark
]


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[2J", "\\x1b[2J"),  # ESC: clear the screen
        ("a\rb\nc\td\x08", "a\\rb\\nc\\td\\x08"),  # CR, LF, tab, backspace
        ("\x9b31m", "\\x9b31m"),  # C1 CSI
        ("\x7f", "\\x7f"),  # DEL
        ("abc\u202edef", "abc\\u202edef"),  # right-to-left override
        ("a\u200bb", "a\\u200bb"),  # zero-width space
        ("a\u2028b\u2029c", "a\\u2028b\\u2029c"),  # line and paragraph separators
        ("\U000e0041", "\\U000e0041"),  # a tag character (format)
    ],
)
def test_control_and_format_characters_are_written_as_escapes(text: str, shown: str) -> None:
    assert printable(text) == shown


@pytest.mark.parametrize("character", BIDI_CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_every_bidirectional_control_is_written_as_its_escape(character: str) -> None:
    assert printable(f"a{character}b") == f"a\\u{ord(character):04x}b"


def test_every_control_and_format_character_is_escaped() -> None:
    """Every code point of Unicode's categories Cc (C0, DEL, C1) and Cf (bidirectional
    controls, zero-width characters and joiners, the soft hyphen, tag characters …), as
    this Python's Unicode database has them."""
    kinds = ("Cc", "Cf")
    found = [chr(c) for c in range(sys.maxunicode + 1) if unicodedata.category(chr(c)) in kinds]
    assert len(found) > 200
    kept = [f"U+{ord(c):04X}" for c in found if not printable(c).startswith("\\")]
    assert kept == []


@pytest.mark.parametrize("text", ["\x1b[2J\u202e\u2028\n", "C:\\x1b", "\\u202e"])
def test_printable_text_stays_as_it_is(text: str) -> None:
    """What printable wrote is printable: the live view applies it again to markup made
    of values it has already shown (a macro's output)."""
    assert printable(printable(text)) == printable(text)


@pytest.mark.parametrize(
    "text", ["café", "cafe\u0301", "注文-42", "주문", "Bestellung ß", "🧾 order"]
)
def test_letters_accents_and_symbols_of_every_script_are_kept(text: str) -> None:
    assert printable(text) == text


def test_plain_also_escapes_rich_markup() -> None:
    assert plain("[red]x\x1b[/]") == "\\[red]x\\x1b\\[/]"
