"""What the tabular readers (CSV, Parquet, and later XLSX) share: typed cells and row blocks.
Over 500 lines: the one set of table rules every tabular reader shares.

A cell is a `Cell`: its JSON value for `tables[].rows`, its kind (string, number, bool, date,
datetime, time, duration, error) and the text its row block shows. An empty cell is None and
counts for nothing. A column's type is the one kind its values share, dates with date-times being
datetime, otherwise mixed (a column with no value is string). A float's row text is what a sheet
shows, 15 significant digits (0.1+0.2 reads 0.3), while the table keeps its exact value; an
integer past signed 64 bits is its exact digits, as a string, since a JSON number reads back as a
double.

Row blocks: twenty rows to a block and at most 1,000 characters (a longer row is a block alone),
each row a line of `column: value` pairs of its non-empty cells joined by " | ", a block starting
and ending at a row with text. A block is a "paragraph" with attrs.table_id and a locator of its
rows (the header counted, so the first data row under a one-row header is row 2), and the sheet
when the table is one. A header with no row of text under it is a block of its own when it names
a column (rows 0-0 when the names are no row of the source, header_rows 0: a Parquet schema).

Dates, date-times and times are ISO text (a date-time's zone kept), a duration H:MM:SS with
hours past a day (36:00:00) and a fraction when it has one.

Budgets (one for all of an artifact's tables): 1,000,000 non-empty cells, their text within
256 MiB counted at four bytes a character, 100,000 rows a table; laying the rows out spends at most
40 MiB of JSON and 12 M characters of block text, each block charged 760 more. The rows past any
of them are a failed unit, counted and never laid out. A reader may give the budget the
extraction's TextBudget too (output_size.py, the artifact's bound: XLSX does), charged each
admitted row's characters: once that is spent, the next row is refused as past the artifact's
bound.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal, InvalidOperation
from itertools import chain, repeat, zip_longest
from operator import add, itemgetter
from typing import Any, NamedTuple

from extractor_sandbox.artifact import BlockBuilder
from extractor_sandbox.output_size import SETTING, TextBudget

ROWS_PER_BLOCK = 20
MAX_BLOCK_CHARS = 1_000
MAX_NAME_CHARS = 500
PAIR_SEPARATOR = " | "

MAX_CELLS = 1_000_000
MAX_CELL_TEXT_BYTES = 256 * 1024 * 1024  # counted at four bytes a character
MAX_TABLE_ROWS = 100_000
MAX_LAYOUT_BYTES = 40 * 1024 * 1024
MAX_BLOCK_TEXT_CHARS = 12_000_000
PAST_ARTIFACT_BOUND = f"past the artifact's bound ({SETTING})"
BLOCK_TEXT_OVERHEAD = 760
BLOCK_JSON_OVERHEAD = 160  # a block's own fields: id, type, locator, attrs, keys, section path

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

KINDS = ("string", "number", "bool", "date", "datetime", "time", "duration")

_JSON = json.JSONEncoder(ensure_ascii=False)  # as the artifact spells its values
# Rows whose layout spend is counted at once (two JSON encodings of them): a bound on the memory
# those encodings take, and on the rows charged one by one when a chunk crosses a bound.
_SPEND_CHUNK = 1_000


class Cell(NamedTuple):
    """One non-empty cell: its value in the table, its kind, and its row text.

    A named tuple rather than a frozen dataclass: a workbook makes a million of them, and a
    tuple is made in a third of the time.
    """

    value: Any
    kind: str
    text: str


Row = Sequence["Cell | None"]
_VALUE: Callable[[Any], Any] = itemgetter(0)  # a Cell's value
_KIND: Callable[[Any], str] = itemgetter(1)  # a Cell's kind
_TEXT: Callable[[Any], str] = itemgetter(2)  # a Cell's row text


def string_cell(text: str) -> Cell:
    return Cell(text, "string", text)


def float_text(value: float) -> str:
    """A float as a sheet shows it: 15 significant digits, no trailing zeros."""
    if value == int(value) and abs(value) < 1e15:
        return str(int(value))
    return format(value, ".15g")


def number_cell(value: int | float, text: str | None = None) -> Cell | None:
    """A number's cell; an integer past signed 64 bits keeps its exact digits as a string.

    A float that is no JSON number (an infinity, a NaN) has no number cell: None, so the
    reader reads it as text or leaves it out.
    """
    if isinstance(value, bool):
        return Cell(value, "bool", "TRUE" if value else "FALSE")
    if isinstance(value, int):
        if INT64_MIN <= value <= INT64_MAX:
            return Cell(value, "number", str(value))
        digits = str(value)
        return Cell(digits, "number", digits)
    if not math.isfinite(value):
        return None
    return Cell(value, "number", text if text is not None else float_text(value))


def exact_number_cell(digits: str) -> Cell:
    """A decimal kept as its exact digits (a value a double does not hold)."""
    return Cell(digits, "number", digits)


def date_cell(value: date) -> Cell:
    """A date as ISO text (2024-02-29)."""
    text = value.isoformat()
    return Cell(text, "date", text)


def datetime_cell(value: datetime) -> Cell:
    """A date and time as ISO text, its zone kept (none when it has none)."""
    text = value.isoformat()
    return Cell(text, "datetime", text)


def duration_text(micros: int) -> str:
    """A duration of `micros` microseconds as H:MM:SS with hours past a day (36:00:00), and a
    fraction to the microsecond when it has one; any length, since hours have no bound."""
    seconds, fraction = divmod(abs(micros), 1_000_000)
    minutes, second = divmod(seconds, 60)
    hours, minute = divmod(minutes, 60)
    sign = "-" if micros < 0 else ""
    text = f"{sign}{hours}:{minute:02d}:{second:02d}"
    return f"{text}.{fraction:06d}" if fraction else text


def duration_cell(micros: int) -> Cell:
    text = duration_text(micros)
    return Cell(text, "duration", text)


def column_type(kinds: Iterable[str]) -> str:
    """The type of a column whose values have these kinds (errors do not count)."""
    found = {kind for kind in kinds if kind != "error"}
    if found == {"date", "datetime"}:
        return "datetime"
    if len(found) == 1:
        return next(iter(found))
    if not found:
        return "string"
    return "mixed"


def column_types(rows: Sequence[Row], width: int) -> list[str]:
    if max(map(len, rows), default=0) > width:
        raise IndexError("a row is wider than its table")
    # Column by column, the cells gathered and their kinds read at C speed (a table holds up to
    # a million cells).
    columns = list(zip_longest(*rows))[:width] if rows else []
    columns += [()] * (width - len(columns))
    return [column_type(set(map(_KIND, filter(None, column)))) for column in columns]


def unique_names(names: Sequence[str]) -> list[str]:
    """Each empty name generated (column N), and a repeated one named <name> (2), <name> (3)."""
    seen: set[str] = set()
    # Where each name's count stopped: a header of 16,384 equal names (a merge across a whole
    # row) took 70 s when every repeat counted up from 1 again; the names come out the same.
    last_count: dict[str, int] = {}
    result: list[str] = []
    for index, name in enumerate(names):
        base = name if name else f"column {index + 1}"
        candidate = base
        count = last_count.get(base, 1)
        if count > 1:
            candidate = f"{base} ({count})"
        while candidate in seen:
            count += 1
            candidate = f"{base} ({count})"
        last_count[base] = count
        seen.add(candidate)
        result.append(candidate)
    return result


def fit_names(names: Sequence[str], table_name: str) -> tuple[list[str], list[dict[str, str]]]:
    """Column names cut to 500 characters; a cut is a failed unit (<table> header)."""
    fitted = [name[:MAX_NAME_CHARS] for name in names]
    failed = []
    if any(len(name) > MAX_NAME_CHARS for name in names):
        failed.append(
            {"unit": f"{table_name} header", "reason": "a column name cut to 500 characters"}
        )
    return fitted, failed


def row_line(names: Sequence[str], row: Row) -> str:
    """A row's line: the `column: value` pairs of its non-empty cells."""
    return PAIR_SEPARATOR.join(
        f"{names[index]}: {cell.text}" for index, cell in enumerate(row) if cell is not None
    )


def row_text_spend(line: str) -> int:
    """What a row's line spends of the block text budget (its share of a block's 760 with it)."""
    return len(line) + 1 + BLOCK_TEXT_OVERHEAD // ROWS_PER_BLOCK + 1


def json_value(cell: Cell | None) -> Any:
    return None if cell is None else cell.value


def row_values(rows: Iterable[Row]) -> list[list[Any]]:
    """Each row's JSON values; a row with no empty cell at C speed."""
    return [
        list(map(_VALUE, row))
        if None not in row
        else [None if cell is None else cell.value for cell in row]
        for row in rows
    ]


@dataclass
class Budget:
    """One budget over all of an artifact's tables."""

    cells: int = 0
    text_bytes: int = 0
    layout_bytes: int = 0
    block_chars: int = 0
    spent: bool = False
    text: TextBudget | None = None  # the artifact's bound, charged the admitted cells' text

    def admit_rows(self, rows: Sequence[Row], rows_in_table: int) -> tuple[int, str | None]:
        """Charge rows in order, as admit_row does each: how many fit, and why the next does not
        (or None). When all of them fit, they are counted at once, at C speed."""
        text = self.text
        if (
            not self.spent
            and rows_in_table + len(rows) <= MAX_TABLE_ROWS
            and (text is None or not text.spent)
        ):
            present = list(filter(None, chain.from_iterable(rows)))
            text_bytes = 4 * sum(map(len, map(_TEXT, present)))
            if (
                self.cells + len(present) <= MAX_CELLS
                and self.text_bytes + text_bytes <= MAX_CELL_TEXT_BYTES
            ):
                self.cells += len(present)
                self.text_bytes += text_bytes
                if text is not None:
                    text.charge(text_bytes // 4)
                return len(rows), None
        for index, row in enumerate(rows):
            reason = self.admit_row(row, rows_in_table + index)
            if reason is not None:
                return index, reason
        return len(rows), None

    def admit_row(self, row: Row, rows_in_table: int) -> str | None:
        """Charge a row's cells; the reason it does not fit, or None when it does."""
        if self.spent:
            return "the table budget is spent"
        if self.text is not None and self.text.spent:
            self.spent = True
            return PAST_ARTIFACT_BOUND
        if rows_in_table >= MAX_TABLE_ROWS:
            return f"past {MAX_TABLE_ROWS:,} rows a table"
        cells = [cell for cell in row if cell is not None]
        text_bytes = 4 * sum(len(cell.text) for cell in cells)
        if self.cells + len(cells) > MAX_CELLS:
            self.spent = True
            return f"past {MAX_CELLS:,} cells"
        if self.text_bytes + text_bytes > MAX_CELL_TEXT_BYTES:
            self.spent = True
            return "past 256 MiB of cell text"
        self.cells += len(cells)
        self.text_bytes += text_bytes
        if self.text is not None:
            self.text.charge(text_bytes // 4)
        return None


@dataclass
class TableLayout:
    """A table's rows laid out: its row blocks and the rows that did not fit."""

    blocks: list[dict[str, Any]] = field(default_factory=list)
    rows_laid: int = 0
    failed: list[dict[str, str]] = field(default_factory=list)
    values: list[list[Any]] = field(default_factory=list)  # the laid rows', when kept


def layout_rows(
    table_id: str,
    names: Sequence[str],
    rows: Sequence[Row],
    row_numbers: Sequence[int],
    budget: Budget,
    *,
    sheet: str | None = None,
    header_rows: int = 1,
    first_block: int = 0,
    section_path: Sequence[str] | None = None,
    parent: str | None = None,
    keep_values: bool = False,
) -> TableLayout:
    """Row blocks for a table's rows, row_numbers[i] being the number of rows[i]; each under
    `section_path` and `parent` when given (a table inside a document's sections). With
    `keep_values`, the laid rows' JSON values are kept (layout.values) for table_entry."""
    builder = BlockBuilder(first_block)
    layout = TableLayout(blocks=builder.blocks)
    pending: list[tuple[int, str]] = []

    def place(text: str, first: int, last: int) -> None:
        where: dict[str, Any] = {"row_start": first, "row_end": last}
        if sheet is not None:
            where["sheet"] = sheet
        builder.place(
            "paragraph",
            text,
            where,
            {"table_id": table_id},
            section_path=section_path,
            parent=parent,
        )

    def flush() -> None:
        if pending:
            place("\n".join(line for _, line in pending), pending[0][0], pending[-1][0])
            pending.clear()

    prefixes = [f"{name}: " for name in names]
    per_row = BLOCK_JSON_OVERHEAD // ROWS_PER_BLOCK + (len(sheet) if sheet else 0)
    pending_chars = 0
    for chunk_start in range(0, len(rows), _SPEND_CHUNK):
        chunk = rows[chunk_start : chunk_start + _SPEND_CHUNK]
        lines = _row_lines(prefixes, chunk)
        # A chunk's spend at once: the JSON of a list is its items' joined by ", ", so two
        # encodings give the sum of the rows' own. Only a chunk that would cross a bound is
        # charged row by row, to find the row it stops at.
        values = row_values(chunk)
        separators = 2 + 2 * (len(chunk) - 1)
        spend = (
            len(_JSON.encode(values))
            + len(_JSON.encode(lines))
            - 2 * separators
            + per_row * len(chunk)
        )
        text_spend = sum(map(len, lines)) + len(lines) * (2 + BLOCK_TEXT_OVERHEAD // ROWS_PER_BLOCK)
        if (
            budget.layout_bytes + spend <= MAX_LAYOUT_BYTES
            and budget.block_chars + text_spend <= MAX_BLOCK_TEXT_CHARS
        ):
            budget.layout_bytes += spend
            budget.block_chars += text_spend
            laid = len(chunk)
        else:
            laid = _charge_rows(budget, values, lines, per_row)
            if laid < len(chunk):
                budget.spent = True
                layout.failed.append(
                    {
                        "unit": f"rows {row_numbers[chunk_start + laid]}-",
                        "reason": "past the table budget (laid-out rows)",
                    }
                )
        layout.rows_laid += laid
        if keep_values:
            layout.values += values[:laid]
        offset = 0
        while offset < laid:
            if not pending:
                # Twenty rows of text that fit in one block are one block, as adding them one
                # by one below would make it.
                group = lines[offset : offset + ROWS_PER_BLOCK]
                if (
                    len(group) == ROWS_PER_BLOCK
                    and offset + ROWS_PER_BLOCK <= laid
                    and all(group)
                    and sum(map(len, group)) + ROWS_PER_BLOCK - 1 <= MAX_BLOCK_CHARS
                ):
                    first = row_numbers[chunk_start + offset]
                    last = row_numbers[chunk_start + offset + ROWS_PER_BLOCK - 1]
                    place("\n".join(group), first, last)
                    offset += ROWS_PER_BLOCK
                    continue
            line = lines[offset]
            offset += 1
            if not line:
                continue
            if pending and (
                len(pending) >= ROWS_PER_BLOCK or pending_chars + 1 + len(line) > MAX_BLOCK_CHARS
            ):
                flush()
                pending_chars = 0
            pending.append((row_numbers[chunk_start + offset - 1], line))
            pending_chars += len(line) + (1 if len(pending) > 1 else 0)
            if len(line) > MAX_BLOCK_CHARS:
                flush()
                pending_chars = 0
        if laid < len(chunk):
            break
    flush()
    if not layout.blocks and not layout.failed and any(names):
        # A header that is no row of the file (a Parquet schema, header_rows 0) has no rows: 0-0.
        first_header_row = 1 if header_rows > 0 else 0
        place(PAIR_SEPARATOR.join(names), first_header_row, header_rows)
    return layout


def _row_lines(prefixes: Sequence[str], rows: Sequence[Row]) -> list[str]:
    """row_line of each row (`prefixes` being "<name>: "). When every row has every cell, the
    lines are built column by column at C speed."""
    width = len(prefixes)
    full = width and rows and all(len(row) == width for row in rows)
    if full and None not in chain.from_iterable(rows):
        columns = [
            map(add, repeat(prefix), map(_TEXT, column))
            for prefix, column in zip(prefixes, zip(*rows, strict=True), strict=True)
        ]
        return list(map(PAIR_SEPARATOR.join, zip(*columns, strict=True)))
    return [
        PAIR_SEPARATOR.join(map(add, prefixes, map(_TEXT, row)))
        if None not in row and len(row) <= width
        else PAIR_SEPARATOR.join(
            [prefix + cell.text for prefix, cell in zip(prefixes, row, strict=False) if cell]
        )
        for row in rows
    ]


def _charge_rows(
    budget: Budget, values: Sequence[list[Any]], lines: Sequence[str], per_row: int
) -> int:
    """Charge rows one at a time (each row's values and line as JSON) until one would cross a
    layout bound; how many were charged. The rows given were admitted (Budget.admit_row), even
    when the last admission spent the cells; only the layout's own bounds cut them here."""
    for index, line in enumerate(lines):
        spend = len(_JSON.encode(values[index])) + len(_JSON.encode(line)) + per_row
        text_spend = row_text_spend(line)
        if (
            budget.layout_bytes + spend > MAX_LAYOUT_BYTES
            or budget.block_chars + text_spend > MAX_BLOCK_TEXT_CHARS
        ):
            return index
        budget.layout_bytes += spend
        budget.block_chars += text_spend
    return len(lines)


def table_entry(
    table_id: str,
    name: str,
    names: Sequence[str],
    rows: Sequence[Row],
    *,
    header_rows: int = 1,
    locator: dict[str, Any],
    attrs: dict[str, Any] | None = None,
    values: list[list[Any]] | None = None,
) -> dict[str, Any]:
    """The artifact's `tables[]` entry; `values`, the rows' JSON values when they were made
    already (layout_rows' keep_values)."""
    types = column_types(rows, len(names))
    entry: dict[str, Any] = {
        "id": table_id,
        "name": name,
        "columns": [
            {"name": column, "type": kind} for column, kind in zip(names, types, strict=True)
        ],
        "rows": row_values(rows) if values is None else values,
        "header_rows": header_rows,
        "locator": locator,
    }
    if attrs:
        entry["attrs"] = dict(attrs)
    return entry


# Typed text: a CSV field, a PDF table cell

_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_INTEGER = re.compile(r"[+-]?\d+")
# A number written with a zero before another digit (`06427`, `007`, `-01.5`) is a code, a postal
# code or a padded id, and reads as text: as a number it would be written back without its
# zeros, and the value a user searches and joins on would be lost (DuckDB's CSV sniffer and
# readr keep such fields as text too). `0`, `0.5` and `-0.25` are numbers.
_ZERO_LED = re.compile(r"[+-]?0\d")
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_DATETIME = re.compile(
    r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:?\d{2})?"
)


def typed_cell(value: str) -> Cell | None:
    """A field's cell: None when empty or only whitespace; a number, date, date-time or text."""
    if not value.strip():
        return None
    if _NUMBER.fullmatch(value):
        return _number(value)
    if _DATE.fullmatch(value):
        try:
            date.fromisoformat(value)
        except ValueError:
            return string_cell(value)
        return Cell(value, "date", value)
    if _DATETIME.fullmatch(value):
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return string_cell(value)
        iso = moment.isoformat()
        return Cell(iso, "datetime", iso)
    return string_cell(value)


def _number(value: str) -> Cell:
    if _ZERO_LED.match(value):
        return string_cell(value)
    if _INTEGER.fullmatch(value):
        if len(value) > 4000:
            return string_cell(value)
        return number_cell(int(value)) or string_cell(value)
    try:
        exact = Decimal(value)
    except InvalidOperation:  # pragma: no cover - the pattern admits only decimals
        return string_cell(value)
    as_float = float(value)
    cell = number_cell(as_float)
    if cell is None:
        return string_cell(value)
    if Decimal(repr(as_float)) == exact:
        return cell
    if "e" in value.lower():
        return string_cell(value)
    return exact_number_cell(value)
