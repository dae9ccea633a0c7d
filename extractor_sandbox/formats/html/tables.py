"""HTML tables: the blocks a reader holds until the document ends, a table's cells and rows, and
how HTML places its cells in columns (colspan, rowspan, spacer columns), as the seed's "HTML
tables." says (the reader, reader.py, decides what a cell holds and whether a table lays out a
page)."""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Any

from extractor_sandbox.formats.html.furniture import Furniture

MAX_PLACED = 1_000_000
MAX_COLSPAN = 1_000
MAX_ROWSPAN = 65_534

_DIGITS = re.compile(r"[\t\n\f\r ]*\+?([0-9]+)")


class _PBlock:
    """A block read but not yet placed: its ids and section paths come when the document ends."""

    __slots__ = (
        "type",
        "text",
        "first",
        "last",
        "depth",
        "attrs",
        "joins",
        "furniture",
        "main",
        "links",
        "anchors",
        "loose",
        "in_table",
    )

    def __init__(self, block_type: str, text: str, first: int, last: int, depth: int | None = None):
        self.type = block_type
        self.text = text
        self.first = first
        self.last = last
        self.depth = depth
        self.attrs: dict[str, Any] | None = None
        self.joins = 0  # the pipes joining a table's cells
        self.furniture: Furniture | None = None  # the furniture element it was read in
        self.main = False  # read inside the page's main content (main, article, role="main")
        self.links = 0  # its characters inside links
        self.anchors = 0  # ... inside links to the page itself ("#...")
        self.loose = False  # text directly in a table cell, in no paragraph element
        self.in_table = False  # read in a table's cell or caption


class _Sink:
    """Where the blocks read in a scope go: the document, a cell, or a table's captions and text."""

    __slots__ = ("blocks",)

    def __init__(self) -> None:
        self.blocks: list[Any] = []

    def add(self, block: _PBlock) -> None:
        self.blocks.append(block)

    def add_table_output(self, blocks: list[_PBlock]) -> None:
        self.blocks.extend(blocks)


class _Cell(_Sink):
    __slots__ = ("colspan", "rowspan", "paragraphs", "structural")

    def __init__(self, colspan: int = 1, rowspan: int = 1) -> None:
        self.blocks = []
        self.colspan = colspan
        self.rowspan = rowspan
        self.paragraphs = 0
        self.structural = False  # holds a heading, list item, pre or table

    def add(self, block: _PBlock) -> None:
        self.blocks.append(block)
        if block.type != "paragraph":
            self.structural = True
        elif not block.loose:
            # Text directly in the cell is the cell's text, no paragraph of its own (the seed:
            # a container's text is its own paragraph in no cell), so "Total <p>12</p>" is one
            # cell; a second paragraph element lays the table out.
            self.paragraphs += 1

    def add_table_output(self, blocks: list[_PBlock]) -> None:
        self.blocks.extend(blocks)
        self.structural = True

    @property
    def lays_out(self) -> bool:
        return self.structural or self.paragraphs > 1

    @property
    def text(self) -> str:
        blocks = self.blocks
        if len(blocks) == 1:
            return str(blocks[0].text)
        return " ".join(block.text for block in blocks)


_EMPTY_CELL = _Cell()


class _Row:
    __slots__ = ("cells", "group", "hidden")

    def __init__(self, group: int, hidden: bool) -> None:
        self.cells: list[_Cell] = []
        self.group = group
        self.hidden = hidden


class _Table:
    __slots__ = ("rows", "row", "group", "group_hidden", "items", "line")

    def __init__(self, line: int) -> None:
        self.rows: list[_Row] = []
        self.row: _Row | None = None
        self.group = 0
        self.group_hidden = False
        self.items = _Sink()  # captions, text in no cell and cells, in their order
        self.line = line

    def end_row(self) -> None:
        self.row = None

    def start_row(self, hidden: bool) -> _Row:
        self.row = _Row(self.group, hidden or self.group_hidden)
        self.rows.append(self.row)
        return self.row

    def new_group(self, hidden: bool) -> None:
        self.row = None
        self.group += 1
        self.group_hidden = hidden


def _non_negative(attrs: list[tuple[str, str | None]], name: str) -> int | None:
    """An attribute read as HTML reads a non-negative integer; None when it is absent or junk."""
    if not attrs:
        return None
    for attr, value in attrs:
        if attr == name:
            match = _DIGITS.match(value or "")
            if match is None:
                return None
            digits = match.group(1).lstrip("0") or "0"
            return int(digits[:9]) if len(digits) <= 9 else 10**9
    return None


def _colspan(attrs: list[tuple[str, str | None]]) -> int:
    span = _non_negative(attrs, "colspan")
    return 1 if not span else min(span, MAX_COLSPAN)


def _rowspan(attrs: list[tuple[str, str | None]]) -> int:
    span = _non_negative(attrs, "rowspan")
    return 1 if span is None else min(span, MAX_ROWSPAN)


_Grid = tuple[list[list[str]], int, int]


def _place(rows: list[_Row]) -> _Grid | None:
    """The table's rows as HTML places its cells, spacer columns and rows with no text dropped;
    None past the bound on placed slots."""
    placed: list[tuple[list[tuple[int, _Cell]], list[tuple[int, int, _Cell]]]] = []
    carried: list[list[Any]] = []  # [column, span, cell, rows left or None to the group's end]
    group = -1
    slots = 0
    for row in rows:
        if row.group != group:
            group, carried = row.group, []
        slots += sum(cell.colspan for cell in row.cells) + sum(c[1] for c in carried)
        if slots > MAX_PLACED:
            return None
        origins: list[tuple[int, _Cell]] = []
        x = k = 0
        for cell in row.cells:
            while k < len(carried):
                column, span = carried[k][0], carried[k][1]
                if column + span <= x:
                    k += 1
                elif column <= x:
                    x = column + span
                    k += 1
                else:
                    break
            origins.append((x, cell))
            x += cell.colspan
        placed.append((origins, [(c[0], c[1], c[2]) for c in carried]))
        kept_on = []
        for c in carried:
            if c[3] is None:
                kept_on.append(c)
            elif c[3] > 1:
                kept_on.append([c[0], c[1], c[2], c[3] - 1])
        for column, cell in origins:
            if cell.rowspan != 1:
                kept_on.append(
                    [column, cell.colspan, cell, None if cell.rowspan == 0 else cell.rowspan - 1]
                )
        kept_on.sort(key=lambda c: c[0])
        carried = kept_on

    kept: set[int] = set()
    spanning: list[tuple[int, _Cell]] = []
    carried_text: set[int] = set()
    for origins, carried_here in placed:
        for column, cell in origins:
            if cell.text:
                if cell.colspan == 1:
                    kept.add(column)
                else:
                    spanning.append((column, cell))
        for column, span, cell in carried_here:
            if cell.text and id(cell) not in carried_text:
                carried_text.add(id(cell))
                kept.update(range(column, column + span))
    ordered = sorted(kept)
    for column, cell in spanning:
        at = bisect_left(ordered, column)
        if at == len(ordered) or ordered[at] >= column + cell.colspan:
            kept.add(column)
    ordered = sorted(kept)

    text_rows = sum(1 for origins, _ in placed if any(cell.text for _, cell in origins))
    if text_rows * len(ordered) > MAX_PLACED:
        return None
    out: list[list[str]] = []
    first, last = 0, 0
    for origins, _ in placed:
        line: list[str] | None = None
        for column, cell in origins:
            text = cell.text
            if not text:
                continue
            if line is None:
                line = [""] * len(ordered)
            at = bisect_left(ordered, column)
            line[at] = f"{line[at]} {text}" if line[at] else text
            first, last = _widen(first, last, cell)
        if line is not None:
            out.append(line)
    return out, first, last


def _unplaced(rows: list[_Row]) -> _Grid:
    """Every cell kept in source order, each row padded to the longest."""
    out: list[list[str]] = []
    first, last = 0, 0
    for row in rows:
        if any(cell.text for cell in row.cells):
            out.append([cell.text for cell in row.cells])
            for cell in row.cells:
                if cell.text:
                    first, last = _widen(first, last, cell)
    width = max((len(cells) for cells in out), default=0)
    for cells in out:
        cells.extend([""] * (width - len(cells)))
    return out, first, last


def _widen(first: int, last: int, cell: _Cell) -> tuple[int, int]:
    start, end = cell.blocks[0].first, cell.blocks[-1].last
    return (start if not first else min(first, start)), max(last, end)
