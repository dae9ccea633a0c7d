"""From runs to lines: the page turned to read left to right, duplicates dropped, runs on one
baseline made a line, and a line cut into segments at a gap wider than its font size.

Inside a segment, a gap wider than SPACE_GAP of the font size is a space; on a line drawn a letter
a run (a letter-spaced heading, a page printed glyph by glyph) it must be that much wider than the
line's own letter spacing, the median gap between its one-letter runs."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from extractor_sandbox.formats.pdf.content import Run

SPACE_GAP = 0.15  # a gap wider than this share of the font size is a space between words
# A line drawn a letter a run (a letter-spaced heading, a page printed glyph by glyph): at least
# this many gaps between two one-letter runs, and they are most of the line's gaps.
LETTER_RUNS = 3
MAX_TRACKING = 0.5  # letter spacing wider than this share of the font size is letters apart
MIN_TRACKING = 0.05  # letter gaps narrower than this share of the font size are a position's noise
DUPLICATE_SLACK = 1.5  # a run drawn again within this many points is the same run (a faked bold)


@dataclass(slots=True)
class Segment:
    text: str
    x0: float
    x1: float
    y: float
    size: float
    bold: bool
    mono: bool
    runs: list[Run] = field(default_factory=list)


@dataclass(slots=True)
class Line:
    segments: list[Segment]
    y: float
    size: float

    @property
    def x0(self) -> float:
        return self.segments[0].x0

    @property
    def x1(self) -> float:
        return self.segments[-1].x1

    @property
    def text(self) -> str:
        return " ".join(s.text for s in self.segments)

    @property
    def bold(self) -> bool:
        return all(s.bold for s in self.segments)

    @property
    def mono(self) -> bool:
        return all(s.mono for s in self.segments)


def main_angle(runs: list[Run]) -> int:
    """The direction most of the page's characters read in."""
    weights: Counter[int] = Counter()
    for run in runs:
        weights[run.angle] += len(run.text)
    return weights.most_common(1)[0][0] if weights else 0


def turn(runs: list[Run], angle: int, width: float, height: float) -> list[Run]:
    """The runs with the page turned by -angle, so text in that direction reads left to right;
    coordinates are shifted so the turned page starts at (0, 0)."""
    if angle == 0:
        return [_normalised(run) for run in runs]
    radians = math.radians(-angle)
    cos, sin = round(math.cos(radians)), round(math.sin(radians))
    corners = [(0.0, 0.0), (width, 0.0), (0.0, height), (width, height)]
    turned = [(x * cos - y * sin, x * sin + y * cos) for x, y in corners]
    dx = -min(p[0] for p in turned)
    dy = -min(p[1] for p in turned)
    out = []
    for run in runs:
        x0 = run.x0 * cos - run.y0 * sin + dx
        y0 = run.x0 * sin + run.y0 * cos + dy
        x1 = run.x1 * cos - run.y1 * sin + dx
        y1 = run.x1 * sin + run.y1 * cos + dy
        out.append(
            _normalised(
                Run(
                    run.text,
                    x0,
                    y0,
                    x1,
                    y1,
                    run.size,
                    run.font,
                    run.bold,
                    run.mono,
                    0,
                    run.order,
                    run.visual,
                )
            )
        )
    return out


def turned_size(angle: int, width: float, height: float) -> tuple[float, float]:
    return (height, width) if angle in (90, 270) else (width, height)


def _normalised(run: Run) -> Run:
    if run.x1 < run.x0:  # drawn right to left (a mirrored matrix): keep its extent
        run.x0, run.x1 = run.x1, run.x0
    return run


def drop_duplicates(runs: list[Run]) -> list[Run]:
    """A run drawn twice in place (a faked bold, a shadow) is read once, and marked bold."""
    kept: list[Run] = []
    seen: dict[tuple[str, int, int], list[Run]] = {}
    for run in runs:
        key = (run.text, int(run.y0 // 4), int(run.x0 // 4))
        found = None
        for dx in (-1, 0, 1):
            for dy in (-1, 0, 1):
                for other in seen.get((run.text, key[1] + dy, key[2] + dx), ()):
                    # drawn again over itself: a narrow glyph repeated beside itself is two glyphs
                    slack = min(DUPLICATE_SLACK, 0.3 * abs(run.x1 - run.x0))
                    if (
                        abs(other.x0 - run.x0) <= slack
                        and abs(other.y0 - run.y0) <= DUPLICATE_SLACK
                    ):
                        found = other
                        break
        if found is not None:
            if run.text.strip():
                found.bold = True if (found.x0 != run.x0 or found.y0 != run.y0) else found.bold
            continue
        seen.setdefault(key, []).append(run)
        kept.append(run)
    return kept


class TextLayer:
    """The words of a page's text layer (pypdf's extract_text), read only when a line needs them:
    when two runs of different text operators are set together with no space between them."""

    def __init__(self, read: Callable[[], str]) -> None:
        self._read = read
        self._words: set[str] | None = None

    def words(self) -> set[str]:
        if self._words is None:
            try:
                text = self._read()
            except Exception:  # no text layer to ask: the geometry stands
                text = ""
            self._words = set(WORD.findall(text.casefold()))
        return self._words

    def parts(self, left: str, right: str) -> bool:
        """Whether the word `left` and `right` would make is two words: it is not in the text
        layer and both of its parts are."""
        tail = WORD_END.search(left.casefold())
        head = WORD_START.match(right.casefold())
        if tail is None or head is None:
            return False
        words = self.words()
        a, b = tail.group(), head.group()
        return a + b not in words and a in words and b in words


WORD = re.compile(r"\w+")
WORD_END = re.compile(r"\w+$")
WORD_START = re.compile(r"\w+")


def build_lines(runs: list[Run], layer: TextLayer | None = None) -> list[Line]:
    """Runs on one baseline as lines, top to bottom, each cut into segments."""
    ordered = sorted(runs, key=lambda r: (-r.y0, r.x0))
    groups: list[list[Run]] = []
    for run in ordered:
        if not run.text.strip() and not groups:
            continue
        if groups:
            last = groups[-1]
            anchor = last[0]
            if abs(anchor.y0 - run.y0) <= 0.3 * min(anchor.size, run.size):
                last.append(run)
                continue
        groups.append([run])
    lines = []
    for group in groups:
        line = _line(group, layer)
        if line is not None:
            lines.append(line)
    return lines


def build_line(group: list[Run], layer: TextLayer | None = None) -> Line | None:
    """Runs on one baseline as a line (None when they show no text)."""
    return _line(list(group), layer) if group else None


def letter_spacing(group: list[Run]) -> float | None:
    """The gap a line drawn a letter a run leaves between the letters of a word (its tracking):
    the median gap between neighbouring one-letter runs. None when the line is not
    drawn that way (fewer than LETTER_RUNS such gaps, or fewer than half of its gaps). Zero when
    the gaps are under MIN_TRACKING font sizes (positions rounded glyph by glyph, not tracking),
    None as well when the letters stand further apart than MAX_TRACKING font sizes (letters set
    apart on purpose, in cells or as single-letter words). `group` is sorted left to right."""
    pairs = 0
    letter_gaps: list[float] = []
    for prev, run in zip(group, group[1:], strict=False):
        if not prev.text.strip() or not run.text.strip():
            continue  # a drawn space parts words whatever the gaps
        pairs += 1
        if len(prev.text) == len(run.text) == 1 and (prev.text + run.text).isalpha():
            letter_gaps.append(run.x0 - prev.x1)
    if len(letter_gaps) < LETTER_RUNS or 2 * len(letter_gaps) < pairs:
        return None
    letter_gaps.sort()
    tracking = letter_gaps[len(letter_gaps) // 2]
    size = min(r.size for r in group)
    if tracking < MIN_TRACKING * size:
        return 0.0
    return tracking if tracking <= MAX_TRACKING * size else None


def _line(group: list[Run], layer: TextLayer | None = None) -> Line | None:
    group.sort(key=lambda r: r.x0)
    rtl = right_to_left("".join(r.text for r in group))
    # On a line drawn a letter a run, where one run ends says nothing of where a word does: a
    # space is a gap wider than the line's own letter spacing by SPACE_GAP, and the text layer's
    # words (whose one-letter words would part every letter) are not asked.
    tracking = letter_spacing(group)
    if tracking is not None:
        layer = None
    segments: list[Segment] = []
    current: list[Run] = []
    parts: list[str] = []
    for run in group:
        if current:
            prev = current[-1]
            gap = run.x0 - max(r.x1 for r in current)
            size = max(prev.size, run.size)
            if gap > size:
                segments.append(_segment(current, parts))
                current, parts = [], []
            elif not (parts[-1].endswith(" ") or run.text.startswith(" ")) and (
                gap > SPACE_GAP * min(prev.size, run.size) + (tracking or 0.0)
                or (
                    layer is not None
                    and not rtl
                    and run.op != prev.op
                    and layer.parts(parts[-1], run.text)
                )
            ):
                parts.append(" ")
        current.append(run)
        parts.append(run.visual if rtl and run.visual is not None else run.text)
    if current:
        segments.append(_segment(current, parts))
    segments = [s for s in segments if s.text]
    if not segments:
        return None
    if rtl:
        segments.reverse()
        for seg in segments:
            seg.text = logical_order(seg.text)
    weights: Counter[float] = Counter()
    for seg in segments:
        weights[seg.size] += len(seg.text)
    y = Counter(round(r.y0, 1) for r in group).most_common(1)[0][0]
    return Line(segments, y, weights.most_common(1)[0][0])


_RTL = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
_LTR_RUN = re.compile(r"[A-Za-z0-9\u00c0-\u024f]+(?:[.,:/_+-][A-Za-z0-9\u00c0-\u024f]+)*")


_SCRIPT_CHANGE = re.compile(
    "(?<=[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff])(?=[A-Za-z])"
    "|(?<=[A-Za-z])(?=[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff])"
)


def right_to_left(text: str) -> bool:
    """A line mostly in a right-to-left script (Arabic, Hebrew) is drawn in visual order."""
    rtl = len(_RTL.findall(text))
    return rtl > 0 and rtl * 2 > sum(1 for c in text if c.isalpha())


def logical_order(text: str) -> str:
    """Visual order (left to right as drawn) to reading order for a right-to-left line: the
    text reversed, its left-to-right stretches (Latin words, numbers) put back as written."""
    flipped = text[::-1]
    flipped = _LTR_RUN.sub(lambda m: m.group()[::-1], flipped)
    pairs = str.maketrans("()[]{}<>", ")(][}{><")
    # a Latin word set against a right-to-left letter (the conjunction و before "Python") is a
    # word of its own, so a search for it finds it
    return _SCRIPT_CHANGE.sub(" ", flipped.translate(pairs))


def _segment(runs: list[Run], parts: list[str]) -> Segment:
    joined = "".join(parts)
    text = " ".join(joined.split())
    if text and all(run.mono for run in runs):
        # code keeps the indentation its line draws as spaces
        text = " " * (len(joined) - len(joined.lstrip(" "))) + text
    if len(runs) == 1:  # the common case, without counting
        run = runs[0]
        has_text = bool(run.text.strip())
        return Segment(
            text,
            run.x0,
            run.x1,
            run.y0,
            round(run.size * 2) / 2,
            has_text and run.bold,
            has_text and run.mono,
            [run],
        )
    sizes: Counter[float] = Counter()
    bold_chars = mono_chars = chars = 0
    for run in runs:
        n = len(run.text.strip()) or 0
        sizes[round(run.size * 2) / 2] += max(n, 1)
        chars += n
        bold_chars += n if run.bold else 0
        mono_chars += n if run.mono else 0
    return Segment(
        text,
        min(r.x0 for r in runs),
        max(r.x1 for r in runs),
        runs[0].y0,
        sizes.most_common(1)[0][0],
        chars > 0 and bold_chars * 2 > chars,
        chars > 0 and mono_chars == chars,
        list(runs),
    )
