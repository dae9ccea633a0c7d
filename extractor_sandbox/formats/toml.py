"""TOML: tomllib decides validity, types and values; a line scanner finds lines, comments and text.

A valid file (one tomllib reads, every integer within signed 64 bits) becomes:

- A toml_table block per table header ("[a.b]", "[[servers]]"). Its text is the header line as
  written from its "[" (a comment after it kept), under the comment lines directly above it;
  section_path and locator.key_path are the table's path.
- A toml_key block per key that starts a line ("port = 1", "a.b.c = 1" is one key block for
  a.b.c). The contents of an inline table or an array stay in their key's block: its text and
  attrs.value hold them, and they have no blocks or keys of their own. Its text is
  "<full path> = <value text>": the full path in place of the key as written, then the value as
  written to the end of the line it ends on (a comment after it kept, trailing spaces dropped), so
  a value that spans lines (a multi-line string, an array, an inline table holding one) keeps its
  lines, their endings and any comment lines inside an array. Comment lines directly above it
  come first.
- Comments: a run of comment lines with no blank line between it and the next table header or key
  goes into that block's text (each comment line without its indentation, followed by its own
  line ending) and its line span. A run of comment lines that a blank line or the end of the file
  ends is a paragraph block of its own (same text rule), under the table it is in.
- Paths: a part is written bare when it is a bare key ([A-Za-z0-9_-]+), else as a basic string
  ("a.b" in quotes, escapes as TOML writes them); an element of an array of tables carries its
  0-based index (servers[1].name). A block's keys are its full path, its index-free form
  (servers.name) and, when a part is quoted, both of those with every part unquoted
  (site.google.com for site."google.com"): the exact names a reader looks it up by.
- section_path is the table's path, one entry per part (its index attached: ["servers[1]"]); a
  key's parent is its table's block (none at the root), and a table's parent is the block of the
  nearest enclosing table that has a header ([a] for [a.b], the element of [[fruits]] for
  [fruits.physical]).
- Locators hold line_start, line_end and, on table and key blocks, key_path (the full path; left
  out, as its key is, past 1,024 characters); no char offsets.
- attrs.value_type is string, integer, float, boolean, datetime, date, time, array or table (an
  inline table); attrs.value is the value as JSON, a date or time as its ISO text, an infinite or
  NaN float as "inf", "-inf" or "nan" (at any depth); attrs.value is left out of a value nested
  deeper than 8 arrays or tables (its text stays whole).
- Coverage is in keys: total is the key blocks plus every value tomllib read that no table or key
  block holds (each a failed unit naming its path, a guard against a scanner that drops a line),
  extracted is the key blocks.

An invalid file (a tomllib error, an integer outside signed 64 bits, nesting deeper than tomllib's
recursion reaches, or a file the scanner cannot follow) is kept as text: a paragraph block per run
of non-blank lines, with line and char spans, coverage in non-blank lines (counted from the
blocks' spans), coverage.lost = ["toml_types"], and the reason as a warning and as the failed unit
naming the line (tomllib's "at line N") or, for an integer, the key path and its line.
"""

from __future__ import annotations

import bisect
import datetime
import math
import platform
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from extractor_sandbox.artifact import (
    BlockBuilder,
    Line,
    build_artifact,
    coverage,
    cycle_collection_paused,
    line_coverage,
    source_slice,
    split_lines,
)
from extractor_sandbox.contract import Artifact, Coverage, FailedUnit

PARSER = "loom-toml"
PARSER_VERSION = f"1+python{platform.python_version()}"

MAX_VALUE_DEPTH = 8  # attrs.value is left out of a value nested deeper than this
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
LOST_TYPES = "toml_types"
_PLAIN = frozenset({str, int, bool})  # JSON as they are

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
# No possessive quantifier or atomic group: Python before 3.11.5 matches them wrongly over an
# alternation, and the extractor's environment is built on the system's Python (3.11.2 here).
# Each string is an "unrolled loop" instead, normal* (special normal*)*: every character can
# match one way only, so a string that does not close fails in linear time, not exponential.
_BASIC_KEY = re.compile(r'"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"')
_LITERAL_KEY = re.compile(r"'[^'\r\n]*'")
_SPACES = re.compile(r"[ \t]*")
_ESCAPE = re.compile(r"\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|x([0-9A-Fa-f]{2})|(.))", re.DOTALL)
_SIMPLE_ESCAPES = {
    "b": "\b",
    "t": "\t",
    "n": "\n",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    '"': '"',
    "\\": "\\",
}
_WRITTEN_ESCAPES = {"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f\x7f]')
_ML_BASIC = re.compile(r'"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"{3,5}', re.DOTALL)
_ML_LITERAL = re.compile(r"'''[^']*(?:'(?!'')[^']*)*'{3,5}")
# One token inside an array or inline table; "other" is anything no token below starts with.
_INNER_TOKEN = re.compile(
    r"""
    (?P<string>"{3}[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"{3,5}
      |'{3}[^']*(?:'(?!'')[^']*)*'{3,5}
      |"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"
      |'[^'\r\n]*')
    |(?P<comment>\#[^\r\n]*)
    |(?P<open>[\[{])
    |(?P<close>[\]}])
    |(?P<other>[^"'\#\[\]{}]+)
    """,
    re.VERBOSE | re.DOTALL,
)
_TOMLLIB_LINE = re.compile(r"\(at line (\d+), column \d+\)")

# A concrete path: key parts (str) and array-of-tables indices (int), in order.
Path = tuple[str | int, ...]


class _ScanError(Exception):
    """The scanner cannot follow the text at `line` (a file tomllib read, so a scanner defect)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(f"line {line}: {message}")
        self.line = line


class _InvalidToml(Exception):
    """The file is kept as text: `unit` names where (line N, a key path), `reason` says why."""

    def __init__(self, unit: str, reason: str) -> None:
        super().__init__(reason)
        self.unit = unit
        self.reason = reason


def extract_toml(text: str, options: Mapping[str, str], *, name: str = "") -> Artifact:
    """The artifact of a TOML file; `options` (the encoding) were applied by the caller."""
    del options  # TOML takes no option of its own
    # Its key tree and blocks hold no reference cycle: pausing the collector frees nothing late.
    with cycle_collection_paused():
        return _extract_toml(text)


def _extract_toml(text: str) -> Artifact:
    lines = split_lines(text)
    try:
        document = _load(text)
        too_large = _integer_outside_int64(document)
        scan = _Scanner(text, lines, document)
        scan.scan()  # also for a too-large integer: it finds the key's line
        if too_large is not None:
            path, number = too_large
            line = scan.line_of(path)
            where = f"line {line}" if line is not None else render_path(path)
            raise _InvalidToml(
                where,
                f"invalid TOML: the integer {number} at {render_path(path)} is outside signed 64"
                " bits",
            )
    except _ScanError as error:
        return _as_text(
            text, lines, _InvalidToml(f"line {error.line}", f"the scanner cannot read {error}")
        )
    except _InvalidToml as error:
        return _as_text(text, lines, error)
    return build_artifact(
        "toml",
        PARSER,
        PARSER_VERSION,
        scan.builder.blocks,
        scan.coverage(),
    )


def _load(text: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        message = str(error)
        match = _TOMLLIB_LINE.search(message)
        unit = f"line {match.group(1)}" if match else "end of document"
        raise _InvalidToml(unit, f"invalid TOML: {message}") from None
    except RecursionError:
        raise _InvalidToml(
            "document", "TOML not read: values nested deeper than tomllib's recursion reaches"
        ) from None


def _as_text(text: str, lines: list[Line], error: _InvalidToml) -> Artifact:
    """An invalid file: a paragraph per run of non-blank lines, its TOML types lost."""
    builder = BlockBuilder()
    first: Line | None = None
    previous: Line | None = None
    for line in lines:
        if line.is_blank:
            if first is not None and previous is not None:
                builder.add("paragraph", source_slice(text, first, previous), first, previous)
            first = None
        elif first is None:
            first = line
        previous = line
    if first is not None and previous is not None:
        builder.add("paragraph", source_slice(text, first, previous), first, previous)
    lines_read = line_coverage(lines, builder.blocks)
    reason = f"{error.reason}; kept as text, its keys, types and values not read"
    return build_artifact(
        "toml",
        PARSER,
        PARSER_VERSION,
        builder.blocks,
        coverage(
            lines_read["unit"],
            lines_read["total"],
            lines_read["extracted"],
            [*lines_read["failed"], FailedUnit(unit=error.unit, reason=reason)],
            [LOST_TYPES],
        ),
        warnings=[f"{error.unit}: {reason}"],
    )


# Paths


def render_part(part: str) -> str:
    """A key part as TOML writes it: bare when it can be, else a basic string."""
    if _BARE_KEY.fullmatch(part):
        return part
    return '"' + _NEEDS_ESCAPE.sub(_escape, part) + '"'


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in ('"', "\\"):
        return "\\" + char
    return _WRITTEN_ESCAPES.get(char, f"\\u{ord(char):04X}")


def render_path(path: Path, *, quoted: bool = True, indices: bool = True) -> str:
    """servers[1].name; `indices=False` leaves the indices out, `quoted=False` the quotes."""
    pieces: list[str] = []
    for element in path:
        if isinstance(element, int):
            if indices:
                pieces.append(f"[{element}]")
        else:
            if pieces:
                pieces.append(".")
            pieces.append(render_part(element) if quoted else element)
    return "".join(pieces)


def path_keys(path: Path) -> list[str]:
    """The exact names a block is looked up by: its full path, index-free, and unquoted forms."""
    names = [render_path(path), render_path(path, indices=False)]
    if any(isinstance(part, str) and not _BARE_KEY.fullmatch(part) for part in path):
        names += [
            render_path(path, quoted=False),
            render_path(path, quoted=False, indices=False),
        ]
    keys: list[str] = []
    for name in names:
        if name and name not in keys:
            keys.append(name)
    return keys


def section_entries(path: Path) -> list[str]:
    """A table path as section path entries: one per part, its index attached (servers[1])."""
    entries: list[str] = []
    for element in path:
        if isinstance(element, int):
            entries[-1] += f"[{element}]"
        else:
            entries.append(render_part(element))
    return entries


def _decode_basic(body: str) -> str:
    return _ESCAPE.sub(_unescape, body)


def _unescape(match: re.Match[str]) -> str:
    code = match.group(1) or match.group(2) or match.group(3)
    if code is not None:
        return chr(int(code, 16))
    return _SIMPLE_ESCAPES.get(match.group(4), match.group(4))


# Values


def value_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, datetime.datetime):
        return "datetime"
    if isinstance(value, datetime.date):
        return "date"
    if isinstance(value, datetime.time):
        return "time"
    if isinstance(value, list):
        return "array"
    return "table"


def json_value(value: object) -> Any:
    """The value as JSON: dates and times as ISO text, inf and nan as text."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        return value
    if isinstance(value, (datetime.date, datetime.time)):  # datetime is a date
        return value.isoformat()
    if isinstance(value, list):
        return [item if type(item) in _PLAIN else json_value(item) for item in value]
    if isinstance(value, dict):
        return {key: json_value(item) for key, item in value.items()}
    return value


def nested_deeper_than(value: object, bound: int) -> bool:
    """Whether arrays and tables nest in `value` deeper than `bound` ([] is 1, a scalar 0)."""
    if not isinstance(value, (list, dict)):
        return False
    if bound <= 0:
        return True
    items = value.values() if isinstance(value, dict) else value
    return any(nested_deeper_than(item, bound - 1) for item in items)


def _integer_outside_int64(document: dict[str, Any]) -> tuple[Path, int] | None:
    """The first integer (by its path) outside signed 64 bits, walked without recursion."""
    stack: list[tuple[Path, dict[str, Any] | list[Any]]] = [((), document)]
    while stack:
        path, container = stack.pop()
        items = container.items() if isinstance(container, dict) else enumerate(container)
        nested: list[tuple[Path, dict[str, Any] | list[Any]]] = []
        for key, item in items:
            if isinstance(item, (dict, list)):
                nested.append((path + (key,), item))
            elif type(item) is int and not INT64_MIN <= item <= INT64_MAX:
                return path + (key,), item
        stack.extend(reversed(nested))
    return None


# The scanner


def _after_spaces(text: str, pos: int) -> int:
    match = _SPACES.match(text, pos)
    assert match is not None  # "[ \t]*" matches everywhere
    return match.end()


@dataclass
class _Node:
    """A path trie node: a table's or key's place, the blocks there and its arrays of tables."""

    children: dict[str | int, _Node] = field(default_factory=dict)
    elements: int = 0  # how many [[...]] elements an array of tables has had so far
    table_block: str | None = None  # the id of the toml_table block with this path
    held: bool = False  # a key block holds the value here
    key_line: int | None = None  # the line its key or header is on

    def child(self, element: str | int) -> _Node:
        node = self.children.get(element)
        if node is None:
            node = self.children[element] = _Node()
        return node


@dataclass
class _Table:
    path: Path
    block_id: str | None


class _Scanner:
    """Reads a file tomllib accepted line by line, making its blocks in order."""

    def __init__(self, text: str, lines: list[Line], document: dict[str, Any]) -> None:
        self.text = text
        self.lines = lines
        self.starts = [line.start for line in lines]
        self.document = document
        self.builder = BlockBuilder()
        self.root = _Node()
        self.table = _Table((), None)
        self.comments: list[Line] = []  # the comment lines above the next table or key
        self.key_blocks = 0

    # Walking the text

    def scan(self) -> None:
        text = self.text
        pos = 0
        while pos < len(text):
            line = self._line_at(pos)
            pos = _after_spaces(text, pos)
            char = text[pos : pos + 1]
            if char in ("", "\r", "\n"):
                self._flush_comments()  # a blank line ends a comment run
            elif char == "#":
                self.comments.append(line)
            elif char == "[":
                self._header(line, pos)
            else:
                line = self._key_value(line, pos)
            pos = line.end + len(line.ending)
        self._flush_comments()

    def _line_at(self, pos: int) -> Line:
        return self.lines[bisect.bisect_right(self.starts, pos) - 1]

    def _flush_comments(self) -> None:
        if not self.comments:
            return
        first, last = self.comments[0], self.comments[-1]
        block_id = self.builder.add(
            "paragraph",
            self._comment_text().rstrip("\r\n"),
            first,
            last,
            section_path=section_entries(self.table.path),
            parent=self.table.block_id,
        )
        self._set_locator(block_id, first.number, last.number, None)
        self.comments = []

    def _comment_text(self) -> str:
        return "".join(line.content.strip(" \t") + line.ending for line in self.comments)

    def _take_comments(self, line: Line) -> tuple[str, Line]:
        """The comment lines above the block's first line, as its text's start, and its first."""
        first = self.comments[0] if self.comments else line
        prefix = self._comment_text()
        self.comments = []
        return prefix, first

    # Table headers

    def _header(self, line: Line, pos: int) -> None:
        text = self.text
        array = text.startswith("[[", pos)
        parts, end = self._key(line, pos + (2 if array else 1))
        end = _after_spaces(text, end)
        closing = "]]" if array else "]"
        if not text.startswith(closing, end):
            raise _ScanError(line.number, f"no {closing!r} closes the table header")
        node, path, parent = self._table_node(line, parts, array)
        prefix, first = self._take_comments(line)
        header = text[pos : line.end].rstrip(" \t")
        block_id = self.builder.add(
            "toml_table",
            prefix + header,
            first,
            line,
            section_path=section_entries(path),
            parent=parent,
            keys=path_keys(path),
        )
        self._set_locator(block_id, first.number, line.number, render_path(path))
        node.table_block = block_id
        node.key_line = line.number
        self.table = _Table(path, block_id)

    def _table_node(
        self, line: Line, parts: list[str], array: bool
    ) -> tuple[_Node, Path, str | None]:
        """The header's node, its concrete path (indices resolved) and its parent block's id."""
        node = self.root
        path: list[str | int] = []
        parent: str | None = None
        for number, part in enumerate(parts):
            if node.table_block is not None:
                parent = node.table_block
            node = node.child(part)
            path.append(part)
            last = number == len(parts) - 1
            if array and last:
                node.elements += 1
            if node.elements:
                index = node.elements - 1
                node = node.child(index)
                path.append(index)
        if node.table_block is not None:
            raise _ScanError(line.number, f"table {render_path(tuple(path))} declared twice")
        return node, tuple(path), parent

    # Keys

    def _key_value(self, line: Line, pos: int) -> Line:
        """Make the block of the key at `pos`; returns the line its value ends on."""
        text = self.text
        parts, end = self._key(line, pos)
        end = _after_spaces(text, end)
        if not text.startswith("=", end):
            raise _ScanError(line.number, "no '=' after the key")
        value_start = _after_spaces(text, end + 1)
        value_end = self._value_end(line, value_start)
        last = self._line_at(max(value_start, value_end - 1))
        value_text = text[value_start : last.end].rstrip(" \t")
        if not value_text:
            raise _ScanError(line.number, "no value after '='")

        path = self.table.path + tuple(parts)
        value = self._value_at(line, path)
        prefix, first = self._take_comments(line)
        rendered = render_path(path)
        attrs: dict[str, Any] = {"value_type": value_type(value)}
        if not nested_deeper_than(value, MAX_VALUE_DEPTH):
            attrs["value"] = json_value(value)
        block_id = self.builder.add(
            "toml_key",
            f"{prefix}{rendered} = {value_text}",
            first,
            last,
            section_path=section_entries(self.table.path),
            parent=self.table.block_id,
            keys=path_keys(path),
            attrs=attrs,
        )
        self._set_locator(block_id, first.number, last.number, rendered)
        node = self.root
        for element in path:
            node = node.child(element)
        node.held = True
        node.key_line = line.number
        self.key_blocks += 1
        return last

    def _key(self, line: Line, pos: int) -> tuple[list[str], int]:
        """A dotted key's decoded parts from `pos`, and the position after it."""
        text = self.text
        parts: list[str] = []
        while True:
            pos = _after_spaces(text, pos)
            match = _BARE_KEY.match(text, pos)
            if match is not None:
                parts.append(match.group())
            else:
                match = _BASIC_KEY.match(text, pos)
                if match is not None:
                    parts.append(_decode_basic(match.group()[1:-1]))
                else:
                    match = _LITERAL_KEY.match(text, pos)
                    if match is None:
                        raise _ScanError(line.number, "no key where one starts")
                    parts.append(match.group()[1:-1])
            after = _after_spaces(text, match.end())
            if not text.startswith(".", after):
                return parts, match.end()
            pos = after + 1

    def _value_end(self, line: Line, pos: int) -> int:
        """Past the end of a value that can span lines; `pos` for one that stays on its line."""
        text = self.text
        if text.startswith('"""', pos):
            return self._match_end(_ML_BASIC, line, pos, "multi-line string")
        if text.startswith("'''", pos):
            return self._match_end(_ML_LITERAL, line, pos, "multi-line literal string")
        if text[pos : pos + 1] not in ("[", "{"):
            return pos
        depth = 0
        while True:
            match = _INNER_TOKEN.match(text, pos)
            if match is None:
                raise _ScanError(line.number, "an array or inline table does not close")
            kind = match.lastgroup
            if kind == "open":
                depth += 1
            elif kind == "close":
                depth -= 1
            pos = match.end()
            if depth == 0:
                return pos

    def _match_end(self, pattern: re.Pattern[str], line: Line, pos: int, what: str) -> int:
        match = pattern.match(self.text, pos)
        if match is None:
            raise _ScanError(line.number, f"a {what} does not close")
        return match.end()

    def _value_at(self, line: Line, path: Path) -> object:
        value: object = self.document
        for element in path:
            if isinstance(element, int) and isinstance(value, list) and element < len(value):
                value = value[element]
            elif isinstance(element, str) and isinstance(value, dict) and element in value:
                value = value[element]
            else:
                raise _ScanError(line.number, f"tomllib holds no value at {render_path(path)}")
        return value

    def _set_locator(self, block_id: str, first: int, last: int, key_path: str | None) -> None:
        block = self.builder.blocks[-1]
        assert block["id"] == block_id
        block["locator"] = {"line_start": first, "line_end": last}
        if key_path is not None:
            block["locator"]["key_path"] = key_path

    # After the scan

    def line_of(self, path: Path) -> int | None:
        """The line of the key or header holding the value at `path`, if the scan found it."""
        node = self.root
        found: int | None = None
        for element in path:
            child = node.children.get(element)
            if child is None:
                break
            node = child
            if node.key_line is not None:
                found = node.key_line
        return found

    def coverage(self) -> Coverage:
        """Keys: the key blocks, plus each value tomllib read that no block holds (failed).

        A key block holds its whole value; a table block holds only an empty table, so a key
        under a header that the scanner did not make a block of is still counted.
        """
        missed: list[dict[str, str]] = []
        stack: list[tuple[Path, object, _Node | None]] = [((), self.document, self.root)]
        while stack:
            path, value, node = stack.pop()
            if node is not None and node.held:
                continue
            if isinstance(value, dict) and value:
                stack.extend(
                    (path + (key,), item, node.children.get(key) if node else None)
                    for key, item in reversed(value.items())
                )
            elif (
                isinstance(value, list)
                and value
                and node is not None
                and node.elements
                and all(isinstance(item, dict) for item in value)
            ):
                stack.extend(
                    (path + (index,), item, node.children.get(index))
                    for index, item in reversed(list(enumerate(value)))
                )
            elif path and not (value == {} and node is not None and node.table_block):
                missed.append(
                    {"unit": render_path(path), "reason": "tomllib read it, no block holds it"}
                )
        return coverage("keys", self.key_blocks + len(missed), self.key_blocks, missed)
