"""One page's reading: its runs turned upright, its tables, its columns, its lines in order.

The result is a list of items in reading order: lines (kept whole, so the document can find its
furniture, its paragraph spacing and its outline's titles) and tables. Text in another direction
than the page's own is kept as lines of its own after the page's (`orientation`).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from extractor_sandbox.formats.pdf.content import Drawing, Rule
from extractor_sandbox.formats.pdf.grids import Table, borderless_tables, ruled_tables
from extractor_sandbox.formats.pdf.lines import (
    Line,
    Segment,
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


def read_page(number: int, drawing: Drawing) -> PageReading:
    runs = [r for r in drawing.runs if r.text.strip()]
    angle = main_angle(runs)
    width, height = turned_size(angle, drawing.width, drawing.height)
    reading = PageReading(number, width, height)
    main = drop_duplicates(
        turn([r for r in runs if r.angle == angle], angle, drawing.width, drawing.height)
    )
    reading.layer_lines = _layer(main)
    rules = _turn_rules(drawing.rules, angle, drawing.width, drawing.height)
    tables, rest = ruled_tables(rules, main)
    lines = build_lines(rest)
    if len(lines) > MAX_LINES:
        raise LayoutUnreadable(f"it holds more than {MAX_LINES:,} lines")
    flows = split_columns(lines, width)
    items: list[Item] = []
    for index, flow in enumerate(flows):
        items.extend(_flow_items(flow, index))
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


def split_columns(lines: list[Line], width: float) -> list[list[Line]]:
    """Flows of lines in reading order: full-width stretches, and a two-column stretch's left
    column before its right, split at a gutter at most a twentieth of the lines cross."""
    gutter = find_gutter(lines, width)
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
    for line in lines:
        if any(s.x0 < gutter - 1 < gutter + 1 < s.x1 for s in line.segments):
            close()
            if flows and len(flows) - 1 in full:
                flows[-1].append(line)
            else:
                full.add(len(flows))
                flows.append([line])
            continue
        lsegs = [s for s in line.segments if s.x1 <= gutter]
        rsegs = [s for s in line.segments if s.x0 >= gutter]
        if lsegs:
            left.append(_part(line, lsegs))
        if rsegs:
            right.append(_part(line, rsegs))
    close()
    return flows


def _part(line: Line, segs: list[Segment]) -> Line:
    return Line(segs, line.y, line.size)


def find_gutter(lines: list[Line], width: float) -> float | None:
    if len(lines) < 10:
        return None
    best: tuple[int, float, float] | None = None
    step = 2.0
    x = 0.3 * width
    while x <= 0.7 * width:
        crossing = sum(1 for ln in lines if any(s.x0 < x - 1 and s.x1 > x + 1 for s in ln.segments))
        score = (crossing, abs(x - width / 2))
        if best is None or score < best[:2]:
            best = (crossing, abs(x - width / 2), x)
        x += step
    if best is None:
        return None
    crossing, _, gutter = best
    if crossing * 20 > len(lines):
        return None
    # widen to the middle of the empty band around the best position
    lo = hi = gutter
    while lo - step > 0 and not any(
        s.x0 < lo - step - 1 and s.x1 > lo - step + 1
        for ln in lines
        for s in ln.segments
        if not any(t.x0 < gutter - 1 and t.x1 > gutter + 1 for t in ln.segments)
    ):
        lo -= step
    while hi + step < width and not any(
        s.x0 < hi + step - 1 and s.x1 > hi + step + 1
        for ln in lines
        for s in ln.segments
        if not any(t.x0 < gutter - 1 and t.x1 > gutter + 1 for t in ln.segments)
    ):
        hi += step
    gutter = (lo + hi) / 2
    left = [s for ln in lines for s in ln.segments if s.x1 <= gutter]
    right = [s for ln in lines for s in ln.segments if s.x0 >= gutter]
    if len(left) < 5 or len(right) < 5:
        return None
    # each side's text fills its column: its lines mostly run from its left edge to near its end
    left_edge = min(s.x0 for s in left)
    right_end = max(s.x1 for s in right)
    left_fill = statistics.median(s.x1 - s.x0 for s in left) / max(gutter - left_edge, 1.0)
    right_fill = statistics.median(s.x1 - s.x0 for s in right) / max(right_end - gutter, 1.0)
    if left_fill < 0.6 or right_fill < 0.6:
        return None
    return gutter


def _flow_items(flow: list[Line], index: int) -> list[Item]:
    items: list[Item] = []
    tables = borderless_tables(flow)
    i = 0
    for first, last, table in tables:
        items.extend(Item(line=line, flow=index) for line in flow[i:first])
        items.append(Item(table=table, flow=index))
        i = last + 1
    items.extend(Item(line=line, flow=index) for line in flow[i:])
    return items


def _place_tables(items: list[Item], tables: list[Table]) -> None:
    """Each ruled table goes before the first line of its flow below its top."""
    for table in sorted(tables, key=lambda t: -t.top):
        mid = (table.x0 + table.x1) / 2
        below = [
            k for k, item in enumerate(items) if item.line is not None and item.line.y < table.top
        ]
        beside = [
            k
            for k in below
            if items[k].line.x0 <= table.x1 and items[k].line.x1 >= table.x0  # type: ignore[union-attr]
        ]
        at = (beside or below or [len(items)])[0]
        del mid
        flow = items[at].flow if at < len(items) else (items[-1].flow if items else 0)
        items.insert(at, Item(table=table, flow=flow))
