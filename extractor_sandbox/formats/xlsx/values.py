"""A cell's value as the workbook holds it: numbers, dates from serials, strings, bools, errors.

A date's serial counts days from the workbook's epoch: in the 1900 system day 1 is 1900-01-01
and Excel's day 60 is 1900-02-29, a day that never was (read as text); in the 1904 system day 0
is 1904-01-01. A serial is rounded to the nearest second. One that rounds past year 9999, or
below zero for a date, has no date and reads as the number it is.
"""

from __future__ import annotations

import math
from datetime import date, datetime, timedelta

from extractor_sandbox.formats.tables import Cell, number_cell, string_cell
from extractor_sandbox.formats.xlsx.numformats import DATE, DURATION, TIME

EPOCH_1900 = datetime(1899, 12, 31)  # serials 1-59; from 61 on the fake leap day shifts them
EPOCH_1904 = datetime(1904, 1, 1)
LEAP_DAY_1900 = 60
SECONDS_A_DAY = 86_400
MAX_INT_DIGITS = 4_000  # Python refuses to convert much longer digit strings
MAX_EXACT_INTEGER = 2**53  # past it a double's whole number is no longer the one written

FALSE_CELL = Cell(False, "bool", "FALSE")
TRUE_CELL = Cell(True, "bool", "TRUE")


def number(text: str, *, whole: bool = False) -> Cell | None:
    """A number as written in <v>; text when it is none (or no JSON number), None when blank.
    `whole`: its format is general or shows whole numbers, so a float with no fraction that a
    double holds exactly (1.0, 3E+2) is the integer the sheet shows."""
    stripped = text.strip()
    if not stripped:
        return None
    try:
        if "." in stripped or "e" in stripped or "E" in stripped or "n" in stripped.lower():
            written = float(stripped)
            whole_number = written.is_integer() and abs(written) <= MAX_EXACT_INTEGER
            value: int | float = int(written) if whole and whole_number else written
        elif len(stripped) > MAX_INT_DIGITS:
            return string_cell(stripped)
        else:
            value = int(stripped)
    except ValueError:
        return string_cell(stripped)
    return number_cell(value) or string_cell(stripped)


def serial_cell(text: str, kind: str, date1904: bool) -> Cell | None:
    """A number under a date, date-time, time or duration format; the number when none fits."""
    plain = number(text)
    if plain is None or plain.kind != "number" or isinstance(plain.value, str):
        return plain
    serial = float(plain.value)
    if not math.isfinite(serial * SECONDS_A_DAY):
        return plain
    seconds = round(serial * SECONDS_A_DAY)
    if kind == DURATION:
        return duration_cell(seconds)
    if seconds < 0:
        return plain
    if kind == TIME:
        moment = seconds % SECONDS_A_DAY
        iso = f"{moment // 3600:02d}:{moment // 60 % 60:02d}:{moment % 60:02d}"
        return Cell(iso, "time", iso)
    if not date1904 and math.floor(serial) == LEAP_DAY_1900 and seconds < 61 * SECONDS_A_DAY:
        leap = "1900-02-29" if kind == DATE else f"1900-02-29T{_clock(seconds)}"
        return string_cell(leap)
    epoch = EPOCH_1904 if date1904 else EPOCH_1900
    if not date1904 and seconds >= LEAP_DAY_1900 * SECONDS_A_DAY:
        seconds -= SECONDS_A_DAY
    try:
        moment_at = epoch + timedelta(seconds=seconds)
    except OverflowError:
        return plain
    if kind == DATE:
        iso = moment_at.date().isoformat()
        return Cell(iso, "date", iso)
    iso = moment_at.isoformat()
    return Cell(iso, "datetime", iso)


def _clock(seconds: int) -> str:
    moment = seconds % SECONDS_A_DAY
    return f"{moment // 3600:02d}:{moment // 60 % 60:02d}:{moment % 60:02d}"


def duration_cell(seconds: int) -> Cell:
    """H:MM:SS, hours past a day (36:00:00), a minus sign before a negative one."""
    sign = "-" if seconds < 0 else ""
    left = abs(seconds)
    text = f"{sign}{left // 3600}:{left // 60 % 60:02d}:{left % 60:02d}"
    return Cell(text, "duration", text)


def iso_date_cell(text: str) -> Cell | None:
    """A t="d" cell: ISO 8601 text; a date, a date-time, or as text when it reads as neither."""
    stripped = text.strip()
    if not stripped:
        return None
    try:
        if len(stripped) == 10:
            iso = date.fromisoformat(stripped).isoformat()
            return Cell(iso, "date", iso)
        moment = datetime.fromisoformat(stripped)
    except ValueError:
        return string_cell(stripped)
    iso = moment.isoformat()
    return Cell(iso, "datetime", iso)


def bool_cell(text: str) -> Cell | None:
    stripped = text.strip()
    if stripped in ("1", "true"):
        return TRUE_CELL
    if stripped in ("0", "false"):
        return FALSE_CELL
    return string_cell(stripped) if stripped else None


def error_cell(text: str) -> Cell | None:
    stripped = text.strip()
    return Cell({"error": stripped}, "error", stripped) if stripped else None


def text_cell(text: str) -> Cell | None:
    """A string: empty when only whitespace, as a CSV field is."""
    return string_cell(text) if text.strip() else None
