"""Markdown: a block parser after CommonMark's heading, fence, list and HTML-block rules.
Over 500 lines: one parser of the block rules that read each other (what may interrupt a
paragraph, a list item's content read by the same rules), kept together.

The parser reads the document line by line, and a list item's content by the same rules (its
lines de-indented to the item's content column); what a quote holds stays its text. A block's
text keeps the source's line endings between its lines (a CRLF file's texts hold "\r\n"), and
paragraph, list item, quote, footnote, heading and table cell text is read without its inline
markup (markdown_inline.py: emphasis, code span and link delimiters out, a link's text kept,
escapes and entities resolved); code, HTML blocks and front matter keep theirs. What each
construct becomes:

- Heading (ATX "# Title #", setext "Title" over "===" or "---", a one-line "<h2>Title</h2>"): a
  heading block, depth its level, text its cleaned title (markers, closing "#"s and HTML tags
  and inline markup removed, whitespace collapsed; a setext title's lines are joined with a
  space). Its span covers its line or lines,
  markup included. An empty ATX heading ("#", "# #") is markup: it ends the paragraph above it
  and is no block. An ATX heading whose title cleans to nothing ("# <img src=x>") stays
  paragraph text, as does a paragraph whose title would clean to nothing over "===" (over "---"
  that line is a thematic break).
- Section paths: every block's section_path holds the titles of the headings enclosing it; a
  heading's own path holds the headings above it, not itself. parent is the id of the innermost
  enclosing heading.
- Paragraph: a run of lines ended by a blank line or a line that may interrupt it (a fence, an
  ATX heading, a thematic break, a quote, an HTML block of start conditions 1-6, a bullet or an
  item numbered 1 that is not empty, a table's header row). Text: the lines as written, inline
  markup out.
- List: a run of items of one kind (the same bullet character, or ordered items with the same
  delimiter); another kind of marker starts another list. An item holds the lines indented to
  its content, and, until a blank line, lazy lines that start no other block. Each item is read
  as blocks of its own: each paragraph of it a list block (text without the marker, the lines
  de-indented; span from the marker's line), attrs.ordered and attrs.depth (1 for a top-level
  list, 2 for a list nested in its item, ...); its code, quotes, tables and nested lists are
  their own blocks, and its text after a nested list is a list block again. A heading inside an
  item is the item's text. A marker alone on its line is markup. Lists nested deeper than 32
  read their markers as text.
- Pipe table (GitHub-flavoured; markdown_tables.py): a header row over a delimiter row with as
  many cells (otherwise the lines are a paragraph), then body rows until a blank line or a line
  that is no row (no pipe, or the start of another block). One table block: a row per line (the
  delimiter row is markup), cells joined by " | ", each row as wide as the header (cells past it
  dropped, missing ones empty); attrs.table {rows, columns, header_rows 1, align (each column's
  "left", "center", "right" or null), row_lines (each row's source line)}; attrs.table_id names
  the artifact's typed table (tables[]: the body rows' cells typed as a CSV's, the header's
  cells as the column names as written, its line span and rows), so it becomes a dataset.
- Footnote definition ("[^note]: text"): a paragraph of its text without the marker, its lines
  until a blank line and the paragraphs after it indented four columns; attrs.footnote is its
  label. A footnote reference ("[^note]") is left out of the text.
- Thematic break ("***", "---", "- - -", "___"): markup, ends the paragraph or list above it, no
  block.
- Fenced code ("```" or "~~~", up to three spaces indent): a code block whose text is the body's
  lines without the fences (the fence's indentation removed from them) and whose span INCLUDES
  both fences (the opening fence to the closing one, or to the document's end for an unclosed
  fence). attrs.language is the info string's first word and attrs.info the rest, when present;
  an empty block is still a block and keeps them. A fence closes on a bare run of its character
  at least as long.
- Indented code (four columns or more, not inside a paragraph): a code block, text de-indented
  by four columns, attrs.indented = true.
- HTML block (CommonMark start conditions 1-7): one paragraph block as written, attrs.html =
  true. A block opened by a comment, "<?", "<![CDATA[", "<!X" or a raw-text tag (pre, script,
  style, textarea) ends on the line holding its end marker; one opened by a block-level tag or a
  line of only a complete tag ends at a blank line. A tag-only line cannot interrupt a paragraph
  and is its text.
- Blockquote: one paragraph block per quote, its lines with the ">" marker (and one space after
  it) stripped, lazy lines kept as written; its span covers its source lines. attrs.quote =
  true.
- YAML front matter: a first line "---", "key:" lines, and a closing "---" or "..." line, with
  no line that is an ATX heading ("# Title" is a heading, not a YAML comment) - one paragraph
  block with attrs.front_matter = true, text the lines between the delimiters, span including
  them.

Coverage counts non-blank lines: each lies in a block's span or is a thematic break or an empty
ATX heading; it is counted from the spans, so a line a parser change drops shows as a failed
unit.

Not read as structure (kept as paragraph text): link reference definitions, headings or lists
inside a quote, headings inside a list item, an HTML heading inside an open HTML block.
"""

from __future__ import annotations

import platform
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from extractor_sandbox.artifact import (
    BlockBuilder,
    Line,
    build_artifact,
    coverage,
    line_coverage,
    locator,
    source_slice,
    split_lines,
)
from extractor_sandbox.contract import Artifact
from extractor_sandbox.formats.markdown_inline import plain_inline, reference_labels
from extractor_sandbox.formats.markdown_tables import delimiter_row, split_row
from extractor_sandbox.formats.tables import (
    Budget,
    fit_names,
    table_entry,
    typed_cell,
)

PARSER = "loom-markdown"
PARSER_VERSION = f"3+python{platform.python_version()}"

_ATX = re.compile(r"(#{1,6})(?:[ \t]+(.*))?$")
_THEMATIC_BREAK = re.compile(r"(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
_SETEXT_UNDERLINE = re.compile(r"(=+|-+)[ \t]*$")
_FENCE = re.compile(r"(`{3,}|~{3,})(.*)$")
_BULLET = re.compile(r"([-+*])([ \t]|$)")
_ORDERED = re.compile(r"([0-9]{1,9})([.)])([ \t]|$)")
_ONE_LINE_HTML_HEADING = re.compile(
    r"<h([1-6])(?:\s[^>]*)?>((?:(?!</?h[1-6]\b).)*)</h\1\s*>[ \t]*$", re.IGNORECASE
)
# A comment ends at the first "-->" before another "<!--": many unclosed comments stay linear.
_HTML_TAG = re.compile(
    r"<!--(?:(?!<!--).)*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>", re.DOTALL
)
_WHITESPACE = re.compile(r"\s+")
_SPACES = re.compile(" *")
_FRONT_MATTER_KEY = re.compile(r"[^\s#:-][^:]*:(?:[ \t]|$)")
_FRONT_MATTER_HEADING = re.compile(r"#{1,6}(?:[ \t]|$)")

# CommonMark's HTML block start conditions.
_RAW_TEXT_START = re.compile(r"<(?:pre|script|style|textarea)(?:[ \t>]|$)", re.IGNORECASE)
_RAW_TEXT_END = re.compile(r"</(?:pre|script|style|textarea)>", re.IGNORECASE)
_BLOCK_TAG_NAMES = "|".join(
    """
    address article aside base basefont blockquote body caption center col colgroup dd details
    dialog dir div dl dt fieldset figcaption figure footer form frame frameset h1 h2 h3 h4 h5 h6
    head header hr html iframe legend li link main menu menuitem nav noframes ol optgroup option p
    param search section summary table tbody td tfoot th thead title tr track ul
    """.split()
)
_BLOCK_TAG_START = re.compile(rf"</?(?:{_BLOCK_TAG_NAMES})(?:[ \t>]|/>|$)", re.IGNORECASE)
_ATTRIBUTE = r"""\s+[A-Za-z_:][A-Za-z0-9_.:-]*(?:\s*=\s*(?:[^\s"'=<>`]+|'[^']*'|"[^"]*"))?"""
_TAG_ONLY_LINE = re.compile(
    rf"(?:<[A-Za-z][A-Za-z0-9-]*(?:{_ATTRIBUTE})*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>)[ \t]*$"
)
_MAY_START_BLOCK = frozenset("`~#*-_+>0123456789<")
_NEVER = 1 << 30  # an indentation no line reaches
# Lists nested deeper than this read their items' markers as text (a line of "- * - * ..." markers
# would otherwise nest a list per marker, a parser frame each).
MAX_LIST_DEPTH = 32
# A list item whose lines hold fewer characters than this is read from copies of its lines (a plain
# list, faster to read); a larger one from offsets into its parent's (_Lines), so that nesting does
# not copy a long document once per level.
_COPIED_ITEM_CHARS = 1 << 16
# The columns of a typed table the contract takes (the server's MAX_COLUMNS): the table block keeps
# every column, the typed table the first ones, the rest a failed unit.
MAX_TABLE_COLUMNS = 16_384
_DELIMITER_CHARS = re.compile(r"[ \t|:-]*\|[ \t|:-]*")
_FOOTNOTE_DEFINITION = re.compile(r"\[\^([^\]\s]+)\]:(?:[ \t]+(.*))?$")
_ENDS_AT_MARKER: dict[int, str] = {2: "-->", 3: "?>", 4: ">", 5: "]]>"}


def extract_markdown(
    text: str, options: Mapping[str, str] | None = None, *, name: str = ""
) -> Artifact:
    document = _Document(text, split_lines(text), reference_labels(text))
    _Parser(document, _Lines.whole(document.lines)).parse()
    blocks = document.builder.blocks
    read = line_coverage(document.lines, blocks, document.markup_lines)
    if document.failed:  # table rows past the tables' budget, a column name cut
        failed = [dict(unit) for unit in read["failed"]] + document.failed
        read = coverage("lines", read["total"], read["extracted"], failed, ["tables"])
    artifact = build_artifact("markdown", PARSER, PARSER_VERSION, blocks, read)
    if document.tables:
        artifact["tables"] = document.tables
    return artifact


@dataclass
class _Document:
    """What the parsers of a document and of its list items share."""

    text: str
    lines: list[Line]  # the source's lines
    references: frozenset[str]  # the labels link reference definitions define
    builder: BlockBuilder = field(default_factory=BlockBuilder)
    markup_lines: set[int] = field(default_factory=set)
    tables: list[dict[str, Any]] = field(default_factory=list)
    budget: Budget = field(default_factory=Budget)
    failed: list[dict[str, str]] = field(default_factory=list)


@dataclass(frozen=True)
class _Item:
    """The list item a parser reads the content of."""

    depth: int  # 1 for an item of a top-level list
    ordered: bool


@dataclass(frozen=True)
class _ListMarker:
    kind: str  # the bullet character, or the ordered delimiter "." or ")"
    ordinal: int | None  # an ordered item's number
    content_indent: int  # the column an item's continuation lines are indented to
    empty: bool  # nothing follows the marker on its line
    width: int  # the marker's own characters ("-", "10.")

    @property
    def ordered(self) -> bool:
        return self.ordinal is not None


@dataclass(frozen=True)
class _Fence:
    char: str
    length: int
    indent: int
    info: str


def _leading(content: str) -> tuple[int, str]:
    """The line's indentation in columns (a tab to the next multiple of 4) and the rest of it."""
    rest = content.lstrip(" \t")
    indentation = content[: len(content) - len(rest)]
    if "\t" not in indentation:
        return len(indentation), rest
    columns = 0
    for char in indentation:
        columns += 1 if char == " " else 4 - columns % 4
    return columns, rest


def _spaces(content: str) -> int:
    """The number of spaces the line starts with (a regex scan: str.lstrip(" ") is a call per
    character)."""
    return _SPACES.match(content).end() if content[:1] == " " else 0  # type: ignore[union-attr]


def _strip_columns(content: str, wanted: int) -> str:
    """The line without up to `wanted` columns of indentation (a tab past them leaves spaces)."""
    columns = 0
    for index, char in enumerate(content):
        if columns >= wanted:
            return content[index:]
        if char == " ":
            columns += 1
        elif char == "\t":
            width = 4 - columns % 4
            if columns + width > wanted:
                return " " * (columns + width - wanted) + content[index + 1 :]
            columns += width
        else:
            return content[index:]
    return ""


def _marker_text(line: Line) -> str | None:
    """The line from its first non-space character, when it is indented at most three columns."""
    indent, rest = _leading(line.content)
    return rest if indent <= 3 else None


def clean_title(raw: str) -> str:
    """A heading title without HTML tags and inline markup, whitespace collapsed."""
    return _WHITESPACE.sub(" ", plain_inline(_HTML_TAG.sub("", raw))).strip()


def _atx_title(line: Line) -> tuple[int, str] | None:
    """(level, raw title) of an ATX heading line; the raw title is empty for "#" or "# #"."""
    rest = _marker_text(line)
    if rest is None:
        return None
    match = _ATX.match(rest)
    if match is None:
        return None
    return len(match.group(1)), _without_closing_sequence(match.group(2) or "")


def _without_closing_sequence(title: str) -> str:
    """The title without an optional closing run of "#"s, which must follow a space or be all."""
    title = title.strip(" \t")
    before = title.rstrip("#")
    if before == title:
        return title
    if not before or before[-1] in " \t":
        return before.rstrip(" \t")
    return title


def _is_thematic_break(line: Line) -> bool:
    rest = _marker_text(line)
    return rest is not None and _THEMATIC_BREAK.match(rest) is not None


def _setext_level(line: Line) -> int | None:
    rest = _marker_text(line)
    if rest is None or rest[:1] not in ("=", "-"):
        return None
    match = _SETEXT_UNDERLINE.match(rest)
    if match is None:
        return None
    return 1 if match.group(1)[0] == "=" else 2


def _fence_open(line: Line) -> _Fence | None:
    indent, rest = _leading(line.content)
    if indent > 3:
        return None
    match = _FENCE.match(rest)
    if match is None:
        return None
    run, info = match.group(1), match.group(2).strip(" \t")
    if run[0] == "`" and "`" in info:
        return None
    return _Fence(run[0], len(run), indent, info)


def _closes_fence(line: Line, fence: _Fence) -> bool:
    rest = _marker_text(line)
    if rest is None:
        return False
    run = len(rest) - len(rest.lstrip(fence.char))
    return run >= fence.length and not rest[run:].strip(" \t")


def _list_marker(line: Line) -> _ListMarker | None:
    indent, rest = _leading(line.content)
    if indent > 3:
        return None
    bullet = _BULLET.match(rest)
    if bullet is not None:
        kind, ordinal, marker = bullet.group(1), None, bullet.group(1)
    else:
        ordered = _ORDERED.match(rest)
        if ordered is None:
            return None
        kind, ordinal, marker = (
            ordered.group(2),
            int(ordered.group(1)),
            ordered.group(1) + ordered.group(2),
        )
    after = rest[len(marker) :]
    spaces, content = _leading(after)
    # The spaces after the marker are counted from column 0, not the marker's own: a tab there may
    # be off by up to three columns, which only moves where continuation lines must start.
    empty = not content
    if empty or spaces > 4:
        spaces = 1
    return _ListMarker(kind, ordinal, indent + len(marker) + spaces, empty, len(marker))


def _html_start(line: Line) -> int | None:
    """The CommonMark HTML block start condition (1-7) the line opens, if any."""
    rest = _marker_text(line)
    if rest is None or not rest.startswith("<"):
        return None
    if _RAW_TEXT_START.match(rest):
        return 1
    if rest.startswith("<!--"):
        return 2
    if rest.startswith("<?"):
        return 3
    if rest.startswith("<![CDATA["):
        return 5
    if len(rest) > 2 and rest[1] == "!" and rest[2].isascii() and rest[2].isalpha():
        return 4
    if _BLOCK_TAG_START.match(rest):
        return 6
    if _TAG_ONLY_LINE.match(rest):
        return 7
    return None


def _html_ends(condition: int, content: str) -> bool:
    if condition == 1:
        return _RAW_TEXT_END.search(content) is not None
    return _ENDS_AT_MARKER[condition] in content


def _one_line_html_heading(line: Line) -> tuple[int, str] | None:
    rest = _marker_text(line)
    if rest is None:
        return None
    match = _ONE_LINE_HTML_HEADING.match(rest)
    if match is None:
        return None
    title = clean_title(match.group(2))
    return (int(match.group(1)), title) if title else None


def _is_quote(line: Line) -> bool:
    rest = _marker_text(line)
    return rest is not None and rest.startswith(">")


def _quote_content(line: Line) -> str:
    rest = _marker_text(line)
    if rest is None or not rest.startswith(">"):
        return line.content  # a lazy line, as written
    after = rest[1:]
    return after[1:] if after[:1] in (" ", "\t") else after


def _is_indented_code(line: Line) -> bool:
    return not line.is_blank and _leading(line.content)[0] >= 4


def _table_header(lines: Sequence[Line], index: int) -> list[str | None] | None:
    """The columns' alignments when lines[index] is a table's header row (a delimiter row with as
    many cells under it); None when it is not one."""
    if index + 1 >= len(lines):
        return None
    delimiter = lines[index + 1]
    if _DELIMITER_CHARS.fullmatch(delimiter.content) is None:
        return None  # most lines under a line with a pipe: not a delimiter row at all
    if _leading(delimiter.content)[0] > 3 or _leading(lines[index].content)[0] > 3:
        return None
    alignments = delimiter_row(delimiter.content)
    if alignments is None or len(split_row(lines[index].content)) != len(alignments):
        return None
    return alignments


def _cut(line: Line, offset: int) -> Line:
    """The line with its content from `offset` on."""
    return line._replace(content=line.content[offset:])


class _Lines(Sequence[Line]):
    """A parser's lines, each held as a line and the offset its content starts at, made whole
    (the content sliced) when first read.

    A list item's lines are its parent's without the item's indentation. Held as offsets into the
    same lines, with each line's leading spaces counted once at the top and handed down, a nesting
    level reads its item's lines in constant time each; copied and rescanned, as they were, a list
    indented one more space a line cost its nesting depth times the document's size, in time and
    in memory (every level's copies alive at once).
    """

    def __init__(self, held: list[Line], offsets: list[int], spaces: list[int]) -> None:
        self.held = held  # a source line, or one whose content an item rewrote
        self.offsets = offsets  # where each line's content starts in its held content
        self.spaces = spaces  # the spaces each line's content starts with

    @classmethod
    def whole(cls, lines: list[Line]) -> _Lines:
        """The document's lines as they are, counted when a list first needs them (counted)."""
        return cls(lines, [], [])

    def counted(self) -> None:
        """Fill in the document's offsets and spaces, once; an item's come filled in."""
        if len(self.spaces) < len(self.held):
            self.offsets = [0] * len(self.held)
            self.spaces = [_spaces(line.content) for line in self.held]

    def make_whole(self) -> None:
        """Cut every line's content at its offset now (each offset becomes 0)."""
        held, offsets = self.held, self.offsets
        for index, offset in enumerate(offsets):
            if offset:
                held[index] = _cut(held[index], offset)
                offsets[index] = 0

    def __len__(self) -> int:
        return len(self.held)

    @overload
    def __getitem__(self, index: int) -> Line: ...

    @overload
    def __getitem__(self, index: slice) -> list[Line]: ...

    def __getitem__(self, index: int | slice) -> Line | list[Line]:
        if isinstance(index, slice):
            return [self[at] for at in range(*index.indices(len(self.held)))]
        offset = self.offsets[index]
        if offset:  # made whole once, and kept: a parser reads a line it reads a few times
            self.held[index] = _cut(self.held[index], offset)
            self.offsets[index] = 0
        return self.held[index]

    def after_spaces(self, index: int) -> str:
        """The character after the line's leading spaces, "" when there is none."""
        at = self.offsets[index] + self.spaces[index]
        return self.held[index].content[at : at + 1]

    def is_blank(self, index: int) -> bool:
        """Line.is_blank, without reading the line past its leading spaces unless a tab follows."""
        at = self.offsets[index] + self.spaces[index]
        after = self.held[index].content[at : at + 1]
        return self[index].is_blank if after == "\t" else not after

    def columns(self, index: int) -> int:
        """The line's indentation in columns (_leading's), its counted spaces unless a tab
        follows them."""
        if self.after_spaces(index) == "\t":
            return _leading(self[index].content)[0]
        return self.spaces[index]


class _Parser:
    """Reads a run of lines into blocks: the document's, or a list item's content (its lines
    de-indented to the item's content column, each keeping its source line's number and span)."""

    def __init__(self, document: _Document, lines: _Lines, item: _Item | None = None) -> None:
        self.document = document
        self.text = document.text
        self.layout = lines  # each line's offset and leading spaces, for the checks that count
        # Lines held whole (the document's, a small item's) are read as the plain list they are.
        self.lines: Sequence[Line] = lines if any(lines.offsets) else lines.held
        self.builder = document.builder
        self.markup_lines = document.markup_lines
        self.item = item
        self.nests = item is None or item.depth < MAX_LIST_DEPTH  # reads list markers

    # Blocks and sections

    def _add(
        self, block_type: str, text: str, first: int, last: int, attrs: dict[str, Any] | None = None
    ) -> str:
        if self.item is not None and block_type == "paragraph" and not (attrs and "html" in attrs):
            # A list item's text: each of its paragraphs a list block of its own.
            attrs = {"ordered": self.item.ordered, "depth": self.item.depth, **(attrs or {})}
            block_type = "list"
        return self.builder.add(block_type, text, self.lines[first], self.lines[last], attrs=attrs)

    def _add_heading(self, depth: int, title: str, first: int, last: int) -> None:
        self.builder.heading(title, depth, locator(self.lines[first], self.lines[last]))

    def _slice(self, first: int, last: int) -> str:
        """The lines' text: as written at the top level, de-indented inside a list item."""
        if self.item is None:
            return source_slice(self.text, self.lines[first], self.lines[last])
        return self._joined([(line.content, line) for line in self.lines[first : last + 1]])

    def _plain(self, text: str) -> str:
        return plain_inline(text, self.document.references)

    def _joined(self, parts: list[tuple[str, Line]]) -> str:
        """Rebuilt lines joined by their own endings, the last one's left out."""
        pieces = [content + line.ending for content, line in parts[:-1]]
        if parts:
            pieces.append(parts[-1][0])
        return "".join(pieces)

    # The top level

    def parse(self) -> None:
        index = self._front_matter() if self.item is None else 0
        while index < len(self.lines):
            if self.lines[index].is_blank:
                index += 1
            else:
                index = self._block_at(index)

    def _block_at(self, index: int) -> int:
        """Read the block that starts at a non-blank line; return the index after it."""
        line = self.lines[index]
        content = line.content
        rest = content.lstrip(" ")
        if rest[:1] not in _MAY_START_BLOCK and len(content) - len(rest) < 4 and rest[:1] != "\t":
            return self._text_block_at(index)  # most lines: no marker starts with their character
        if _is_indented_code(line):
            return self._indented_code(index)
        fence = _fence_open(line)
        if fence is not None:
            return self._fenced_code(index, fence)
        if self.item is None:  # a heading inside a list item is the item's text
            atx = _atx_title(line)
            if atx is not None and not atx[1]:
                self.markup_lines.add(line.number)
                return index + 1
            if atx is not None and clean_title(atx[1]):
                self._add_heading(atx[0], clean_title(atx[1]), index, index)
                return index + 1
        if _is_thematic_break(line):
            self.markup_lines.add(line.number)
            return index + 1
        if self.item is None:
            html_heading = _one_line_html_heading(line)
            if html_heading is not None:
                self._add_heading(html_heading[0], html_heading[1], index, index)
                return index + 1
        condition = _html_start(line)
        if condition is not None:
            return self._html_block(index, condition)
        if _is_quote(line):
            return self._quote(index)
        marker = _list_marker(line) if self.nests else None
        if marker is not None:
            return self._list(index, marker)
        return self._text_block_at(index)

    def _text_block_at(self, index: int) -> int:
        """A table, a footnote definition or a paragraph, at a line no other block starts at."""
        line = self.lines[index]
        if "|" in line.content:
            alignments = _table_header(self.lines, index)
            if alignments is not None:
                return self._table(index, alignments)
        if line.content.lstrip(" ")[:2] == "[^":
            footnote = _FOOTNOTE_DEFINITION.match(line.content.lstrip(" "))
            if footnote is not None and _leading(line.content)[0] <= 3:
                return self._footnote(index, footnote.group(1), footnote.group(2) or "")
        return self._paragraph(index)

    def _interrupts_paragraph(self, line: Line) -> bool:
        if line.content[:4] == "    ":
            return False  # every marker below is indented three columns at most: no scan needed
        if line.content.lstrip(" \t")[:1] not in _MAY_START_BLOCK:
            return False  # most prose lines: no block starts with their first character
        if _fence_open(line) is not None or _is_thematic_break(line) or _is_quote(line):
            return True
        if self.item is None:
            atx = _atx_title(line)
            if atx is not None and (not atx[1] or clean_title(atx[1])):
                return True
        condition = _html_start(line)
        if condition is not None and condition != 7:
            return True
        if not self.nests:
            return False
        marker = _list_marker(line)
        return (
            marker is not None and not marker.empty and (not marker.ordered or marker.ordinal == 1)
        )

    def _paragraph(self, first: int) -> int:
        index = first + 1
        while index < len(self.lines):
            line = self.lines[index]
            if line.is_blank:
                break
            if "|" in line.content and _table_header(self.lines, index) is not None:
                break
            underline = self.item is None and line.content.lstrip(" ")[:1] in ("=", "-")
            level = _setext_level(line) if underline else None
            if level is not None:
                title = clean_title(
                    " ".join(self.lines[i].content.strip() for i in range(first, index))
                )
                if title:
                    self._add_heading(level, title, first, index)
                    return index + 1
                if _is_thematic_break(line):
                    break
                index += 1
                continue
            if not self._interrupts_paragraph(line):
                index += 1
                continue
            break
        self._add("paragraph", self._plain(self._slice(first, index - 1)), first, index - 1)
        return index

    def _fenced_code(self, opening: int, fence: _Fence) -> int:
        index = opening + 1
        while index < len(self.lines) and not _closes_fence(self.lines[index], fence):
            index += 1
        closed = index < len(self.lines)
        body = [
            (_strip_columns(line.content, fence.indent), line)
            for line in self.lines[opening + 1 : index]
        ]
        attrs: dict[str, Any] = {}
        if fence.info:
            language, *rest = fence.info.split(None, 1)
            attrs["language"] = language
            if rest:
                attrs["info"] = rest[0].strip()
        last = index if closed else len(self.lines) - 1
        self._add("code", self._joined(body), opening, last, attrs)
        return last + 1

    def _indented_code(self, first: int) -> int:
        index = first
        last = first
        while index < len(self.lines):
            line = self.lines[index]
            if _is_indented_code(line):
                last = index
            elif not line.is_blank:
                break
            index += 1
        body = [(_strip_columns(line.content, 4), line) for line in self.lines[first : last + 1]]
        self._add("code", self._joined(body), first, last, {"indented": True})
        return last + 1

    def _html_block(self, first: int, condition: int) -> int:
        index = first
        if condition <= 5:
            while index < len(self.lines) and not _html_ends(condition, self.lines[index].content):
                index += 1
            last = min(index, len(self.lines) - 1)
        else:
            while index + 1 < len(self.lines) and not self.lines[index + 1].is_blank:
                index += 1
            last = index
        self._add("paragraph", self._slice(first, last), first, last, {"html": True})
        return last + 1

    def _quote(self, first: int) -> int:
        index = first + 1
        while index < len(self.lines):
            line = self.lines[index]
            if line.is_blank:
                break
            if not _is_quote(line) and self._interrupts_paragraph(line):
                break
            index += 1
        parts = [(_quote_content(line), line) for line in self.lines[first:index]]
        text = self._plain(self._joined(parts))
        self._add("paragraph", text, first, index - 1, {"quote": True})
        return index

    def _footnote(self, first: int, label: str, rest: str) -> int:
        """A footnote definition: a paragraph of its text without the "[^label]:" marker, its
        lines until a blank line, and the paragraphs after it indented four columns."""
        index = first + 1
        while index < len(self.lines):
            line = self.lines[index]
            if line.is_blank or self._interrupts_paragraph(line):
                break
            index += 1
        last = index - 1
        while index < len(self.lines):
            line = self.lines[index]
            if not line.is_blank:
                if _leading(line.content)[0] < 4:
                    break
                last = index
            index += 1
        parts = [(rest, self.lines[first])] + [
            (_strip_columns(line.content, 4).strip(" \t"), line)
            for line in self.lines[first + 1 : last + 1]
        ]
        text = self._plain(self._joined(parts)).strip()
        if text:
            self._add("paragraph", text, first, last, {"footnote": label})
        else:
            self.markup_lines.update(line.number for line in self.lines[first : last + 1])
        return last + 1

    def _table(self, first: int, alignments: list[str | None]) -> int:
        """A pipe table: one table block, a row per line (the delimiter row left out), its cells
        joined by " | ", and the artifact's typed table of its body rows under its header."""
        width = len(alignments)
        rows = [first]
        index = first + 2
        while index < len(self.lines):
            line = self.lines[index]
            if line.is_blank or "|" not in line.content or self._interrupts_paragraph(line):
                break
            rows.append(index)
            index += 1
        grid: list[list[str]] = []
        for row in rows:
            cells = split_row(self.lines[row].content)[:width]
            cells += [""] * (width - len(cells))
            grid.append([_WHITESPACE.sub(" ", self._plain(cell)).strip() for cell in cells])
        document = self.document
        table_id = f"t{len(document.tables)}"
        attrs = {
            "table": {
                "rows": len(grid),
                "columns": width,
                "header_rows": 1,
                "align": alignments,
                "row_lines": [self.lines[row].number for row in rows],
            },
            "table_id": table_id,
        }
        last = index - 1
        self._add("table", "\n".join(" | ".join(row) for row in grid), first, last, attrs)
        kept = min(width, MAX_TABLE_COLUMNS)
        names, failed = fit_names(grid[0][:kept], f"{table_id} header")
        if kept < width:
            failed.append(
                {
                    "unit": f"{table_id} columns {kept + 1}-{width}",
                    "reason": f"past the {MAX_TABLE_COLUMNS:,} columns a table holds",
                }
            )
        body = [[typed_cell(cell) for cell in row[:kept]] for row in grid[1:]]
        admitted, reason = document.budget.admit_rows(body, 0)
        if reason is not None:
            failed.append({"unit": f"{table_id} rows {admitted + 2}-", "reason": reason})
            body = body[:admitted]
        document.failed += failed
        document.tables.append(
            table_entry(
                table_id,
                f"table {len(document.tables) + 1}",
                names,  # as written: the datasets name an empty or repeated one and ask
                body,
                locator={
                    "line_start": self.lines[first].number,
                    "line_end": self.lines[last].number,
                    "row_start": 1,
                    "row_end": 1 + len(body),
                },
            )
        )
        return index

    def _list(self, first: int, marker: _ListMarker) -> int:
        """A run of items of one kind; each item's content is read as blocks of its own."""
        self.layout.counted()
        content_indent = marker.content_indent
        item_is_empty = marker.empty
        items = [(first, marker)]
        last = first
        index = first + 1
        while index < len(self.lines):
            if self.layout.is_blank(index):
                if item_is_empty and last == index - 1:
                    # A marker alone over a blank line is an empty item: no line below joins it.
                    content_indent = _NEVER
                index += 1
                continue
            after_blank = last < index - 1
            if self.layout.columns(index) >= content_indent:
                item_is_empty = False
                last = index
                index += 1
                continue
            line = self.lines[index]  # made whole only here, past the item's indented lines
            if _is_thematic_break(line):
                break
            elif (item := _list_marker(line)) is not None and item.kind == marker.kind:
                content_indent = item.content_indent
                item_is_empty = item.empty
                last = index
                items.append((index, item))
            elif not after_blank and not self._interrupts_paragraph(line):
                last = index  # a lazy continuation of the item's paragraph
            else:
                break
            index += 1
        depth = 1 if self.item is None else self.item.depth + 1
        for number, (start, item_marker) in enumerate(items):
            end = items[number + 1][0] - 1 if number + 1 < len(items) else last
            self._item(start, end, item_marker, depth)
        return last + 1

    def _item(self, first: int, last: int, marker: _ListMarker, depth: int) -> None:
        """Read one item's content: its first line after the marker, the lines indented to its
        content column without that indentation, lazy lines as written."""
        line = self.lines[first]
        indent, rest = _leading(line.content)
        opening = ""
        if not marker.empty:
            spaces = marker.content_indent - indent - marker.width
            opening = _strip_columns(rest[marker.width :], spaces)
        else:
            self.markup_lines.add(line.number)  # the marker alone: its content starts below
        held, offsets, counted = [line._replace(content=opening)], [0], [_spaces(opening)]
        wanted = marker.content_indent
        lines = self.layout
        characters = 0
        for index in range(first + 1, last + 1):
            line, offset, leading = lines.held[index], lines.offsets[index], lines.spaces[index]
            after = line.content[offset + leading : offset + leading + 1]  # lines.after_spaces
            if not after or (after == "\t" and lines.is_blank(index)):
                line, offset, leading = line._replace(content=""), 0, 0
            elif after != "\t" and leading >= wanted:
                offset, leading = offset + wanted, leading - wanted  # its indentation cut
            elif lines.columns(index) >= wanted:  # a tab in the indentation
                stripped = _strip_columns(lines[index].content, wanted)
                line, offset, leading = line._replace(content=stripped), 0, _spaces(stripped)
            # otherwise a lazy line, as written
            held.append(line)
            offsets.append(offset)
            counted.append(leading)
            characters += len(line.content) - offset
        content = _Lines(held, offsets, counted)
        if characters < _COPIED_ITEM_CHARS:
            content.make_whole()
        _Parser(self.document, content, _Item(depth, marker.ordered)).parse()

    # Front matter

    def _front_matter(self) -> int:
        """Read leading YAML front matter into one block; return the index after it (0 if none)."""
        if not self.lines or self.lines[0].content.rstrip(" \t") != "---":
            return 0
        closing = next(
            (
                index
                for index in range(1, len(self.lines))
                if self.lines[index].content.rstrip(" \t") in ("---", "...")
            ),
            None,
        )
        if closing is None:
            return 0
        body = self.lines[1:closing]
        filled = [line.content for line in body if not line.is_blank]
        if not filled or not _FRONT_MATTER_KEY.match(filled[0]):
            return 0
        if any(_FRONT_MATTER_HEADING.match(content) for content in filled):
            return 0
        text = self._slice(1, closing - 1) if closing > 1 else ""
        self._add("paragraph", text, 0, closing, {"front_matter": True})
        return closing + 1
