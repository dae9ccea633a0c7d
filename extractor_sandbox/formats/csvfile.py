"""CSV and TSV: one typed table (tables[0], id t0) and its rows as row blocks.

Delimiter: a .tsv name is a tab with no quoting. Otherwise comma, semicolon, tab or pipe, guessed
from quoted fields (a `"`-quoted field with a candidate on either side) in the whole lines of the
first 4 KiB, or else from delimiter counts over the whole lines of the first 64 KiB (the
candidate found on the most lines the same number of times, ties in that order); a sample is cut
mid-line only when its first line runs past it. A field is quoted with `"`, its quotes doubled,
whatever the guess.

Values: a field of only whitespace is empty; any other is text unless written as a plain number
(an integer, an integer past signed 64 bits kept as its exact digits, a decimal kept exactly: a
double when it reads back to the digits written, else its digits), an ISO date, or an ISO date
and time (its zone kept). The header is the first row with a value; a row holds only its
non-empty fields, and a row with none is no row. Rows are numbered from the header (row 1).

Failures: a field over a megabyte, a record over 8 MiB, or quoting the reader cannot close fails
the rows from there on (coverage.failed, unit "rows N-"), counted as one unit; coverage is in rows.
"""

from __future__ import annotations

import csv
import io
import platform
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import date
from itertools import repeat, zip_longest
from typing import Any

from extractor_sandbox.artifact import build_artifact, coverage, cycle_collection_paused
from extractor_sandbox.contract import Artifact
from extractor_sandbox.formats.tables import (
    Budget,
    Cell,
    fit_names,
    float_text,
    layout_rows,
    table_entry,
    typed_cell,
    unique_names,
)

PARSER = "loom-csv"
PARSER_VERSION = f"2+python{platform.python_version()}"

CANDIDATES = (",", ";", "\t", "|")
QUOTE_SAMPLE = 4 * 1024
COUNT_SAMPLE = 64 * 1024
MAX_FIELD_CHARS = 1024 * 1024
MAX_RECORD_CHARS = 8 * 1024 * 1024

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)?")
_BLANK_LINES = re.compile(r"[\r\n]*")


class _RecordTooLong(Exception):
    pass


def extract_csv(text: str, options: Mapping[str, str] | None = None, *, name: str = "") -> Artifact:
    with cycle_collection_paused():
        return _extract_csv(text, name)


def _extract_csv(text: str, name: str) -> Artifact:
    is_tsv = name.lower().endswith(".tsv")
    delimiter = "\t" if is_tsv else sniff_delimiter(text)
    records, failure = _read(text, delimiter, quoting=not is_tsv)

    # Each record holds a value (its trailing blank fields dropped); the first is the header.
    header = [csv_cell(value) for value in records[0]] if records else []
    data_rows = records[1:]
    width = max([len(header), *map(len, data_rows)], default=0)
    raw_names = [cell.text if cell is not None else "" for cell in header]
    raw_names += [""] * (width - len(raw_names))
    names, failed = fit_names(raw_names, name or "table")
    names = unique_names(names)

    budget = Budget()
    kept: list[tuple[Cell | None, ...]] = []
    cut = False
    for chunk_start in range(0, len(data_rows), _TYPE_CHUNK):
        # Rows are typed a thousand at a time as they are reached: the rows past the thousand a
        # cut falls in are never typed.
        chunk = typed_rows(data_rows[chunk_start : chunk_start + _TYPE_CHUNK], width)
        admitted, reason = budget.admit_rows(chunk, len(kept))
        kept += chunk[:admitted]
        if reason is not None:
            failed.append({"unit": f"rows {len(kept) + 2}-", "reason": reason})
            cut = True
            break
    numbers = list(range(2, len(kept) + 2))
    layout = layout_rows("t0", names, kept, numbers, budget, keep_values=True) if width else None
    blocks = layout.blocks if layout else []
    if layout and layout.failed:
        failed += layout.failed
        kept = kept[: layout.rows_laid]
        cut = True
    header_count = 1 if width else 0
    read = header_count + len(kept)
    if failure is not None and not cut:
        failed.append({"unit": f"rows {read + 1}-", "reason": failure})
        cut = True
    # The rows from a failure on are counted as one unit: what follows is not read as rows.
    total = read + (1 if cut else 0)
    tables = []
    if width:
        tables.append(
            table_entry(
                "t0",
                name,
                names,
                kept,
                header_rows=1,
                locator={"row_start": 1, "row_end": read},
                values=layout.values if layout is not None else None,
            )
        )
    artifact = build_artifact(
        "csv",
        PARSER,
        PARSER_VERSION,
        blocks,
        coverage("rows", total, read, failed),
        attrs={"delimiter": delimiter},
    )
    artifact["tables"] = tables
    return artifact


# The delimiter


def _whole_lines(text: str, limit: int) -> str:
    """The text's first `limit` characters cut back to whole lines (mid-line only for one line)."""
    if len(text) <= limit:
        return text
    sample = text[:limit]
    cut = max(sample.rfind("\n"), sample.rfind("\r"))
    return sample if cut < 0 else sample[: cut + 1]


def sniff_delimiter(text: str) -> str:
    quoted = _whole_lines(text, QUOTE_SAMPLE)
    votes = {}
    for candidate in CANDIDATES:
        d = re.escape(candidate)
        pattern = (
            rf'(?:^|{d})[ ]*"(?:[^"]|"")*"[ ]*(?={d})|(?<={d})[ ]*"(?:[^"]|"")*"[ ]*(?:$|\r|\n)'
        )
        votes[candidate] = len(re.findall(pattern, quoted, flags=re.MULTILINE))
    best = max(CANDIDATES, key=lambda c: votes[c])
    if votes[best]:
        return best
    lines = [line for line in _whole_lines(text, COUNT_SAMPLE).splitlines() if line.strip()]
    scores = {}
    for candidate in CANDIDATES:
        counts: dict[int, int] = {}
        for line in lines:
            found = line.count(candidate)
            if found:
                counts[found] = counts.get(found, 0) + 1
        scores[candidate] = max(counts.values(), default=0)
    best = max(CANDIDATES, key=lambda c: scores[c])
    return best if scores[best] else ","


# Reading


def _lines(text: str, state: dict[str, Any]) -> Iterator[str]:
    """The text's lines with their endings; blank lines between records passed over."""
    pos = 0
    end = len(text)
    while pos < end:
        if state["record_chars"] == 0:
            pos = _BLANK_LINES.match(text, pos).end()  # type: ignore[union-attr]
            if pos >= end:
                break
        match = _LINE.match(text, pos)
        assert match is not None
        line = match.group()
        pos = match.end()
        state["record_chars"] += len(line)
        if state["record_chars"] > MAX_RECORD_CHARS:
            raise _RecordTooLong
        state["lines"].append(line)
        yield line
    state["exhausted"] = True


def _read(text: str, delimiter: str, *, quoting: bool) -> tuple[list[list[str]], str | None]:
    """The records with a value, as their fields up to the last with a value, and why reading
    stopped early (or None)."""
    if len(text) <= MAX_RECORD_CHARS:
        return _read_whole(text, delimiter, quoting=quoting)
    state: dict[str, Any] = {"record_chars": 0, "lines": [], "exhausted": False}
    reader = csv.reader(
        _lines(text, state),
        delimiter=delimiter,
        quotechar='"',
        doublequote=True,
        quoting=csv.QUOTE_MINIMAL if quoting else csv.QUOTE_NONE,
        strict=False,
    )
    records: list[list[str]] = []
    previous_limit = csv.field_size_limit(MAX_FIELD_CHARS)
    try:
        while True:
            try:
                fields = next(reader)
            except StopIteration:
                return records, None
            except _RecordTooLong:
                return records, "a record over 8 MiB"
            except csv.Error as error:
                if "field larger" in str(error):
                    return records, "a field over a megabyte"
                return records, f"unreadable quoting: {error}"
            if quoting and state["exhausted"] and not _closes(state["lines"], delimiter):
                return records, "quoting the reader cannot close"
            state["record_chars"] = 0
            state["lines"] = []
            while fields and not fields[-1].strip():
                fields.pop()
            if fields:
                records.append(fields)
    finally:
        csv.field_size_limit(previous_limit)


def _read_whole(text: str, delimiter: str, *, quoting: bool) -> tuple[list[list[str]], str | None]:
    """_read for a text no record of which can pass 8 MiB (the text is no longer): the reader
    takes its lines from io.StringIO, at C speed, instead of a generator that counts them.

    A blank line between records is a record with no field here, which holds no value, as the
    generator's skipping it does. Only the last record can be cut by the end of the text; it is
    read again strictly from where it starts, as the generator's check reads its lines.
    """
    stream = io.StringIO(text, newline="")
    reader = csv.reader(
        stream,
        delimiter=delimiter,
        quotechar='"',
        doublequote=True,
        quoting=csv.QUOTE_MINIMAL if quoting else csv.QUOTE_NONE,
        strict=False,
    )
    records: list[list[str]] = []
    start = last_start = 0
    last_kept = False
    previous_limit = csv.field_size_limit(MAX_FIELD_CHARS)
    try:
        for fields in reader:
            last_start, start = start, stream.tell()
            while fields and not fields[-1].strip():
                fields.pop()
            last_kept = bool(fields)
            if fields:
                records.append(fields)
    except csv.Error as error:
        if "field larger" in str(error):
            return records, "a field over a megabyte"
        return records, f"unreadable quoting: {error}"
    finally:
        csv.field_size_limit(previous_limit)
    if quoting and start and not _closes(io.StringIO(text[last_start:], newline=""), delimiter):
        if last_kept:
            records.pop()
        return records, "quoting the reader cannot close"
    return records, None


def _closes(lines: Iterable[str], delimiter: str) -> bool:
    """Whether the file's last record closes its quotes (read again, strictly)."""
    try:
        list(csv.reader(lines, delimiter=delimiter, quotechar='"', strict=True))
    except csv.Error as error:
        return "unexpected end of data" not in str(error)
    return True


# Typing a field. The rules are tables.typed_cell's; these paths give the same cell sooner for
# the fields most files hold: text that starts with no digit, sign, point or space (no number,
# date or date-time does), a plain integer, and a decimal that a double spells back as written.

_new_cell = tuple.__new__
_NUMBER_START = frozenset("+-.")
_MAX_FAST_DIGITS = 18
_TYPE_CHUNK = 1_000  # rows typed, then admitted to the budget, at a time  # every integer of 18 digits fits in signed 64 bits


def csv_cell(value: str) -> Cell | None:
    """A field's cell, as typed_cell gives it."""
    first = value[:1]
    if not first:
        return None
    if not (first.isdecimal() or first in _NUMBER_START or first.isspace()):
        return _new_cell(Cell, (value, "string", value))
    if value.isascii():
        if value.isdigit() and len(value) <= _MAX_FAST_DIGITS and (first != "0" or len(value) == 1):
            number = int(value)
            return _new_cell(Cell, (number, "number", str(number)))
        if value[4:5] == "-" and len(value) == _DATE_CHARS and _DATE.fullmatch(value):
            try:
                date.fromisoformat(value)
            except ValueError:
                return _new_cell(Cell, (value, "string", value))
            return _new_cell(Cell, (value, "date", value))
        if _PLAIN_DECIMAL.fullmatch(value):
            as_float = float(value)
            if repr(as_float) == value:
                return _new_cell(Cell, (as_float, "number", float_text(as_float)))
    return typed_cell(value)


_PLAIN_DECIMAL = re.compile(r"-?[0-9]+\.[0-9]+")
_SHORT_INTEGER = re.compile(r"0|[1-9][0-9]{0,17}")
# What only text starts with (no number, date or date-time does; an empty field does not match).
_TEXT_START = re.compile(r"[^\d+\-.\s]")


def typed_rows(rows: Sequence[Sequence[str]], width: int) -> list[tuple[Cell | None, ...]]:
    """The rows' fields as cells, each row padded with None to `width`, as csv_cell types each.

    A column is typed at once when its first value's kind holds for all its values (every one
    text, a short integer, a date, or a decimal a double spells as written), checked and
    converted at C speed: a column's kind is found once, not each of its cells through each rule.
    """
    if not rows:
        return []
    columns = [_typed_column(column) for column in zip_longest(*rows, fillvalue="")]
    columns += [(None,) * len(rows)] * (width - len(columns))
    return list(zip(*columns, strict=True))


def _typed_column(values: tuple[str, ...]) -> Sequence[Cell | None]:
    first = csv_cell(values[0])
    kind = first.kind if first is not None else None
    if kind == "string" and all(map(_TEXT_START.match, values)):
        return list(map(_new_cell, repeat(Cell), zip(values, repeat("string"), values)))
    if kind == "date" and all(map(_DATE.fullmatch, values)):
        try:
            list(map(date.fromisoformat, values))
        except ValueError:
            pass
        else:
            return list(map(_new_cell, repeat(Cell), zip(values, repeat("date"), values)))
    elif kind == "number":
        if all(map(_SHORT_INTEGER.fullmatch, values)):
            numbers = list(map(int, values))
            digits = map(str, numbers)
            return list(map(_new_cell, repeat(Cell), zip(numbers, repeat("number"), digits)))
        if all(map(_PLAIN_DECIMAL.fullmatch, values)):
            floats = list(map(float, values))
            if list(map(repr, floats)) == list(values):
                # float_text's own digits, but for -0.0, which it writes "0".
                texts = list(map(format, floats, repeat(".15g")))
                if "-0" in texts:
                    texts = list(map(float_text, floats))
                return list(map(_new_cell, repeat(Cell), zip(floats, repeat("number"), texts)))
    return list(map(csv_cell, values))


_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_DATE_CHARS = 10
