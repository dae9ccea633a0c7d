"""A worksheet's regions: the blocks of cells that blank rows and blank columns set apart.

A sheet from real use often holds more than one table (side by side, or one under another), a
title above them and notes under them. The seed lets an extractor split a sheet into tables,
each named by its sheet and its table id; this module says where the splits are. Plain Python
over the cells already read (merged ranges already spread, so a merge holds its region together).

Regions. The sheet is cut where a whole row is blank, then each band where a whole column is
blank within it, then each piece again, to a depth of MAX_DEPTH (an XY cut): each pass is linear
in the cells, and a sheet that is one block is one pass. Regions are read by the row they start
at, then their column. A sheet cut into more than MAX_REGIONS
pieces is read whole, one table, as before (a scatter of cells is no set of tables, and a
thousand tables would be a thousand datasets).

A cut is undone where what it cut off is more of the table: a block under a table (one blank
row between, within its columns) or right of it whose first row holds a number, a date or a bool
(data: a table starts with its names), and a lone row right of a table's first row (more of its
header).

Titles and notes. A region that is one value (a cell, or one merged range) is a paragraph, as is
one whose every row is one text value when the text reads as prose (a line of MIN_PROSE_WORDS
words or more) or each is merged across columns (a note laid over the table's width). In a
table of two columns or more, a first row of one text cell alone (not merged: a title merged over
the whole row heads the names, as the seed says) over a row of several values is a title, a
paragraph of its own; a last row of one text cell of MIN_NOTE_WORDS words or more in the first
column, under a row of several values, is a note.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from extractor_sandbox.formats.tables import Cell

MAX_DEPTH = 6
MAX_REGIONS = 64
MIN_PROSE_WORDS = 8
MIN_NOTE_WORDS = 4
MAX_CONTINUATION_GAP = 2  # rows: one blank row between a table and its continuation

Rows = dict[int, dict[int, Cell]]


@dataclass
class Region:
    """Rows `rows` (each holding a cell in the region, in order) over columns left..right."""

    rows: list[int]
    left: int
    right: int
    prose: bool = False
    joined: bool = False  # a table and the block under it that goes on with it
    _distinct: dict[int, list[Cell]] = field(default_factory=dict, repr=False, compare=False)

    def holds(self, merge: tuple[int, int, int, int]) -> bool:
        """Whether a merged range starts in the region."""
        r1, c1, _, _ = merge
        return self.rows[0] <= r1 <= self.rows[-1] and self.left <= c1 <= self.right

    def cells(self, rows: Rows) -> Rows:
        """The region's own cells, by row."""
        left, right = self.left, self.right
        return {r: {c: v for c, v in rows[r].items() if left <= c <= right} for r in self.rows}

    def values(self, rows: Rows, r: int) -> list[Cell]:
        """The distinct values of row r in the region (a merged range's spread cells are one)."""
        found = self._distinct.get(r)
        if found is None:
            found, seen = [], set()
            row = rows[r]
            for c in sorted(c for c in row if self.left <= c <= self.right):
                cell = row[c]
                if id(cell) not in seen:
                    seen.add(id(cell))
                    found.append(cell)
            self._distinct[r] = found
        return found

    def width(self, rows: Rows, r: int) -> int:
        """How many of the region's columns row r fills."""
        return sum(1 for c in rows[r] if self.left <= c <= self.right)


def regions(rows: Rows) -> list[Region]:
    """The sheet's regions in reading order (top to bottom, then left to right), each marked
    prose or not; one region, the whole sheet, when it cuts into too many."""
    numbers = sorted(r for r, row in rows.items() if row)
    if not numbers:
        return []
    found: list[Region] = []
    whole = _whole(rows, numbers)
    if not _cut(rows, whole, True, False, 0, found):
        found = [whole]
    # Reading order: by the row a region starts at, then its column (the cuts find side-by-side
    # blocks column by column).
    found.sort(key=lambda region: (region.rows[0], region.left))
    out: list[Region] = []
    for region in found:
        out += _peel(rows, region, alone=len(found) == 1)
    return out


def lines(rows: Rows, region: Region) -> list[str]:
    """A prose region's text: each distinct value once, in row order."""
    seen: set[int] = set()
    out = []
    for r in region.rows:
        for cell in region.values(rows, r):
            if id(cell) not in seen:
                seen.add(id(cell))
                out.append(cell.text)
    return out


def _whole(rows: Rows, numbers: list[int]) -> Region:
    low = min(min(rows[r]) for r in numbers)
    high = max(max(rows[r]) for r in numbers)
    return Region(numbers, low, high)


def _cut(
    rows: Rows,
    region: Region,
    across: bool,
    stalled: bool,
    depth: int,
    found: list[Region],
) -> bool:
    """Cut `region` at blank columns (`across`) or at blank rows, and each piece the other way,
    adding the pieces no cut divides to `found`; False when they come to more than MAX_REGIONS.
    A block cut off under a table that goes on with it is joined back, and cut no further."""
    pieces = _columns(rows, region) if across else _bands(rows, region)
    if len(pieces) == 1 and (stalled or depth >= MAX_DEPTH):
        found.append(pieces[0])
        return len(found) <= MAX_REGIONS
    if len(pieces) == 1:
        return _cut(rows, pieces[0], not across, True, depth + 1, found)
    for piece in pieces if across else _join_continuations(rows, pieces):
        if piece.joined or depth >= MAX_DEPTH:
            found.append(piece)
            if len(found) > MAX_REGIONS:
                return False
        elif not _cut(rows, piece, not across, False, depth + 1, found):
            return False
    return True


def _columns(rows: Rows, region: Region) -> list[Region]:
    """The region cut where a column is blank in every one of its rows."""
    left, right = region.left, region.right
    used: set[int] = set()
    for r in region.rows:
        row = rows[r]
        if left <= min(row) and max(row) <= right:
            used.update(row)
        else:
            used.update(c for c in row if left <= c <= right)
    columns = sorted(used)
    runs: list[tuple[int, int]] = []
    start = previous = columns[0]
    for c in columns[1:]:
        if c != previous + 1:
            runs.append((start, previous))
            start = c
        previous = c
    runs.append((start, previous))
    if len(runs) == 1:
        return [Region(region.rows, start, previous)]
    pieces: list[Region] = []
    for low, high in runs:
        piece = Region(
            [r for r in region.rows if any(low <= c <= high for c in rows[r])], low, high
        )
        left_piece = pieces[-1] if pieces else None
        if left_piece is not None and _goes_on_across(rows, left_piece, piece):
            merged = sorted(set(left_piece.rows) | set(piece.rows))
            pieces[-1] = Region(merged, left_piece.left, high)
        else:
            pieces.append(piece)
    return pieces


def _goes_on_across(rows: Rows, left: Region, right: Region) -> bool:
    """Whether a block right of a blank column is more of the table left of it: it starts with
    data (a table starts with its names), or it is a lone row beside the left one's first row
    (more of its header)."""
    first = right.rows[0]
    if any(cell.kind != "string" for cell in right.values(rows, first)):
        return True
    return len(right.rows) == 1 and first == left.rows[0]


def _bands(rows: Rows, region: Region) -> list[Region]:
    """The region cut where a row is blank (its rows are those with a cell in its columns)."""
    numbers = region.rows
    bands: list[list[int]] = [[numbers[0]]]
    for r in numbers[1:]:
        if r == bands[-1][-1] + 1:
            bands[-1].append(r)
        else:
            bands.append([r])
    if len(bands) == 1:
        return [region]
    return [_tight(rows, band, region.left, region.right) for band in bands]


def _tight(rows: Rows, numbers: list[int], left: int, right: int) -> Region:
    low = min(c for r in numbers for c in rows[r] if left <= c <= right)
    high = max(c for r in numbers for c in rows[r] if left <= c <= right)
    return Region(numbers, low, high)


def _join_continuations(rows: Rows, bands: list[Region]) -> list[Region]:
    joined: list[Region] = []
    for band in bands:
        above = joined[-1] if joined else None
        if (
            above is not None
            and above.left <= band.left
            and band.right <= above.right
            and band.rows[0] - above.rows[-1] <= MAX_CONTINUATION_GAP
            and any(cell.kind != "string" for cell in band.values(rows, band.rows[0]))
        ):
            joined[-1] = Region(above.rows + band.rows, above.left, above.right, joined=True)
        else:
            joined.append(band)
    return joined


def _words(cell: Cell) -> int:
    return len(cell.text.split())


def _is_prose(rows: Rows, region: Region) -> bool:
    values = [region.values(rows, r) for r in region.rows]
    if len({id(cell) for row in values for cell in row}) == 1:
        return True
    if any(len(row) != 1 or row[0].kind != "string" for row in values):
        return False
    return any(_words(row[0]) >= MIN_PROSE_WORDS for row in values) or all(
        region.width(rows, r) > 1 for r in region.rows
    )


def _peel(rows: Rows, region: Region, *, alone: bool) -> list[Region]:
    """The region, and the title above it and the notes under it as regions of their own; a
    sheet that is one region is a table whatever it holds (a lone value is a table of its name)."""
    if not alone and _is_prose(rows, region):
        region.prose = True
        return [region]
    head: list[Region] = []
    tail: list[Region] = []
    body = list(region.rows)
    if region.right > region.left:
        while len(body) >= 3 and _is_title(rows, region, body[0], body[1]):
            head.append(Region([body[0]], region.left, region.right, prose=True))
            body = body[1:]
        while len(body) >= 3 and _is_note(rows, region, body[-1], body[-2]):
            tail.insert(0, Region([body[-1]], region.left, region.right, prose=True))
            body = body[:-1]
    if not head and not tail:
        return [region]
    return [*head, Region(body, region.left, region.right), *tail]


def _is_title(rows: Rows, region: Region, r: int, under: int) -> bool:
    values = region.values(rows, r)
    names = region.values(rows, under)
    return (
        len(values) == 1
        and values[0].kind == "string"
        and region.width(rows, r) == 1
        and len(names) >= 2
        and all(cell.kind == "string" for cell in names)
    )


def _is_note(rows: Rows, region: Region, r: int, above: int) -> bool:
    values = region.values(rows, r)
    return (
        len(values) == 1
        and values[0].kind == "string"
        and region.left in rows[r]
        and _words(values[0]) >= MIN_NOTE_WORDS
        and len(region.values(rows, above)) >= 2
    )
