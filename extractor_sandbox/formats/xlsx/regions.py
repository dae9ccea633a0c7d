"""A worksheet's regions: the blocks of cells that blank rows and blank columns set apart.

A sheet from real use often holds more than one table (side by side, or one under another), a
title above them and notes under them. The seed lets an extractor split a sheet into tables,
each named by its sheet and its table id; this module says where the splits are. Plain Python
over the cells already read (merged ranges already spread, so a merge holds its region together).

Regions. The sheet is cut where a whole row is blank, then each band where a whole column is
blank within it, then each piece again, to a depth of MAX_DEPTH (an XY cut): each pass is linear
in the cells, and a sheet that is one block is one pass. Regions are read by the row they start
at, then their column. A sheet cut into more than MAX_REGIONS pieces is read whole, one table,
as before, and a region of more than MAX_REGIONS runs of columns is not cut across: a scatter of
cells is no set of tables, and a thousand tables would be a thousand datasets.

A cut is undone where what it cut off is more of the table: a block under a table (one blank
row between, within its columns) or right of it whose first row holds a number, a date or a bool
(data: a table starts with its names), and a lone row of several values right of a table's first
row (more of its header). One text alone there, across a blank column, is a note beside the table.
A cut is undone too between a header band and its rows: a band of at most MAX_HEADER_BAND rows of
text only whose last row names columns the first row under the blank one holds values in (or the
second, under a label alone in the first column), the rows as wide or wider to the left (the
column of their names, which has no header cell); and across a blank column between the rows'
names and their values: the block left of it holds nothing in the right one's first row (no name
over the names) and a text as its last value in each of the right one's rows holding a number,
a date or a bool.

Titles and notes. A region that is one value (a cell, or one merged range) is a paragraph, as is
one whose every row is one text value when the text reads as prose (a line of MIN_PROSE_WORDS
words or more) or each is merged across columns (a note laid over the table's width). In a
table of two columns or more, a first row of one text cell alone (not merged: a title merged over
the whole row heads the names, as the seed says) over a row of several values is a title, a
paragraph of its own; a last row of one text cell of MIN_NOTE_WORDS words or more in the first
column, under a row of several values, is a note.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from extractor_sandbox.formats.tables import Cell

MAX_DEPTH = 6
MAX_REGIONS = 64
MIN_PROSE_WORDS = 8
MIN_NOTE_WORDS = 4
MAX_CONTINUATION_GAP = 2  # rows: one blank row between a table and its continuation
MAX_HEADER_BAND = 4  # rows: a header band's names, period, unit and a note over them

Rows = dict[int, dict[int, Cell]]


@dataclass
class Region:
    """Rows `rows` (each holding a cell in the region, in order) over columns left..right."""

    rows: list[int]
    left: int
    right: int
    prose: bool = False
    joined: bool = False  # a table and the block under it that goes on with it
    spans: Spans | None = field(default=None, repr=False, compare=False)
    _distinct: dict[int, list[tuple[tuple[int, int], Cell]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    def values(self, rows: Rows, r: int) -> list[Cell]:
        """The values of row r in the region, a merged range's spread cells one value."""
        return [cell for _, cell in self.placed(rows, r)]

    def placed(self, rows: Rows, r: int) -> list[tuple[tuple[int, int], Cell]]:
        """Row r's values with the position each was written at (a merge's first cell)."""
        found = self._distinct.get(r)
        if found is None:
            found, seen = [], set()
            row = rows[r]
            for c in sorted(c for c in row if self.left <= c <= self.right):
                origin = self.spans.origin(r, c) if self.spans else (r, c)
                if origin not in seen:
                    seen.add(origin)
                    found.append((origin, row[c]))
            self._distinct[r] = found
        return found

    def starts_with_data(self, rows: Rows) -> bool:
        """Whether its first row holds a number, a date or a bool (a table starts with names)."""
        left, right = self.left, self.right
        row = rows[self.rows[0]]
        return any(cell.kind != "string" for c, cell in row.items() if left <= c <= right)

    def width(self, rows: Rows, r: int) -> int:
        """How many of the region's columns row r fills."""
        return sum(1 for c in rows[r] if self.left <= c <= self.right)


class Spans:
    """The merged ranges spread over the sheet, by row: where each spread cell was written.
    Indexed on first use: a sheet whose titles and notes are never asked about pays nothing."""

    def __init__(self, merges: list[tuple[int, int, int, int]]) -> None:
        self.merges = merges
        self._by_row: dict[int, list[tuple[int, int, int, int]]] | None = None

    def origin(self, r: int, c: int) -> tuple[int, int]:
        if self._by_row is None:
            self._by_row = {}
            for merge in self.merges:
                r1, c1, r2, c2 = merge
                if r2 > r1 or c2 > c1:
                    for row in range(r1, r2 + 1):
                        self._by_row.setdefault(row, []).append(merge)
        for r1, c1, _, c2 in self._by_row.get(r, ()):
            if c1 <= c <= c2:
                return r1, c1
        return r, c


def regions(
    rows: Rows,
    merges: list[tuple[int, int, int, int]] | None = None,
    *,
    limit: int = MAX_REGIONS,
) -> list[Region]:
    """The sheet's regions in reading order (top to bottom, then left to right), each marked
    prose or not; one region, the whole sheet, when it cuts into more than `limit` (at most
    MAX_REGIONS). `merges` are the ranges spread over the cells: a range is one value where
    titles and notes are told apart."""
    numbers = sorted(r for r, row in rows.items() if row)
    if not numbers:
        return []
    used: set[int] = set()
    for r in numbers:
        used.update(rows[r])
    whole = Region(numbers, min(used), max(used))
    found: list[Region] = []
    if numbers[-1] - numbers[0] + 1 == len(numbers) and len(used) == whole.right - whole.left + 1:
        found = [whole]  # no blank row or column inside: one block, no cut to look for
    elif not _cut(rows, whole, True, False, 0, found) or len(found) > limit:
        found = [whole]
    # Reading order: by the row a region starts at, then its column (the cuts find side-by-side
    # blocks column by column).
    found.sort(key=lambda region: (region.rows[0], region.left))
    spans = Spans(merges or [])
    out: list[Region] = []
    for region in found:
        region.spans = spans
        out += _peel(rows, region, alone=len(found) == 1)
    return out


def own_cells(
    rows: Rows, found: list[Region], merges: list[tuple[int, int, int, int]]
) -> list[tuple[Rows, list[tuple[int, int, int, int]]]]:
    """Each region's own cells and the merged ranges that start in it, in one pass over the
    sheet's (a cell's region found by bisection among those its row holds), so a sheet of many
    regions side by side is read once."""
    by_row: dict[int, list[tuple[int, int, int]]] = {}
    for index, region in enumerate(found):
        for r in region.rows:
            by_row.setdefault(r, []).append((region.left, region.right, index))
    lefts_of: dict[int, list[int]] = {}
    for r, spans in by_row.items():
        spans.sort()
        lefts_of[r] = [left for left, _, _ in spans]

    def where(r: int, c: int) -> int | None:
        spans = by_row.get(r)
        if not spans:
            return None
        at = bisect_right(lefts_of[r], c) - 1
        return spans[at][2] if at >= 0 and c <= spans[at][1] else None

    out: list[tuple[Rows, list[tuple[int, int, int, int]]]] = [({}, []) for _ in found]
    for r, spans in by_row.items():
        row = rows[r]
        if len(spans) == 1 and spans[0][0] <= min(row) and max(row) <= spans[0][1]:
            out[spans[0][2]][0][r] = row  # the row lies in one region: shared, not copied
            continue
        columns = sorted(row)
        for left, right, index in spans:
            inside = columns[bisect_left(columns, left) : bisect_right(columns, right)]
            if inside:
                out[index][0][r] = {c: row[c] for c in inside}
    for merge in merges:
        holder = where(merge[0], merge[1])
        if holder is not None:
            out[holder][1].append(merge)
    return out


def lines(rows: Rows, region: Region) -> list[str]:
    """A prose region's text: each distinct value once, in row order."""
    seen: set[tuple[int, int]] = set()
    out = []
    for r in region.rows:
        for origin, cell in region.placed(rows, r):
            if origin not in seen:
                seen.add(origin)
                out.append(cell.text)
    return out


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
    A block cut off under a table that goes on with it is joined back, and cut no further.

    `rows` holds, for the region's rows, only the cells inside the region: a piece cut off
    across gets its own, so no pass reads a row's cells outside the piece it looks at."""
    if across:
        pieces = _columns(rows, region)
    else:
        pieces = [(rows, band) for band in _join_continuations(rows, _bands(rows, region))]
    if len(pieces) == 1 and (stalled or depth >= MAX_DEPTH):
        found.append(pieces[0][1])
        return len(found) <= MAX_REGIONS
    if len(pieces) == 1:
        own, piece = pieces[0]
        return _cut(own, piece, not across, True, depth + 1, found)
    for own, piece in pieces:
        if piece.joined or depth >= MAX_DEPTH:
            found.append(piece)
            if len(found) > MAX_REGIONS:
                return False
        elif not _cut(own, piece, not across, False, depth + 1, found):
            return False
    return True


def _columns(rows: Rows, region: Region) -> list[tuple[Rows, Region]]:
    """The region cut where a column is blank in every one of its rows, each piece with its own
    cells."""
    used: set[int] = set()
    for r in region.rows:
        used.update(rows[r])
    columns = sorted(used)
    runs: list[tuple[int, int]] = []
    start = previous = columns[0]
    for c in columns[1:]:
        if c != previous + 1:
            runs.append((start, previous))
            start = c
        previous = c
    runs.append((start, previous))
    if len(runs) == 1 or len(runs) > MAX_REGIONS:
        # More runs than regions: a scatter, not tables side by side; not cut across.
        return [(rows, Region(region.rows, columns[0], previous))]
    # Each run's cells in one pass over the region's (a run found by bisection).
    starts = [low for low, _ in runs]
    own: list[Rows] = [{} for _ in runs]
    for r in region.rows:
        for c, cell in rows[r].items():
            own[bisect_right(starts, c) - 1].setdefault(r, {})[c] = cell
    groups: list[list[int]] = []  # indexes of runs read as one piece
    for index, (low, high) in enumerate(runs):
        piece = Region(list(own[index]), low, high)
        if groups:
            group = groups[-1]
            first_row = min(next(iter(own[i])) for i in group)
            before = Region([first_row], runs[group[0]][0], runs[group[-1]][1])
            if _goes_on_across(own[index], before, piece) or _names_beside(
                [own[i] for i in group], own[index]
            ):
                group.append(index)
                continue
        groups.append([index])
    pieces: list[tuple[Rows, Region]] = []
    for group in groups:
        cells = own[group[0]]
        if len(group) > 1:
            cells = {}
            for i in group:
                for r, row in own[i].items():
                    cells.setdefault(r, {}).update(row)
            cells = dict(sorted(cells.items()))
        pieces.append((cells, Region(list(cells), runs[group[0]][0], runs[group[-1]][1])))
    return pieces


def _goes_on_across(rows: Rows, left: Region, right: Region) -> bool:
    """Whether a block right of a blank column is more of the table left of it: it starts with
    data (a table starts with its names), or it is a lone row of more than one value beside the
    left one's first row (more of its header)."""
    if right.starts_with_data(rows):
        return True
    if len(right.rows) != 1 or right.rows[0] != left.rows[0]:
        return False
    # One text beside the names, across a blank column (one cell, or one merged over several):
    # a note, not a name with nothing under it.
    return len({cell.text for cell in rows[right.rows[0]].values()}) > 1


def _names_beside(left: list[Rows], right: Rows) -> bool:
    """Whether the block left of a blank column names the rows of the one right of it: it holds
    nothing in the right block's first row (its header has no name over the names) and a text
    as its last value in each right row holding a number, a date or a bool (Germany's churn
    figures across an empty column from their names)."""
    first = next(iter(right))
    if any(first in cells for cells in left):
        return False
    data = [r for r, row in right.items() if any(cell.kind != "string" for cell in row.values())]
    for r in data:
        held = [cells[r] for cells in left if r in cells]
        if not held:
            return False
        last = held[-1][max(held[-1])]
        if last.kind != "string":
            return False
    return bool(data)


def _bands(rows: Rows, region: Region) -> list[Region]:
    """The region cut where a row is blank, each band over the columns its cells fill."""
    numbers = region.rows
    bands: list[list[int]] = [[numbers[0]]]
    for r in numbers[1:]:
        if r == bands[-1][-1] + 1:
            bands[-1].append(r)
        else:
            bands.append([r])
    if len(bands) == 1:
        return [region]
    return [
        Region(band, min(min(rows[r]) for r in band), max(max(rows[r]) for r in band))
        for band in bands
    ]


def _join_continuations(rows: Rows, bands: list[Region]) -> list[Region]:
    joined: list[Region] = []
    for band in bands:
        above = joined[-1] if joined else None
        if (
            above is not None
            and above.left <= band.left
            and band.right <= above.right
            and band.rows[0] - above.rows[-1] <= MAX_CONTINUATION_GAP
            and band.starts_with_data(rows)
        ):
            if not above.joined:  # its own list from here on, extended in place (no n² copies)
                above = joined[-1] = Region(list(above.rows), above.left, above.right, joined=True)
            above.rows.extend(band.rows)
        elif above is not None and _heads(rows, above, band):
            # The header band and its rows are one table; the rows' names column, left of the
            # band, widens it.
            joined[-1] = Region(above.rows + band.rows, band.left, band.right, joined=True)
        else:
            joined.append(band)
    return joined


def _heads(rows: Rows, above: Region, band: Region) -> bool:
    """Whether `above` is the header band of the data band under it, across a blank row: a few
    rows of text only (names, a period row, a unit row) whose last row names at least two of
    the columns the band's first row holds values in (or its second, under a label alone in its
    first column), the band as wide or wider (its first column the rows' names, with no header
    cell over it)."""
    if (
        above.joined
        or len(above.rows) > MAX_HEADER_BAND
        or not band.left <= above.left <= above.right <= band.right
        or band.rows[0] - above.rows[-1] > MAX_CONTINUATION_GAP
        or any(cell.kind != "string" for r in above.rows for cell in rows[r].values())
    ):
        return False
    first = band.rows[0]
    if not band.starts_with_data(rows):
        # A label alone in the rows' first column (Group, Germany) heads the first rows.
        if len(band.rows) < 2 or rows[first].keys() != {band.left}:
            return False
        first = band.rows[1]
        if all(cell.kind == "string" for cell in rows[first].values()):
            return False
    names = rows[above.rows[-1]]
    return len(names) >= 2 and names.keys() <= rows[first].keys()


def _words(cell: Cell) -> int:
    return len(cell.text.split())


def _is_prose(rows: Rows, region: Region) -> bool:
    cells = []
    origins = set()
    for r in region.rows:  # a table's first row of several values ends this at once
        placed = region.placed(rows, r)
        if len(placed) != 1:
            return False
        origins.add(placed[0][0])
        cells.append(placed[0][1])
    if len(origins) == 1:
        return True
    if any(cell.kind != "string" for cell in cells):
        return False
    return any(_words(cell) >= MIN_PROSE_WORDS for cell in cells) or all(
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
            head.append(Region([body[0]], region.left, region.right, True, spans=region.spans))
            body = body[1:]
        while len(body) >= 3 and _is_note(rows, region, body[-1], body[-2]):
            tail.insert(0, Region([body[-1]], region.left, region.right, True, spans=region.spans))
            body = body[:-1]
    if not head and not tail:
        return [region]
    return [*head, Region(body, region.left, region.right, spans=region.spans), *tail]


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
