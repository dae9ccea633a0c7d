"""Number formats: which make a cell's number a date, a date-time, a time of day or a duration.

Built-in formats 14-17 are dates and 22 a date and time; East Asian Excel's 27-31, 36 and 50-58
are dates; 18-21, 45 and 47 times of day; 46 ([h]:mm:ss) an elapsed duration. A custom code of at
most 255 characters (Excel's own bound; a longer one is no date) is a date when a date letter
(y, d, e, g, b, or an m that is no minute) shows outside quotes, escapes and brackets, a time when
only h, s, a minute's m or AM/PM does, both a date-time, and an elapsed [h], [m] or [s] makes it a
duration. Only the first section (up to ";") is read: it is the one positive numbers take.

Any other format is general or shows whole numbers (General, 0, #,##0 and the built-ins that
show no decimals, a custom code with no decimal point, percent, exponent, fraction or text), and
a whole number written as a float (1.0, 3E+2) reads as the integer it shows; or it is SHOWN
(0.00, 0%, 0.0E+0, # ?/?, @), and the number reads as the workbook holds it.
"""

from __future__ import annotations

import re

DATE, DATETIME, TIME, DURATION = "date", "datetime", "time", "duration"
SHOWN = "shown"  # a number format that shows more than a whole number: the float is kept

MAX_CODE_CHARS = 255

BUILTIN_KINDS: dict[int, str] = {
    **dict.fromkeys((14, 15, 16, 17), DATE),
    22: DATETIME,
    **dict.fromkeys((18, 19, 20, 21, 45, 47), TIME),
    46: DURATION,
    **dict.fromkeys((27, 28, 29, 30, 31, 36, *range(50, 59)), DATE),
    # 0.00, #,##0.00, the currencies with cents, 0%, 0.00%, 0.00E+00, the fractions, the
    # accounting formats with cents, ##0.0E+0 and @ (0, 1, 3, 5, 6, 37, 38, 41 and 42 show
    # whole numbers).
    **dict.fromkeys((2, 4, 7, 8, 9, 10, 11, 12, 13, 39, 40, 43, 44, 48, 49), SHOWN),
}

# What shows no date letter: quoted text, an escaped or padded/skipped character, a bracket
# (colour, condition, locale; an elapsed [h] is looked for before these are dropped).
_LITERALS = re.compile(r'"[^"]*"|\\.|[_*].|\[[^\]]*\]')
_ELAPSED = re.compile(r"\[(?:h+|m+|s+)\]", re.IGNORECASE)
_GENERAL = re.compile(r"general", re.IGNORECASE)
_SCIENTIFIC = re.compile(r"e[+-]", re.IGNORECASE)
_AM_PM = re.compile(r"am/pm|a/p", re.IGNORECASE)
_LETTERS = re.compile(r"[a-z]+")
_SHOWS_MORE = re.compile(r"[.%/@]|e[+-]", re.IGNORECASE)


def format_kind(code: str) -> str | None:
    """The kind a custom format code gives a number: a date or time kind, SHOWN, or None when it
    is general or shows whole numbers."""
    kind = code_kind(code)
    if kind is not None:
        return kind
    bare = _LITERALS.sub(" ", _first_section(code))
    return SHOWN if _SHOWS_MORE.search(bare) else None


def code_kind(code: str) -> str | None:
    """The kind a custom format code gives a number, or None when it shows no date or time."""
    if len(code) > MAX_CODE_CHARS:
        return None
    section = _first_section(code)
    if _ELAPSED.search(section):
        return DURATION
    bare = _LITERALS.sub(" ", section)
    bare = _SCIENTIFIC.sub(" ", _GENERAL.sub(" ", bare))
    has_time = bool(_AM_PM.search(bare))
    bare = _AM_PM.sub(" ", bare).lower()
    has_date = False
    runs = _LETTERS.findall(bare)
    for index, run in enumerate(runs):
        letter = run[0]
        if letter in "ydegb":
            has_date = True
        elif letter in "hs":
            has_time = True
        elif letter == "m":
            # An m is a minute next to an hour before it or a second after it, else a month.
            before = runs[index - 1][0] if index else ""
            after = runs[index + 1][0] if index + 1 < len(runs) else ""
            if before == "h" or after == "s":
                has_time = True
            else:
                has_date = True
    if has_date and has_time:
        return DATETIME
    if has_date:
        return DATE
    if has_time:
        return TIME
    return None


def _first_section(code: str) -> str:
    """The code up to its first ";" outside quotes and escapes."""
    quoted = escaped = False
    for index, char in enumerate(code):
        if escaped:
            escaped = False
        elif char == "\\" and not quoted:
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == ";" and not quoted:
            return code[:index]
    return code
