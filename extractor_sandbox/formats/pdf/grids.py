"""Tables a page shows: ruled ones from the lines it draws, borderless ones from aligned segments.
Over 500 lines: the ruled and the borderless reading share the Table, the bands and the cell
text, and each of their rules is a small function read beside the ones it is weighed against.

Ruled: horizontal and vertical rules that meet form a grid; each run of text goes to the box its
middle is in; rows and columns with no text are dropped. A box no rule parts from its neighbour is
one cell with it when one of the two is empty, a line of text runs across, or it is in the header
(a cell over two rows or columns, its text at its top left); inside a grid row, lines set in two
boxes or more with no rule between them are rows (a line with text in the first column opens one),
and inside a grid column, lines cut into segments are columns. A title or note across the whole
frame is no row but the page's lines, and a title centred in the top row that rules part from the
row's other boxes is no row but the table's caption. Inside a grid row of the header, a line of
group labels over the columns whose rules end under it is a row of its own, each label one cell
over the columns it spans; each column is named by its header's cells top to bottom ("Pre-Pawn
Handgun"), and the reader counts the header's rows (header_rows). One box around text (a single
cell) is no table, nor is a grid whose boxes mostly hold nothing (a chart's gridlines) or whose
rules cut words. Filled boxes set edge to edge in a row (shaded cells) give their edges as rules,
for the text the drawn rules' tables leave. Borderless: a run of lines cut into segments that sit
in two or more bands of the page (the bands of the rows that set the usual number of cells, so a
header cell spanning two columns does not join them); a line with text in the first band opens a
row, one without adds to the cells of the row above (a wrapped cell); a group's label alone on a
line between rows set in the same columns is a row; a list marker set apart from its item's text
is no column; bold section numbers apart from their titles (headings one under another) and
columns of prose (long cells, words broken with hyphens, justified lines, lines running on in
lower case) are no table, nor a chart's value axes (columns of ticks stepping by one amount, a
legend beside or among them, the rest nearly empty), nor lines over a bar chart's bars (filled
boxes of one thickness on one base, ending free, each mostly its own length). Figures set closer
than a font size apart are cells of their own; tables one under the other in the same columns
(each column meeting the other's), apart by a wider space or by groups' labels alone on their
lines, are one table. A row's name on lines set around its figures is one cell, rows spaced wide
in the same columns stay one table, and a header's top lines over single columns are that header
row's. A plain-text table in a monospaced font is cut at the character columns none of its usual
rows writes in. Two columns' cells set closer than a font size are parted where the other rows
keep them apart (a gap down the rows that no run crosses, the text after it starting at one place
or the text before it ending at one); a first cell's wrapped line (text only where the row has it,
none in the columns every row fills, its first word too long for the row's line) is that cell's; a
row name alone on its line, its next line's first word too long for it, going on from it (lower
case, or after "and", "of", a comma) beside the row's figures is one row with them, in a ruled
table or not; and lines of prose side by side (every cell five words or more, none short or a
figure) are no table. A borderless table whose first row is figures takes the lines of words just
above it (up to three, set apart by up to four and a half sizes) as its header rows, a centred
group label naming each column it is centred over. A ruled frame of words only, up to three rows,
just over a frame of the same columns whose first row holds figures, is that table's header.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from extractor_sandbox.formats.pdf.content import MAX_RULES, Rule, Run
from extractor_sandbox.formats.pdf.lines import (
    SPACE_GAP,
    Line,
    Segment,
    build_line,
    build_lines,
    right_to_left,
)

SNAP = 2.0  # rules within this many points of each other are one rule
MAX_SPAN_BOXES = 250_000  # a grid past this many boxes reads each box as a cell of its own
MAX_CHART_BOXES = 2_000  # a page filling more boxes is a picture drawn in them: no bars are read
SECTION_NUMBER = re.compile(r"^(?:\d{1,2}|[A-Z])(?:\.\d{1,2})*\.?$")
HYPHENATED = re.compile(r"[a-z]{2}-$")
# a row name's line ending so goes on on the next line
NAME_GOES_ON = re.compile(r"(?:,|-|\b(?:and|or|of|for|in|the|to|with))$")
LIST_MARKER = re.compile(r"^(?:[^\w\s]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])$")
# a figure a table's cell holds: a count, an amount, a rate, a share, a range in brackets (not
# a number in a sentence's list, "11, 12", whose comma follows it)
FIGURE = re.compile(
    r"^[(\[]?[-+\u2212]?[$\u20ac\u00a3]?\d(?:[\d,.]*\d)?%?(?:[-\u2013\u2212]\d(?:[\d,.]*\d)?%?)?[)\]]?$"
)
CAPTION = re.compile(r"^(?:table|figure|chart|exhibit)\s*[A-Z]?[-.]?\d", re.I)
THOUSANDS = re.compile(r"^\d{3}(?:[.,]\d+)?$")  # "753" after "2": one number, its groups spaced
LEADER = re.compile(r"\.(?: ?\.){2,}|\u2026+")  # dots leading a row's name to its figures
MAX_GRID_CHARS = 1_000  # a plain-text table's widest line, in characters
PROSE_WORDS = 5  # a cell of fewer words is a table's, not a line of prose set beside another
LINE_NUMBER_ROWS = 8  # a margin's line numbers count up by one down this many lines or more
LINE_WORDS = 5  # a numbered page's lines hold this many words on average, a table's cells fewer
# two runs of a line apart by more than this share of its size (wider than a word's space) may be
# two columns' cells
APART_GAP = 0.4
TEXT_RULE = re.compile(r"^[-_=\u2013\u2014]{3,}$")  # a rule typed as characters
TITLE_SLACK = 0.1  # a title's middle lies within this share of the table's width of its middle
MAX_HEADER_ROWS = 3  # a group's label split off deeper than this is a body's, no header's
HEADER_GAP = 4.5  # a header's last line sits no further than this many sizes over the first row
HEADER_LINE_GAP = 2.2  # and its lines no further apart than a table's rows, in sizes
YEAR = re.compile(r"^(?:19|20)\d\d$")  # a year names a column of figures; other figures are data
STACKED_GAP = 6.0  # a header's frame ends this near over its body's frame, or nearer


@dataclass
class Table:
    rows: list[list[str]]
    x0: float
    x1: float
    top: float
    bottom: float
    columns: list[float]  # the left edge of each column, to match a table that goes on
    ruled: bool
    row_pages: list[int] = field(default_factory=list)
    # how many of the rows are the header (a group's label over the columns it groups, then
    # their own names), and each column's name: its header cells top to bottom ("Pre-Pawn
    # Handgun"); none when the first row alone names the columns
    header_rows: int = 1
    names: list[str] | None = None
    title: str = ""  # a title set inside the table's frame, over its header: its caption


# Ruled tables


def _cluster(values: list[float]) -> list[float]:
    out: list[float] = []
    for value in sorted(values):
        if out and value - out[-1] <= SNAP:
            continue
        out.append(value)
    return out


def _joined(rules: list[Rule], *, horizontal: bool) -> list[Rule]:
    """Pieces of one line drawn end to end (a rule stroked cell by cell) as one rule."""

    # Rules on one line (within half a point of the first) are taken in the order they run along
    # it: sorted by their place across it alone, a piece a hair to the side of a longer rule of
    # another table further along the same line would be read as inside it, and lost.
    def across(r: Rule) -> float:
        return r.y0 if horizontal else r.x0

    def along(r: Rule) -> tuple[float, float]:
        return (r.x0, r.x1) if horizontal else (r.y0, r.y1)

    lines: list[list[Rule]] = []
    for rule in sorted(rules, key=across):
        if lines and across(rule) - across(lines[-1][0]) <= 0.5:
            lines[-1].append(rule)
        else:
            lines.append([rule])
    out: list[Rule] = []
    for line in lines:
        last: Rule | None = None
        for rule in sorted(line, key=along):
            start, end = along(rule)
            if last is not None and start <= along(last)[1] + SNAP:
                if horizontal:
                    last.x1 = max(last.x1, end)
                else:
                    last.y1 = max(last.y1, end)
                continue
            last = Rule(rule.x0, rule.y0, rule.x1, rule.y1)
            out.append(last)
    return out


def _components(
    horizontal: list[Rule], vertical: list[Rule]
) -> list[tuple[list[Rule], list[Rule]]]:
    """Groups of rules that meet, each as (horizontal, vertical)."""
    parent = list(range(len(horizontal) + len(vertical)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, h in enumerate(horizontal):
        for j, v in enumerate(vertical):
            if h.x0 - SNAP <= v.x0 <= h.x1 + SNAP and v.y0 - SNAP <= h.y0 <= v.y1 + SNAP:
                parent[find(i)] = find(len(horizontal) + j)
    groups: dict[int, tuple[list[Rule], list[Rule]]] = {}
    for i, h in enumerate(horizontal):
        groups.setdefault(find(i), ([], []))[0].append(h)
    for j, v in enumerate(vertical):
        groups.setdefault(find(len(horizontal) + j), ([], []))[1].append(v)
    return [g for g in groups.values() if len(g[0]) >= 2 and len(g[1]) >= 2]


def cell_edges(boxes: list[Rule]) -> list[Rule]:
    """The edges of filled boxes set edge to edge in a row (a table's shaded cells, its rows
    told apart by their colour), as rules; a box alone (a panel, a page's background) gives none."""
    rows: dict[tuple[int, int], list[Rule]] = {}
    for box in boxes:
        rows.setdefault((round(box.y0 / SNAP), round(box.y1 / SNAP)), []).append(box)
    cells: dict[int, Rule] = {}
    for row in rows.values():
        row.sort(key=lambda b: b.x0)
        for a, b in zip(row, row[1:], strict=False):
            if abs(a.x1 - b.x0) <= SNAP:
                cells[id(a)], cells[id(b)] = a, b
    if 4 * len(cells) > MAX_RULES:
        return []  # past the bound a page's drawn rules are held to
    edges: list[Rule] = []
    for a in cells.values():
        edges += [
            Rule(a.x0, a.y0, a.x1, a.y0),
            Rule(a.x0, a.y1, a.x1, a.y1),
            Rule(a.x0, a.y0, a.x0, a.y1),
            Rule(a.x1, a.y0, a.x1, a.y1),
        ]
    return edges


def chart_areas(boxes: list[Rule]) -> list[Rule]:
    """Where a bar chart draws its bars: three filled boxes or more of one thickness standing on
    one base (their bottoms, or their left ends, within SNAP of each other), each ending free (no
    box goes on from its end, as a row's shaded cells go on one from the other), of lengths
    mostly their own (three or more, two in three of the bars a length no other has). A table's
    shaded cells are set edge to edge or repeat their lengths row after row, as a dotted line's
    dots do; the area is the bars' bounds."""
    areas: list[Rule] = []
    if len(boxes) > MAX_CHART_BOXES:
        return areas
    for upright in (True, False):
        continued = _continued(boxes, upright=upright)
        # each box as (base, thickness, length): upright bars stand on their bottoms
        sides = [
            (b.y0, b.x1 - b.x0, b.y1 - b.y0, b) if upright else (b.x0, b.y1 - b.y0, b.x1 - b.x0, b)
            for b in boxes
        ]
        sides.sort(key=lambda side: side[0])
        on_base: list[list[tuple[float, float, float, Rule]]] = []
        for side in sides:
            if on_base and side[0] - on_base[-1][0][0] <= SNAP:
                on_base[-1].append(side)
            else:
                on_base.append([side])
        for group in on_base:
            series: dict[int, list[tuple[float, float, float, Rule]]] = {}
            for side in group:
                if id(side[3]) not in continued:
                    series.setdefault(round(side[1]), []).append(side)
            for held in series.values():
                lengths = Counter(round(side[2]) for side in held)
                own = sum(1 for side in held if lengths[round(side[2])] == 1)
                if len(held) >= 3 and own >= 3 and 3 * own >= 2 * len(held):
                    bars = [side[3] for side in held]
                    areas.append(
                        Rule(
                            min(b.x0 for b in bars),
                            min(b.y0 for b in bars),
                            max(b.x1 for b in bars),
                            max(b.y1 for b in bars),
                        )
                    )
    return areas


def _continued(boxes: list[Rule], *, upright: bool) -> set[int]:
    """The boxes (by id) another box goes on from: it starts where the box ends (within SNAP),
    beside it across."""
    starts = sorted(boxes, key=lambda o: o.y0 if upright else o.x0)
    places = [o.y0 if upright else o.x0 for o in starts]
    out: set[int] = set()
    for box in boxes:
        end = box.y1 if upright else box.x1
        lo, hi = bisect.bisect_left(places, end - SNAP), bisect.bisect_right(places, end + SNAP)
        for o in starts[lo:hi]:
            if (o.x0 < box.x1 and box.x0 < o.x1) if upright else (o.y0 < box.y1 and box.y0 < o.y1):
                out.add(id(box))
                break
    return out


def _over_chart(left: float, right: float, bottom: float, top: float, charts: list[Rule]) -> bool:
    """Whether a table's frame meets a chart's bars: its text is the chart's ticks, labels and
    legend, which stay the page's lines."""
    return any(left < c.x1 and c.x0 < right and bottom < c.y1 and c.y0 < top for c in charts)


def ruled_tables(rules: list[Rule], runs: list[Run]) -> tuple[list[Table], list[Run]]:
    """The ruled tables and the runs no table holds."""
    horizontal = _joined([r for r in rules if r.horizontal], horizontal=True)
    vertical = _joined([r for r in rules if not r.horizontal], horizontal=False)
    if len(horizontal) < 2 or len(vertical) < 2 or len(horizontal) * len(vertical) > 4_000_000:
        return [], runs
    tables: list[Table] = []
    taken: set[int] = set()
    for hs, vs in _components(horizontal, vertical):
        # the rules' own ends bound the table too: a table open at its sides (its outer columns
        # unruled) or at its top and bottom still holds the text out to them
        ys = _cluster([h.y0 for h in hs] + [min(v.y0 for v in vs), max(v.y1 for v in vs)])
        xs = _cluster([v.x0 for v in vs] + [min(h.x0 for h in hs), max(h.x1 for h in hs)])
        if len(ys) < 2 or len(xs) < 2 or (len(ys) == 2 and len(xs) == 2):
            continue
        left, right, bottom, top = xs[0], xs[-1], ys[0], ys[-1]
        inside = [
            (i, r)
            for i, r in enumerate(runs)
            if i not in taken
            and left <= (r.x0 + r.x1) / 2 <= right
            and bottom <= r.y0 + 0.3 * r.size <= top
        ]
        if not inside:
            continue
        cuts = _unruled_columns(xs, [run for _, run in inside])
        if cuts:
            xs = sorted(xs + cuts)
            vs = vs + [Rule(x, bottom, x, top) for x in cuts]
        groups = _group_label_ends(vs, ys, [run for _, run in inside])
        parts = _unruled_rows(xs, sorted(ys + groups), [run for _, run in inside])
        if groups or parts:
            ys = sorted(ys + groups + parts)
            hs = hs + [Rule(left, y, right, y) for y in groups + parts]
        boxes: dict[tuple[int, int], list[Run]] = {}
        for _, run in inside:
            mid_x, mid_y = (run.x0 + run.x1) / 2, run.y0 + 0.3 * run.size
            col, row = _slot(xs, mid_x), _slot(ys, mid_y)
            boxes.setdefault((len(ys) - 2 - row, col), []).append(run)
        span = _spans(hs, vs, xs, ys, boxes)
        cells: dict[tuple[int, int], list[Run]] = {}
        for box, held in boxes.items():
            cells.setdefault(span(box), []).extend(held)
        grid = [
            [_cell_text(cells.get((r, c), [])) for c in range(len(xs) - 1)]
            for r in range(len(ys) - 1)
        ]
        keep_rows = [r for r in range(len(grid)) if any(grid[r])]
        keep_cols = [c for c in range(len(xs) - 1) if any(grid[r][c] for r in keep_rows)]
        given_back: list[Run] = []
        titles: list[str] = []
        while len(keep_rows) > 2 and len(keep_cols) >= 2:
            # a title over the table or a note under it, set inside its frame, is none of its
            # rows: one cell across the whole table, no rule parting it, is the page's lines
            # where the page sets them (a form's letterhead stays its headings); a title centred
            # in the top row, rules parting the row's other boxes from it, is the table's caption
            for end in (keep_rows[0], keep_rows[-1]):
                first = span((end, keep_cols[0]))
                if all(span((end, c)) == first for c in range(keep_cols[0], keep_cols[-1] + 1)):
                    given_back += cells.get(first, [])
                    keep_rows.remove(end)
                    break
                title = (
                    _title(end, keep_cols, boxes, span, cells, xs) if end == keep_rows[0] else []
                )
                if title:
                    titles.append(_cell_text(title))
                    keep_rows.remove(end)
                    break
            else:
                break
        if len(keep_rows) < 2 or len(keep_cols) < 2:
            # one box around text is no table, nor is one row of boxes (a header over no row, a
            # figure's labels) or one column (a boxed note with a rule under its title): their
            # text stays the page's lines
            continue
        filled = sum(1 for r in keep_rows for c in keep_cols if grid[r][c])
        if 3 * filled < len(keep_rows) * len(keep_cols) or _cuts_words(vs, inside):
            # a chart's gridlines over its scattered labels and values: most boxes empty, or
            # its rules drawn through the words and figures it labels
            continue
        if right_to_left(" ".join(cell for row in grid for cell in row)):
            keep_cols.reverse()  # a table in a right-to-left script reads from the right
        rows = [[grid[r][c] for c in keep_cols] for r in keep_rows]
        back = {id(run) for run in given_back}
        taken.update(i for i, run in inside if id(run) not in back)
        table = Table(rows, left, right, top, bottom, [xs[c] for c in keep_cols], ruled=True)
        table.title = " ".join(titles)
        unders = [len(ys) - 1 - ys.index(y) for y in groups]
        header = [r for r in keep_rows if unders and r <= max(unders)]
        if 2 <= len(header) <= MAX_HEADER_ROWS and len(header) < len(keep_rows):
            table.header_rows = len(header)
            table.names = _header_names(grid, span, header, keep_cols)
        tables.append(table)
    rest = [r for i, r in enumerate(runs) if i not in taken]
    return tables, rest


def _words_only(rows: list[list[str]]) -> bool:
    """Whether a table's cells are words (a year among them), no figure: a header's."""
    return all(not FIGURE.match(c) or YEAR.match(c) for row in rows for c in row if c)


def headed_tables(tables: list[Table]) -> list[Table]:
    """Ruled tables with a header drawn as a frame of its own: a frame of words only, up to
    three rows, ending just over a frame of the same columns whose first row holds figures
    (the loan rates' "Loan Type | Principal and Interest ..." over "Standard Variable Rate |
    5.37% | ..."), is that table's header. Its rows become the table's top rows (header_rows
    counts them) and name its columns top to bottom; before, the body's first row named them."""
    out = sorted(tables, key=lambda t: -t.top)
    k = 0
    while k + 1 < len(out):
        upper, lower = out[k], out[k + 1]
        if _header_frame(upper, lower):
            out[k : k + 2] = [_with_header(upper, lower)]
        k += 1
    return out


def _header_frame(upper: Table, lower: Table) -> bool:
    figures = [c for c in lower.rows[0] if c and FIGURE.match(c) and not YEAR.match(c)]
    return (
        upper.ruled
        and lower.ruled
        and -SNAP <= upper.bottom - lower.top <= STACKED_GAP
        and len(upper.columns) == len(lower.columns)
        and all(abs(a - b) <= 2 * SNAP for a, b in zip(upper.columns, lower.columns, strict=True))
        and len(upper.rows) <= MAX_HEADER_ROWS
        and _words_only(upper.rows)
        and len(figures) >= 2
    )


def _with_header(upper: Table, lower: Table) -> Table:
    names = _names_top_down(upper.rows, len(lower.columns))
    table = Table(
        upper.rows + lower.rows,
        min(upper.x0, lower.x0),
        max(upper.x1, lower.x1),
        upper.top,
        lower.bottom,
        lower.columns,
        ruled=True,
    )
    table.header_rows = len(upper.rows)
    table.names = names
    table.title = upper.title
    return table


def _title(
    row: int,
    cols: list[int],
    boxes: dict[tuple[int, int], list[Run]],
    span: Callable[[tuple[int, int]], tuple[int, int]],
    cells: dict[tuple[int, int], list[Run]],
    xs: list[float],
) -> list[Run]:
    """A table's title set in its top row, its runs (none when the row is no title): the row's
    one cell with text, all of it in the row, over three columns or more and centred over the
    table, nearer its middle than the middle of the cell it is in ("NICS Firearm Background
    Checks" over the group labels), though rules part the row's other boxes from it."""
    held = [run for c in cols for run in boxes.get((row, c), [])]
    roots = {span((row, c)) for c in cols}
    filled = [root for root in roots if cells.get(root)]
    # a cell reaching up into the row from under it (a name set low in a cell over two rows)
    # makes the row a header's, not a title's
    if len(filled) != 1 or len(cells[filled[0]]) != len(held):
        return []
    x0, x1 = min(run.x0 for run in held), max(run.x1 for run in held)
    left, right = xs[cols[0]], xs[cols[-1] + 1]
    over = sum(1 for c in cols if x0 < xs[c + 1] and xs[c] < x1)
    # centred over the table, not over its own cell: a group's label centred over the columns
    # it spans, beside an empty corner cell, is the header's
    spanned = [c for c in cols if span((row, c)) == filled[0]]
    own = (xs[spanned[0]] + xs[spanned[-1] + 1]) / 2
    middle = (x0 + x1) / 2
    off = abs(middle - (left + right) / 2)
    centred = off <= TITLE_SLACK * (right - left) and off < abs(middle - own)
    return held if over >= 3 and centred else []


def _group_label_ends(vs: list[Rule], ys: list[float], runs: list[Run]) -> list[float]:
    """Where a header's group labels end and the names of the columns they group begin, inside
    one of the grid's top rows (MAX_HEADER_ROWS) with no rule across it: two vertical rules or
    more, parting columns from the row's foot up, end at one height inside it, between a line of
    text over their ends and one under them. The label over them spans the columns they part
    ("Pre-Pawn" over "Handgun", "Long Gun", "*Other"), a row of its own, so it is no piece of
    one column's name."""
    first = max(len(ys) - 1 - MAX_HEADER_ROWS, 0)  # ys runs upward: the top rows are the last
    ending: dict[int, list[Rule]] = {}
    for v in vs:
        k = bisect.bisect_right(ys, v.y1) - 1
        if first <= k < len(ys) - 1 and v.y0 <= ys[k] + SNAP < v.y1 < ys[k + 1] - SNAP:
            ending.setdefault(k, []).append(v)
    middles = sorted(run.y0 + 0.3 * run.size for run in runs)
    cuts: list[float] = []
    for k, held in sorted(ending.items()):
        for end in _cluster([v.y1 for v in held]):
            if len({round(v.x0) for v in held if abs(v.y1 - end) <= SNAP}) < 2:
                continue
            under = bisect.bisect_right(middles, ys[k]) < bisect.bisect_left(middles, end)
            over = bisect.bisect_right(middles, end) < bisect.bisect_left(middles, ys[k + 1])
            if under and over:
                cuts.append(end)
                break  # one line of labels over one of names: the row's two lines
    return cuts


def _header_names(
    grid: list[list[str]],
    span: Callable[[tuple[int, int]], tuple[int, int]],
    header: list[int],
    cols: list[int],
) -> list[str]:
    """Each column's name from a header of several rows: the cells over it top to bottom, a
    group's label naming each column it spans, a cell over two rows named once, and a cell
    reaching into the header from a row that is none of its (the title's) not at all."""
    names: list[str] = []
    for c in cols:
        parts: list[str] = []
        for r in header:
            at = span((r, c))
            text = grid[at[0]][at[1]] if at[0] in header else ""
            if text and (not parts or parts[-1] != text):
                parts.append(text)
        names.append(" ".join(parts))
    return names


def _cuts_words(vs: list[Rule], inside: list[tuple[int, Run]]) -> bool:
    """Whether the grid's rules pass between the characters of words (two places or more): a
    piece of text either side of a rule, on one line, with no space between them."""
    rules = sorted(vs, key=lambda v: v.x0)
    places = [v.x0 for v in rules]
    pieces = sorted((run for _, run in inside), key=lambda r: (round(r.y0, 1), r.x0))
    cuts = 0
    for a, b in zip(pieces, pieces[1:], strict=False):
        if abs(a.y0 - b.y0) > 0.1 or b.x0 - a.x1 > SPACE_GAP * a.size or b.x0 < a.x1 - SNAP:
            continue
        middle = (a.x1 + b.x0) / 2
        near = rules[
            bisect.bisect_left(places, middle - SNAP) : bisect.bisect_right(places, middle + SNAP)
        ]
        if any(a.x0 < v.x0 < b.x1 and v.y0 <= a.y0 <= v.y1 for v in near):
            cuts += 1
            if cuts >= 2:
                return True
    return False


def _unruled_columns(xs: list[float], runs: list[Run]) -> list[float]:
    """Where columns no rule parts begin, inside the grid's columns: a grid column whose lines
    (three or more, two thirds of those with text in it) are cut into two segments or more
    (wider apart than their font size, as a borderless table's cells are; a list marker set
    apart from its item's text is no column) holds columns set side by side with no rule between
    them (tables set side by side in one frame), parted in the middle of each gap between the
    bands those segments sit in."""
    cuts: list[float] = []
    for c in range(len(xs) - 1):
        held = [run for run in runs if xs[c] <= (run.x0 + run.x1) / 2 < xs[c + 1]]
        if len(held) < 6:
            continue
        lines = [_merge_markers(line) for line in build_lines(held)]
        apart = [segs for segs in lines if len(segs) >= 2]
        if len(apart) < 3 or 3 * len(apart) < 2 * len(lines):
            continue
        bands = _bands(apart)
        cuts += [(a[1] + b[0]) / 2 for a, b in zip(bands, bands[1:], strict=False)]
    return cuts


def _unruled_rows(xs: list[float], ys: list[float], runs: list[Run]) -> list[float]:
    """Where rows no rule parts begin, inside the grid's rows: a grid row of three lines of text
    or more, half of them or more set in two boxes or more, its first line in the first column
    too, holds rows set one under the other with no rule between them (rules only under the
    header and over the total; a group's label alone on its line between them). As in a
    borderless table, a line with text in the first column opens a row there, one without adds
    to the row above (a wrapped cell, a header's second line), as does one whose every cell goes
    on in lower case (a wrapped first cell, with the other cells wrapped beside it)."""

    def middle(run: Run) -> float:
        return run.y0 + 0.3 * run.size

    column = {id(run): _slot(xs, (run.x0 + run.x1) / 2) for run in runs}
    bands: dict[int, list[Run]] = {}
    for run in runs:
        bands.setdefault(_slot(ys, middle(run)), []).append(run)
    first = min(column.values())
    # where the first column's widest line ends: a name wraps because its next word would not fit
    widest = max(
        (run.x1 for run in runs if column[id(run)] == first and run.text.strip()), default=0.0
    )
    parts: list[float] = []
    for held in bands.values():
        lines: list[list[Run]] = []
        for run in sorted(held, key=middle, reverse=True):
            top = lines[-1][0] if lines else None
            if top is not None and middle(top) - middle(run) <= 0.5 * min(run.size, top.size):
                lines[-1].append(run)
            else:
                lines.append([run])
        set_apart = sum(len({column[id(run)] for run in line}) >= 2 for line in lines)
        if len(lines) < 3 or set_apart < 3 or 2 * set_apart < len(lines):
            continue
        if not any(column[id(run)] == first for run in lines[0]):
            continue  # a first cell set lower than the others' first lines: one row's, wrapped
        for above, line in zip(lines, lines[1:], strict=False):
            starts: dict[int, str] = {}
            for run in sorted(line, key=lambda r: r.x0):
                if run.text.strip():
                    starts.setdefault(column[id(run)], run.text.strip())
            if first not in starts:
                continue
            # a first cell going on in lower case, beside nothing or beside cells that go on
            # too, is a wrapped row's; beside figures ("netherlands  93.5") it opens a row
            if all(text[0].islower() for text in starts.values()):
                continue
            if _name_goes_on(above, line, column, first, widest):
                continue
            parts.append((middle(above[0]) + middle(line[0])) / 2)
    return parts


def _name_goes_on(
    above: list[Run], line: list[Run], column: dict[int, int], first: int, widest: float
) -> bool:
    """Whether a line's first cell ends the row name the line above it begins, wrapped: that line
    is a name alone (text in the first column only, not a group's label ending in a colon) whose
    end left no room for this line's first word (it would pass the first column's widest line),
    and this one goes on from it in lower case, or after a line ending in "and", "of", a comma
    ("Murder and nonnegligent" over "manslaughter . . . 10.0 0.9": one row, its figures beside
    the name's last line)."""
    named = sorted((r for r in above if r.text.strip()), key=lambda r: r.x0)
    if not named or any(column[id(run)] != first for run in named):
        return False
    name = " ".join("".join(r.text for r in named).split())
    heads = sorted(
        (r for r in line if column[id(r)] == first and r.text.strip()), key=lambda r: r.x0
    )
    head = "".join(r.text for r in heads).strip()
    if not name or not head or name.endswith(":"):
        return False
    word = head.split()[0]
    start = heads[0]
    width = (start.x1 - start.x0) * len(word) / max(len(start.text.strip()), len(word))
    return _wrapped_on(name, head, max(r.x1 for r in named), width, start.size, widest)


def _wrapped_on(
    name: str, head: str, name_end: float, word_width: float, size: float, widest: float
) -> bool:
    """Whether `head` (a line's first cell) goes on from the row name `name` above it: the
    name's line, ending at `name_end`, left no room for head's first word (`word_width` wide)
    within the first column's widest line, and head starts in lower case or the name ends in
    "and", "of", a comma (NAME_GOES_ON)."""
    if name_end + 0.25 * size + word_width <= widest:
        return False
    return head[:1].islower() or NAME_GOES_ON.search(name) is not None


def _slot(edges: list[float], value: float) -> int:
    """The box between edges (sorted) that a value falls in, the outer ones taking the rest."""
    return min(max(bisect.bisect_right(edges, value) - 1, 0), len(edges) - 2)


def _spans(
    hs: list[Rule],
    vs: list[Rule],
    xs: list[float],
    ys: list[float],
    boxes: dict[tuple[int, int], list[Run]],
) -> Callable[[tuple[int, int]], tuple[int, int]]:
    """Each box of a grid (row from the top, column) to the first box of the cell it is part of.

    A box no rule parts from its neighbour is one cell with it when one of the two holds no text
    (a year centred over its two columns, a name beside the rows it labels) or a run of text
    crosses where the rule would be; in the header (the rows above the first rule across the
    whole table), a box no rule parts from the one under it is a cell over both rows whatever
    they hold ("Sample" over "unit"), and in the body one whose text goes on in lower case in
    the box under it ("Chronic fatigue" over "syndrome"). A cell's text is its top left box's, as
    a merged range's value is its first cell's. Boxes that each hold text with no rule between
    them (columns told apart by their shading, rows by nothing) stay cells of their own."""
    n_rows, n_cols = len(ys) - 1, len(xs) - 1
    if n_rows * n_cols > MAX_SPAN_BOXES:
        return lambda box: box  # past the bound each box is a cell of its own
    parent = list(range(n_rows * n_cols))  # box (r, c) is r * n_cols + c
    texts = [0] * (n_rows * n_cols)
    for r, c in boxes:
        texts[r * n_cols + c] = 1
    under, right = _ruled_edges(hs, vs, xs, ys)

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    def union(a: int, b: int, *, always: bool = False) -> None:
        ra, rb = find(a), find(b)
        if ra == rb or (not always and texts[ra] + texts[rb] > 1):
            return
        first = min(ra, rb)  # the top left box of the two (rows count from the top)
        parent[ra] = parent[rb] = first
        texts[first] = texts[ra] + texts[rb]

    def ruled_under(r: int, c: int) -> bool:
        return bool(under[(n_rows - 1 - r) * n_cols + c])

    def goes_on(r: int, c: int) -> bool:
        # the box's first line begins in lower case: the text of the box above, wrapped
        held = boxes.get((r, c), [])
        if not held:
            return False
        top = max(run.y0 for run in held)
        first = min((run for run in held if top - run.y0 <= 0.5 * run.size), key=lambda r: r.x0)
        return first.text.strip()[:1].islower()

    header = next(
        (r + 1 for r in range(n_rows - 1) if all(ruled_under(r, c) for c in range(n_cols))),
        0,
    )
    for r in range(header - 1):
        for c in range(n_cols):
            if not ruled_under(r, c):
                union(r * n_cols + c, (r + 1) * n_cols + c, always=True)
    for r in range(n_rows):
        for c in range(n_cols - 1):
            if not right[(c + 1) * n_rows + n_rows - 1 - r]:
                crossed = _runs_across(boxes.get((r, c), []), boxes.get((r, c + 1), []), xs[c + 1])
                union(r * n_cols + c, r * n_cols + c + 1, always=crossed)
    for r in range(n_rows - 1):
        for c in range(n_cols):
            if not ruled_under(r, c):
                union(r * n_cols + c, (r + 1) * n_cols + c, always=goes_on(r + 1, c))

    def cell(box: tuple[int, int]) -> tuple[int, int]:
        row, col = divmod(find(box[0] * n_cols + box[1]), n_cols)
        return (row, col)

    return cell


def _ruled_edges(
    hs: list[Rule], vs: list[Rule], xs: list[float], ys: list[float]
) -> tuple[bytearray, bytearray]:
    """The sides of a grid's boxes that a rule draws: under[k * columns + c] for the line ys[k]
    under column c (k counted from the bottom), right[c * rows + k] for the line xs[c] beside
    grid row k."""
    n_rows, n_cols = len(ys) - 1, len(xs) - 1
    col_mids = [(xs[c] + xs[c + 1]) / 2 for c in range(n_cols)]
    row_mids = [(ys[k] + ys[k + 1]) / 2 for k in range(n_rows)]
    under = _drawn_sides([(h.y0, h.x0, h.x1) for h in hs], ys, col_mids)
    right = _drawn_sides([(v.x0, v.y0, v.y1) for v in vs], xs, row_mids)
    return under, right


def _drawn_sides(
    rules: list[tuple[float, float, float]], lines: list[float], mids: list[float]
) -> bytearray:
    """For rules given as (place across, start, end along), the boxes' sides they draw: one
    byte per grid line (`lines`, sorted) and box along it (`mids`, the boxes' middles), set where
    a rule runs on that line past that box's middle."""
    reach = SNAP + 0.5  # a cluster's values lie within SNAP of its first
    n = len(mids)
    sides = bytearray(len(lines) * n)
    for place, start, end in rules:
        first = bisect.bisect_left(mids, start - SNAP)
        last = bisect.bisect_right(mids, end + SNAP)
        for k in range(
            bisect.bisect_left(lines, place - reach), bisect.bisect_right(lines, place + reach)
        ):
            sides[k * n + first : k * n + last] = b"\x01" * (last - first)
    return sides


def _runs_across(before: list[Run], after: list[Run], x: float) -> bool:
    """Whether text runs on across x from one box into the next: a run crosses it (a run is put
    in the box its middle is in, so it sits on either side), or a word or a line drawn in pieces
    ("20" "10") goes on, a piece starting closer than a space or two after one on its line ends."""
    if any(run.x0 < x - SNAP and run.x1 > x + SNAP for run in before + after):
        return True
    ends = [a for a in before if a.x1 >= x - 0.4 * a.size - SNAP]
    starts = sorted((b for b in after if b.x0 <= x + 0.4 * b.size + SNAP), key=lambda b: b.y0)
    heights = [b.y0 for b in starts]
    for a in ends:
        lo = bisect.bisect_left(heights, a.y0 - 0.2 * a.size)
        hi = bisect.bisect_right(heights, a.y0 + 0.2 * a.size)
        if any(-SNAP <= b.x0 - a.x1 <= 0.4 * a.size for b in starts[lo:hi]):
            return True
    return False


def _cell_text(runs: list[Run]) -> str:
    if not runs:
        return ""
    return " ".join(line.text for line in build_lines(runs)).strip()


# Borderless tables


def _merge_markers(line: Line) -> list[Segment]:
    """A list marker set apart from its item's text joins the item: it is no column."""
    segs = list(line.segments)
    out: list[Segment] = []
    i = 0
    while i < len(segs):
        seg = segs[i]
        if LIST_MARKER.match(seg.text) and i + 1 < len(segs) and i == 0:
            nxt = segs[i + 1]
            out.append(
                Segment(
                    f"{seg.text} {nxt.text}",
                    seg.x0,
                    nxt.x1,
                    nxt.y,
                    nxt.size,
                    nxt.bold,
                    nxt.mono,
                    seg.runs + nxt.runs,
                )
            )
            i += 2
            continue
        out.append(seg)
        i += 1
    return out


def _split_figures(segs: list[Segment]) -> list[Segment]:
    """A segment of figures set closer than a font size apart ("47 21.8 (16.0-29.0)") is a
    cell a figure, each where its runs draw it (or by its share of the segment's characters). A
    group of three digits after a number of one to three ("2 753 438") is that number's, not a
    figure of its own."""
    out: list[Segment] = []
    for seg in segs:
        words = seg.text.split()
        if len(words) < 2 or not all(FIGURE.match(word) for word in words):
            out.append(seg)
            continue
        places = _word_places(seg, words)
        figures: list[tuple[str, float, float]] = []
        for word, (x0, x1) in zip(words, places, strict=True):
            last = figures[-1][0] if figures else ""
            if last and THOUSANDS.match(word) and re.fullmatch(r"\d{1,3}(?: \d{3})*", last):
                figures[-1] = (f"{last} {word}", figures[-1][1], x1)
            else:
                figures.append((word, x0, x1))
        if len(figures) < 2:
            out.append(seg)
            continue
        for text, x0, x1 in figures:
            out.append(Segment(text, x0, x1, seg.y, seg.size, seg.bold, seg.mono, seg.runs))
    return out


def _word_places(seg: Segment, words: list[str]) -> list[tuple[float, float]]:
    """Where each word of a segment is drawn: from its run (a share of the run's width by its
    characters), or, when the runs do not part its words as its text does, by a share of the
    segment's width."""
    placed: list[tuple[str, float, float]] = []
    for run in seg.runs:
        per_char = (run.x1 - run.x0) / max(len(run.text), 1)
        for match in re.finditer(r"\S+", run.text):
            placed.append(
                (match.group(), run.x0 + match.start() * per_char, run.x0 + match.end() * per_char)
            )
    if [word for word, _, _ in placed] == words:
        return [(x0, x1) for _, x0, x1 in placed]
    per_char = (seg.x1 - seg.x0) / max(len(" ".join(words)), 1)
    out, at = [], 0
    for word in words:
        out.append((seg.x0 + at * per_char, seg.x0 + (at + len(word)) * per_char))
        at += len(word) + 1
    return out


def _bands(
    lines: list[list[Segment]], spans_too: list[tuple[float, float]] | None = None
) -> list[tuple[float, float]]:
    spans = sorted([(s.x0, s.x1) for segs in lines for s in segs] + (spans_too or []))
    bands: list[list[float]] = []
    for x0, x1 in spans:
        if bands and x0 <= bands[-1][1] + 1.0:
            bands[-1][1] = max(bands[-1][1], x1)
        else:
            bands.append([x0, x1])
    return [(a, b) for a, b in bands]


def _parted_bands(
    lines: list[list[Segment]], bands: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    """The columns with each one parted where its cells are two columns' set closer than a font
    size on every line: a place inside it that no run of its cells crosses, three of them or
    more (two in three of those in it, on lines of two cells or more) having text on both sides,
    where the text after it starts (a column set flush left) or the text before it ends (flush
    right) in two in three of those ("4.5" and "12 May 2026", "Pad (mm)" and "Next
    inspection")."""
    # a first look: no place where three lines' runs part that wide, no column is parted
    places: Counter[tuple[int, bool]] = Counter()
    for segs in lines:
        if len(segs) >= 2:
            for seg in segs:
                runs = seg.runs
                for before, after in zip(runs, runs[1:], strict=False):
                    if after.x0 - before.x1 >= 0.9 * APART_GAP * seg.size:
                        places[(round(after.x0), True)] += 1
                        places[(round(before.x1), False)] += 1
    if not places or max(places.values()) < 3:
        return bands
    held: dict[int, list[list[Run]]] = {}
    for segs in lines:
        if len(segs) >= 2:
            for seg in segs:
                held.setdefault(_band_of(seg, bands), []).append(_own_runs(seg))
    out: list[tuple[float, float]] = []
    for k, (a, b) in enumerate(bands):
        cells = held.get(k, [])
        size = max((r.size for runs in cells for r in runs), default=0.0)
        cut = _river(cells, APART_GAP * size) if len(cells) >= 3 else None
        if cut is None:
            out.append((a, b))
            continue
        left_end = max(r.x1 for runs in cells for r in runs if r.x1 <= cut[0] + 0.5)
        out += [(a, left_end), (cut[1], b)]
    return out


def _own_runs(seg: Segment) -> list[Run]:
    """The runs of text a segment is drawn with, left to right (a figure cut from a segment of
    figures keeps the whole segment's runs: only those inside its own extent)."""
    if len(seg.runs) == 1:
        run = seg.runs[0]
        inside = seg.x0 - 0.5 <= run.x0 and run.x1 <= seg.x1 + 0.5
        return [run] if inside and run.text.strip() else []
    return sorted(
        (r for r in seg.runs if r.text.strip() and seg.x0 - 0.5 <= r.x0 and r.x1 <= seg.x1 + 0.5),
        key=lambda r: r.x0,
    )


def _river(cells: list[list[Run]], gap: float) -> tuple[float, float] | None:
    """Where a column's cells (each its runs, left to right) part into two columns, apart by
    `gap` or more on each line, as (where the text before ends, where the text after starts), or
    None (_parted_bands)."""
    starts: Counter[int] = Counter()
    ends: Counter[int] = Counter()
    for runs in cells:
        for before, after in zip(runs, runs[1:], strict=False):
            if after.x0 - before.x1 >= gap:
                starts[round(after.x0)] += 1
                ends[round(before.x1)] += 1
    candidates = [float(x) for x, n in starts.items() if n >= 3]
    candidates += [x + 0.75 for x, n in ends.items() if n >= 3]
    for x in sorted(candidates):
        parted: list[tuple[float, float]] = []
        crossed = False
        for runs in cells:
            left = [r for r in runs if r.x1 <= x + 0.5]
            right = [r for r in runs if r.x0 >= x - 0.5]
            if len(left) + len(right) < len(runs):
                crossed = True
                break
            if left and right:
                parted.append((max(r.x1 for r in left), min(r.x0 for r in right)))
        if crossed or len(parted) < 3 or 3 * len(parted) < 2 * len(cells):
            continue
        lo, hi = max(end for end, _ in parted), min(start for _, start in parted)
        if any(start - end < gap for end, start in parted) or lo >= hi:
            continue
        flush_left = Counter(round(start) for _, start in parted).most_common(1)[0][1]
        flush_right = Counter(round(end) for end, _ in parted).most_common(1)[0][1]
        if 3 * max(flush_left, flush_right) >= 2 * len(parted):
            return lo, hi
    return None


def _kept_apart(lines: list[list[Segment]], bands: list[tuple[float, float]]) -> None:
    """Each line's segments that run over two columns cut where the columns part, in place
    (_cut_apart)."""
    starts = [a for a, _ in bands]
    ends = [b for _, b in bands]
    for n, segs in enumerate(lines):
        if len(segs) < 2:
            continue
        for seg in segs:
            # the first column the segment meets, and whether it meets the next one too
            k = bisect.bisect_left(ends, seg.x0 - 1)
            if seg.runs[1:] and k + 1 < len(bands) and starts[k + 1] - 1 <= seg.x1:
                lines[n] = _cut_apart(segs, bands)
                break


def _cut_apart(segs: list[Segment], bands: list[tuple[float, float]]) -> list[Segment]:
    """A line's segments with each one that runs over two columns cut where the columns part:
    between two of its runs, the runs before ending short of the next column and the run after
    starting in it, apart by more than a word's space (APART_GAP of its size) or starting where
    that column's cells start (two header cells set closer than a font size, "Pad (mm)" and
    "Next inspection", each drawn by itself over the columns the other rows keep apart). A cell
    spanning two columns is drawn as one string, or with a word's space between its words, and
    stays whole, as does a line of one segment (a label, a title, a wrapped cell's line)."""
    if len(segs) < 2:
        return segs
    out: list[Segment] = []
    for seg in segs:
        met = sum(a - 1 <= seg.x1 and seg.x0 <= b + 1 for a, b in bands) if seg.runs[1:] else 0
        runs = _own_runs(seg) if met >= 2 else []
        if len(runs) < 2:
            out.append(seg)
            continue
        pieces: list[list[Run]] = [[runs[0]]]
        end = runs[0].x1
        for run in runs[1:]:
            gap = run.x0 - end
            starts = [a for a, b in bands if end < a - 1 and a - 1 <= run.x0 <= b]
            if starts and (gap >= APART_GAP * seg.size or (gap > 0 and run.x0 - starts[0] <= 1)):
                pieces.append([run])
            else:
                pieces[-1].append(run)
            end = max(end, run.x1)
        if len(pieces) == 1:
            out.append(seg)
            continue
        for piece in pieces:
            line = build_line(piece)
            out.extend(line.segments if line is not None else [])
    return out


def _band_of(seg: Segment, bands: list[tuple[float, float]]) -> int:
    mid = (seg.x0 + seg.x1) / 2
    for k, (a, b) in enumerate(bands):
        if a - 1 <= mid <= b + 1:
            return k
    return min(range(len(bands)), key=lambda k: abs((bands[k][0] + bands[k][1]) / 2 - mid))


def borderless_tables(
    lines: list[Line],
    charts: list[Rule] | None = None,
    prose: list[tuple[int, int, list[float]]] | None = None,
) -> list[tuple[int, int, Table]]:
    """Borderless tables in a flow of lines: (first line, last line, table); none over a chart's
    bars (`charts`, from chart_areas). Runs of lines that are columns of prose side by side
    (_prose_columns) go to `prose`, given, as (first line, last line, where the columns part)."""
    found: list[tuple[int, int, Table]] = []
    merged = _padded_cells(lines, [_split_figures(_merge_markers(line)) for line in lines])
    i = 0
    while i < len(lines):
        if len(merged[i]) < 2:
            i += 1
            continue
        j = i
        multi = 1
        while j + 1 < len(lines):
            gap = lines[j].y - lines[j + 1].y
            size = max(lines[j].size, lines[j + 1].size)
            if gap <= 0 or (gap > 2.2 * size and not _spaced_row(lines, merged, j, size)):
                break
            if len(merged[j + 1]) >= 2:
                multi += 1
                j += 1
                continue
            # a one-segment line inside the table is a wrapped cell when it does not start at
            # the table's left edge, or a group's label ("Sex", "Women") when it stays within
            # the first column, and a multi-segment line follows
            follows = (
                j + 2 < len(lines)
                and len(merged[j + 2]) >= 2
                and lines[j + 1].y - lines[j + 2].y < 2.2 * lines[j + 1].size
            )
            wrapped = merged[j + 1][0].x0 > lines[i].x0 + 2 * lines[j + 1].size
            if follows and TEXT_RULE.match(merged[j + 1][0].text):
                j += 1  # a rule typed under the header
                continue
            if (
                follows and (wrapped or _label(merged[j + 1], merged[j], merged[j + 2]))
            ) or _beside(lines, merged, j + 1):
                j += 1
                continue
            if not follows and multi >= 2 and _wrapped_last(lines, merged, i, j):
                j += 1  # the last row's cell, wrapped
            break
        if multi >= 2:
            table = _borderless(merged[i : j + 1])
            if table is not None and _over_chart(
                table.x0, table.x1, table.bottom, table.top, charts or []
            ):
                table = None
            if table is not None:
                floor, whole = _header_floor(found, i)
                first = _header_above(lines, merged, (i, j), (floor, whole), table)
                if found and first <= found[-1][1]:
                    found.pop()  # a header's lines read as a table of words of their own
                found.append((first, j, table))
                i = j + 1
                continue
            if prose is not None and _prose_columns(merged[i : j + 1]):
                bands = _bands([segs for segs in merged[i : j + 1] if len(segs) >= 2])
                cuts = [(a[1] + b[0]) / 2 for a, b in zip(bands, bands[1:], strict=False)]
                prose.append((i, j, cuts))
                i = j + 1
                continue
            # a run that is no table and opens with a caption set in two cells ("Table 6:" and
            # its title), the title's lines of one cell under it, is read again from its next
            # line of cells: the table's rows
            k = i + 1
            while k < j and len(merged[k]) < 2:
                k += 1
            if i + 1 < k < j and CAPTION.match(merged[i][0].text):
                i = k
                continue
        i = max(j, i) + 1
    return _joined_groups(found, lines, merged)


def _header_floor(found: list[tuple[int, int, Table]], i: int) -> tuple[int, bool]:
    """The first line a header over line i may start at: past the table found before it, or at
    that table's first line when it ends just above line i and holds words only, a few rows of
    them (the header's lines, cut into cells, read as a table of their own); then the header
    must take all of that table's lines (True), or none."""
    if not found:
        return 0, False
    first, last, above = found[-1]
    if last == i - 1 and _words_only(above.rows) and i - first <= MAX_HEADER_ROWS:
        return first, True
    return last + 1, False


def _figures_row(row: list[str]) -> bool:
    """Whether a table's first row is data, not its columns' names: past its first cell, two
    figures or more and nothing else (the budget's "MINISTRY OF AGRICULTURE | 28130.48 | ...")."""
    rest = [cell for cell in row[1:] if cell]
    figures = [cell for cell in rest if FIGURE.match(cell) and not YEAR.match(cell)]
    return len(figures) >= 2 and len(figures) == len(rest)


def _header_line(segs: list[Segment], table: Table) -> bool:
    """Whether a line reads as a header's cells over a table: inside its width, a few words a
    cell, no figure but a year, no caption."""
    size = segs[0].size
    return (
        segs[0].x0 >= table.x0 - size
        and segs[-1].x1 <= table.x1 + size
        and not CAPTION.match(segs[0].text)
        and all(len(seg.text.split()) < PROSE_WORDS for seg in segs)
        and not any(FIGURE.match(seg.text) and not YEAR.match(seg.text) for seg in segs)
    )


def _header_above(
    lines: list[Line],
    merged: list[list[Segment]],
    span: tuple[int, int],
    bound: tuple[int, bool],
    table: Table,
) -> int:
    """The first line of a borderless table with its header: when the table's first row is
    figures (no names), the lines of words over its columns just above it, set apart from it by
    up to four and a half sizes (a rule often lies between) and from each other by a table's
    row spacing, the lowest of them setting cells over half the columns or more, are its header
    rows, up to three (the budget's "Plan", "Non-Plan" over "Revenue Capital Total"). Their
    cells become the table's top rows (header_rows counts them) and each column is named by
    them top to bottom, a centred group label naming the columns it is centred over."""
    i, j = span
    floor, whole = bound
    if table.header_rows != 1 or table.names is not None or not _figures_row(table.rows[0]):
        return i
    first = i
    while first - 1 >= floor and i - (first - 1) <= MAX_HEADER_ROWS:
        k = first - 1
        gap = lines[k].y - lines[k + 1].y
        limit = (HEADER_GAP if k + 1 == i else HEADER_LINE_GAP) * lines[k].size
        if not 0 < gap <= limit or not _header_line(merged[k], table):
            break
        first = k
    if first == i or (whole and first != floor):
        return i
    extents = _extents(table, merged[i : j + 1])
    grid = [_header_cells(merged[k], extents) for k in range(first, i)]
    named = sum(bool(cell) for cell in grid[-1])
    if named < 2 or 2 * named < len(extents):
        return i
    table.rows[0:0] = grid
    table.header_rows = len(grid)
    table.names = _joined_header(grid, merged[first:i], extents)
    table.top = lines[first].y + lines[first].size
    table.x0 = min(table.x0, *(segs[0].x0 for segs in merged[first:i]))
    table.x1 = max(table.x1, *(segs[-1].x1 for segs in merged[first:i]))
    return first


def _column_at(seg: Segment, extents: list[tuple[float, float]]) -> int:
    """The column a header cell is over: the one it overlaps most, else the nearest."""

    def overlap(k: int) -> float:
        a, b = extents[k]
        return min(b, seg.x1) - max(a, seg.x0)

    return max(range(len(extents)), key=overlap)


def _header_cells(segs: list[Segment], extents: list[tuple[float, float]]) -> list[str]:
    cells = [""] * len(extents)
    for seg in segs:
        k = _column_at(seg, extents)
        cells[k] = f"{cells[k]} {seg.text}".strip()
    return cells


def _joined_header(
    grid: list[list[str]], lines: list[list[Segment]], extents: list[tuple[float, float]]
) -> list[str]:
    """Each column's name: its header cells top to bottom. A label on a line above the last
    that is over a column the last line names, centred over a run of such columns around it
    (none of them with a label of its own on that line), names each of them ("Plan" over
    "Revenue", "Capital", "Total": "Plan Revenue" ...); a column the last line leaves blank is
    one tall cell of its own, whose label spreads nowhere."""
    spread = [list(row) for row in grid]
    last = grid[-1]
    for r, segs in enumerate(lines[:-1]):
        for seg in segs:
            k = _column_at(seg, extents)
            if not last[k]:
                continue
            a, b = _centred_span(k, (seg.x0 + seg.x1) / 2, seg.size, grid[r], last, extents)
            for c in range(a, b + 1):
                spread[r][c] = grid[r][k]
    return _names_top_down(spread, len(extents))


def _names_top_down(rows: list[list[str]], width: int) -> list[str]:
    """Each column's name: its header rows' cells top to bottom, a label spread over the row
    below it (the same text twice running) said once."""
    names: list[str] = []
    for c in range(width):
        parts: list[str] = []
        for row in rows:
            if row[c] and (not parts or parts[-1] != row[c]):
                parts.append(row[c])
        names.append(" ".join(parts))
    return names


def _centred_span(
    k: int,
    mid: float,
    size: float,
    line: list[str],
    last: list[str],
    extents: list[tuple[float, float]],
) -> tuple[int, int]:
    """The widest run of columns around column k, each but k blank on the label's line and
    named on the header's last line, whose middle lies within a font size of the label's."""
    best = (k, k)
    n = len(extents)
    for a in range(k, -1, -1):
        if a != k and (line[a] or not last[a]):
            break
        for b in range(k, n):
            if b != k and (line[b] or not last[b]):
                break
            centre = (extents[a][0] + extents[b][1]) / 2
            if abs(centre - mid) <= 1.5 * size and b - a > best[1] - best[0]:
                best = (a, b)
    return best


def _wrapped_last(lines: list[Line], merged: list[list[Segment]], first: int, j: int) -> bool:
    """Whether the line under a run of rows (lines first to j) is the last row's cell wrapped:
    one cell starting under one of line j's and ending before its next one, no further under it
    than the rows are apart, whose first word would not have fitted on line j's cell there (that
    cell ends too near the widest cell starting where it does), going on in lower case or closer
    under line j than line j is under the line above it."""
    seg, row = merged[j + 1][0], merged[j]
    gap = lines[j].y - lines[j + 1].y
    pitch = lines[j - 1].y - lines[j].y if j > first else 0.0
    if len(merged[j + 1]) != 1 or not 0 < gap <= 1.5 * seg.size:
        return False
    for k, cell in enumerate(row):
        if abs(seg.x0 - cell.x0) > seg.size:
            continue
        if k + 1 < len(row) and seg.x1 >= row[k + 1].x0:
            return False
        widest = max(
            (s.x1 for segs in merged[first : j + 1] for s in segs if abs(s.x0 - cell.x0) <= s.size),
            default=cell.x1,
        )
        word = seg.text.split()[0] if seg.text.split() else ""
        width = (seg.x1 - seg.x0) * len(word) / max(len(seg.text), 1)
        if cell.x1 + 0.25 * seg.size + width <= widest:
            return False
        return seg.text[:1].islower() or gap < pitch - 0.5
    return False


def _padded(line: Line) -> bool:
    """A line in a monospaced font laid out with spaces: two or more in a row between its words,
    or a leader of dots."""
    if not line.mono:
        return False
    text = "".join(run.text for seg in line.segments for run in seg.runs).strip()
    return re.search(r"\S {2,}\S", text) is not None or LEADER.search(text) is not None


def _padded_cells(lines: list[Line], merged: list[list[Segment]]) -> list[list[Segment]]:
    """Lines of a plain-text table (a monospaced font, its columns laid out with spaces) cut into
    cells: each run of such lines with no blank line between them (a rule typed as dashes among
    them) is a grid of characters, and a cell is a stretch of a line's words that no blank
    column of the grid parts, a blank column being a character's place where none of the run's
    usual lines (those with the usual count of words or more) shows a character; dot leaders are
    blank. Only a grid of three or more such lines, two thirds of whose cells after the first
    are figures, is cut."""
    out = list(merged)
    k = 0
    while k < len(lines):
        if not _padded(lines[k]):
            k += 1
            continue
        end = k
        while (
            end + 1 < len(lines)
            and lines[end].y - lines[end + 1].y <= 2 * lines[end].size  # no blank line between
            and (_padded(lines[end + 1]) or TEXT_RULE.match(lines[end + 1].text.strip()))
        ):
            end += 1
        cells = _grid_cells(lines[k : end + 1])
        if cells is not None:
            for n, segs in enumerate(cells):
                if segs:
                    out[k + n] = segs
        k = end + 1
    return out


def _grid_cells(lines: list[Line]) -> list[list[Segment]] | None:
    runs = [run for line in lines for seg in line.segments for run in seg.runs if run.text]
    widths = sorted((run.x1 - run.x0) / len(run.text) for run in runs)
    width = widths[len(widths) // 2]
    if width <= 0 or any(abs(w - width) > 0.05 * width for w in widths):
        return None  # not one monospaced face and size
    origin = min(run.x0 for run in runs)
    if max(run.x1 for run in runs) - origin > MAX_GRID_CHARS * width:
        return None  # wider than any page's line of characters: no grid is built
    grid: list[str | None] = []  # each line's characters by place; None for a typed rule
    for line in lines:
        if TEXT_RULE.match(line.text.strip()):
            grid.append(None)
            continue
        chars: dict[int, str] = {}
        for seg in line.segments:
            for run in seg.runs:
                start = round((run.x0 - origin) / width)
                for i, ch in enumerate(run.text):
                    if not ch.isspace():
                        chars[start + i] = ch
        placed = "".join(chars.get(p, " ") for p in range(max(chars, default=-1) + 1))
        grid.append(LEADER.sub(lambda m: " " * len(m.group()), placed))
    words = [None if row is None else list(re.finditer(r"\S+", row)) for row in grid]
    counts = Counter(len(found) for found in words if found is not None and len(found) >= 2)
    if not counts:
        return None
    usual = _usual(counts)
    usual_rows = [
        row for row, found in zip(grid, words, strict=True) if found and len(found) >= usual
    ]
    if usual < 3 or len(usual_rows) < 3:
        return None
    filled = {p for row in usual_rows if row for p, ch in enumerate(row) if ch != " "}
    out: list[list[Segment]] = []
    later: list[str] = []  # the usual rows' cells after the first
    for line, row, found in zip(lines, grid, words, strict=True):
        if row is None or not found:
            out.append([])
            continue
        groups: list[list[re.Match[str]]] = [[found[0]]]
        for word in found[1:]:
            if all(p in filled for p in range(groups[-1][-1].end(), word.start())):
                groups[-1].append(word)
            else:
                groups.append([word])
        segs = [
            Segment(
                " ".join(w.group() for w in group),
                origin + group[0].start() * width,
                origin + group[-1].end() * width,
                line.y,
                line.size,
                line.bold,
                True,
            )
            for group in groups
        ]
        if len(found) >= usual:
            later.extend(seg.text for seg in segs[1:])
        out.append(segs)
    if sum(FIGURE.match(text) is not None for text in later) * 3 < 2 * len(later):
        return None
    return out


def _beside(lines: list[Line], merged: list[list[Segment]], k: int) -> bool:
    """A line of one cell in the first column, set less than three quarters of its size from a
    row of cells just above or below it: a row's name on lines around the row's middle, where
    its figures are ("Between-state inequality (Gini" over the figures, "index)" under them)."""
    if len(merged[k]) != 1:
        return False
    seg = merged[k][0]
    for n in (k - 1, k + 1):
        if not 0 <= n < len(lines) or len(merged[n]) < 2:
            continue
        if abs(lines[k].y - lines[n].y) >= 0.75 * lines[k].size:
            continue
        first, rest = merged[n][0], merged[n][1:]
        if first.x1 >= seg.x0 and all(other.x0 > seg.x1 for other in rest):
            return True
    return False


def _spaced_row(lines: list[Line], merged: list[list[Segment]], j: int, size: float) -> bool:
    """Whether the row under line j, apart by more than a table's usual row spacing but by no
    more than three and a half font sizes, sets its cells in the same columns as line j: three
    or more cells, each under one of line j's (rows spaced wide to leave room for names on two
    or three lines)."""
    if lines[j].y - lines[j + 1].y > 3.5 * size or len(merged[j]) < 3:
        return False
    below = j + 1
    if len(merged[below]) < 2 and _beside(lines, merged, below) and below + 1 < len(lines):
        below += 1  # the row's name starts above its figures
    upper, lower = merged[j], merged[below]
    if len(lower) < 3:
        return False
    return all(any(a.x0 <= b.x1 and b.x0 <= a.x1 for a in upper) for b in lower)


def _joined_groups(
    found: list[tuple[int, int, Table]], lines: list[Line], merged: list[list[Segment]]
) -> list[tuple[int, int, Table]]:
    """Two tables one under the other in the same columns, apart by a wider space than a row's
    or by up to three labels of groups alone on their lines ("Private schools", or "Percent
    change" over the columns of figures), are one table's groups: one table, each label a row."""
    out: list[tuple[int, int, Table]] = []
    for first, last, table in found:
        if out:
            top_first, top_last, above = out[-1]
            between = list(range(top_last + 1, first))
            size = max(line.size for line in lines[top_last : first + 1])
            gaps = [lines[k].y - lines[k + 1].y for k in range(top_last, first)]
            labels = [merged[k] for k in between]
            same = _same_columns(above.columns, table.columns, size) or _overlapping_columns(
                _extents(above, merged[top_first : top_last + 1]),
                _extents(table, merged[first : last + 1]),
            )
            if (
                same
                and len(between) <= 3
                and all(0 < gap <= 3.5 * size for gap in gaps)
                and all(len(segs) == 1 and _group_label(segs[0], table, size) for segs in labels)
            ):
                texts: list[str] = []
                for segs in labels:
                    if texts and segs[0].text[:1].islower():
                        texts[-1] = f"{texts[-1]} {segs[0].text}"  # a label wrapped
                    else:
                        texts.append(segs[0].text)
                rows = above.rows + [[text] + [""] * (len(table.columns) - 1) for text in texts]
                out[-1] = (
                    top_first,
                    last,
                    Table(
                        rows + table.rows,
                        min(above.x0, table.x0),
                        max(above.x1, table.x1),
                        above.top,
                        table.bottom,
                        above.columns,
                        ruled=False,
                    ),
                )
                continue
        out.append((first, last, table))
    return out


def _same_columns(above: list[float], below: list[float], size: float) -> bool:
    """Whether two tables set their cells in the same columns: as many, each starting within
    two font sizes of the other's or two fifths of the narrowest column's width (figures set
    flush right start where their width says)."""
    if len(above) != len(below) or len(above) < 2:
        return False
    pairs = [(a, b) for cols in (above, below) for a, b in zip(cols, cols[1:], strict=False)]
    narrowest = min(abs(b - a) for a, b in pairs)
    slack = max(2 * size, 0.4 * narrowest)
    return all(abs(a - b) <= slack for a, b in zip(above, below, strict=True))


def _usual(counts: Counter[int]) -> int:
    """The count (of cells or words a line sets) most lines set, the larger of a tie."""
    return max(counts, key=lambda n: (counts[n], n))


def _extents(table: Table, lines: list[list[Segment]]) -> list[tuple[float, float]]:
    """Where each column of a borderless table reaches: from the first start to the farthest end
    of the cells its usual rows (those that set the usual count of cells or more, so no header
    cell spanning two columns) hold there."""
    starts = sorted(table.columns)
    reach = [[start, start] for start in starts]
    counts = Counter(len(segs) for segs in lines if len(segs) >= 2)
    usual = _usual(counts) if counts else 2
    for segs in lines:
        if len(segs) < usual:
            continue
        for seg in segs:
            mid = (seg.x0 + seg.x1) / 2
            k = max((k for k, start in enumerate(starts) if start <= mid), default=0)
            reach[k] = [min(reach[k][0], seg.x0), max(reach[k][1], seg.x1)]
    return [(a, b) for a, b in reach]


def _overlapping_columns(
    above: list[tuple[float, float]], below: list[tuple[float, float]]
) -> bool:
    """Whether two tables set their cells in the same columns though a header's cells move a
    column's start: as many columns, each meeting the other's column of the same place and no
    other (figures set flush right under a wider header cell)."""
    if len(above) != len(below) or len(above) < 2:
        return False
    for k, (a0, a1) in enumerate(above):
        meets = [j for j, (b0, b1) in enumerate(below) if b0 <= a1 and a0 <= b1]
        if meets != [k]:
            return False
    return True


def _group_label(seg: Segment, table: Table, size: float) -> bool:
    """A line between two tables' rows that labels the rows under it: within the first column,
    or over the columns of figures (not from the left margin across them, as a title is); a
    caption ("Table 2.") is none."""
    if CAPTION.match(seg.text):
        return False
    in_stub = seg.x1 < table.columns[1]
    over_figures = seg.x0 >= table.columns[1] - 2 * size and seg.x1 <= table.x1 + size
    return in_stub or over_figures


def _label(line: list[Segment], above: list[Segment], below: list[Segment]) -> bool:
    """A group's label: a line that ends before the second column begins, between rows that set
    their cells in the same columns (so two tables, or a table and its chart, stay apart)."""
    if len(above) < 2 or len(above) != len(below) or line[-1].x1 >= min(above[1].x0, below[1].x0):
        return False
    return all(a.x0 <= b.x1 and b.x0 <= a.x1 for a, b in zip(above[1:], below[1:], strict=True))


def _justified_columns(lines: list[list[Segment]], bands: list[tuple[float, float]]) -> int:
    """How many of a table's columns are set as justified text: three lines or more of four
    words or more, of different lengths, two thirds of them starting at one left edge and ending
    at one right edge (two columns of prose side by side, not a table; right-aligned text, or
    names of one length, are a table's)."""
    cells: dict[int, list[Segment]] = {}
    for segs in lines:
        for seg in segs:
            if len(seg.text.split()) >= 4:
                cells.setdefault(_band_of(seg, bands), []).append(seg)
    count = 0
    for segs in cells.values():
        left, right = min(seg.x0 for seg in segs), max(seg.x1 for seg in segs)
        full = [seg for seg in segs if seg.x0 - left <= 1.5 and right - seg.x1 <= 1.5]
        if len(full) >= 3 and len(full) * 3 >= 2 * len(segs):
            count += len({len(seg.text) for seg in full}) >= 3
    return count


def _running_columns(rows: list[list[str]], cols: list[int]) -> int:
    """How many of a table's columns run on as sentences from row to row: in three rows or
    more, a cell of three words or more starts in lower case under a cell of three words or
    more that ends with no stop (a column of prose, each of its lines a row)."""
    count = 0
    for c in cols:
        runs_on = sum(
            len(above[c].split()) >= 3
            and len(below[c].split()) >= 3
            and below[c][0].islower()
            and above[c][-1] not in ".:;!?"
            for above, below in zip(rows, rows[1:], strict=False)
        )
        count += runs_on >= 3
    return count


def _prose_columns(lines: list[list[Segment]]) -> bool:
    """Whether lines set side by side are columns of running text, not a table: every cell of
    three lines or more set in two columns or more is a line of prose (mostly letters, few of
    them figures, a word in lower case among them), of PROSE_WORDS words or more, or a
    paragraph's last line going on in lower case to a sentence's end (two in three of the cells
    long): no cell of the run is short or a figure, as a table's names, counts and header cells
    are."""
    apart = [segs for segs in lines if len(segs) >= 2]
    if len(apart) < 3:
        return False
    long = 0
    for segs in lines:
        for seg in segs:
            words = seg.text.split()
            if (
                4 * sum(FIGURE.match(word) is not None for word in words) > len(words)
                or not any(word.islower() for word in words)
                or 2 * sum(c.isalpha() for c in seg.text) < len(seg.text)
            ):
                return False
            if len(words) >= PROSE_WORDS:
                long += 1
            elif not (seg.text[:1].islower() and seg.text[-1:] in ".!?"):
                return False  # short, and no paragraph's last line ("of the season.")
    return 3 * long >= 2 * sum(len(segs) for segs in lines)


def _axis_ticks(rows: list[list[str]], cols: list[int]) -> bool:
    """Whether a table's cells are a chart's value axes: each column either steps by one
    amount from row to row down five rows or more ("450", "400", "350" ... "-50": an axis's
    ticks) or is filled in fewer than half the rows (the chart's title and legend beside them).
    The chart's title, its legend's labels or the axis's dates may be set among an axis's ticks
    (two in three of its cells being ticks) when the columns filled in fewer than half the rows
    are as many as the axes or more: the rest of the chart nearly empty, not a table whose
    figures happen to step evenly under its header. Years beside counts, or beside row names,
    are a table's."""
    stepped = sparse = 0
    labelled = False
    for c in cols:
        cells = [row[c] for row in rows if row[c]]
        if len(cells) * 2 < len(rows):
            sparse += 1
            continue
        ticks = [cell for cell in cells if FIGURE.match(cell)]
        if len(ticks) < 5 or 3 * len(ticks) < 2 * len(cells):
            return False
        labelled = labelled or len(ticks) < len(cells)
        try:
            values = [float(cell.replace(",", "").replace("\u2212", "-")) for cell in ticks]
        except ValueError:
            return False  # a range or a share: a table's figures
        steps = {round(b - a, 6) for a, b in zip(values, values[1:], strict=False)}
        if len(steps) != 1 or 0 in steps:
            return False
        stepped += 1
    return stepped > 0 and (not labelled or sparse >= stepped)


def _line_numbers(rows: list[list[str]], cols: list[int]) -> bool:
    """Whether a table's first column is a page's line numbers beside its text (a court
    transcript's or a pleading's margin, 1 to 25 down the page): text in one other column, and
    numbers counting up by one in LINE_NUMBER_ROWS rows or more, a number on a line of no text
    among them or the text's lines long. A table numbering its rows fills each one."""
    if len(cols) != 2:
        return False
    numbers, text = cols
    counted = [row for row in rows if row[numbers]]
    # isdecimal, not isdigit: a superscript "²" is a digit that int() cannot read
    if len(counted) < LINE_NUMBER_ROWS or not all(row[numbers].isdecimal() for row in counted):
        return False
    values = [int(row[numbers]) for row in counted]
    if any(b != a + 1 for a, b in zip(values, values[1:], strict=False)):
        return False
    lines = [row[text] for row in counted if row[text]]
    bare = len(lines) < len(counted)
    return bare or sum(len(line.split()) for line in lines) >= LINE_WORDS * len(lines)


def _over_one(seg: Segment, bands: list[tuple[float, float]]) -> bool:
    """Whether a cell sits over one column: it reaches no column beside its own."""
    k = _band_of(seg, bands)
    return (k == 0 or seg.x0 > bands[k - 1][1]) and (
        k + 1 == len(bands) or seg.x1 < bands[k + 1][0]
    )


def _rows(
    lines: list[list[Segment]], bands: list[tuple[float, float]], rtl: bool, header_up: bool
) -> list[list[str]]:
    """A borderless table's rows: a line with text in the first band opens a row, one without
    adds to the cells of the row above (a wrapped cell), as does a wrapped cell's next line in
    the first band (_wraps)."""
    rows: list[list[str]] = []
    prev: list[Segment] | None = None
    top: list[tuple[list[tuple[int, str]], bool]] = []  # the first row's lines, cells over one
    placed = [[(_band_of(seg, bands), seg) for seg in segs] for segs in lines]
    anchors = set() if rtl else _anchors(placed)
    widest = [a for a, _ in bands]  # where each column's widest line ends
    for line in placed:
        for k, seg in line:
            if seg.x1 > widest[k]:
                widest[k] = seg.x1
    cell: dict[int, tuple[Segment, Segment]] = {}  # the row's first and last line in each band
    for n, segs in enumerate(lines):
        if len(segs) == 1 and TEXT_RULE.match(segs[0].text):
            continue
        cells = [""] * len(bands)
        for k, seg in placed[n]:
            cells[k] = f"{cells[k]} {seg.text}".strip()
        if rtl:
            cells.reverse()
        # a line closer than three quarters of its size under the line before it is set beside
        # it: the same row's cells, written on lines around the row's middle
        close = prev is not None and prev[0].y - segs[0].y < 0.75 * segs[0].size
        after = lines[n + 1][0].y if n + 1 < len(lines) else None
        wrapped = (
            bool(cells[0] and rows)
            and not close
            and _wraps(placed[n], cell, widest, anchors, prev, after)
        )
        prev = segs
        if (
            header_up
            and not rtl
            and len(rows) == 1
            and not rows[0][0]
            and not all(rows[0][1:])
            and cells[0]
            and not close
        ):
            rows[0:1] = _header_up(top, cells)
            continue
        named_on = not (rtl or close or wrapped) and _name_wrapped(rows, cell, placed[n], widest[0])
        if (cells[0] or not rows) and not close and not wrapped and not named_on:
            rows.append(cells)
            cell = {}
        else:
            rows[-1] = [f"{a} {b}".strip() for a, b in zip(rows[-1], cells, strict=True)]
        for k, seg in placed[n]:
            cell[k] = (cell[k][0] if k in cell else seg, seg)
        if len(rows) == 1 and not rows[0][0]:
            # a line of cells each over one column, or of a group's cells over several
            one = all(_over_one(seg, bands) for seg in segs)
            top.append(([(_band_of(seg, bands), seg.text) for seg in segs], one))
    return rows


def _name_wrapped(
    rows: list[list[str]],
    cell: dict[int, tuple[Segment, Segment]],
    placed: list[tuple[int, Segment]],
    widest: float,
) -> bool:
    """Whether a line ends the row name the row above it is (the rule `_name_goes_on` reads in a
    ruled table): that row, past the header, is a name alone, not a label ending in a colon, whose
    last line left no room for this line's first word, and this line's first cell starts under
    it and goes on from it in lower case or after a line ending in "and", "of", a comma."""
    if len(rows) < 2 or not rows[-1][0] or any(rows[-1][1:]) or 0 not in cell:
        return False
    seg = next((seg for k, seg in placed if k == 0), None)
    name = rows[-1][0]
    if seg is None or not seg.text.strip() or name.endswith(":"):
        return False
    first, last = cell[0]
    if abs(seg.x0 - first.x0) > seg.size:
        return False
    word = seg.text.split()[0]
    width = (seg.x1 - seg.x0) * len(word) / max(len(seg.text), 1)
    return _wrapped_on(name, seg.text, last.x1, width, seg.size, widest)


def _anchors(placed: list[list[tuple[int, Segment]]]) -> set[int]:
    """The columns besides the first that a table's rows fill (its lines' cells each by its
    column): those nine in ten of the lines that open a row (text in the first column and
    another) fill."""
    openers = [ks for ks in ({k for k, _ in line} for line in placed) if 0 in ks and len(ks) >= 2]
    if len(openers) < 2:
        return set()
    counts = Counter(k for ks in openers for k in ks if k)
    return {k for k, n in counts.items() if 10 * n >= 9 * len(openers)}


def _wraps(
    placed: list[tuple[int, Segment]],
    cell: dict[int, tuple[Segment, Segment]],
    widest: list[float],
    anchors: set[int],
    above: list[Segment] | None,
    below: float | None,
) -> bool:
    """Whether a line is the next line of cells the row above wrapped: it has text only in
    columns the row fills, none in a column every row fills (its anchor), each of its cells
    starting under the row's cell there, whose last line its first word would not have fitted
    on (that line ends too near the column's widest line); and it goes on in lower case, or sits
    closer under the row than the next line sits under it ("Front left brake" over "assembly",
    the row's figures beside the first line only)."""
    if not anchors or above is None:
        return False
    if any(k in anchors or k not in cell for k, _ in placed):
        return False
    for k, seg in placed:
        first, last = cell[k]
        word = seg.text.split()[0] if seg.text.split() else ""
        width = (seg.x1 - seg.x0) * len(word) / max(len(seg.text), 1)
        if abs(seg.x0 - first.x0) > seg.size or last.x1 + 0.25 * seg.size + width <= widest[k]:
            return False
    lower = all(seg.text[:1].islower() for _, seg in placed)
    y = placed[0][1].y
    return lower or below is None or above[0].y - y < y - below - 0.5


def _header_up(top: list[tuple[list[tuple[int, str]], bool]], named: list[str]) -> list[list[str]]:
    """The rows of a header whose top lines leave the first column and others blank, when the
    line under them names the first column: the header's cells written upward (bottom-aligned,
    "Elementary" over "ungraded") are that line's. When each top line sets its cells over one
    column each, all of them are; otherwise the lines of such cells just above the named line
    give those above a cell of it, and from the first line of a group's cells up (a cell over
    several columns: "Coronary heart disease" and "Stroke"), the lines stay a row above it."""
    every = all(one for _, one in top)
    moving = len(top)
    while moving > 0 and top[moving - 1][1]:
        moving -= 1
    above = [""] * len(named)
    up = [""] * len(named)
    for n, (cells, _) in enumerate(top):
        for k, text in cells:
            into = up if n >= moving and (every or named[k]) else above
            into[k] = f"{into[k]} {text}".strip()
    header = [f"{a} {b}".strip() for a, b in zip(up, named, strict=True)]
    return [above, header] if any(above) else [header]


def _borderless(lines: list[list[Segment]]) -> Table | None:
    # the columns are where the table's usual rows set their cells: a header cell spanning two
    # columns, or a row short of cells, does not join them
    counts = Counter(len(segs) for segs in lines if len(segs) >= 2)
    usual = _usual(counts)
    if counts[usual] < 2:
        usual = 2  # no count of cells is usual: every row sets the columns
    core = _bands([segs for segs in lines if len(segs) >= usual])
    # a cell of another row that meets none of those columns is a column of its own
    apart = [
        seg
        for segs in lines
        if len(segs) >= 2
        for seg in segs
        if not any(a - 1 <= seg.x1 and seg.x0 <= b + 1 for a, b in core)
    ]
    bands = _bands([[seg] for seg in apart], core) if apart else core
    if len(bands) < 2:
        return None
    bands = _parted_bands(lines, bands)
    lines = list(lines)
    _kept_apart(lines, bands)
    if all(SECTION_NUMBER.match(segs[0].text) and segs[0].bold for segs in lines):
        # bold section numbers set apart from their titles, one heading under another ("2 Related
        # work" over "2.1 Natural language ..."): headings, not a table's rows
        return None
    # a table in a right-to-left script reads its columns from the right
    rtl = right_to_left(" ".join(seg.text for segs in lines for seg in segs))
    rows = _rows(lines, bands, rtl, header_up=True)
    if len(rows) < 2:
        rows = _rows(lines, bands, rtl, header_up=False)  # a header alone is no table's rows
    if rtl:
        bands = bands[::-1]
    cols = [c for c in range(len(bands)) if any(row[c] for row in rows)]
    if len(cols) < 2 or len(rows) < 2:
        return None
    # a table is text set in columns: mostly short cells, not prose that happens to align
    filled = [row[c] for row in rows for c in cols if row[c]]
    if sum(len(cell.split()) > 12 for cell in filled) * 3 > len(filled):
        return None
    # nor columns of prose side by side, whose lines break words with a hyphen ("impor-")
    broken = sum(HYPHENATED.search(cell) is not None for cell in filled)
    if broken >= 2 and broken * 10 >= len(filled):
        return None
    if (
        _axis_ticks(rows, cols)
        or _line_numbers(rows, cols)
        or _justified_columns(lines, bands) + _running_columns(rows, cols) >= 2
        or _prose_columns(lines)
    ):
        return None
    return Table(
        [[row[c] for c in cols] for row in rows],
        min(s.x0 for segs in lines for s in segs),
        max(s.x1 for segs in lines for s in segs),
        lines[0][0].y + lines[0][0].size,
        lines[-1][0].y,
        [bands[c][0] for c in cols],
        ruled=False,
    )
