"""A stored or received string reaches a terminal with its control characters escaped."""

from __future__ import annotations

import pytest

from localcloud.text import plain, printable


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


@pytest.mark.parametrize(
    "text", ["café", "cafe\u0301", "注文-42", "주문", "Bestellung ß", "🧾 order"]
)
def test_letters_accents_and_symbols_of_every_script_are_kept(text: str) -> None:
    assert printable(text) == text


def test_plain_also_escapes_rich_markup() -> None:
    assert plain("[red]x\x1b[/]") == "\\[red]x\\x1b\\[/]"
