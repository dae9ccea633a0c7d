"""HTML: the standard library's html.parser, read into blocks as the seed's "HTML." says.
Over 500 lines: one streaming reader whose open-element stack, scopes and text runs are one state.

What each element becomes:

- Heading (h1-h6): a heading block, depth its level, text its words (inline tags dropped,
  whitespace collapsed). An empty heading is no block and opens no section.
- Paragraph: p, blockquote, dd and dt are paragraph blocks; so is text that sits directly in a
  container (div, section, body, ...) outside any block, one paragraph per container: "a" and "b"
  in `<div>a<div>b</div></div>` are two paragraphs, as a browser shows them apart.
- List item (li): a list block per item, its text the item's own words. A <p> that opens a list
  item, and the <p>s after it, are the item's text, not paragraphs of their own; a list nested in
  an item is items of its own, and the item's words after it are a list block again.
- pre (and listing, xmp): a code block, its text as written (inline tags dropped, line endings as
  "\\n", leading blank lines and trailing whitespace left out).
- Dropped: script, style, template, noscript, svg, title and head, with everything inside them;
  the first <title>'s text is the artifact's attrs.title. An unclosed <head> closes at the first
  body element or text.
- Hidden: an element with the `hidden` attribute or a style of display:none is not shown and not
  read; it takes no place among the words around it, and a hidden cell or row none in its table.
  Its text is no visible text, so coverage does not count it, and a warning says how much was
  skipped. One left open at the document's end hides the rest of the document: the text inside
  it is counted as not read, with a failure naming the open elements (the first 20), and an
  unclosed <script>, <title>, ... is reported the same way.
- Closing: a block whose end tag is left out closes at the next block (p, a heading, dt, pre
  close at any block's start; li at the next li, dt and dd at the next dt or dd), at its
  container's end or at the document's end. A container inside a block leaves it open. br, hr
  and a container's start and end separate words. An end tag that closes nothing open is ignored.
- Tables: one table block, a row per line, its cells joined by " | ", attrs.table {"rows",
  "columns"}; rows with no text are dropped. A cell after a row's end starts the next row; a row
  group's start or end (thead, tbody, tfoot) ends the open row. Captions (a heading, list or table
  inside them read as their text) and text in no cell are paragraphs before the table, in order.
  Cells are placed as HTML places them: colspan and rowspan are read as HTML reads a non-negative
  integer (colspan 1-1000, 0 or junk as 1; rowspan 0-65534, 0 to the end of its row group), and a
  cell a rowspan carries down holds its columns in the rows below as an empty cell, until its row
  group ends. A column that only empty cells and cells spanning several columns fill is a spacer
  and is dropped, unless a cell with text is carried down into it (a spanning cell's text goes to
  the first column it spans that is kept). Placing counts the grid slots each row's cells and the
  cells carried down into it cover; a table past a million of them, or whose grid of rows with
  text by kept columns would pass a million slots, keeps every cell in source order instead of
  placing it (a warning says so). A table left with one column is one paragraph, its rows as
  lines, without attrs.table. Within a cell, containers separate words and do not split it.
- Layout tables: a table one of whose cells holds a heading, a list item, a pre, a table or a
  second paragraph (a p, blockquote, dd or dt: text directly in the cell beside one is the cell's
  text, as a container's text is a paragraph of its own only in no cell) lays out a page: its
  cells, captions and text in no cell are read as the blocks they hold, in order, and a table
  inside one is a table.
- A heading, list, list item, definition, pre or table in no cell ends the table (its </table>
  left out or not); rows after it are paragraphs (a row's cells are its words). The end of an
  element the table is inside is no end of it: what follows in no cell is read before the table,
  and an open caption holds it.

Furniture (furniture.py): navigation, share buttons, comment counts and sections, newsletter and
cookie boxes, sidebars and footers, told by their element, role, class or id, their words or (outside
a page's marked main content) their links, are no blocks: each is listed in attrs.furniture with its
kind, text and line span, and a warning counts them. A furniture element inside a block, outside
any table, is split off it ("212 comments" in a byline); a table is furniture when the table
element is.

Locators carry line spans only (line_start, line_end): a block runs from the line of its first
character of text to the line of its last. Section paths and parents follow the headings, as in
Markdown.

Coverage counts characters (unit "chars"; whitespace is not counted): the total is the visible
text outside the dropped and hidden elements, plus the text inside hidden or dropped elements left
open; the extracted count is the text the blocks and attrs.furniture hold, the pipes joining a
table's cells aside.
It is counted from the blocks, so text a parser change drops shows as a failed unit.

Hostile input: html.parser of this Python is quadratic on some malformed input (unclosed
comments, quotes and tags). The parser is fed only the text up to its last ">" (what follows can
hold no markup and is read as text), a comment with no close after it fails at once, a "<![" is a
bogus comment, and a start tag the tolerant pattern runs past its next ">" without ending is read
as text, so each character is scanned a bounded number of times.
"""

from __future__ import annotations

import platform
import re
from collections import Counter
from collections.abc import Mapping
from html import unescape
from html.parser import HTMLParser
from typing import Any

from extractor_sandbox.artifact import BlockBuilder, build_artifact, coverage
from extractor_sandbox.contract import Artifact
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.html import tables
from extractor_sandbox.formats.html.furniture import (
    KEPT_IN_MAIN,
    SIGNAL_TAGS,
    WEAK_KINDS,
    Furniture,
    LinkBlock,
    link_dense,
    link_lists,
    signals,
    text_kind,
    tickers,
)
from extractor_sandbox.formats.html.tables import (
    _EMPTY_CELL,
    _Cell,
    _colspan,
    _PBlock,
    _place,
    _rowspan,
    _Sink,
    _Table,
    _unplaced,
)

PARSER = "loom-html"
# 2: a <meta> charset is read (decoding.py), page furniture is out of the blocks (furniture.py);
# 3: more furniture (link lists, notices, labels, notes, controls; registry.py says which);
# 4: most read boxes, headings in more languages, news tickers.
PARSER_VERSION = f"5+python{platform.python_version()}"

MAX_NAMED = 20  # open elements a failure names
MAX_FURNITURE = 10_000  # parts attrs.furniture lists, as the blocks are bounded

_WS = re.compile(r"\s+")
_NON_WS = re.compile(r"\S")
_LEADING_BLANK_LINES = re.compile(r"\A(?:[^\S\n]*\n)+")
_COMMENT_CLOSE = re.compile(r"--\s*>")
_ENTITY = re.compile(r"&(?:#[0-9]+;?|#[xX][0-9a-fA-F]+;?|[A-Za-z][A-Za-z0-9]*;?)")
_DISPLAY_NONE = re.compile(r"(?:^|;)\s*display\s*:\s*none\s*(?:!\s*important\s*)?(?:;|$)", re.I)
# The tolerant pattern html.parser finds a start tag's end with (html.parser's own).
_START_TAG_END = re.compile(
    r"""
  <[a-zA-Z][^\t\n\r\f />\x00]*
  (?:[\s/]*
    (?:(?<=['"\s/])[^\s/>][^\s/=>]*
      (?:\s*=+\s*
        (?:'[^']*'
          |"[^"]*"
          |(?!['"])[^>\s]*
         )
        \s*
       )?(?:\s|/(?!>))*
     )*
   )?
  \s*
""",
    re.VERBOSE,
)

HEADINGS = frozenset({"h1", "h2", "h3", "h4", "h5", "h6"})
CODE = frozenset({"pre", "listing", "xmp"})
PARAGRAPHS = frozenset({"p", "blockquote", "dd", "dt"})
BLOCKS = HEADINGS | CODE | PARAGRAPHS | {"li"}
# Blocks that hold no block: they close at the next block's start. A stray <tr> (one in no table)
# is read as a paragraph and is one of them.
LEAF_BLOCKS = HEADINGS | CODE | {"p", "dt", "tr"}
DEFINITIONS = frozenset({"dt", "dd"})
CONTAINERS = frozenset(
    """
    html body div section article aside nav header footer main address hgroup search dialog
    details summary figure figcaption form fieldset legend center menu dir ul ol dl frameset
    noframes optgroup option caption thead tbody tfoot td th colgroup
    """.split()
)
DROPPED = frozenset({"script", "style", "template", "noscript", "svg", "title", "head"})
HEAD_CONTENT = frozenset(
    {
        "title",
        "meta",
        "link",
        "style",
        "script",
        "base",
        "noscript",
        "template",
        "basefont",
        "bgsound",
    }
)
VOID = frozenset(
    """
    area base basefont bgsound br col embed frame hr image img input keygen link meta param
    source track wbr
    """.split()
)
ROW_GROUPS = frozenset({"thead", "tbody", "tfoot"})
CELLS = frozenset({"td", "th"})
# Start tags that close an open cell or caption and are read again by its table.
TABLE_PARTS = frozenset({"tr", "td", "th", "thead", "tbody", "tfoot", "caption", "col", "colgroup"})
LISTS = frozenset({"ul", "ol", "dl", "menu", "dir"})
# Start tags that end a table when they come in no cell.
ENDS_TABLE = HEADINGS | CODE | LISTS | {"li", "dt", "dd", "table"}
# Tags whose start and end separate words when they sit inside a block.
SEPARATING = BLOCKS | CONTAINERS | {"table", "tr"}

SCOPES = frozenset({"table", "cell", "caption"})


def extract_html(
    text: str, options: Mapping[str, str] | None = None, *, name: str = ""
) -> Artifact:
    """The artifact of an HTML document (contract v1). `options` are the caller's to record."""
    reader = _Reader(text)
    reader.read()
    return reader.artifact()


# Pending blocks and where they go


class _Entry:
    """An open element. `owner` is the entry whose block the text read under it goes to.

    Most fields keep the class's default; an element sets only what it differs in, since a
    document can open a million of them.
    """

    # block, joined (a <p> in a list item), container, inline, dropped, generic (inside a
    # dropped element), flat (inside a caption), table, cell, caption, root
    kind = "inline"
    sink: _Sink | None = None  # where a run this entry owns goes
    out: _Sink | None = None  # a table's: where the table's blocks go
    ptype = "paragraph"
    depth: int | None = None
    sep = False
    hidden = False
    dropped = False
    veil_chars = 0
    label = ""
    table: _Table | None = None
    cell: _Cell | None = None
    furniture: Furniture | None = None  # the furniture element it is, or is inside
    main = False  # inside the page's main content
    anchor = False  # a link to the page itself (href="#...")

    def __init__(self, tag: str, kind: str) -> None:
        self.tag = tag
        self.kind = kind
        self.owner: _Entry = self
        self.barrier: _Entry = self  # the nearest entry at or below that is not inline


class _Scope:
    """A part of the document end tags cannot reach past: the document, a table, a cell, a
    caption (HTML holds a table as a scope of its own)."""

    __slots__ = ("boundary", "base", "counts")

    def __init__(self, boundary: _Entry, base: int) -> None:
        self.boundary = boundary
        self.base = base  # the stack length when the scope opened
        self.counts: dict[str, int] = {}


class _Run:
    """The text being read into one block."""

    __slots__ = ("owner", "pieces", "first", "last", "links", "anchors")

    def __init__(self, owner: _Entry) -> None:
        self.owner = owner
        self.pieces: list[str] = []
        self.first: int | None = None
        self.last = 0
        self.links = 0  # characters read inside links
        self.anchors = 0  # ... inside links to the page itself


class _Lines:
    """Line numbers of offsets (line endings as split_lines counts them: \\r\\n, \\r, \\n), for
    offsets asked for in document order."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 1

    def at(self, offset: int) -> int:
        text = self.text
        if offset < self.offset:
            self.offset, self.line = 0, 1
        start = self.offset
        count = text.count("\n", start, offset) + text.count("\r", start, offset)
        count -= text.count("\r\n", start, offset)
        if 0 < start < offset and text[start - 1] == "\r" and text[start] == "\n":
            count -= 1  # the "\n" of a "\r\n" counted at the "\r"
        self.offset, self.line = offset, self.line + count
        return self.line


class _Reader(HTMLParser):
    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.text = text
        self.lines = _Lines(text)
        self._pos = 0
        self._base = 0
        self._pending: tuple[str, int] | None = None
        self._last_comment_close = -1

        self.out = _Sink()
        self.root = _Entry("#root", "root")
        self.root.sink = self.out
        self.stack: list[_Entry] = []
        self.scopes: list[_Scope] = [_Scope(self.root, 0)]
        self.veils: list[_Entry] = []
        self.hidden_depth = 0
        self.dropped_depth = 0
        self.head: _Entry | None = None
        self.title_entry: _Entry | None = None
        self.title_parts: list[str] = []
        self.title: str | None = None
        self.run: _Run | None = None
        self.read_chars = 0
        self.lost_chars = 0
        self.hidden_chars = 0  # text in hidden elements that were closed: not shown, not counted
        self.left_open: list[str] = []
        self.warnings: list[str] = []
        self.links = 0  # open <a> elements
        self.anchors = 0  # open <a> elements linking to the page itself
        self.has_main = False  # the page marks its main content

    # Feeding html.parser without its quadratic paths

    def read(self) -> None:
        text = self.text
        cut = text.rfind(">") + 1
        prefix, tail = text[:cut], text[cut:]
        for match in _COMMENT_CLOSE.finditer(prefix):
            self._last_comment_close = match.start()
        try:
            self.feed(prefix)
            self._base = cut - len(self.rawdata)
            self._pos = self._base
            self.close()
        except AssertionError as error:  # html.parser's own checks; none is known to fire
            raise ExtractError(
                "corrupt", f"html.parser failed near offset {self._pos}: {error}"
            ) from None
        self._settle(cut - len(self.rawdata))
        leftover = self.rawdata + tail
        if self.cdata_elem is not None or self.rawdata:
            # An unclosed <script> or <style>: the rest of the document is inside it.
            if self.veils:
                self.veils[-1].veil_chars += _non_ws(leftover)
        elif tail:
            self._pos = cut
            self.handle_data(unescape(tail))
            self._settle(len(text))
        self._finish()

    def updatepos(self, i: int, j: int) -> int:
        self._pos = self._base + j
        return j

    def parse_comment(self, i: int, report: bool = True) -> int:
        if self._base + i + 4 > self._last_comment_close:
            return -1  # no comment close follows: read as text up to the next ">"
        return int(super().parse_comment(i, report))

    def parse_html_declaration(self, i: int) -> int:
        if self.rawdata.startswith("<![", i):
            return int(self.parse_bogus_comment(i))
        return int(super().parse_html_declaration(i))

    def check_for_whole_start_tag(self, i: int) -> int:
        end = int(super().check_for_whole_start_tag(i))
        if end >= 0:
            return end
        rawdata = self.rawdata
        match = _START_TAG_END.match(rawdata, i)
        stop = match.end() if match else i + 1
        next_gt = rawdata.find(">", i + 1)
        if next_gt < 0 or stop > next_gt:
            # The pattern ran past the next ">" (through a quoted value) and the tag did not
            # end: what it ran over is read as text, so no character is scanned again.
            return max(stop, i + 1)
        return -1

    # html.parser's events

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self._pending is not None:
            self._settle(self._pos)
        self._start(tag, attrs)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._settle(self._pos)
        self._start(tag, attrs)
        if tag not in VOID:
            self._end(tag)

    def handle_endtag(self, tag: str) -> None:
        if self._pending is not None:
            self._settle(self._pos)
        self._end(tag)

    def handle_data(self, data: str) -> None:
        self._settle(self._pos)
        self._pending = (data, self._pos)

    def handle_comment(self, data: str) -> None:
        self._settle(self._pos)

    def handle_decl(self, decl: str) -> None:
        self._settle(self._pos)

    def handle_pi(self, data: str) -> None:
        self._settle(self._pos)

    def unknown_decl(self, data: str) -> None:
        self._settle(self._pos)

    # The stack

    def _owner(self) -> _Entry:
        return self.stack[-1].owner if self.stack else self.root

    def _entry(self, tag: str, kind: str, attrs: list[tuple[str, str | None]]) -> _Entry:
        entry = _Entry(tag, kind)
        parent = self.stack[-1] if self.stack else self.root
        entry.owner = parent.owner
        if kind in ("inline", "generic", "flat"):
            entry.barrier = parent.barrier
        entry.sink = self.scopes[-1].boundary.sink
        if attrs:
            hidden = _hidden_by(attrs)
            if hidden:
                entry.hidden = True
                entry.label = f"<{tag} {hidden}>"
            if tag == "a":
                entry.anchor = any(n == "href" and v and v.startswith("#") for n, v in attrs)
        if kind == "dropped":
            entry.dropped = True
            entry.label = f"<{tag}>"
            return entry
        if kind == "generic":
            return entry
        if parent.furniture is not None:
            entry.furniture = parent.furniture
        if parent.main:
            entry.main = True
        if (attrs or tag in SIGNAL_TAGS) and not (
            tag == "code" or parent.tag == "code" or entry.owner.tag in CODE
        ):
            # A highlighter's classes inside code ("token comment") name its syntax, not boxes.
            furniture, main = signals(tag, attrs)
            if furniture:
                entry.furniture = Furniture(furniture, entry.furniture)
        else:
            main = False
        if main or tag == "h1":
            if main:
                entry.main = True
                self.has_main = True
            if entry.furniture is not None and tag != "article":
                # An article can be a teaser in a sidebar; main content and a page's title can't.
                entry.furniture.make_content()
        return entry

    def _push(self, entry: _Entry) -> None:
        run = self.run
        if run is not None and run.owner is not entry.owner:
            self._flush()
        self.stack.append(entry)
        if entry.tag == "a":
            self.links += 1
            self.anchors += entry.anchor
        counts = self.scopes[-1].counts
        counts[entry.tag] = counts.get(entry.tag, 0) + 1
        if entry.kind in SCOPES:
            self.scopes.append(_Scope(entry, len(self.stack)))
        if entry.hidden or entry.dropped:
            entry.label += f" at line {self.lines.at(self._pos)}"
            self.veils.append(entry)
            self.hidden_depth += entry.hidden
            self.dropped_depth += entry.dropped
        if entry.sep:
            self._separate()

    def _pop(self) -> _Entry:
        entry = self.stack.pop()
        if entry.tag == "a":
            self.links -= 1
            self.anchors -= entry.anchor
        if entry.kind in SCOPES:
            self.scopes.pop()
        counts = self.scopes[-1].counts
        left = counts[entry.tag] - 1
        if left:
            counts[entry.tag] = left
        else:
            del counts[entry.tag]
        if entry.hidden or entry.dropped:
            self.veils.pop()
            self.hidden_depth -= entry.hidden
            self.dropped_depth -= entry.dropped
            if entry.hidden and not entry.dropped and not self.dropped_depth:
                self.hidden_chars += entry.veil_chars
        if entry is self.head:
            self.head = None
        if entry is self.title_entry:
            self.title_entry = None
            title = _collapse("".join(self.title_parts))
            if title and self.title is None:
                self.title = title
        if self.run is not None and self.run.owner is entry:
            self._flush()
        if entry.kind == "cell":
            self._close_cell(entry)
        elif entry.kind == "table":
            self._finish_table(entry)
        if entry.sep:
            self._separate()
        return entry

    def _pop_to(self, entry: _Entry) -> None:
        while self._pop() is not entry:
            pass

    def _pop_to_tag(self, tag: str) -> None:
        while self._pop().tag != tag:
            pass

    def _pop_scope_contents(self) -> None:
        base = self.scopes[-1].base
        stack = self.stack
        while len(stack) > base:
            self._pop()

    def _close_for_block(self, tag: str) -> None:
        """Close the open blocks a block starting here ends (their end tags left out)."""
        base = self.scopes[-1].base
        while len(self.stack) > base:
            barrier = self.stack[-1].barrier
            if barrier.kind not in ("block", "joined"):
                return
            if (
                barrier.tag in LEAF_BLOCKS
                or (tag == "li" and barrier.tag == "li")
                or (tag in DEFINITIONS and barrier.tag in DEFINITIONS)
            ):
                self._pop_to(barrier)
            else:
                return

    # Start tags

    def _start(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.head is not None and self.dropped_depth == 1 and tag not in HEAD_CONTENT:
            self._pop_to(self.head)  # an unclosed head closes at the first body element
        if self.dropped_depth:
            if tag not in VOID:
                entry = self._entry(tag, "dropped" if tag in DROPPED else "generic", attrs)
                if tag == "title" and self.head is not None and self.dropped_depth == 1:
                    self._collect_title(entry)
                self._push(entry)
            return
        boundary = self.scopes[-1].boundary
        if boundary.kind == "caption":
            self._start_in_caption(tag, attrs, boundary)
        elif boundary.kind == "cell" and tag in TABLE_PARTS:
            self._pop_to(boundary)
            self._start(tag, attrs)
        elif boundary.kind == "table" and tag in TABLE_PARTS:
            self._table_part(tag, attrs, boundary)
        elif boundary.kind == "table" and tag in ENDS_TABLE:
            self._pop_to(boundary)
            self._start(tag, attrs)
        else:
            self._flow_start(tag, attrs)

    def _flow_start(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in VOID:
            if tag in ("br", "hr"):
                self._separate()
            return
        if tag in DROPPED:
            entry = self._entry(tag, "dropped", attrs)
            if tag == "head":
                self.head = entry
            elif tag == "title":
                self._collect_title(entry)
            self._push(entry)
            return
        if tag == "table":
            self._close_for_block(tag)
            entry = self._entry(tag, "table", attrs)
            table = _Table(self.lines.at(self._pos))
            entry.table = table
            entry.out = entry.sink
            entry.sink = table.items
            entry.owner = entry
            self._push(entry)
            return
        if tag in BLOCKS or tag == "tr":
            self._close_for_block(tag)
            owner = self._owner()
            if tag == "p" and owner.kind == "block" and owner.tag == "li":
                entry = self._entry(tag, "joined", attrs)
                entry.sep = True
            else:
                entry = self._entry(tag, "block", attrs)
                entry.owner = entry
                if tag in HEADINGS:
                    entry.ptype, entry.depth = "heading", int(tag[1])
                elif tag in CODE:
                    entry.ptype = "code"
                elif tag == "li":
                    entry.ptype = "list"
            self._push(entry)
            return
        if tag in CONTAINERS:
            entry = self._entry(tag, "container", attrs)
            if entry.owner.kind in ("block", "cell") and not self._splits_off(entry):
                entry.sep = True  # a container inside a block (or a cell) leaves it open
            else:
                entry.owner = entry  # its text is a paragraph of its own
            self._push(entry)
            return
        entry = self._entry(tag, "inline", attrs)
        if self._splits_off(entry):
            entry.owner = entry
            entry.sep = True
        self._push(entry)

    def _splits_off(self, entry: _Entry) -> bool:
        """Whether the element opens furniture inside a block, outside any table: its text is
        a block of its own, so "212 comments" in a byline is furniture and the byline is not."""
        furniture = entry.furniture
        parent = self.stack[-1] if self.stack else self.root
        return (
            furniture is not None
            and furniture is not parent.furniture
            and self.scopes[-1].boundary is self.root
        )

    def _collect_title(self, entry: _Entry) -> None:
        if self.title is None and self.title_entry is None:
            self.title_entry = entry
            self.title_parts = []

    def _start_in_caption(
        self, tag: str, attrs: list[tuple[str, str | None]], caption: _Entry
    ) -> None:
        if tag in TABLE_PARTS and "table" not in self.scopes[-1].counts:
            self._pop_to(caption)
            self._start(tag, attrs)
            return
        if tag in VOID:
            if tag in ("br", "hr"):
                self._separate()
            return
        if tag in DROPPED:
            self._push(self._entry(tag, "dropped", attrs))
            return
        entry = self._entry(tag, "flat", attrs)
        entry.sep = tag in SEPARATING
        self._push(entry)

    def _table_part(self, tag: str, attrs: list[tuple[str, str | None]], boundary: _Entry) -> None:
        table = boundary.table
        assert table is not None
        if len(self.stack) > self.scopes[-1].base:
            self._pop_scope_contents()
        hidden = bool(_hidden_by(attrs))
        if tag == "tr":
            table.start_row(hidden)
        elif tag in CELLS:
            row = table.row or table.start_row(False)
            entry = self._entry(tag, "cell", attrs)
            cell = _Cell(_colspan(attrs), _rowspan(attrs))
            entry.cell = cell
            entry.sink = cell
            entry.owner = entry
            if row.hidden and not entry.hidden:
                entry.hidden = True
                entry.label = f"<{tag}> in a hidden row"
            self._push(entry)
        elif tag in ROW_GROUPS:
            table.new_group(hidden)
        elif tag == "caption":
            table.end_row()
            entry = self._entry(tag, "caption", attrs)
            entry.owner = entry
            entry.sink = table.items
            self._push(entry)
        else:  # col, colgroup
            table.end_row()

    # End tags

    def _end(self, tag: str) -> None:
        scope = self.scopes[-1]
        if tag == "br" and not self.dropped_depth:
            self._separate()  # </br> is read as <br>, as HTML does
            return
        if tag in scope.counts:
            self._pop_to_tag(tag)
            return
        boundary = scope.boundary
        if boundary.kind == "cell":
            if tag in CELLS:
                self._pop_to(boundary)
            elif tag in ROW_GROUPS or tag in ("tr", "table"):
                self._pop_to(boundary)
                self._end(tag)
        elif boundary.kind == "table":
            table = boundary.table
            assert table is not None
            if tag == "tr":
                self._pop_scope_contents()
                table.end_row()
            elif tag in ROW_GROUPS:
                self._pop_scope_contents()
                table.new_group(False)
            elif tag == "table":
                self._pop_to(boundary)
        elif boundary.kind == "caption":
            if tag == "caption":
                self._pop_to(boundary)
            elif tag == "table":
                self._pop_to(boundary)
                self._end(tag)

    # Text

    def _settle(self, end: int) -> None:
        """Read the pending text, now that its source runs up to `end`."""
        pending = self._pending
        if pending is None:
            return
        self._pending = None
        data, start = pending
        if self.dropped_depth:
            if self.head is not None and self.dropped_depth == 1 and not data.isspace():
                self._pop_to(self.head)  # an unclosed head closes at the first text
            else:
                if self.title_entry is not None and self.veils[-1] is self.title_entry:
                    self.title_parts.append(data)
                self.veils[-1].veil_chars += _non_ws(data)
                return
        count = _non_ws(data)
        if self.hidden_depth:
            self.veils[-1].veil_chars += count
            return
        if count == 0:
            if self.scopes[-1].boundary.kind != "table":
                self._add_text(data, None, 0)
            return
        first, last = _visible_bounds(self.text, start, end)
        self.read_chars += count
        self._add_text(data, self.lines.at(first), self.lines.at(last))
        if self.links and self.run is not None:
            self.run.links += count
            if self.anchors:
                self.run.anchors += count

    def _add_text(self, data: str, first: int | None, last: int) -> None:
        owner = self._owner()
        run = self.run
        if run is None or run.owner is not owner:
            self._flush()
            if first is None and owner.ptype != "code":
                return
            run = self.run = _Run(owner)
        run.pieces.append(data)
        if first is not None:
            if run.first is None:
                run.first = first
            run.last = last

    def _separate(self) -> None:
        run = self.run
        if run is not None and run.owner is self._owner():
            run.pieces.append("\n" if run.owner.ptype == "code" else " ")

    def _flush(self) -> None:
        run = self.run
        if run is None:
            return
        self.run = None
        if run.first is None:
            return
        raw = "".join(run.pieces)
        owner = run.owner
        if owner.ptype == "code":
            text = _LEADING_BLANK_LINES.sub("", raw.replace("\r\n", "\n").replace("\r", "\n"))
            text = text.rstrip()
        else:
            text = _collapse(raw)
        if not text:
            return
        assert owner.sink is not None
        block = _PBlock(owner.ptype, text, run.first, run.last, owner.depth)
        block.furniture, block.main, block.links = owner.furniture, owner.main, run.links
        block.anchors = run.anchors
        block.loose = owner.kind == "cell"
        block.in_table = owner.sink is not self.out
        owner.sink.add(block)

    # Tables

    def _close_cell(self, entry: _Entry) -> None:
        cell = entry.cell
        table = self.scopes[-1].boundary.table
        assert cell is not None and table is not None and table.row is not None
        if entry.hidden:
            return  # not shown, so it takes no place in its row
        if not cell.blocks and cell.colspan == 1 and cell.rowspan == 1:
            cell = _EMPTY_CELL
        table.row.cells.append(cell)
        table.items.blocks.append(cell)

    def _finish_table(self, entry: _Entry) -> None:
        table = entry.table
        out = entry.out
        assert table is not None and out is not None
        items = table.items.blocks
        if any(isinstance(item, _Cell) and item.lays_out for item in items):
            blocks: list[_PBlock] = []
            for item in items:
                if isinstance(item, _Cell):
                    blocks.extend(item.blocks)
                else:
                    blocks.append(item)
        else:
            blocks = [item for item in items if not isinstance(item, _Cell)]
            block = self._table_block(table)
            if block is not None:
                block.furniture, block.main = entry.furniture, entry.main
                blocks.append(block)
        out.add_table_output(blocks)

    def _table_block(self, table: _Table) -> _PBlock | None:
        grid = _place(table.rows)
        if grid is None:
            self.warnings.append(
                f"the table at line {table.line} places more than {tables.MAX_PLACED:,} cells: its cells"
                " are kept in source order, not placed in columns"
            )
            grid = _unplaced(table.rows)
        rows, first, last = grid
        if not rows:
            return None
        columns = len(rows[0])
        if columns == 1:
            return _PBlock("paragraph", "\n".join(row[0] for row in rows), first, last)
        block = _PBlock("table", "\n".join(" | ".join(row) for row in rows), first, last)
        block.attrs = {"table": {"rows": len(rows), "columns": columns}}
        block.joins = len(rows) * (columns - 1)
        return block

    # The end

    def _finish(self) -> None:
        open_veils = [veil for veil in self.veils if veil.veil_chars]
        if open_veils:
            self.lost_chars = sum(veil.veil_chars for veil in open_veils)
            self.left_open = [veil.label for veil in open_veils]
            for veil in open_veils:
                veil.veil_chars = 0  # counted as lost, not as hidden text
        self.title_entry = None  # a title left open holds the rest of the document: no title
        while self.stack:
            self._pop()
        self._flush()
        if self.hidden_chars:
            self.warnings.append(
                f"{self.hidden_chars} characters inside hidden elements (the hidden attribute,"
                " display:none) are not shown and are not read"
            )

    def _furniture_of(self, block: _PBlock) -> str:
        """The furniture a block is ("" for content): by the element it was read in, its words,
        or, outside a page's marked main content, its links."""
        furniture = block.furniture
        if furniture is not None and not furniture.content:
            kind = furniture.kind
            if not (block.main and kind in KEPT_IN_MAIN) and (
                kind not in WEAK_KINDS or self.has_main
            ):
                return kind
        if block.type == "table" or block.type == "code" or block.in_table:
            return ""  # a cell's words are the table's, whatever they say
        kind = text_kind(block.text, heading=block.type == "heading")
        if kind:
            return kind
        if (
            self.has_main
            and not block.main
            and block.type != "heading"
            and link_dense(block.links, _non_ws(block.text))
        ):
            return "links"
        return ""

    def _link_lists(self, kinds: list[str], chars: list[int]) -> dict[int, str]:
        """The headings and their runs of link items that are furniture (furniture.link_lists),
        and the news tickers (furniture.tickers)."""
        blocks = [
            LinkBlock(
                block.type,
                block.text,
                count,
                block.links,
                block.anchors,
                not kind and not block.in_table and block.type != "code",
            )
            for block, kind, count in zip(self.out.blocks, kinds, chars, strict=True)
        ]
        return {**tickers(blocks), **link_lists(blocks, self.has_main)}

    def artifact(self) -> Artifact:
        builder = BlockBuilder()
        extracted = 0
        kinds = [self._furniture_of(block) for block in self.out.blocks]
        chars = [_non_ws(block.text) for block in self.out.blocks]
        for index, kind in self._link_lists(kinds, chars).items():
            kinds[index] = kind
        if all(kinds):
            kinds = [""] * len(kinds)  # a page of nothing but furniture is its own content
        furniture: list[dict[str, Any]] = []
        for block, kind, count in zip(self.out.blocks, kinds, chars, strict=True):
            if kind:
                furniture.append(
                    {
                        "kind": kind,
                        "text": block.text,
                        "line_start": block.first,
                        "line_end": block.last,
                    }
                )
                extracted += count - block.joins
                continue
            where = {"line_start": block.first, "line_end": block.last}  # no char spans
            if block.type == "heading":
                assert block.depth is not None
                builder.heading(block.text, block.depth, where, block.attrs)
            else:
                builder.place(block.type, block.text, where, block.attrs, depth=block.depth)
            extracted += count - block.joins
        failed: list[dict[str, str]] = []
        if self.left_open:
            named = self.left_open[:MAX_NAMED]
            if len(self.left_open) > MAX_NAMED:
                named.append(f"and {len(self.left_open) - MAX_NAMED} more")
            failed.append(
                {
                    "unit": f"{self.lost_chars} chars",
                    "reason": "hidden or dropped by elements left open, which hide the rest of"
                    f" the document: {', '.join(named)}",
                }
            )
        if extracted != self.read_chars:
            failed.append(
                {
                    "unit": f"{abs(self.read_chars - extracted)} chars",
                    "reason": "read but not held by any block"
                    if extracted < self.read_chars
                    else "held by blocks beyond what was read",
                }
            )
            extracted = min(extracted, self.read_chars)
        total = self.read_chars + self.lost_chars
        attrs: dict[str, Any] = {}
        if self.title is not None:
            attrs["title"] = self.title
        if furniture:
            counted = ", ".join(
                f"{kind} {count}"
                for kind, count in sorted(Counter(part["kind"] for part in furniture).items())
            )
            self.warnings.append(
                f"page furniture left out of the blocks: {len(furniture)} blocks ({counted})"
                " in attrs.furniture"
            )
            attrs["furniture"] = _bounded(furniture)
            if len(attrs["furniture"]) < len(furniture):
                self.warnings.append(
                    f"attrs.furniture holds at most {MAX_FURNITURE:,} parts: runs of the"
                    f" {len(furniture):,} parts are joined, their text whole"
                )
        return build_artifact(
            "html",
            PARSER,
            PARSER_VERSION,
            builder.blocks,
            coverage("chars", total, extracted, failed),
            attrs=attrs,
            warnings=self.warnings,
        )


# Helpers


def _bounded(parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """At most MAX_FURNITURE parts: past it, runs of consecutive parts are joined into one (its
    text the run's lines, its span theirs, its kind theirs when they share one)."""
    if len(parts) <= MAX_FURNITURE:
        return parts
    size = -(-len(parts) // MAX_FURNITURE)
    joined = []
    for at in range(0, len(parts), size):
        run = parts[at : at + size]
        kinds = {part["kind"] for part in run}
        joined.append(
            {
                "kind": run[0]["kind"] if len(kinds) == 1 else "mixed",
                "text": "\n".join(part["text"] for part in run),
                "line_start": run[0]["line_start"],
                "line_end": max(part["line_end"] for part in run),
            }
        )
    return joined


_ASCII_WS = " \t\n\r\x0b\x0c\x1c\x1d\x1e\x1f"  # what str.isspace() and re's \s match in ASCII
# Whitespace _collapse must rewrite in ASCII text: two spaces, or any other than a space.
_ODD_ASCII_WS = re.compile("  |[" + re.escape(_ASCII_WS[1:]) + "]")


def _non_ws(text: str) -> int:
    """How many characters of the text are not whitespace (str.split's whitespace is re's \\s:
    both are str.isspace)."""
    return sum(map(len, text.split()))


def _collapse(text: str) -> str:
    """The text with each run of whitespace one space, and none at its ends."""
    if text.isascii() and _ODD_ASCII_WS.search(text) is None:
        return text.strip()
    return _WS.sub(" ", text).strip()


def _visible_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    """Offsets of the first and last source characters of visible text in text[start:end]:
    whitespace and character references that stand for whitespace (&nbsp;) are not."""
    first = _NON_WS.search(text, start, end)
    if first is None:
        return start, start
    position = first.start()
    while text[position] == "&":
        entity = _ENTITY.match(text, position, end)
        if entity is None or not unescape(entity.group()).isspace():
            break
        following = _NON_WS.search(text, entity.end(), end)
        if following is None:
            return start, start
        position = following.start()
    last = end - 1
    while last > position and text[last].isspace():
        last -= 1
    while last > position and (text[last] == ";" or text[last].isalnum()):
        amp = text.rfind("&", position, last + 1)
        if amp < 0:
            break
        entity = _ENTITY.match(text, amp, end)
        if entity is None or entity.end() != last + 1 or not unescape(entity.group()).isspace():
            break
        last = amp - 1
        while last > position and text[last].isspace():
            last -= 1
    return position, last


def _hidden_by(attrs: list[tuple[str, str | None]]) -> str:
    """How the attributes hide an element: "hidden", "style=display:none", or ""."""
    if not attrs:
        return ""
    for name, value in attrs:
        if name == "hidden":
            return "hidden"
        if name == "style" and value and _DISPLAY_NONE.search(value):
            return "style=display:none"
    return ""
