"""XLSX: each sheet's name a heading (depth 1) its blocks sit under, as the seed says; each
worksheet's regions typed tables (tables[], named after their sheet, ids t0, t1, ...
across the workbook; a sheet of one region is one table) and their rows as row blocks cited by
sheet and rows, a title or note outside the tables a paragraph (regions.py), read with the
standard library as the parts inflate.

Modules, one idea each: workbook (the sheets, the date system, the parts), styles and numformats
(which numbers are dates, times or durations), strings (the shared strings), values (a cell's
value), sheet (a worksheet's cells, the hot loop), regions (where a sheet splits into tables)
and table (merges, the header, the blocks).

Coverage is counted in sheets: every sheet the workbook lists, extracted when it was read with no
failed unit of its own. A chart or dialog sheet holds no cells (no table, and read); a macro sheet
or a sheet of another kind is not read and fails alone, as does a sheet whose relationship names no
part, one whose root is no worksheet, and a damaged one (the rows read before the damage stand).
Rows past the tables' budget are a failed unit (<sheet> rows N-M, with their count); once the
budget is spent the sheets after it are one failed unit, never read. The table budget holds the
extraction's TextBudget (output_size.py, the artifact's bound) too: the shared strings are held
within it (past it, the strings after are not, shared_strings is lost and the cut is a failed
unit), and once the admitted cells' text passes it the rows after are refused and the sheets
after are never read, as above, the sheet it stopped in named as a resource_limit unit.
coverage.lost names
shared_strings, number_formats and formula_values when the workbook lost them.
"""

from __future__ import annotations

import platform
from collections.abc import Mapping
from typing import Any

from extractor_sandbox.artifact import build_artifact, coverage
from extractor_sandbox.contract import Artifact
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.package import Package, PartError, XmlBounds
from extractor_sandbox.formats.tables import MAX_NAME_CHARS, Budget
from extractor_sandbox.formats.xlsx.sheet import MAX_MERGES, SheetCells, read_sheet
from extractor_sandbox.formats.xlsx.strings import read_shared_strings
from extractor_sandbox.formats.xlsx.styles import read_styles
from extractor_sandbox.formats.xlsx.table import sheet_heading, sheet_table
from extractor_sandbox.formats.xlsx.workbook import MAX_SHEETS, SheetEntry, read_workbook
from extractor_sandbox.output_size import TextBudget, current_budget

PARSER = "loom-xlsx"
PARSER_VERSION = f"4+python{platform.python_version()}"

MAX_ELEMENTS = 25_000_000  # in all of a workbook's parts: bounds the time it is read for
# Tables split from sheets, in all of a workbook: past it a sheet is one table, so a workbook
# makes at most this many and one a sheet more (each table is a dataset).
MAX_TABLES = 10_000
NO_CELLS = frozenset({"chartsheet", "dialogsheet"})
MACRO_SHEETS = frozenset({"xlMacrosheet", "xlIntlMacrosheet"})


class _Reading:
    """What one extraction carries from sheet to sheet."""

    def __init__(self) -> None:
        self.elements_left = MAX_ELEMENTS
        self.merges_left = MAX_MERGES
        self.text = current_budget()
        self.budget = Budget(text=self.text)
        self.blocks: list[dict[str, Any]] = []
        self.tables: list[dict[str, Any]] = []
        self.failed: list[dict[str, str]] = []
        self.lost: list[str] = []
        self.extracted = 0

    def bounds(self) -> XmlBounds:
        return XmlBounds(max_elements=max(self.elements_left, 0))

    def lose(self, capability: str) -> None:
        if capability not in self.lost:
            self.lost.append(capability)


def extract_xlsx(data: bytes, options: Mapping[str, str], *, name: str) -> Artifact:
    try:
        package = Package(data)
    except PartError as error:
        raise ExtractError("corrupt", str(error)) from None
    reading = _Reading()
    workbook = read_workbook(package, reading.bounds())
    reading.elements_left -= workbook.elements
    styles = read_styles(package, workbook.styles, reading.bounds())
    reading.elements_left -= styles.elements
    if styles.lost:
        reading.lose("number_formats")
    # The strings have a budget of their own, the artifact's bound: the cells charge theirs.
    strings = read_shared_strings(
        package, workbook.shared_strings, reading.bounds(), TextBudget(reading.text.bound)
    )
    reading.elements_left -= strings.elements
    if strings.lost:
        reading.lose("shared_strings")
    if strings.past_budget:
        reading.text.cut(
            f"{workbook.shared_strings} past {len(strings.strings):,} strings"
            " (a cell naming one after them reads empty)"
        )

    sheets = workbook.sheets
    if any(len(entry.name) > MAX_NAME_CHARS for entry in sheets):
        reading.failed.append(
            {"unit": "sheet names", "reason": "a sheet name cut to 500 characters"}
        )
    for index, entry in enumerate(sheets):
        stop = _why_not_read(reading)
        if stop:
            reading.failed.append({"unit": f"sheets {index + 1}-{len(sheets)}", "reason": stop})
            break
        _read_one(package, entry, index, reading, strings.strings, styles.kinds, workbook.date1904)
    if workbook.sheets_past_bound:
        first = MAX_SHEETS + 1
        reading.failed.append(
            {
                "unit": f"sheets {first}-{first + workbook.sheets_past_bound - 1}",
                "reason": f"past the first {MAX_SHEETS:,} sheets of a workbook",
            }
        )
    total = len(sheets) + workbook.sheets_past_bound
    artifact = build_artifact(
        "xlsx",
        PARSER,
        PARSER_VERSION,
        reading.blocks,
        coverage("sheets", total, reading.extracted, reading.failed, reading.lost),
        attrs={"date_system": 1904 if workbook.date1904 else 1900},
    )
    artifact["tables"] = reading.tables
    return artifact


def _why_not_read(reading: _Reading) -> str:
    if reading.text.spent:
        return "past the artifact's bound: never read"
    if reading.budget.spent:
        return "past the table budget: never read"
    if reading.elements_left <= 0:
        return f"past {MAX_ELEMENTS:,} elements in the workbook: never read"
    return ""


def _read_one(
    package: Package,
    entry: SheetEntry,
    index: int,
    reading: _Reading,
    shared: list[Any],
    style_kinds: dict[str, str],
    date1904: bool,
) -> None:
    sheet = entry.name[:MAX_NAME_CHARS]
    if entry.kind in NO_CELLS:
        heading = sheet_heading(sheet, reading.budget, len(reading.blocks), hidden=entry.hidden)
        if heading is None:
            reading.failed.append({"unit": sheet, "reason": "past the table budget"})
            return
        if heading:
            reading.blocks.append(heading)
        reading.extracted += 1
        return
    if entry.kind in MACRO_SHEETS:
        reading.failed.append({"unit": sheet, "reason": "a macro sheet is not read"})
        return
    if entry.kind != "worksheet":
        kind = entry.kind or "unknown"
        reading.failed.append({"unit": sheet, "reason": f"a sheet of kind {kind} is not read"})
        return
    if not entry.part:
        reading.failed.append({"unit": sheet, "reason": "its relationship names no part"})
        return
    cells = read_sheet(
        package,
        entry.part,
        shared,
        style_kinds,
        date1904,
        reading.budget,
        reading.bounds(),
        reading.merges_left,
    )
    reading.elements_left -= cells.elements
    reading.merges_left -= len(cells.merges)
    if reading.text.spent and cells.cut_row:
        reading.text.stop(entry.part)  # the rows after the cut and the sheets after are unread
    if cells.not_worksheet:
        reading.failed.append(
            {"unit": sheet, "reason": f"its root is {cells.not_worksheet}, not a worksheet"}
        )
        return
    if cells.lost_formula_values:
        reading.lose("formula_values")
    if cells.lost_shared_strings:
        reading.lose("shared_strings")
    table = sheet_table(
        cells,
        sheet,
        len(reading.tables),
        reading.budget,
        hidden=entry.hidden,
        first_block=len(reading.blocks),
        tables_left=MAX_TABLES - len(reading.tables),
    )
    failed = _sheet_failures(cells, sheet) + table.failed
    read_nothing = not table.entries and all(b["type"] == "heading" for b in table.blocks)
    if read_nothing and cells.error:
        # Damaged before any row: the sheet fails alone, and its name heads nothing.
        failed = [{"unit": sheet, "reason": cells.error}]
    else:
        # A sheet of titles and notes only (no table) keeps them; an empty one is its name.
        reading.tables += table.entries
        reading.blocks += table.blocks
    reading.failed += failed
    if not failed:
        reading.extracted += 1


def _sheet_failures(cells: SheetCells, sheet: str) -> list[dict[str, str]]:
    failed = []
    if cells.cut_row:
        failed.append(
            {
                "unit": f"{sheet} rows {cells.cut_row}-{cells.last_row_past}",
                "reason": f"{cells.rows_past:,} rows {cells.cut_reason}",
            }
        )
    if cells.error:
        after = max(cells.rows, default=0) + 1
        failed.append({"unit": f"{sheet} rows {after}-", "reason": cells.error})
    left_out = cells.left_out
    causes = [
        (left_out.too_long, "over a megabyte"),
        (left_out.past_column, "past column 16,384"),
        (left_out.written_twice, "written twice at one position (the earlier value)"),
    ]
    named = [f"{count:,} {cause}" for count, cause in causes if count]
    if named:
        failed.append({"unit": f"{sheet} values", "reason": "left out: " + ", ".join(named)})
    return failed
