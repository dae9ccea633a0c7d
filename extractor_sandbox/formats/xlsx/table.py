"""A worksheet's cells as a table: merged ranges spread, its header found, its rows laid out.

Merges. A merged range's first value fills each of its cells, charged to the cell budget; a range
too large for the cells left is skipped (it groups nothing). It fills no row past the last one
held, and one that would add rows past the 100,000 a table holds stops there, a failed unit.

Header. The first row with a value, or two: when a range merged across columns of the first row
groups text cells of the row under it (2025 over H1 and H2), each column is named from both
(2025 / H1; one with nothing above takes the second row's name, one merged down from the first
its first row's). Any other cell in that second row, text or not, that is not merged down from
the first makes it data, as do numbers or dates under a range.

A header under notes. When the first rows are all text and the row right over the first one
holding a number, a date or a bool spans the table (distinct texts in more than half its
columns, and in more than any row above it; a merged range one text), that row is the header:
the sparser rows over it are notes, a paragraph before the table (readxl's deaths.xlsx), or,
when it is one row, the header's upper row, joined as a merged group is (a unit and a period
over the measures' names, no merge between them).

A unit row. Over the first row holding a number (or over a label alone right over it), a row of
short texts each written in a run of cells side by side (€m over six periods, % over the next
nine), under a row of text naming each of its columns and over values in each, is the header's
unit: a paragraph before the table, left out of its rows (read as data it would make each column
it crosses text, and the names it sits under would not be found over the numbers).

Columns. From the region's first column to its last, but for one with no name and no value: no
data row fills it and its header holds nothing of its own (blank, or only a range merged from
a column left of it, as a title merged wider than the table). A blank header cell over values
is a column with a generated name (column N), which the dataset asks about (the seed).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from extractor_sandbox.artifact import BlockBuilder
from extractor_sandbox.formats import tables
from extractor_sandbox.formats.tables import (
    MAX_CELL_TEXT_BYTES,
    MAX_CELLS,
    MAX_TABLE_ROWS,
    Budget,
    Cell,
    fit_names,
    layout_rows,
    table_entry,
    unique_names,
)
from extractor_sandbox.formats.xlsx.regions import (
    MAX_REGIONS,
    Region,
    Spans,
    lines,
    own_cells,
    regions,
)
from extractor_sandbox.formats.xlsx.sheet import SheetCells

Merge = tuple[int, int, int, int]
MAX_ROWS_OVER_HEADER = 5  # note rows a header is looked for under
MAX_UNIT_WORDS = 2  # a unit's words (€m, '000s, EUR m)


class PaddedRows(Sequence[list[Cell | None]]):
    """The rows `numbers` as lists over `columns`, each made when it is asked for."""

    def __init__(
        self, rows: dict[int, dict[int, Cell]], numbers: list[int], columns: Sequence[int]
    ) -> None:
        self._rows, self._numbers, self._columns = rows, numbers, columns

    def __len__(self) -> int:
        return len(self._numbers)

    @overload
    def __getitem__(self, index: int) -> list[Cell | None]: ...
    @overload
    def __getitem__(self, index: slice) -> list[list[Cell | None]]: ...
    def __getitem__(self, index: int | slice) -> list[Cell | None] | list[list[Cell | None]]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        row = self._rows[self._numbers[index]]
        return [row.get(c) for c in self._columns]


@dataclass
class SheetTable:
    entries: list[dict[str, Any]] = field(default_factory=list)
    blocks: list[dict[str, Any]] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)


def spread_merges(
    cells: SheetCells, budget: Budget, sheet: str
) -> tuple[list[Merge], list[dict[str, str]]]:
    """Fill each merged range from its first value; the ranges spread, and the failed units."""
    rows = cells.rows
    if not rows:
        return [], []
    last = max(rows)
    spread: list[Merge] = []
    skipped = 0
    stopped = False
    for r1, c1, r2, c2 in cells.merges:
        origin = rows.get(r1, {}).get(c1)
        if origin is None or r1 > last:
            continue
        bottom = min(r2, last)
        new_rows = [r for r in range(r1, bottom + 1) if r not in rows]
        room = MAX_TABLE_ROWS - cells.data_rows
        if len(new_rows) > room:
            stopped = True
            if room <= 0:
                continue
            bottom = new_rows[room] - 1
            new_rows = new_rows[:room]
        filled = (bottom - r1 + 1) * (c2 - c1 + 1) - 1
        text_bytes = 4 * len(origin.text) * filled
        if (
            budget.cells + filled > MAX_CELLS
            or budget.text_bytes + text_bytes > MAX_CELL_TEXT_BYTES
        ):
            skipped += 1
            continue
        budget.cells += filled
        budget.text_bytes += text_bytes
        cells.data_rows += len(new_rows)
        for r in range(r1, bottom + 1):
            row = rows.setdefault(r, {})
            for c in range(c1, c2 + 1):
                row[c] = origin
        spread.append((r1, c1, bottom, c2))
    failed = []
    if stopped:
        failed.append(
            {
                "unit": f"{sheet} merged cells",
                "reason": f"a merge would add rows past {MAX_TABLE_ROWS:,} a table",
            }
        )
    if skipped:
        failed.append(
            {
                "unit": f"{sheet} merged cells",
                "reason": f"{skipped:,} merged ranges not spread: past the cells left",
            }
        )
    if cells.merges_unread:
        failed.append(
            {
                "unit": f"{sheet} merged cells",
                "reason": f"{cells.merges_unread:,} merged ranges unread: past 1,000,000 in the workbook",
            }
        )
    return spread, failed


def header_names(
    rows: dict[int, dict[int, Cell]],
    first: int,
    spread: list[Merge],
    columns: range,
    *,
    upper: bool = False,
) -> tuple[list[str], int]:
    """The column names and how many rows (1 or 2) the header takes; `upper`: the first row is
    known to sit over the header row (header_row found it second), so the two are joined."""
    top = rows[first]
    under = rows.get(first + 1)
    in_first = [m for m in spread if m[0] == first and m[3] > m[1]]
    down = {c for m in spread if m[0] <= first < m[2] for c in range(m[1], m[3] + 1)}
    grouped = {c for m in in_first if m[2] == first for c in range(m[1], m[3] + 1)}
    if under is None or not (upper or _second_row_is_header(top, under, down, grouped)):
        return [top[c].text if c in top else "" for c in columns], 1
    names = []
    for c in columns:
        above, below = top.get(c), under.get(c)
        if c in down or below is None:
            names.append(above.text if above is not None else "")
        elif above is None:
            names.append(below.text)
        else:
            names.append(f"{above.text} / {below.text}")
    return names, 2


def header_row(
    rows: dict[int, dict[int, Cell]], numbers: list[int], spread: list[Merge], every: range
) -> int:
    """Where in `numbers` (the region's rows) its header is: 0, the first row, unless the rows
    over the first row holding a number, a date or a bool are all text and the one right over it
    spans the table (distinct texts in more than half its columns, and in more than any row above
    it): then that one, and the sparser rows above it are notes (MAX_ROWS_OVER_HEADER at most)."""
    typed = _first_typed(rows, numbers)
    if typed is None or typed < 2:
        return 0
    merged = [m for m in spread if m[3] > m[1]]

    def distinct(n: int) -> int:
        # A range merged across columns is one text, however many cells it spreads to.
        spread_to = {c for r1, c1, r2, c2 in merged if r1 <= n <= r2 for c in range(c1 + 1, c2 + 1)}
        return sum(1 for c in rows[n] if c not in spread_to)

    candidate = numbers[typed - 1]
    spans = distinct(candidate)
    if 2 * spans <= len(every) or any(distinct(n) >= spans for n in numbers[: typed - 1]):
        return 0
    if typed == 2 and header_names(rows, numbers[0], spread, every)[1] == 2:
        return 0  # the two-row header the merge rule already reads
    return typed - 1


def _columns_of(rows: dict[int, dict[int, Cell]], numbers: list[int]) -> range:
    """The columns from the leftmost cell of these rows to the rightmost."""
    return range(min(min(rows[n]) for n in numbers), max(max(rows[n]) for n in numbers) + 1)


def _second_row_is_header(
    top: dict[int, Cell], under: dict[int, Cell], down: set[int], grouped: set[int]
) -> bool:
    groups = False
    for c, cell in under.items():
        if c in down:
            continue
        if cell.kind != "string":
            return False
        if c in grouped:
            groups = True
        elif c in top:
            return False
    return groups


def kept_columns(
    rows: dict[int, dict[int, Cell]],
    header: range,
    data_numbers: list[int],
    spread: list[Merge],
    columns: range,
) -> Sequence[int]:
    """The table's columns: each of `columns` but one that no data row fills and whose header
    holds no value of its own (blank, or only a range merged from a column left of it, as a
    title merged wider than the table is): no name and no value is no column."""
    filled: set[int] = set()
    for n in data_numbers:
        filled.update(rows[n])
    if len(filled) >= len(columns):
        return columns
    empty = set(columns) - filled
    named: set[int] = set()
    for r in header:
        held = empty.intersection(rows.get(r, ()))
        if held:
            # A header cell a merge spread from its left is no name of its own.
            for r1, c1, r2, c2 in spread:
                if r1 <= r <= r2 and c2 > c1:
                    held.difference_update(range(c1 + 1, c2 + 1))
            named |= held
    kept = [c for c in columns if c not in empty or c in named]
    return kept or columns


def charge_header(names: list[str], budget: Budget) -> bool:
    """Charge the column names, as the artifact's JSON spells them, to the laid-out bytes; False
    when they do not fit (a header past the bytes fails its table)."""
    spend = len(json.dumps(names, ensure_ascii=False))
    if budget.layout_bytes + spend > tables.MAX_LAYOUT_BYTES:
        return False
    budget.layout_bytes += spend
    return True


def sheet_table(
    cells: SheetCells,
    sheet: str,
    first_table: int,
    budget: Budget,
    *,
    hidden: bool,
    first_block: int,
    tables_left: int = MAX_REGIONS,
) -> SheetTable:
    """The sheet's tables (one per region) and blocks, in the sheet's reading order: its name a
    heading the others sit under, a title or a note outside a table a paragraph block, each
    table's rows row blocks. A sheet that would split into more tables than `tables_left` is one
    table."""
    result = SheetTable()
    spread, result.failed = spread_merges(cells, budget, sheet)
    heading = sheet_heading(sheet, budget, first_block, hidden=hidden)
    if heading is None:
        result.failed.append({"unit": sheet, "reason": "past the table budget"})
        return result
    under = Under()
    if heading:
        result.blocks.append(heading)
        under = Under([heading["text"]], heading["id"])
    rows = cells.rows
    if not rows:
        return result
    found = regions(rows, spread, limit=max(1, tables_left))
    # A sheet that is one region is read from its own rows: no copy of a million cells.
    owned = [(rows, spread)] if len(found) == 1 else own_cells(rows, found, spread)
    for region, (own, merges) in zip(found, owned, strict=True):
        next_block = first_block + len(result.blocks)
        if region.prose:
            block = _prose_block(rows, region, sheet, budget, next_block, under)
            if block is None:
                result.failed.append({"unit": sheet, "reason": "past the table budget"})
                break
            result.blocks.append(block)
            continue
        table_id = f"t{first_table + len(result.entries)}"
        stop = _region_table(
            result,
            own,
            merges,
            sheet,
            table_id,
            budget,
            hidden=hidden,
            first_block=next_block,
            under=under,
        )
        if stop:
            break
    return result


@dataclass(frozen=True)
class Under:
    """The section path and parent of a sheet's blocks: its name's heading, or none."""

    section_path: list[str] = field(default_factory=list)
    parent: str | None = None


def sheet_heading(sheet: str, budget: Budget, block: int, *, hidden: bool) -> dict[str, Any] | None:
    """The sheet's name as a depth-1 heading block (the seed: "its name as a heading"), cited by
    the sheet; {} for a name of only whitespace (no heading), None when the table budget has no
    room for it. A hidden sheet's heading is marked hidden, as its table is."""
    title = " ".join(sheet.split())
    if not title:
        return {}
    if not _charge_block(title, sheet, budget):
        return None
    builder = BlockBuilder(block)
    builder.heading(title, 1, {"sheet": sheet}, {"hidden": True} if hidden else None)
    return builder.blocks[0]


def _charge_block(text: str, sheet: str, budget: Budget) -> bool:
    """Charge a block that is no table row to the table budget, as a row block is charged;
    False (and the budget spent) when it does not fit."""
    spend = len(json.dumps(text, ensure_ascii=False)) + len(sheet) + tables.BLOCK_JSON_OVERHEAD
    text_spend = tables.row_text_spend(text)
    if (
        budget.layout_bytes + spend > tables.MAX_LAYOUT_BYTES
        or budget.block_chars + text_spend > tables.MAX_BLOCK_TEXT_CHARS
    ):
        budget.spent = True
        return False
    budget.layout_bytes += spend
    budget.block_chars += text_spend
    return True


def _prose_block(
    rows: dict[int, dict[int, Cell]],
    region: Region,
    sheet: str,
    budget: Budget,
    block: int,
    under: Under,
) -> dict[str, Any] | None:
    """A title or a note: the region's lines, one per row, as a paragraph block (None when the
    table budget has no room for it)."""
    text = "\n".join(lines(rows, region))
    if not _charge_block(text, sheet, budget):
        return None
    builder = BlockBuilder(block)
    builder.place(
        "paragraph",
        text,
        {"row_start": region.rows[0], "row_end": region.rows[-1], "sheet": sheet},
        {},
        section_path=under.section_path,
        parent=under.parent,
    )
    return builder.blocks[0]


def unit_row(
    rows: dict[int, dict[int, Cell]], numbers: list[int], spread: list[Merge]
) -> int | None:
    """The unit row of a header band, if the region has one: over the first row holding a
    number, a date or a bool (or over a lone label right over it, the first rows' group), a row
    of short texts each written in a run of two or more cells side by side (€m over nine
    quarters, % over the next nine), under a row of text naming each of its columns and over
    values in each (a period row and its unit over the measures). Data holds no such row: it
    would make every column it crosses text."""
    typed = _first_typed(rows, numbers)
    if typed is None:
        return None
    at = typed - 1
    if at >= 2 and len(rows[numbers[at]]) == 1:
        at -= 1  # a label alone over the first rows (Group, Germany) is data, the unit over it
    if at < 1:
        return None
    unit = numbers[at]
    cells = rows[unit]
    if (
        not _runs_of_short_texts(cells)
        or not cells.keys() <= rows[numbers[at - 1]].keys()
        or not cells.keys() <= rows[numbers[typed]].keys()
        # A merged range spread over the row is one text, no unit written per column.
        or any(r1 <= unit <= r2 for r1, _, r2, _ in spread)
    ):
        return None
    return unit


def _runs_of_short_texts(cells: dict[int, Cell]) -> bool:
    """Whether each cell is a text of at most MAX_UNIT_WORDS words written also in a cell right
    beside it (runs of one text: a unit per column, not names)."""
    if len(cells) < 2:
        return False
    for c, cell in cells.items():
        if cell.kind != "string" or len(cell.text.split()) > MAX_UNIT_WORDS:
            return False
        beside = (cells.get(c - 1), cells.get(c + 1))
        if not any(other is not None and other.text == cell.text for other in beside):
            return False
    return True


def _first_typed(rows: dict[int, dict[int, Cell]], numbers: list[int]) -> int | None:
    """Where in `numbers` (among the first rows a header is looked for in) the first row holding
    a number, a date or a bool is."""
    return next(
        (
            i
            for i, n in enumerate(numbers[: MAX_ROWS_OVER_HEADER + 2])
            if any(cell.kind != "string" for cell in rows[n].values())
        ),
        None,
    )


def _unit_block(
    unit: int, cells: dict[int, Cell], sheet: str, budget: Budget, block: int, under: Under
) -> dict[str, Any] | None:
    """The unit row as a paragraph block, its text once (None when the table budget has no room
    for it)."""
    text = " ".join(dict.fromkeys(cells[c].text for c in sorted(cells)))
    if not _charge_block(text, sheet, budget):
        return None
    builder = BlockBuilder(block)
    builder.place(
        "paragraph",
        text,
        {"row_start": unit, "row_end": unit, "sheet": sheet},
        {},
        section_path=under.section_path,
        parent=under.parent,
    )
    return builder.blocks[0]


def _region_table(
    result: SheetTable,
    rows: dict[int, dict[int, Cell]],
    spread: list[Merge],
    sheet: str,
    table_id: str,
    budget: Budget,
    *,
    hidden: bool,
    first_block: int,
    under: Under,
) -> bool:
    """One region's table into `result`; True when the budget stops the sheet there."""
    numbers = sorted(r for r, row in rows.items() if row)
    unit = unit_row(rows, numbers, spread)
    if unit is not None:
        # The unit row is no row of data: it is left out of the table, a paragraph before it.
        numbers.remove(unit)
        unit_cells = rows[unit]
        rows = {n: row for n, row in rows.items() if n != unit}
    every = _columns_of(rows, numbers)
    at = header_row(rows, numbers, spread, every)
    if at >= 2:
        # The sparser rows over the header are notes: a paragraph before the table, kept whole.
        notes = Region(numbers[:at], every.start, every[-1], prose=True, spans=Spans(spread))
        block = _prose_block(rows, notes, sheet, budget, first_block, under)
        if block is None:
            result.failed.append({"unit": sheet, "reason": "past the table budget"})
            return True
        result.blocks.append(block)
        first_block += 1
        numbers = numbers[at:]
        every = _columns_of(rows, numbers)
    if unit is not None:
        block = _unit_block(unit, unit_cells, sheet, budget, first_block, under)
        if block is None:
            result.failed.append({"unit": sheet, "reason": "past the table budget"})
            return True
        result.blocks.append(block)
        first_block += 1
    first = numbers[0]
    raw_names, header_rows = header_names(rows, first, spread, every, upper=at == 1)
    data_numbers = [n for n in numbers if n >= first + header_rows]
    columns = kept_columns(rows, range(first, first + header_rows), data_numbers, spread, every)
    if len(columns) < len(every):
        raw_names = [raw_names[c - every.start] for c in columns]
    names, name_failures = fit_names(raw_names, sheet)
    names = unique_names(names)
    result.failed = name_failures + result.failed
    if not charge_header(names, budget):
        budget.spent = True
        result.failed.append({"unit": sheet, "reason": "its header is past the table budget"})
        return True
    # Rows are padded to the table's width only as they are laid out: a sheet with one cell in
    # column XFD would otherwise make every row 16,384 wide before the budget could stop it.
    data: Sequence[list[Cell | None]] = PaddedRows(rows, data_numbers, columns)
    # The budget may be spent by this very sheet (its cells ran out): the rows it holds were
    # admitted and are still laid out (layout_rows cuts only at its own bounds); only the sheets
    # after it are not read.
    layout = layout_rows(
        table_id,
        names,
        data,
        data_numbers,
        budget,
        sheet=sheet,
        header_rows=header_rows,
        first_block=first_block,
        section_path=under.section_path,
        parent=under.parent,
    )
    result.blocks += layout.blocks
    for block in layout.blocks:
        locator = block["locator"]
        if locator["row_start"] == 1 and not data_numbers:
            # layout_rows counts a lone header from row 1; this one starts where the sheet has it.
            locator["row_start"], locator["row_end"] = first, first + header_rows - 1
    if layout.failed:
        result.failed += [{**unit, "unit": f"{sheet} {unit['unit']}"} for unit in layout.failed]
        data_numbers = data_numbers[: layout.rows_laid]
    data = list(PaddedRows(rows, data_numbers, columns))
    last = data_numbers[-1] if data_numbers else first + header_rows - 1
    result.entries.append(
        table_entry(
            table_id,
            sheet,
            names,
            data,
            header_rows=header_rows,
            locator={"sheet": sheet, "row_start": first, "row_end": last},
            attrs={"hidden": True} if hidden else None,
        )
    )
    return bool(layout.failed)
