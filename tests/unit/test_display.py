from __future__ import annotations

import pytest

from loom_dagster.display import bounded, one_line, printable


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("\x1b[2J\x1b]0;owned\x07", "\\x1b[2J\\x1b]0;owned\\x07"),  # clear screen, window title
        ("a\rb", "a\\x0db"),
        ("\x9b31m", "\\x9b31m"),  # C1 control sequence introducer
        ("\x7f", "\\x7f"),
        ("abc\u202etxt.exe", "abc\\u202etxt.exe"),  # right-to-left override
        ("bad\udcffname", "bad\\udcffname"),  # a non-UTF-8 byte kept by surrogateescape
        ("tab\tkept", "tab\tkept"),
        ("Café ✓", "Café ✓"),
    ],
)
def test_printable_escapes_controls_and_keeps_text(raw: str, shown: str) -> None:
    assert printable(raw) == shown


def test_newlines_are_escaped_unless_kept() -> None:
    assert printable("a\nb") == "a\\x0ab"
    assert printable("a\nb", keep_newlines=True) == "a\nb"


def test_bounded_cuts_with_a_marker() -> None:
    assert bounded("abcdef", 4) == "abc…"
    assert bounded("abc", 4) == "abc"
    assert len(bounded("x" * 20_000_000, 200)) == 200


def test_one_line_folds_whitespace_and_escapes() -> None:
    assert one_line("a\n  b\x1b", 10) == "a b\\x1b"
