"""A page's lines made blocks: paragraphs, list items, code and headings, by the document's own
measures (the body size, the usual line spacing for each size).

A heading is a short block set larger than the body, or bold at the body's size (when the body
itself is not set bold, nine in ten of a thousand characters or more: a form set bold throughout
has no bold headings), that ends no sentence (or is numbered); or a numbered section's title
alone on its line in the body's own face ("3.2 Results"); or a contents page's title
("Contents", "Table of contents") in any face, ranked with the first numbered level. Not a heading: a bold title that runs on into its paragraph's
text, text across the page's direction (a margin stamp), a line of authors' names parted by
commas, a block that ends one sentence and begins another or ends in a web address, bold lines
over a table's columns (its header lines), a contents page's entry (its page's number set apart
or led to by dots)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from extractor_sandbox.formats.pdf.grids import CAPTION, Table
from extractor_sandbox.formats.pdf.lines import Line
from extractor_sandbox.formats.pdf.page import Item

LIST_START = re.compile(r"^(?:[^\w\s\"'(\[{]\s+|\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.)]\s+)")
# a section number: 2, 2.1, 3.2.1, or an appendix's A.1, B.2.3 (a lone letter is too often a word)
NUMBERED = re.compile(r"^((?:\d{1,3}|[A-Z](?=\.\d))(?:\.\d{1,3})*)\.?\s+\S")
LIST_NUMBER = re.compile(r"^\(?\d{1,3}[.)]\s+\S")
# a line that is a numbered section's title: two levels or more (3.2, A.1), a capital after them,
# no sentence end and no page number at its end (a contents line)
SECTION_TITLE = re.compile(r"^(?:\d{1,2}|[A-Z])(?:\.\d{1,2})+\.?\s+[A-Z][^.!?:;,]*[^\W\d]\.?$")
NAME = re.compile(r"^(?:[A-Z][\w'.-]*\s?){1,4}\s*[*†‡\d]*$")
# a sentence ended inside the block, another begun: prose ("...subpopulations? If so, ..."),
# where a title's abbreviation ("U.S. Policy", "vs. Baseline") ends no word of three letters
INNER_SENTENCE = re.compile(r"[a-z]{3}[\"'”’)]?[.?!][\"'”’)]?\s+[A-Z]")
SENTENCE_END = re.compile(r"[.!?:;,]$")
# a block that ends in a web address points somewhere ("... is available from: http://..."): a
# sentence, not a title
WEB_END = re.compile(r"(?:https?://|www\.)\S+$")
CONTENTS = re.compile(r"^(?:table\s+of\s+)?contents$", re.I)
# a page's number a contents entry ends in: in figures or in roman numerals (a preface's "xii")
PAGE_REF = re.compile(r"^(?:\d{1,4}|(?=[ivxlc])c{0,3}(?:x[cl]|l?x{0,3})(?:i[xv]|v?i{0,3}))$", re.I)
DOT_LEADER = re.compile(r"(?:\.\s?){3,}\s*\S+$")  # dots leading an entry's title to its page
SENTENCE_STOP = re.compile(r"[.!?:][\"'”’)]?$")
HEADING_RATIO = 1.12
# A page read with OCR: Tesseract reads whole points, so a heading is a step of 8%, and sizes under
# 6 points (a finely shown image's) are told apart at a tenth of a point rather than a half.
OCR_HEADING_RATIO = 1.08
OCR_FINE_BELOW = 6.0
BOLD_RATIO = 0.95
BOLD_BODY_CHARS = 1_000  # a body set bold is read from this many characters at its size or more
SPACING_SLACK = 1.3


@dataclass
class Block:
    kind: str  # paragraph, list, code, heading, table
    page: int
    lines: list[Line] = field(default_factory=list)
    text: str = ""
    size: float = 0.0
    bold: bool = False
    depth: int = 0
    table: Table | None = None
    attrs: dict[str, Any] = field(default_factory=dict)
    last_page: int = 0

    def __post_init__(self) -> None:
        self.last_page = self.last_page or self.page


@dataclass
class Measures:
    body: float
    spacing: dict[float, float]
    # the body text is set bold (most of the characters at the body size): bold sets no line
    # apart from it, so a form's bold labels over their values are no headings
    body_bold: bool = False

    def spacing_of(self, size: float) -> float:
        return self.spacing.get(size_key(size), 1.2 * size)

    def gap_limit(self, size: float) -> float:
        return SPACING_SLACK * self.spacing_of(size)


def size_key(size: float, ocr: bool = False) -> float:
    """A size as sizes are compared: to half a point, or on a page read with OCR, under 6 points,
    to a tenth."""
    if ocr and size < OCR_FINE_BELOW:
        return round(size * 10) / 10
    return round(size * 2) / 2


def measures(pages: list[list[Item]], ocr: list[bool] | None = None) -> Measures:
    sizes: Counter[float] = Counter()
    bold: Counter[float] = Counter()  # the characters set bold, by size
    gaps: dict[float, Counter[float]] = {}
    for index, items in enumerate(pages):
        fine = bool(ocr and ocr[index])
        prev: Item | None = None
        for item in items:
            if item.line is None:
                prev = None
                continue
            line = item.line
            key = size_key(line.size, fine)
            sizes[key] += sum(len(s.text) for s in line.segments)
            bold[key] += sum(len(s.text) for s in line.segments if s.bold)
            if prev is not None and prev.line is not None and prev.flow == item.flow:
                if size_key(prev.line.size, fine) == key:
                    gap = round((prev.line.y - line.y) * 2) / 2
                    if 0 < gap < 3 * line.size:
                        gaps.setdefault(key, Counter())[gap] += 1
            prev = item
    body = sizes.most_common(1)[0][0] if sizes else 10.0
    spacing = {size: counter.most_common(1)[0][0] for size, counter in gaps.items()}
    # the body is set bold when nine in ten of its characters are, over a body of some length: a
    # page of tables whose only lines outside them are a few bold titles has no bold body
    body_bold = sizes[body] >= BOLD_BODY_CHARS and 10 * bold[body] >= 9 * sizes[body]
    return Measures(body, spacing, body_bold=body_bold)


def page_blocks(number: int, items: list[Item], m: Measures, *, ocr: bool = False) -> list[Block]:
    blocks: list[Block] = []
    current: Block | None = None
    prev: Item | None = None
    for item in items:
        if item.table is not None:
            current = None
            blocks.append(Block("table", number, table=item.table))
            prev = None
            continue
        line = item.line
        assert line is not None
        if item.orientation:
            blocks.append(
                Block("paragraph", number, [line], attrs={"orientation": item.orientation})
            )
            current = None
            prev = None
            continue
        if current is not None and prev is not None and _continues(current, prev, item, m, ocr):
            current.lines.append(line)
        else:
            current = Block(_kind(line), number, [line])
            blocks.append(current)
        prev = item
    for block in blocks:
        if block.kind != "table":
            _finish(block, m, ocr)
    _table_headers(blocks, m)
    return _run_on(blocks, m, ocr)


def _table_headers(blocks: list[Block], m: Measures) -> None:
    """Bold lines at the body's own size (not numbered) set over a table, inside its width and
    no further above it, or above such a line, than two lines' spacing, are the header lines of
    its columns that the table left out, not headings, when they read as cells: a line cut into
    segments, two such lines on one baseline ("Method" and "Dataset: QQP 50K"), or a line over
    the table's inner columns, clear of both its edges ("Number of Parameters" over "GPT2
    Medium", "GPT2 Large"). A caption ("Table 6.1: ..."), and a title starting at the table's
    edge or centred over it, stay what they were."""
    for k, block in enumerate(blocks):
        table = block.table
        if table is None:
            continue
        floor = table.top
        over: list[Block] = []
        for above in reversed(blocks[:k]):
            if above.kind != "heading" or size_key(above.size) != size_key(m.body):
                break
            line = above.lines[-1]
            if (
                above.text[:1].isdigit()  # a section's number, however it is punctuated ("2-5-")
                or NUMBERED.match(above.text)
                or CAPTION.match(above.text)
                or min(ln.x0 for ln in above.lines) < table.x0 - line.size
                or max(ln.x1 for ln in above.lines) > table.x1 + line.size
                or not -0.5 * line.size <= line.y - floor <= 2 * m.spacing_of(line.size)
            ):
                break
            over.append(above)
            floor = line.y
        for above in over:
            line = above.lines[-1]
            beside = any(
                other is not above and abs(other.lines[-1].y - line.y) <= 0.3 * line.size
                for other in over
            )
            x0, x1 = min(ln.x0 for ln in above.lines), max(ln.x1 for ln in above.lines)
            inner = (
                x0 > table.x0 + line.size
                and x1 < table.x1 - line.size
                and abs((x0 + x1) - (table.x0 + table.x1)) > 2 * line.size  # not its centred title
            )
            if beside or inner or any(len(ln.segments) > 1 for ln in above.lines):
                above.kind = "paragraph"


def _run_on(blocks: list[Block], m: Measures, ocr: bool) -> list[Block]:
    """A heading whose line runs to the next block's right edge (or, a line of several words, so
    near it that the block's first word would not have fit after it), under which that block
    goes on in lower case, is its paragraph's first line (a question set bold whose second line
    is not): the two are one paragraph."""
    out: list[Block] = []
    for block in blocks:
        top = out[-1] if out else None
        if (
            top is not None
            and top.kind == "heading"
            and block.kind == "paragraph"
            and block.text[:1].islower()
            and _runs_to_edge(top.lines[-1], block, block.size)
            and 0 < top.lines[-1].y - block.lines[0].y <= m.gap_limit(block.lines[0].size)
        ):
            block.lines = top.lines + block.lines
            _finish(block, m, ocr)
            block.kind = "paragraph"
            out[-1] = block
            continue
        out.append(block)
    return out


def _runs_to_edge(line: Line, block: Block, size: float) -> bool:
    """Whether `line` ends where a line of `block` would be wrapped: within three font sizes of
    the block's right edge, or, a line of several words (a sentence, not a title of one or two),
    so near it that the block's first word (about its share of its line's characters times the
    line's width) would not have fit after it."""
    right = max(ln.x1 for ln in block.lines)
    if line.x1 >= right - 3 * size:
        return True
    first = block.lines[0]
    words = first.text.split(maxsplit=1)
    if len(line.text.split()) < 4 or not words:
        return False
    return line.x1 + (first.x1 - first.x0) * (len(words[0]) + 1) / len(first.text) >= right


def _kind(line: Line) -> str:
    if line.mono:
        return "code"
    if LIST_START.match(line.text):
        return "list"
    return "paragraph"


def _style(line: Line, ocr: bool = False) -> tuple[float, bool, bool]:
    return (size_key(line.size, ocr), line.bold, line.mono)


def _continues(block: Block, prev: Item, item: Item, m: Measures, ocr: bool = False) -> bool:
    line, last = item.line, prev.line
    assert line is not None and last is not None
    if prev.flow != item.flow:
        return False
    gap = last.y - line.y
    if gap <= 0:
        return False
    if block.kind == "code":
        return line.mono and gap <= 2 * m.gap_limit(line.size)
    if _style(line, ocr) != _style(last, ocr):
        return False
    if len(block.lines) == 1 and section_title(last) and last.x1 < line.x1 - 2 * line.size:
        return False
    if gap > m.gap_limit(line.size):
        return False
    if LIST_START.match(line.text) or line.mono:
        return False
    if block.kind == "list":
        return line.x0 > block.lines[0].x0 + 0.5 * line.size
    # a first line set in opens a paragraph, as does a line after one that ends a sentence short
    # of the block's right edge
    # (body text only: a heading's second line may sit under its title, past its number)
    body = line.size < HEADING_RATIO * m.body
    if body and line.x0 > last.x0 + 0.8 * line.size:
        return False
    right = max(ln.x1 for ln in block.lines)
    if (
        len(block.lines) >= 2
        and last.x1 < right - 4 * line.size
        and SENTENCE_STOP.search(last.text)
    ):
        return False
    return True


def _join(lines: list[Line]) -> str:
    text = ""
    for line in lines:
        part = line.text
        if text.endswith("-") and part[:1].islower() and len(text) > 1 and text[-2].isalpha():
            text = text[:-1] + part
        else:
            text = f"{text} {part}" if text else part
    return text


def _finish(block: Block, m: Measures, ocr: bool = False) -> None:
    lines = block.lines
    weights: Counter[float] = Counter()
    for line in lines:
        weights[size_key(line.size, ocr)] += len(line.text)
    block.size = weights.most_common(1)[0][0]
    block.bold = all(line.bold for line in lines)
    if block.kind == "code":
        left = min(line.x0 for line in lines)
        width = 0.6 * block.size
        block.text = "\n".join(
            " " * max(0, round((line.x0 - left) / width)) + line.text for line in lines
        )
        return
    block.text = _join(lines)
    if is_heading(block, m, OCR_HEADING_RATIO if ocr else HEADING_RATIO):
        block.kind = "heading"


def contents_title(block: Block) -> bool:
    """A contents page's title: a block of one line reading "Contents" or "Table of contents"
    (a heading in whatever face it is set, as a page of contents follows it)."""
    return len(block.lines) <= 1 and CONTENTS.match(block.text.strip()) is not None


def contents_entry(block: Block) -> bool:
    """A contents page's entry: its last line ends in a page's number set apart from its title
    (a segment of its own, "1 Introduction" ... "3") or led to by dots."""
    if not block.lines:
        return False
    last = block.lines[-1]
    tail = last.segments[-1].text.strip()
    return (len(last.segments) >= 2 and PAGE_REF.match(tail) is not None) or bool(
        DOT_LEADER.search(last.text) and PAGE_REF.match(last.text.split()[-1])
    )


def is_heading(block: Block, m: Measures, ratio: float = HEADING_RATIO) -> bool:
    text = block.text
    if block.attrs.get("orientation"):
        return False  # text across the page's own direction: a margin stamp, a turned label
    if contents_title(block):
        return True
    if len(block.lines) > 3 or len(text.split()) > 20 or not any(c.isalpha() for c in text):
        return False
    if contents_entry(block):
        return False
    large = block.size >= ratio * m.body
    bold = block.bold and not m.body_bold and block.size >= BOLD_RATIO * m.body
    if not (large or bold):
        # a numbered section's title on a line of its own needs no style to be one ("3.2 Results"
        # set in the body's face, italic or plain)
        return (
            len(block.lines) == 1
            and block.size >= BOLD_RATIO * m.body
            and section_title(block.lines[0])
        )
    if not large and _run_in(block):
        return False
    if _names(text) or _names_apart(block) or INNER_SENTENCE.search(text) or WEB_END.search(text):
        return False
    numbered = NUMBERED.match(text) is not None or LIST_NUMBER.match(text) is not None
    if block.kind == "list" and not (numbered and len(block.lines) == 1):
        return False
    return numbered or not SENTENCE_END.search(text)


def _names(text: str) -> bool:
    """An author line: three or more names parted by commas, each one to four capitalised words
    (a footnote mark or an "and" beside them), which a paper's title page sets bold or large."""
    names = re.sub(r"\s+and$", "", text.strip())
    parts = [p.strip() for p in names.replace(" and ", ", ").split(",")]
    parts = [p for p in parts if p and p != "and"]
    return text.count(",") >= 2 and len(parts) >= 3 and all(NAME.match(p) for p in parts)


def _names_apart(block: Block) -> bool:
    """An author line set as names apart ("Zejiang Shen   Kyle Lo   Lauren Yu"): one line of two
    segments or more, each a name of two to four capitalised words."""
    if len(block.lines) != 1 or len(block.lines[0].segments) < 2:
        return False
    return all(
        2 <= len(seg.text.split()) <= 4 and NAME.match(seg.text) is not None
        for seg in block.lines[0].segments
    )


def section_title(line: Line) -> bool:
    text = line.text
    return len(text.split()) <= 12 and SECTION_TITLE.match(text) is not None


def _run_in(block: Block) -> bool:
    """A bold title that runs on into regular text on its line opens a paragraph (LaTeX's
    \\paragraph): its line ends in words not set bold."""
    last = block.lines[-1]
    runs = [run for seg in last.segments for run in seg.runs if run.text.strip()]
    tail = runs[-1] if runs else None
    return tail is not None and not tail.bold and sum(c.isalpha() for c in tail.text) >= 3


def numbering(text: str) -> int:
    match = NUMBERED.match(text)
    return len(match.group(1).split(".")) if match else 1


def assign_levels(blocks: list[Block]) -> None:
    """Larger sizes rank higher; within one style, numbering (2.1) gives the level. A contents
    page's title ranks with the first numbered level ("1 Introduction") when there is one."""
    keys = {}
    for block in blocks:
        if block.kind == "heading" and not block.depth:
            keys[id(block)] = (-block.size, not block.bold, numbering(block.text))
    chapters = [
        keys[id(b)]
        for b in blocks
        if id(b) in keys and NUMBERED.match(b.text) is not None and numbering(b.text) == 1
    ]
    for block in blocks:
        if chapters and id(block) in keys and contents_title(block):
            keys[id(block)] = min(chapters)
    order = {key: rank + 1 for rank, key in enumerate(sorted(set(keys.values())))}
    for block in blocks:
        if id(block) in keys:
            block.depth = order[keys[id(block)]]
