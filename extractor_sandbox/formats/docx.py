"""DOCX: a WordprocessingML package read into blocks, as the seed's "DOCX and PPTX." says.
Over 500 lines: one reader of one part's stream (paragraphs, runs, tables, notes share its state).

The package is read through `package.Package` (parts within their bounds, XML streamed, no
DOCTYPE), the main document part found by the package's officeDocument relationship.

What each part of the body becomes:

- Heading: a paragraph of a Heading N or Title style, or one with an outline level of its own or
  along its style's basedOn chain; the nearest of these set decides (the paragraph's own outline
  level first, then each style up the chain, its Heading N name or else its outline level: Word
  fixes a Heading N style's outline level by its name, and a custom "Heading 0" is the top level,
  as Heading 1), and outline level 9 (body text) is no heading whatever the style. A style id the styles part does not define
  is read as the default paragraph style, as Word does ("Heading7" with no such style is body
  text); only when the document has no styles part, or it cannot be read, is a style known by its
  id alone ("Heading1" a Heading 1). A Title paragraph (its own style Title: a style
  based on Title, such as a converter's Subtitle, Author or Date, is none) is depth 1, and every
  heading after it one level under its own (Heading 1 at depth 2), so the sections sit under the
  title; a later title is depth 1 again.
- List: a numbered paragraph (numPr, its own or its style's) or one of a List style ("List
  Paragraph", "List Bullet 2", ...) is a list item; a run of them is one list block, an item a
  line. Empty paragraphs do not end a run.
- Paragraph: any other paragraph with text. Runs' text (w:t) is read, tabs as a tab, breaks as a
  new line; field codes are not, field results are.
- Revisions: inserted and moved-to text is read; a tracked deletion (runs, rows, cells) and moved
  text at its old place are not.
- Content controls (w:sdt) and custom XML are read in place, in the body, a table's rows and its
  cells; alternate content (mc:AlternateContent) through its first choice only, once.
- Tables: one table block, a row a line, its cells' text (paragraphs joined by a space) joined
  by " | ", attrs.table {"rows", "columns"}; a cell spanning columns is followed by empty cells
  for the columns it covers, and a row that starts past the grid's first columns (gridBefore)
  by empty cells for those it skips; rows with no text are dropped. A table inside a cell is read into the
  cell's text.
- A table of one cell is a frame laid around its content: what the cell holds is read as blocks,
  in place.
- Text boxes: their paragraphs are blocks after the paragraph they are anchored in.
- Footnotes and endnotes follow the body, a block per note marked attrs.note ("footnote 1").
- Not read: headers, footers, comments (their parts are never opened), the page background.

Coverage counts parts (unit "parts"): the document, and the styles, footnotes and endnotes parts
when the document has them, each altChunk (an embedded document, never read: a failed unit). A
part that cannot be read fails its unit: the document's relationships (then no styles or notes
are known), the styles (headings are then read from style ids such
as "Heading1"), the footnotes, the endnotes; the document part itself fails the file (corrupt).
A document of pictures, charts, diagrams or embedded objects and no text is a failed unit
("document": it needs OCR). A document of text that holds an image (a picture, a picture fill, a
VML picture, an alternate content's fallback picture of a drawing not read), drawn text (WordArt,
a locked canvas), a chart, a diagram or an embedded object warns once, naming how many of each,
and counts them in attrs.images_unread; a text box, a line or a plain shape does not warn.

Text budget. The body's and the notes' text is gathered within the extraction's TextBudget
(output_size.py: the artifact's bound): once past it, the part being read stops there (the
paragraph and table open at that point kept, cut later to the bound) and no part after it is
read; the cut and the stop are announced in coverage (resource_limit).

DOCX blocks carry no page locator (the file has no pages until it is laid out): a citation names
the section path.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from extractor_sandbox.artifact import BlockBuilder, build_artifact, coverage
from extractor_sandbox.contract import Artifact
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.office import (
    DRAWING,
    DRAWN_TEXT,
    IMAGE,
    MATH,
    MC,
    OBJECT,
    PARSER_VERSION,
    VML,
    VML_OFFICE,
    R,
    UnreadKinds,
    W,
    alternate_content,
    graphic_kind,
    one_line,
    table_text,
    transitional_events,
)
from extractor_sandbox.formats.package import (
    END,
    START,
    Event,
    Package,
    PartError,
    skip,
    text_of,
)
from extractor_sandbox.output_size import current_budget

PARSER = "loom-docx"
MAIN_PART = "word/document.xml"
BODY_TEXT_LEVEL = 9  # outline level 9: body text, never a heading
MAX_SPAN = 1_000  # grid columns a cell spans or a row skips, at most
TITLE = 0  # the level a Title paragraph is read at

_HEADING_NAME = re.compile(r"heading\s*([0-9])", re.IGNORECASE)
_LIST_NAME = re.compile(r"list\b", re.IGNORECASE)
# Subtrees never read: properties, deleted and moved-from text, field codes, comments' marks.
_SKIPPED = frozenset(
    W + name
    for name in (
        "rPr",
        "sectPr",
        "del",
        "moveFrom",
        "delText",
        "instrText",
        "delInstrText",
        "sdtPr",
        "sdtEndPr",
        "customXmlPr",
        "tblPr",
        "tblGrid",
        "tblPrEx",
        "background",
        "footnoteReference",
        "endnoteReference",
        "commentReference",
        "sym",
    )
) | {MATH + "rPr", MATH + "ctrlPr"}
_NOTE_SEPARATORS = frozenset({"separator", "continuationSeparator", "continuationNotice"})


def extract_docx(data: bytes, options: Mapping[str, str], *, name: str) -> Artifact:
    """The artifact of a DOCX file (contract v1); `options` are the caller's to record."""
    try:
        package = Package(data)
    except PartError as error:
        raise ExtractError("corrupt", str(error)) from None
    return _Reader(package).read()


# Styles


@dataclass
class _Style:
    name: str = ""
    based_on: str | None = None
    outline: int | None = None
    numbered: bool | None = None


@dataclass
class _Styles:
    by_id: dict[str, _Style] = field(default_factory=dict)
    default: str | None = None
    read: bool = False  # the styles part was read: a style it does not define is no style

    def chain(self, style_id: str | None) -> Iterator[_Style]:
        """The paragraph's style and the styles it is based on, nearest first (no cycles)."""
        seen: set[str] = set()
        current = style_id or self.default
        while current and current not in seen:
            seen.add(current)
            style = self.by_id.get(current)
            if style is None and self.read:
                # Word reads a paragraph naming a style the document does not define in its
                # default style: "Heading7" with no such style is body text, not a heading.
                current = self.default if current != self.default else None
                continue
            style = style or _style_from_id(current)
            yield style
            current = style.based_on


def _style_from_id(style_id: str) -> _Style:
    """A style known by its id alone, when the document's styles part is missing or unreadable."""
    return _Style(name=re.sub(r"(?<=[a-z])(?=\d)", " ", style_id))


def read_styles(events: Iterator[Event]) -> _Styles:
    styles = _Styles(read=True)
    for kind, name, attrs in events:
        if kind == START and name == W + "style" and attrs.get(W + "type") == "paragraph":
            style_id = attrs.get(W + "styleId", "")
            styles.by_id[style_id] = _read_style(events)
            if attrs.get(W + "default") in ("1", "true", "on"):
                styles.default = style_id
    return styles


def _read_style(events: Iterator[Event]) -> _Style:
    style = _Style()
    depth = 1
    for kind, name, attrs in events:
        if kind == END:
            depth -= 1
            if depth == 0:
                return style
        elif kind == START:
            depth += 1
            value = attrs.get(W + "val")
            if name == W + "name":
                style.name = value or ""
            elif name == W + "basedOn":
                style.based_on = value
            elif name == W + "outlineLvl":
                style.outline = _int(value)
            elif name == W + "numId":
                style.numbered = value not in (None, "0")
            elif name in (W + "pPrChange", W + "rPr"):
                skip(events)
                depth -= 1
    return style


def _int(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


# What the body is read into


class _Into:
    """Where the body's parts go; each kind of element takes what it holds, and ignores the rest."""

    def add_text(self, text: str) -> None: ...

    def add_paragraph(self, paragraph: _Paragraph) -> None: ...

    def add_table(self, table: _Table) -> None: ...


class _Discard(_Into):
    """A drawing's fallback, scanned for the pictures it shows, not read."""


class _Paragraph(_Into):
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.style: str | None = None
        self.outline: int | None = None
        self.numbered: bool | None = None
        self.inner: list[_Paragraph | _Table] = []  # text boxes' paragraphs and tables

    def add_text(self, text: str) -> None:
        self.parts.append(text)

    def add_paragraph(self, paragraph: _Paragraph) -> None:
        self.inner.append(paragraph)

    def add_table(self, table: _Table) -> None:
        self.inner.append(table)

    @property
    def text(self) -> str:
        return "".join(self.parts).strip()

    def all_text(self) -> str:
        """Its text and its text boxes', on one line (inside a table cell)."""
        texts = [self.text] + [
            item.all_text() if isinstance(item, _Paragraph) else item.as_cell_text()
            for item in self.inner
        ]
        return one_line(" ".join(texts))


class _Cell(_Into):
    def __init__(self) -> None:
        self.items: list[_Paragraph | _Table] = []
        self.span = 1
        self.deleted = False

    def add_paragraph(self, paragraph: _Paragraph) -> None:
        self.items.append(paragraph)

    def add_table(self, table: _Table) -> None:
        self.items.append(table)

    @property
    def text(self) -> str:
        return one_line(
            " ".join(
                item.all_text() if isinstance(item, _Paragraph) else item.as_cell_text()
                for item in self.items
            )
        )


class _Row(_Into):
    """A row as it is read: its cells' texts (a cell's own objects are dropped once read, so a
    table of a million cells holds a million strings, not a million paragraphs)."""

    def __init__(self) -> None:
        self.texts: list[str] = []
        self.cells = 0
        self.first: _Cell | None = None  # kept in case the table is one cell, a frame
        self.deleted = False
        self.before = 0  # grid columns skipped before the first cell (w:gridBefore)

    def add_cell(self, cell: _Cell) -> None:
        if cell.deleted:
            return
        self.cells += 1
        if self.first is None:
            self.first = cell
        self.texts.extend([cell.text] + [""] * (cell.span - 1))


class _Table(_Into):
    def __init__(self) -> None:
        self.rows: list[list[str]] = []  # the rows with text
        self.kept_rows = 0  # rows not deleted, with text or not
        self.only_cell: _Cell | None = None

    def add_row(self, row: _Row) -> None:
        if row.deleted:
            return
        self.kept_rows += 1
        self.only_cell = row.first if self.kept_rows == 1 and row.cells == 1 else None
        if any(row.texts):
            self.rows.append(row.texts)

    def grid(self) -> list[list[str]]:
        """Rows of cell texts, a spanning cell followed by empty ones, rows with no text left out,
        every row as long as the longest."""
        width = max((len(row) for row in self.rows), default=0)
        return [row + [""] * (width - len(row)) for row in self.rows]

    def as_cell_text(self) -> str:
        return " ".join(cell for row in self.rows for cell in row if cell)

    def frame(self) -> _Cell | None:
        """The one cell of a table of one cell: a frame laid around its content, not a table."""
        return self.only_cell if self.kept_rows == 1 else None


class _Body(_Into):
    def __init__(self, reader: _Reader) -> None:
        self.reader = reader

    def add_paragraph(self, paragraph: _Paragraph) -> None:
        self.reader.emit_paragraph(paragraph)

    def add_table(self, table: _Table) -> None:
        self.reader.emit_table(table)


class _Note(_Into):
    def __init__(self) -> None:
        self.texts: list[str] = []

    def add_paragraph(self, paragraph: _Paragraph) -> None:
        self.texts.extend(
            [paragraph.text]
            + [
                i.all_text() if isinstance(i, _Paragraph) else i.as_cell_text()
                for i in paragraph.inner
            ]
        )

    def add_table(self, table: _Table) -> None:
        self.texts.append(table_text(table.grid()))


# The reader


class _Reader:
    def __init__(self, package: Package) -> None:
        self.package = package
        self.blocks = BlockBuilder()
        self.styles = _Styles()
        self.unread = UnreadKinds()
        self.units = 1  # the document part
        self.failed: list[dict[str, str]] = []
        self.list_items: list[str] = []
        self.after_title = False
        self.budget = current_budget()  # the text the body and the notes may keep
        self._handlers = self._dispatch()

    def read(self) -> Artifact:
        document = self.package.main_part(MAIN_PART)
        relationships = self._relationships(document)
        styles = relationships.get("styles")
        if styles:
            self.units += 1
            try:
                self.styles = read_styles(transitional_events(self.package.events(styles)))
            except PartError as error:
                self._fail("styles", error.reason)
        try:
            self._read_document(document)
        except PartError as error:
            raise ExtractError("corrupt", f"the document part {error}") from None
        self._flush_list()
        self.blocks.leave_sections()
        for kind in ("footnotes", "endnotes"):
            if relationships.get(kind):
                self.units += 1
                self._read_notes(relationships[kind], kind)
        return self._artifact()

    def _relationships(self, document: str) -> dict[str, str]:
        """The document's parts by relationship type (styles, footnotes, endnotes)."""
        try:
            return {r.type: r.target for r in self.package.relationships(document) if r.target}
        except PartError as error:
            # No styles or notes are known then; the body is still read.
            self.units += 1
            self._fail("relationships", error.reason)
            return {}

    def _fail(self, unit: str, reason: str) -> None:
        self.failed.append({"unit": unit, "reason": reason})

    def _read_document(self, part: str) -> None:
        events = transitional_events(self.package.events(part, budget=self.budget))
        for kind, name, _ in events:
            if kind == START and name == W + "body":
                self._children(events, _Body(self))
                return
        raise PartError(part, "has no body")

    def _read_notes(self, part: str, kind: str) -> None:
        """Each footnote (or endnote) a block after the body, marked attrs.note."""
        singular = kind.removesuffix("s")
        notes: list[tuple[str, str]] = []
        try:
            events = transitional_events(self.package.events(part, budget=self.budget))
            for event_kind, name, attrs in events:
                if event_kind == START and name == W + singular:
                    note = _Note()
                    if attrs.get(W + "type") in _NOTE_SEPARATORS:
                        skip(events)
                        continue
                    self._children(events, note)
                    text = "\n".join(t for t in note.texts if t)
                    if text:
                        notes.append((f"{singular} {attrs.get(W + 'id', '')}".strip(), text))
        except PartError as error:
            self._fail(kind, error.reason)
            return
        for label, text in notes:
            self.blocks.place("paragraph", text, {}, {"note": label})

    # The body, element by element

    def _children(self, events: Iterator[Event], into: _Into) -> None:
        """Read the children of the element just started, to its end, into `into`.

        An element the handlers name reads itself to its end; any other (a run, a hyperlink, an
        inserted run, a content control, a text box) is read through, in place: its children
        are read here as if they were its parent's, so no call is spent on it.
        """
        handlers = self._handlers
        depth = 1
        for kind, name, attrs in events:
            if kind == START:
                handler = handlers.get(name)
                if handler is None:
                    depth += 1
                else:
                    handler(attrs, events, into)
            elif kind == END:
                depth -= 1
                if depth == 0:
                    return

    def _dispatch(self) -> dict[str, Callable[[dict[str, str], Iterator[Event], _Into], None]]:
        handlers: dict[str, Callable[[dict[str, str], Iterator[Event], _Into], None]] = {
            name: self._skip for name in _SKIPPED
        }
        handlers.update(
            {
                W + "t": self._text,
                MATH + "t": self._text,
                W + "tab": self._character("\t"),
                W + "br": self._character("\n"),
                W + "cr": self._character("\n"),
                W + "noBreakHyphen": self._character("-"),
                W + "p": self._paragraph,
                W + "pPr": self._paragraph_properties,
                W + "tbl": self._table,
                W + "tr": self._row,
                W + "trPr": self._row_properties,
                W + "tc": self._cell,
                W + "tcPr": self._cell_properties,
                MC + "AlternateContent": self._alternate_content,
                W + "altChunk": self._alt_chunk,
                DRAWING + "graphicData": self._graphic_data,
                DRAWING + "blip": self._unread(IMAGE),
                VML + "imagedata": self._unread(IMAGE),
                VML + "fill": self._vml_fill,
                DRAWING + "prstTxWarp": self._unread(DRAWN_TEXT),  # WordArt
                VML + "textpath": self._unread(DRAWN_TEXT),  # WordArt
                W + "object": self._unread(OBJECT),
            }
        )
        return handlers

    @staticmethod
    def _skip(attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        skip(events)

    def _text(self, attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        into.add_text(text_of(events, self.budget))

    def _character(
        self,
        character: str,
    ) -> Callable[[dict[str, str], Iterator[Event], _Into], None]:
        def add(attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
            self.budget.take(character)
            into.add_text(character)
            skip(events)

        return add

    def _paragraph(self, attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        paragraph = _Paragraph()
        self._children(events, paragraph)
        into.add_paragraph(paragraph)

    def _table(self, attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        table = _Table()
        self._children(events, table)
        into.add_table(table)

    def _row(self, attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        if not isinstance(into, _Table):
            self._children(events, into)
            return
        row = _Row()
        self._children(events, row)
        into.add_row(row)

    def _row_properties(self, attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        if not isinstance(into, _Row):
            skip(events)
            return
        row = into
        depth = 1
        for kind, name, attrs in events:
            if kind == END:
                depth -= 1
                if depth == 0:
                    return
            elif kind == START:
                if name == W + "trPrChange":  # the row's former properties
                    skip(events)
                    continue
                depth += 1
                if name == W + "del":
                    row.deleted = True
                elif name == W + "gridBefore":
                    # The grid columns the row leaves empty before its first cell: its cells
                    # sit that far right, under the columns of the rows that fill them.
                    if not row.before:  # a second one is no grid of its own
                        row.before = max(0, min(_int(attrs.get(W + "val")) or 0, MAX_SPAN))
                        row.texts[:0] = [""] * row.before

    def _cell(self, attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        if not isinstance(into, _Row):
            self._children(events, into)
            return
        cell = _Cell()
        self._children(events, cell)
        into.add_cell(cell)

    def _alt_chunk(self, attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        self.units += 1
        unit = f"altChunk {attrs.get(R + 'id', '')}".strip()
        self._fail(unit, "an embedded document is not read")
        skip(events)

    # What drawings hold and is not read: counted, never read

    def _unread(self, kind: str) -> Callable[[dict[str, str], Iterator[Event], _Into], None]:
        def count(attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
            self.unread.add(kind)
            skip(events)

        return count

    def _graphic_data(self, attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        kind = graphic_kind(attrs.get("uri", ""))
        if kind is None or kind == IMAGE:  # a shape or a text box is read; a picture is counted
            self._children(events, into)  # at its blip
        else:
            self.unread.add(kind)
            skip(events)

    def _vml_fill(self, attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        if attrs.get(R + "id") or attrs.get(VML_OFFICE + "relid"):
            self.unread.add(IMAGE)  # a VML shape's picture fill
        skip(events)

    def _alternate_content(
        self, attrs: dict[str, str], events: Iterator[Event], into: _Into
    ) -> None:
        """The first choice is read; a fallback is only looked through for the picture it keeps of a
        drawing the choice held and the reader did not know (a 3D model, ink)."""
        known_before = len(self.unread)

        def fallback(chosen: bool) -> bool:
            if chosen and len(self.unread) == known_before:
                self._children(events, _Discard())
            elif not chosen:
                self._children(events, into)
                return True
            else:
                skip(events)
            return False

        alternate_content(events, lambda: self._children(events, into), fallback)

    def _paragraph_properties(
        self, attrs: dict[str, str], events: Iterator[Event], into: _Into
    ) -> None:
        depth = 1
        for kind, name, attrs in events:
            if kind == END:
                depth -= 1
                if depth == 0:
                    return
            elif kind == START:
                if name in (W + "pPrChange", W + "rPr", W + "sectPr"):
                    skip(events)
                    continue
                depth += 1
                if not isinstance(into, _Paragraph):
                    continue
                value = attrs.get(W + "val")
                if name == W + "pStyle":
                    into.style = value
                elif name == W + "outlineLvl":
                    into.outline = _int(value)
                elif name == W + "numId":
                    into.numbered = value not in (None, "0")

    def _cell_properties(self, attrs: dict[str, str], events: Iterator[Event], into: _Into) -> None:
        if not isinstance(into, _Cell):
            skip(events)
            return
        cell = into
        depth = 1
        for kind, name, attrs in events:
            if kind == END:
                depth -= 1
                if depth == 0:
                    return
            elif kind == START:
                if name == W + "tcPrChange":
                    skip(events)
                    continue
                depth += 1
                if name == W + "gridSpan":
                    cell.span = max(1, min(_int(attrs.get(W + "val")) or 1, MAX_SPAN))
                elif name == W + "cellDel":
                    cell.deleted = True

    # Blocks

    def heading_level(self, paragraph: _Paragraph) -> int | None:
        """TITLE, a level 1-9, or None; the nearest outline level or Heading N name decides."""
        chain = list(self.styles.chain(paragraph.style))
        # Only the paragraph's own style: converters base Subtitle, Author and Date on Title
        # (pandoc's reference document does), and those are no titles.
        is_title = bool(chain) and chain[0].name.strip().lower() == "title"
        level = self._nearest_level(paragraph, chain)
        if level == BODY_TEXT_LEVEL + 1:
            return None
        if is_title:
            return TITLE
        return level

    @staticmethod
    def _nearest_level(paragraph: _Paragraph, chain: list[_Style]) -> int | None:
        if paragraph.outline is not None:
            return min(paragraph.outline, BODY_TEXT_LEVEL) + 1
        for style in chain:
            named = _HEADING_NAME.fullmatch(style.name.strip())
            # Within one style its Heading N name decides before its outline level (Word fixes a
            # Heading N style's outline level by its name), but for level 9, body text.
            if style.outline is not None and (named is None or style.outline >= BODY_TEXT_LEVEL):
                return min(style.outline, BODY_TEXT_LEVEL) + 1
            if named:
                return max(1, int(named.group(1)))  # "Heading 0": the top level, as Heading 1
        return None

    def is_list_item(self, paragraph: _Paragraph) -> bool:
        if paragraph.numbered is not None:
            return paragraph.numbered
        for style in self.styles.chain(paragraph.style):
            if style.numbered is not None:
                return style.numbered
            if _LIST_NAME.match(style.name.strip()):
                return True
        return False

    def emit_paragraph(self, paragraph: _Paragraph) -> None:
        text = paragraph.text
        if text:
            level = self.heading_level(paragraph)
            if level is None and self.is_list_item(paragraph):
                self.list_items.append(text)
            else:
                self._flush_list()
                if level is None:
                    self.blocks.place("paragraph", text, {})
                else:
                    self._heading(one_line(text), level)
        for inner in paragraph.inner:
            if isinstance(inner, _Paragraph):
                self.emit_paragraph(inner)
            else:
                self.emit_table(inner)

    def _heading(self, text: str, level: int) -> None:
        if level == TITLE:
            self.after_title = True
            depth = 1
        else:
            depth = level + 1 if self.after_title else level
        self.blocks.heading(text, depth, {})

    def emit_table(self, table: _Table) -> None:
        frame = table.frame()
        if frame is not None:
            for item in frame.items:
                self.emit_paragraph(item) if isinstance(item, _Paragraph) else self.emit_table(item)
            return
        self._flush_list()
        grid = table.grid()
        if grid:
            attrs = {"table": {"rows": len(grid), "columns": len(grid[0])}}
            self.blocks.place("table", table_text(grid), {}, attrs)

    def _flush_list(self) -> None:
        if self.list_items:
            self.blocks.place(
                "list", "\n".join(self.list_items), {}, {"items": len(self.list_items)}
            )
            self.list_items = []

    def _artifact(self) -> Artifact:
        warnings = []
        attrs: dict[str, Any] = {}
        has_text = bool(self.blocks.blocks)
        if self.unread and not has_text:
            self._fail(
                "document",
                f"holds only what drawings show ({self.unread.describe()}) and no text; "
                "it needs OCR",
            )
        elif self.unread:
            warnings.append(
                f"the document holds what drawings show, which is not read: {self.unread.describe()}"
            )
            attrs["images_unread"] = len(self.unread)
        failed_units = {unit["unit"] for unit in self.failed}
        artifact_coverage = coverage(
            "parts", self.units, self.units - len(failed_units), self.failed
        )
        return build_artifact(
            "docx",
            PARSER,
            PARSER_VERSION,
            self.blocks.blocks,
            artifact_coverage,
            attrs=attrs,
            warnings=warnings,
        )
