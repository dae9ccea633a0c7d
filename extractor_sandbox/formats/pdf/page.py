"""One page's reading: its runs turned upright, its tables, its columns, its lines in order.

The result is a list of items in reading order: lines (kept whole, so the document can find its
furniture, its paragraph spacing and its outline's titles) and tables. Text in another direction
than the page's own is kept as lines of its own after the page's (`orientation`).
"""

from __future__ import annotations

import bisect
import math
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field

from extractor_sandbox.formats.pdf.content import Drawing, Rule, Run
from extractor_sandbox.formats.pdf.grids import (
    LIST_MARKER,
    Table,
    borderless_tables,
    cell_edges,
    chart_areas,
    headed_tables,
    ruled_tables,
)
from extractor_sandbox.formats.pdf.lines import (
    Line,
    TextLayer,
    build_line,
    build_lines,
    drop_duplicates,
    main_angle,
    turn,
    turned_size,
)

MAX_LINES = 5_000


class LayoutUnreadable(Exception):
    """The page's layout cannot be read; the reader falls back to its text layer."""


@dataclass
class Item:
    """A line or a table, in reading order."""

    line: Line | None = None
    table: Table | None = None
    flow: int = 0  # lines of one flow (a column's stretch) may form a paragraph together
    orientation: int = 0


@dataclass
class PageReading:
    number: int
    width: float
    height: float
    items: list[Item] = field(default_factory=list)
    layer_text: str = ""  # the text layer: the runs in the order the content shows them
    layer_lines: list[tuple[str, float]] = field(default_factory=list)
    charts: list[Rule] = field(default_factory=list)  # where bar charts draw their bars


def read_page(number: int, drawing: Drawing, layer: TextLayer | None = None) -> PageReading:
    runs = [r for r in drawing.runs if r.text.strip()]
    angle = main_angle(runs)
    width, height = turned_size(angle, drawing.width, drawing.height)
    reading = PageReading(number, width, height)
    main = drop_duplicates(
        turn([r for r in runs if r.angle == angle], angle, drawing.width, drawing.height)
    )
    reading.layer_lines = _layer(main)
    rules = _turn_rules(drawing.rules, angle, drawing.width, drawing.height)
    boxes = _turn_rules(drawing.boxes, angle, drawing.width, drawing.height)
    reading.charts = chart_areas(boxes)
    tables, rest = ruled_tables(rules, main)
    # then the tables shaded cells draw, from the text no ruled table holds
    edges = cell_edges(boxes)
    if edges:
        shaded, rest = ruled_tables(rules + edges, rest)
        tables += shaded
    tables = headed_tables(tables)
    lines = build_lines(rest, layer)
    if len(lines) > MAX_LINES:
        raise LayoutUnreadable(f"it holds more than {MAX_LINES:,} lines")
    flows = split_columns(lines, width, layer=layer)
    items = [Item(line=line, flow=index) for index, flow in enumerate(flows) for line in flow]
    _place_tables(items, tables)
    others = sorted({r.angle for r in runs if r.angle != angle})
    for other in others:
        turned = drop_duplicates(
            turn([r for r in runs if r.angle == other], other, drawing.width, drawing.height)
        )
        reading.layer_lines += _layer(turned)
        for line in build_lines(turned):
            items.append(Item(line=line, flow=-1 - other, orientation=(other - angle) % 360))
    reading.items = items
    return reading


def _layer(runs: list) -> list[tuple[str, float]]:
    return [(r.text, r.y0) for r in sorted(runs, key=lambda r: r.order)]


def _turn_rules(rules: list[Rule], angle: int, width: float, height: float) -> list[Rule]:
    if angle == 0:
        return rules
    out = []
    for rule in rules:
        for x0, y0, x1, y1 in [(rule.x0, rule.y0, rule.x1, rule.y1)]:
            if angle == 90:
                a, b, c, d = y0, width - x0, y1, width - x1
            elif angle == 180:
                a, b, c, d = width - x0, height - y0, width - x1, height - y1
            else:
                a, b, c, d = height - y0, x0, height - y1, x1
            out.append(Rule(min(a, c), min(b, d), max(a, c), max(b, d)))
    return out


# Columns


def split_columns(
    lines: list[Line], width: float, depth: int = 0, layer: TextLayer | None = None
) -> list[list[Line]]:
    """Flows of lines in reading order: full-width stretches, and a two-column stretch's left
    column before its right, split at a gutter at most a twentieth of the lines cross. A column
    is split again the same way (a spread of two pages, each in two columns), once. A gap that
    cuts most lines beside it into cells on both sides is a wide table's, no gutter; over or
    under two columns of text, the rows of a wide table it would cut are full-width lines."""
    pieces = [_pieces(line) for line in lines]
    gutter = None
    if pieces:
        left_edge = min(a for spans in pieces for a, _ in spans)
        right_edge = max(b for spans in pieces for _, b in spans)
        region = (0.0, width) if depth == 0 else (left_edge, right_edge)
        gutter = find_gutter(pieces, region)
    cells = [_cells(line) for line in lines]
    if gutter is not None and _table_gutter(cells, gutter):
        gutter = None
    if gutter is None:
        return [lines] if lines else []
    flows: list[list[Line]] = []
    left: list[Line] = []
    right: list[Line] = []

    def close() -> None:
        if left:
            flows.append(list(left))
        if right:
            flows.append(list(right))
        left.clear()
        right.clear()

    full: set[int] = set()  # the flows of full-width lines
    across = _table_rows(cells, gutter)
    for k, (line, spans) in enumerate(zip(lines, pieces, strict=True)):
        if k in across or any(a < gutter - 1 and b > gutter + 1 for a, b in spans):
            close()
            if flows and len(flows) - 1 in full:
                flows[-1].append(line)
            else:
                full.add(len(flows))
                flows.append([line])
            continue
        if all(seg.x1 <= gutter + 1 for seg in line.segments):
            left.append(line)  # wholly on one side: the line as it is
            continue
        if all(seg.x0 > gutter - 1 and seg.runs[0].x1 > gutter + 1 for seg in line.segments):
            right.append(line)
            continue
        runs = [run for seg in line.segments for run in seg.runs]
        for side, keep in (
            (left, lambda r: r.x1 <= gutter + 1),
            (right, lambda r: r.x1 > gutter + 1),
        ):
            part = build_line([r for r in runs if keep(r)], layer)
            if part is not None:
                side.append(part)
    close()
    if depth >= 1:
        return flows
    out: list[list[Line]] = []
    for k, flow in enumerate(flows):
        out.extend([flow] if k in full else split_columns(flow, width, depth + 1, layer))
    return out


def _table_rows(pieces: list[list[tuple[float, float]]], gutter: float) -> set[int]:
    """The lines of a wide table over or under two columns of text, which the gutter would cut:
    runs of three lines or more that set two cells or more on each side of it, with a line
    between two of them (a group's label, a header cell over some columns) taken with them."""
    cut = [
        sum(b <= gutter for _, b in spans) >= 2 and sum(a >= gutter for a, _ in spans) >= 2
        for spans in pieces
    ]
    marked = [
        cut[k] or (0 < k < len(cut) - 1 and cut[k - 1] and cut[k + 1]) for k in range(len(cut))
    ]
    rows: set[int] = set()
    k = 0
    while k < len(marked):
        j = k
        while j < len(marked) and marked[j]:
            j += 1
        if j - k >= 3:
            rows.update(range(k, j))
        k = j + 1 if j == k else j
    return rows


def _cells(line: Line) -> list[tuple[float, float]]:
    """The line's stretches as a table's cells would be: a list marker or an item's number set
    apart from its text ("24.", a box to tick) is one with it, not a cell of its own."""
    spans: list[list[float]] = []
    marker = False  # the last stretch is a marker alone so far
    for seg in line.segments:
        for run in seg.runs:
            gap = run.x0 - spans[-1][1] if spans else 0.0
            if spans and (gap < 0.5 * run.size or (marker and gap < 3 * run.size)):
                spans[-1][1] = max(spans[-1][1], run.x1)
                marker = False
            else:
                spans.append([run.x0, run.x1])
                marker = LIST_MARKER.match(run.text.strip()) is not None
    return [(a, b) for a, b in spans]


def _pieces(line: Line) -> list[tuple[float, float]]:
    """The line's stretches of text, parted at gaps of half its font size or more."""
    spans: list[list[float]] = []
    for seg in line.segments:
        for run in seg.runs:
            if spans and run.x0 - spans[-1][1] < 0.5 * run.size:
                spans[-1][1] = max(spans[-1][1], run.x1)
            else:
                spans.append([run.x0, run.x1])
    return [(a, b) for a, b in spans]


def find_gutter(
    pieces: list[list[tuple[float, float]]], region: tuple[float, float]
) -> float | None:
    if len(pieces) < 10:
        return None
    best: tuple[bool, int, float, float] | None = None
    start, width = region[0], region[1] - region[0]
    step = max(2.0, 0.4 * width / 200)  # at most about 200 positions tried
    middle = start + width / 2
    first = start + 0.3 * width
    count = int(0.4 * width / step) + 1
    # how many lines cross each position, counted from each stretch's span at once; a position
    # ten lines do not sit beside is no gutter, and is not looked at line by line
    crossed = [0] * (count + 1)
    for spans in pieces:
        for a, b in spans:
            lo = max(0, math.floor((a + 1 - first) / step) + 1)
            hi = min(count - 1, math.ceil((b - 1 - first) / step) - 1)
            if lo <= hi:
                crossed[lo] += 1
                crossed[hi + 1] -= 1
    running = 0
    for k in range(count):
        running += crossed[k]
        if len(pieces) - running < 10:
            continue
        x = first + k * step
        ok, crossing = _crossing(pieces, x)
        score = (not ok, crossing, abs(x - middle))
        if best is None or score < best[:3]:
            best = (*score, x)
    if best is None or best[0]:
        return None
    gutter = best[3]
    inner = [
        spans for spans in pieces if not any(a < gutter - 1 and b > gutter + 1 for a, b in spans)
    ]
    # the middle of the empty band around the best position
    ends = [b for spans in inner for a, b in spans if b <= gutter]
    starts = [a for spans in inner for a, b in spans if a >= gutter]
    if len(ends) < 5 or len(starts) < 5:
        return None
    gutter = (max(ends) + min(starts)) / 2 if max(ends) < min(starts) else gutter
    left = [(a, b) for spans in inner for a, b in spans if b <= gutter]
    right = [(a, b) for spans in inner for a, b in spans if a >= gutter]
    # each side's text fills its column: its lines mostly run from its left edge to near its end
    left_lines = [
        max(b for a, b in spans if b <= gutter) - min(a for a, b in spans if b <= gutter)
        for spans in inner
        if any(b <= gutter for a, b in spans)
    ]
    right_lines = [
        max(b for a, b in spans if a >= gutter) - min(a for a, b in spans if a >= gutter)
        for spans in inner
        if any(a >= gutter for a, b in spans)
    ]
    # measured up to the gutter, so the short cells of a table's columns are no text columns
    left_fill = statistics.median(left_lines) / max(gutter - _start(left), 1.0)
    right_fill = statistics.median(right_lines) / max(_end(right) - gutter, 1.0)
    if left_fill >= 0.6 and right_fill >= 0.6:
        return gutter
    # two pages set side by side (a spread) need not fill: their gutter is a fifth of the width
    # (their lines fall where they may, where a table's cells share their rows' baselines)
    band = min(starts) - max(ends)
    paired = sum(
        1
        for spans in inner
        if any(b <= gutter for _, b in spans) and any(a >= gutter for a, _ in spans)
    )
    if (
        band >= 0.2 * width
        and len(left_lines) >= 10
        and len(right_lines) >= 10
        and paired * 5 <= 3 * len(inner)
    ):
        return gutter
    return None


def _table_gutter(cells: list[list[tuple[float, float]]], gutter: float) -> bool:
    """Whether the gap is one between a wide table's columns, not a gutter between columns of
    text: most lines with text on both sides of it set two cells or more on each side (a
    table's row, cut in two). A text column's lines, even beside a table in the other column,
    are one stretch on their side; and lines of prose side by side (one stretch each side,
    filling half of it) say the page has text columns, whatever a table over them does."""
    inner = [
        spans for spans in cells if not any(a < gutter - 1 and b > gutter + 1 for a, b in spans)
    ]
    lefts = [[(a, b) for a, b in spans if b <= gutter] for spans in inner]
    rights = [[(a, b) for a, b in spans if a >= gutter] for spans in inner]
    both = [(lt, rt) for lt, rt in zip(lefts, rights, strict=True) if lt and rt]
    if len(both) < 5:
        return False
    left_width = gutter - min(lt[0][0] for lt, _ in both)
    right_width = max(rt[-1][1] for _, rt in both) - gutter
    cut_rows = sum(len(lt) >= 2 and len(rt) >= 2 for lt, rt in both)
    prose = sum(
        len(lt) == 1
        and len(rt) == 1
        and lt[0][1] - lt[0][0] >= 0.5 * left_width
        and rt[0][1] - rt[0][0] >= 0.5 * right_width
        for lt, rt in both
    )
    return cut_rows * 2 > len(both) and prose < 3


def _crosses(spans: list[tuple[float, float]], x: float) -> bool:
    """Whether a line's stretches (in order, apart) cross x: the last one starting before it
    runs past it (a search, so a line of many stretches costs little)."""
    k = bisect.bisect_left(spans, (x - 1, float("-inf"))) - 1
    return k >= 0 and spans[k][1] > x + 1


def _crossing(pieces: list[list[tuple[float, float]]], x: float) -> tuple[bool, int]:
    """Whether x can be a gutter as far as the lines crossing it go, and how many cross it. Lines
    above and below two columns (a title, an abstract, a footnote) do not count against it: it
    holds when at most a twentieth of the stretch from the first to the last line beside it
    crosses it, or when a run of lines beside it, none crossing, holds half the page's lines."""
    crosses = [_crosses(spans, x) for spans in pieces]
    beside = [k for k, crossed in enumerate(crosses) if not crossed]
    if not beside:
        return False, len(pieces)
    first, last = beside[0], beside[-1]
    crossing = sum(crosses[first : last + 1])
    longest = run = 0
    for crossed in crosses:
        run = 0 if crossed else run + 1
        longest = max(longest, run)
    ok = crossing * 20 <= last - first + 1 or longest * 2 >= len(pieces)
    return ok, crossing


def _start(spans: list[tuple[float, float]]) -> float:
    """Where most of a column's lines start (a page number out in the margin does not count)."""
    starts = sorted(a for a, _ in spans)
    return starts[int(0.1 * (len(starts) - 1))]


def _end(spans: list[tuple[float, float]]) -> float:
    ends = sorted(b for _, b in spans)
    return ends[int(0.9 * (len(ends) - 1))]


def with_tables(
    items: list[Item],
    kind: Callable[[Line], str | None],
    dropped: list[Line] | None = None,
    charts: list[Rule] | None = None,
) -> list[Item]:
    """The page's items with the borderless tables of each flow's stretches of lines read, and
    its furniture left out: `kind` says whether a line is furniture ("furniture", or "number" for
    a page number alone). A candidate at either end of a table is one of its rows only when it
    fills every column (a header repeated on each page), or, at the top, every column but the
    first (a header over a column of row names); a page number alone never is."""
    out: list[Item] = []
    k = 0
    while k < len(items):
        item = items[k]
        if item.line is None or item.orientation:
            out.append(item)
            k += 1
            continue
        j = k
        while (
            j < len(items)
            and items[j].line is not None
            and not items[j].orientation
            and items[j].flow == item.flow
        ):
            j += 1
        lines = [it.line for it in items[k:j] if it.line is not None]
        out.extend(
            _stretch_items(
                lines, item.flow, kind, dropped if dropped is not None else [], charts or []
            )
        )
        k = j
    return out


def _stretch_items(
    lines: list[Line],
    flow: int,
    kind: Callable[[Line], str | None],
    dropped_out: list[Line],
    charts: list[Rule],
) -> list[Item]:
    prose: list[tuple[int, int, list[float]]] = []
    tables = borderless_tables(lines, charts, prose)
    held: set[int] = set()  # the lines a table holds as its rows
    for first, last, table in tables:
        held.update(id(line) for line in lines[first : last + 1])
        for end, row, top in ((first, table.rows[0], True), (last, table.rows[-1], False)):
            what = kind(lines[end])
            fills = all(row) or (top and all(row[1:]))
            if what == "number" or (what == "furniture" and not fills):
                held.discard(id(lines[end]))
    dropped = {id(line) for line in lines if kind(line) and id(line) not in held}
    if dropped:
        dropped_out.extend(line for line in lines if id(line) in dropped)
        lines = [line for line in lines if id(line) not in dropped]
        prose = []
        tables = borderless_tables(lines, charts, prose)
    for first, last, cuts in reversed(prose):
        lines[first : last + 1] = _column_by_column(lines[first : last + 1], cuts)
    items: list[Item] = []
    i = 0
    for first, last, table in tables:
        items.extend(Item(line=line, flow=flow) for line in lines[i:first])
        items.append(Item(table=table, flow=flow))
        i = last + 1
    items.extend(Item(line=line, flow=flow) for line in lines[i:])
    return items


def _column_by_column(lines: list[Line], cuts: list[float]) -> list[Line]:
    """Lines of prose set in columns side by side (too few for a page's gutter), read a column
    at a time: each line's part in the first column, then in the next, parted at `cuts`."""
    columns: list[list[Line]] = [[] for _ in range(len(cuts) + 1)]
    for line in lines:
        parts: list[list[Run]] = [[] for _ in columns]
        for seg in line.segments:
            for run in seg.runs:
                parts[bisect.bisect_left(cuts, (run.x0 + run.x1) / 2)].append(run)
        for column, runs in zip(columns, parts, strict=True):
            part = build_line(runs)
            if part is not None:
                column.append(part)
    return [line for column in columns for line in column]


def _place_tables(items: list[Item], tables: list[Table]) -> None:
    """Each ruled table goes before the first line below its top that it sits over (in its
    column), or else before the first line below its top."""
    for table in sorted(tables, key=lambda t: -t.top):
        below = [
            (k, item.line)
            for k, item in enumerate(items)
            if item.line is not None and item.line.y < table.top
        ]
        beside = [k for k, line in below if line.x0 <= table.x1 and line.x1 >= table.x0]
        at = (beside or [k for k, _ in below] or [len(items)])[0]
        flow = items[at].flow if at < len(items) else (items[-1].flow if items else 0)
        items.insert(at, Item(table=table, flow=flow))
