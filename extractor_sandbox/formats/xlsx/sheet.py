"""A worksheet's cells, read as its XML inflates: the hot loop of the XLSX reader.

expat's callbacks are handled here directly (see package.bounded_parser), with the package's
bounds kept in the handlers: elements, nesting, distinct names, bytes between events. A row is
charged to the tables' budget when it ends; from the first row the budget refuses, the rest of
the sheet is only checked for values (counted, never typed). Merged ranges come after the cells
and are collected for the table to spread.

A cell reads as the workbook holds it (values.py); a row or cell that names no position takes
the one after the one before it. Left out and counted: a value over a megabyte, a cell past
column 16,384, a cell written twice at one position (its earlier value).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from itertools import repeat
from typing import IO

from extractor_sandbox.formats.package import (
    READ_CHUNK,
    SPREADSHEETML_NS,
    NoEventWatch,
    Package,
    PartError,
    XmlBounds,
    bounded_parser,
    parse_chunk,
    read_chunk,
)
from extractor_sandbox.formats.tables import Budget, Cell
from extractor_sandbox.formats.xlsx import rowscan
from extractor_sandbox.formats.xlsx.numformats import SHOWN
from extractor_sandbox.formats.xlsx.strings import MAX_PIECES, MAX_VALUE_CHARS, TooLong
from extractor_sandbox.formats.xlsx.values import (
    bool_cell,
    error_cell,
    iso_date_cell,
    number,
    serial_cell,
    text_cell,
)

MAIN = SPREADSHEETML_NS + "}"  # expat's "namespace}local"
MAX_COLUMNS = 16_384
MAX_NAME_CHARS = 1_024  # an element's name, past which its part is cut
MAX_MERGES = 1_000_000  # in all of a workbook: a bound on the time spreading them takes
_DIGITS = "0123456789"
# Written as a sheet shows them (15 significant digits or fewer, no exponent, no leading or
# trailing zero, not so small that a sheet would show an exponent), so the text needs no format.
_PLAIN_FLOAT = re.compile(r"-?(?=[0-9.]{1,16}$)(?:[1-9][0-9]*|0(?!\.0000))\.[0-9]*[1-9]").fullmatch
_PLAIN_INTEGER = re.compile(r"0|-?[1-9][0-9]{0,14}").fullmatch
# A cell made without NamedTuple's own __new__, a Python function: the hot loop makes a million.
_new_tuple = tuple.__new__
_NONE: frozenset[int] = frozenset()
MAX_PLAIN_LAYOUTS = 4_096  # distinct letter sequences of plain rows remembered in a sheet


@dataclass
class Counters:
    """Values left out of a sheet, by cause."""

    too_long: int = 0
    past_column: int = 0
    written_twice: int = 0


@dataclass
class SheetCells:
    """What a worksheet holds: its rows (by sheet row number, each {column index: cell})."""

    rows: dict[int, dict[int, Cell]] = field(default_factory=dict)
    data_rows: int = 0  # rows held after the first (the header), as the table budget counts them
    merges: list[tuple[int, int, int, int]] = field(default_factory=list)  # r1, c1, r2, c2
    merges_unread: int = 0  # past the workbook's 1,000,000
    left_out: Counters = field(default_factory=Counters)
    cut_row: int = 0  # the first row the budget refused (0: none)
    cut_reason: str = ""
    rows_past: int = 0  # rows with a value from cut_row on
    last_row_past: int = 0
    error: str = ""  # why the part stopped before its end (the rows before it stand)
    not_worksheet: str = ""  # the root's name, when it is no worksheet
    lost_formula_values: bool = False
    lost_shared_strings: bool = False
    elements: int = 0


class _NotWorksheet(Exception):
    pass


def column_index(letters: str) -> int:
    """A–Z letters as a 0-based column; -1 when they are none."""
    if not letters or len(letters) > 7 or not letters.isascii() or not letters.isupper():
        return -1
    index = 0
    for letter in letters:
        index = index * 26 + ord(letter) - 64
    return index - 1


def split_ref(ref: str) -> tuple[int, int] | None:
    """An A1 reference as (row, 0-based column); None when it is none."""
    letters = ref.rstrip(_DIGITS)
    digits = ref[len(letters) :]
    column = column_index(letters)
    if column < 0 or not digits or len(digits) > 8:
        return None
    return int(digits), column


def read_sheet(
    package: Package,
    part: str,
    shared: list[str | TooLong],
    style_kinds: dict[str, str],
    date1904: bool,
    budget: Budget,
    bounds: XmlBounds,
    merges_left: int,
    *,
    rows_by_pattern: bool = True,
) -> SheetCells:
    """The sheet's cells; `merges_left` of the workbook's merged ranges may still be read.

    `rows_by_pattern=False` reads every row through expat's handlers (the rule rowscan's reading
    must match, kept for the tests that compare them)."""
    found = SheetCells()
    rows = found.rows
    merges = found.merges
    left_out = found.left_out
    cell_tag, value_tag, row_tag = MAIN + "c", MAIN + "v", MAIN + "row"
    formula_tag, inline_tag, text_tag, phonetic_tag = (
        MAIN + "f",
        MAIN + "is",
        MAIN + "t",
        MAIN + "rPh",
    )
    merge_tag, root_tag = MAIN + "mergeCell", MAIN + "worksheet"
    sheet_data_tag = MAIN + "sheetData"
    sheet_data_at = -1  # where expat met <sheetData>
    max_depth, max_elements, max_names = bounds.max_depth, bounds.max_elements, bounds.max_names
    columns: dict[str, int] = {}
    names: set[str] = set()

    depth = elements = 0
    row_number = 0
    column = -1
    row_cells: dict[int, Cell] = {}
    row_has_value = False
    header_seen = False
    cut = False
    cell_type: str | None = None
    cell_style: str | None = None
    # A value's text: its first piece, and the rest when expat splits it (a long value).
    first: str | None = None
    more: list[str] = []
    capture = has_value = has_formula = in_inline = too_long = False
    phonetic = 0

    def refuse(reason: str) -> None:
        raise PartError(part, reason)

    def new_name(name: str) -> None:
        if elements == 1 and name != root_tag:
            found.not_worksheet = name
            raise _NotWorksheet
        names.add(name)
        if len(name) - name.rfind("}") - 1 > MAX_NAME_CHARS:
            refuse(f"uses an element name over {MAX_NAME_CHARS:,} characters")
        if len(names) > max_names:
            refuse(f"uses more than {max_names:,} distinct names")

    def over_bound() -> None:
        if depth > max_depth:
            refuse(f"nests deeper than {max_depth} elements")
        refuse(f"holds more than {max_elements:,} elements")

    def start(name: str, attrs: list[str]) -> None:
        nonlocal depth, elements, column, cell_type, cell_style, first, capture, has_value
        nonlocal has_formula, in_inline, too_long, phonetic
        depth += 1
        elements += 1
        if depth > max_depth or elements > max_elements:
            over_bound()
        if name not in names:
            new_name(name)
        if name == cell_tag:
            # Most cells are <c r="B7">, <c r="B7" s="3"> or <c r="B7" t="s">: r comes first.
            cell_type = cell_style = None
            ref = None
            count = len(attrs)
            if count == 2 and attrs[0] == "r":
                ref = attrs[1]
            elif count:
                for index in range(0, count, 2):
                    key = attrs[index]
                    if key == "r":
                        ref = attrs[index + 1]
                    elif key == "s":
                        cell_style = attrs[index + 1]
                    elif key == "t":
                        cell_type = attrs[index + 1]
            if ref is None:
                column += 1
            else:
                at = columns.get(ref.rstrip(_DIGITS))
                column = at if at is not None else position(ref)
            first = None
            if more:
                more.clear()
            has_value = has_formula = too_long = False
        elif name == value_tag:
            capture = has_value = True
        elif name == row_tag:
            start_row(attrs)
        elif name == formula_tag:
            has_formula = True
        elif name == text_tag:
            capture = in_inline and not phonetic
        elif name == inline_tag:
            in_inline = has_value = True
        elif name == phonetic_tag:
            phonetic += 1
        elif name == merge_tag:
            add_merge(attrs)
        elif name == sheet_data_tag:
            nonlocal sheet_data_at
            sheet_data_at = parser.CurrentByteIndex

    def position(ref: str) -> int:
        letters = ref.rstrip(_DIGITS)
        at = column_index(letters)
        if at < 0:
            return column + 1
        columns[letters] = at
        return at

    def start_row(attrs: list[str]) -> None:
        nonlocal row_number, column
        if row_cells or row_has_value:
            end_row()
        number_at = None
        for index in range(0, len(attrs), 2):
            if attrs[index] == "r":
                written = attrs[index + 1].strip()
                if written.isdigit() and len(written) <= 8:
                    number_at = int(written)
        row_number = number_at if number_at is not None else row_number + 1
        column = -1

    def end(name: str) -> None:
        nonlocal depth, capture, in_inline, phonetic, row_has_value
        depth -= 1
        if name == value_tag:
            capture = False
        elif name == cell_tag:
            if cut:
                # Past the budget a cell is only checked for a value.
                if first is not None and not first.isspace():
                    row_has_value = True
            elif first is not None and not more and not too_long and column < MAX_COLUMNS:
                # The common cell, a plain number with no style, typed here without a call.
                if cell_type is None and cell_style is None and _PLAIN_FLOAT(first):
                    cell: Cell | None = _new_tuple(Cell, (float(first), "number", first))
                else:
                    cell = typed(first)
                if cell is not None:
                    if column in row_cells:
                        left_out.written_twice += 1
                    row_cells[column] = cell
            else:
                end_odd_cell()
        elif name == text_tag:
            capture = False
        elif name == row_tag:
            end_row()
        elif name == inline_tag:
            in_inline = False
        elif name == phonetic_tag:
            phonetic -= 1

    def characters(data: str) -> None:
        nonlocal first
        if capture:
            if first is None:
                first = data
            else:
                more_text(data)

    def more_text(data: str) -> None:
        nonlocal too_long
        if too_long:
            return
        more.append(data)
        if len(more) >= MAX_PIECES:
            too_long = True
            more.clear()

    def end_odd_cell() -> None:
        """A cell with no value, a long one, or one past the last column."""
        nonlocal first
        if too_long:
            left_out.too_long += 1
            return
        if first is None and not has_value:
            if has_formula:
                found.lost_formula_values = True
            return
        text = (first or "") + "".join(more)
        more.clear()
        first = None
        if len(text) > MAX_VALUE_CHARS:
            left_out.too_long += 1
            return
        if column >= MAX_COLUMNS:
            if text and not text.isspace():
                left_out.past_column += 1
            return
        cell = typed(text)
        if cell is None:
            if has_formula:
                found.lost_formula_values = True  # <v/>: no cached value either
            return
        if column in row_cells:
            left_out.written_twice += 1
        row_cells[column] = cell

    def typed(text: str) -> Cell | None:
        if cell_type is None or cell_type == "n":
            kind = style_kinds.get(cell_style) if cell_style is not None else None
            if kind is not None and kind != SHOWN:
                return serial_cell(text, kind, date1904)
            # A number as Excel writes it (shortest digits, 15 or fewer) shows as written.
            if _PLAIN_FLOAT(text):
                return _new_tuple(Cell, (float(text), "number", text))
            if _PLAIN_INTEGER(text):
                return _new_tuple(Cell, (int(text), "number", text))
            return number(text, whole=kind is None)
        if cell_type == "s":
            return shared_string(text)
        if cell_type == "str" or cell_type == "inlineStr":
            return text_cell(text)
        if cell_type == "b":
            return bool_cell(text)
        if cell_type == "e":
            return error_cell(text)
        if cell_type == "d":
            return iso_date_cell(text)
        return text_cell(text)

    def shared_string(text: str) -> Cell | None:
        written = text.strip()
        index = int(written) if written.isdigit() and len(written) <= 10 else -1
        if not 0 <= index < len(shared):
            found.lost_shared_strings = True
            return None
        value = shared[index]
        if isinstance(value, TooLong):
            left_out.too_long += 1
            return None
        return text_cell(value)

    def end_row() -> None:
        nonlocal row_cells, row_has_value, header_seen, cut
        if cut:
            if row_has_value:
                found.rows_past += 1
                found.last_row_past = row_number
            row_has_value = False
            return
        if not row_cells:
            return
        cells = row_cells
        row_cells = {}
        # admit_rows charges one row as admit_row does, at C speed when it fits.
        reason = budget.admit_rows([list(cells.values())], found.data_rows)[1]
        if reason is not None:
            cut = True
            found.cut_row = found.last_row_past = row_number
            found.cut_reason = reason
            found.rows_past = 1
            parser.StartElementHandler = start_past
            parser.EndElementHandler = end_past
            parser.CharacterDataHandler = characters_past
            return
        held = rows.get(row_number)
        if held is None:
            rows[row_number] = cells
            if header_seen:
                found.data_rows += 1
            header_seen = True
        else:
            left_out.written_twice += sum(1 for at in cells if at in held)
            held.update(cells)

    # Past the budget the rest of the sheet is only checked for values: leaner handlers, the
    # same bounds, the rows counted and the merges still collected.

    def start_past(name: str, attrs: list[str]) -> None:
        nonlocal depth, elements, capture, in_inline, phonetic
        depth += 1
        elements += 1
        if depth > max_depth or elements > max_elements:
            over_bound()
        if name not in names:
            new_name(name)
        if name == value_tag:
            capture = True
        elif name == row_tag:
            start_row(attrs)
        elif name == text_tag:
            capture = in_inline and not phonetic
        elif name == inline_tag:
            in_inline = True
        elif name == phonetic_tag:
            phonetic += 1
        elif name == merge_tag:
            add_merge(attrs)

    def end_past(name: str) -> None:
        nonlocal depth, capture, in_inline, phonetic
        depth -= 1
        if name == value_tag or name == text_tag:
            capture = False
        elif name == row_tag:
            end_row()
        elif name == inline_tag:
            in_inline = False
        elif name == phonetic_tag:
            phonetic -= 1

    def characters_past(data: str) -> None:
        nonlocal row_has_value
        if capture and not data.isspace():
            row_has_value = True

    def add_merge(attrs: list[str]) -> None:
        ref = next((attrs[i + 1] for i in range(0, len(attrs), 2) if attrs[i] == "ref"), "")
        if len(merges) >= merges_left:
            found.merges_unread += 1
            return
        head, _, tail = ref.partition(":")
        top_left, bottom_right = split_ref(head), split_ref(tail or head)
        if top_left is None or bottom_right is None:
            return
        (r1, c1), (r2, c2) = top_left, bottom_right
        merges.append((min(r1, r2), min(c1, c2), max(r1, r2), max(c1, c2)))

    # The common rows, read by rowscan's patterns (expat checks the same bytes with no handler):
    # the same state, bounds and calls as the handlers above would make, row by row.

    bytes_columns: dict[bytes, int] = {}
    # The columns of a plain row's cells, by their letters ([] when a cell needs reading alone:
    # letters that name no column, a column past the last, or one written twice).
    plain_columns: dict[tuple[str, ...], list[int]] = {}
    prefixes: dict[str, int] = {}  # the namespace prefixes in scope, by declarations open
    fast_names = [
        (name, b"<" + name[len(MAIN) :].encode())
        for name in (row_tag, cell_tag, value_tag, formula_tag)
    ]
    fast_names_seen: set[str] = set()

    def declare(prefix: str | None, _uri: str | None) -> None:
        if prefix:
            prefixes[prefix] = prefixes.get(prefix, 0) + 1

    def undeclare(prefix: str | None) -> None:
        if prefix:
            prefixes[prefix] -= 1

    def fast_row(match: re.Match[bytes], at: int, scope: frozenset[str]) -> bool:
        """Read one row as the handlers would; False (nothing read) when it is for them."""
        nonlocal elements, column, cell_type, cell_style, first, has_value, has_formula
        nonlocal too_long, row_has_value
        written, body = match.group(1), match.group(2)
        if not written:
            attrs: list[str] | None = []
        elif written.startswith(b' r="') and written.count(b'"') == 2:
            attrs = ["r", written[4:-1].decode()]
        else:
            attrs = rowscan.row_attributes(written, scope)
            if attrs is None:
                return False
        count = 1 if body is None else 1 + body.count(b"<") - body.count(b"</")
        if elements + count > max_elements:
            return False
        if body and b"<f " in body and not rowscan.formulas_plain(body):
            return False
        elements += count
        if len(fast_names_seen) < 4:
            for name, tag in fast_names:
                if name not in fast_names_seen and (tag == b"<row" or body and tag in body):
                    fast_names_seen.add(name)
                    names.add(name)
        start_row(attrs or [])
        if body:
            if cut:
                if rowscan.SOME_VALUE.search(body) is not None:
                    row_has_value = True
            else:
                start_at = at + match.start(2)
                splits: set[int] | frozenset[int] = _NONE
                if start_at // READ_CHUNK != (at + match.end(2) - 1) // READ_CHUNK:
                    splits = split_values(body, start_at)
                elif plain_row(body):
                    end_row()
                    return True
                for index, (ref, s1, t1, t2, s2, formula, value) in enumerate(
                    rowscan.CELL.findall(body)
                ):
                    if ref:
                        ref = ref[4:-1]
                        letters = ref.rstrip(b"0123456789")
                        found_at = bytes_columns.get(letters)
                        if found_at is None:
                            found_at = column_index(letters.decode())
                            if found_at < 0:
                                found_at = column + 1
                            else:
                                bytes_columns[letters] = found_at
                        column = found_at
                    else:
                        column += 1
                    style = s1 or s2
                    cell_style = style[4:-1].decode() if style else None
                    kind = t1 or t2
                    cell_type = kind[4:-1].decode() if kind else None
                    has_formula = bool(formula)
                    has_value = bool(value)
                    first = value[3:-4].decode() if len(value) > 7 else None
                    too_long = False
                    if first is not None and column < MAX_COLUMNS and index not in splits:
                        if cell_type is None and cell_style is None and _PLAIN_FLOAT(first):
                            cell: Cell | None = _new_tuple(Cell, (float(first), "number", first))
                        else:
                            cell = typed(first)
                        if cell is not None:
                            if column in row_cells:
                                left_out.written_twice += 1
                            row_cells[column] = cell
                    else:
                        end_odd_cell()
        end_row()
        return True

    def plain_row(body: bytes) -> bool:
        """Read a row whose every cell is `<c r="B7"><v>number</v></c>`, its cells typed at C
        speed; False (nothing read) when it is another, or one a cell of needs more (a column
        not met yet, one written twice or past the last, a value not written as a sheet shows it).
        """
        nonlocal row_cells, column, cell_type, cell_style, first, has_value, has_formula
        nonlocal too_long
        text = body.decode()
        all_plain = rowscan.PLAIN_FLOAT_CELLS.fullmatch(text) is not None
        if not all_plain and rowscan.PLAIN_CELLS.fullmatch(text) is None:
            return False
        letters = tuple(rowscan.PLAIN_LETTERS.findall(text))
        at_columns = plain_columns.get(letters)
        if at_columns is None:
            at_columns = [column_index(written) for written in letters]
            if (
                not at_columns
                or min(at_columns) < 0
                or max(at_columns) >= MAX_COLUMNS
                or len(set(at_columns)) != len(at_columns)
            ):
                at_columns = []  # for the cells one by one
            if len(plain_columns) < MAX_PLAIN_LAYOUTS:
                plain_columns[letters] = at_columns
        if not at_columns:
            return False
        values = rowscan.PLAIN_VALUES.findall(text)
        plain = [] if all_plain else list(map(_PLAIN_FLOAT, values))
        if not all_plain and None in plain:
            # Typed as the handlers type a cell with no style or type: typed(), pure for these.
            cell_type = cell_style = None
            cells: Iterable[Cell | None] = [
                _new_tuple(Cell, (float(value), "number", value)) if match else typed(value)
                for value, match in zip(values, plain, strict=True)
            ]
            if None in cells:
                return False
        else:
            cells = map(_new_tuple, repeat(Cell), zip(map(float, values), repeat("number"), values))
        row_cells = dict(zip(at_columns, cells, strict=True))  # type: ignore[arg-type]
        # What the handlers leave behind them after the row's last cell.
        column, first = at_columns[-1], values[-1]  # type: ignore[assignment]
        cell_type = cell_style = None
        has_value, has_formula, too_long = True, False, False
        return True

    def split_values(body: bytes, start_at: int) -> set[int]:
        """The cells of a row at `start_at` in the part whose value a read ends inside: the
        handlers get such a value in two pieces, and end_odd_cell joins them."""
        found_splits = set()
        for index, match in enumerate(rowscan.CELL.finditer(body)):
            if match.start(7) >= 0:
                text_at, text_end = start_at + match.start(7) + 3, start_at + match.end(7) - 4
                if text_end - text_at > 1 and text_at // READ_CHUNK != (text_end - 1) // READ_CHUNK:
                    found_splits.add(index)
        return found_splits

    def mute() -> None:
        parser.StartElementHandler = parser.EndElementHandler = None
        parser.CharacterDataHandler = None

    def unmute() -> None:
        parser.StartElementHandler = start_past if cut else start
        parser.EndElementHandler = end_past if cut else end
        parser.CharacterDataHandler = characters_past if cut else characters

    def parse_piece(data: bytes, final: bool = False) -> None:
        parse_chunk(parser, data, final, part)

    def read_piece(stream: IO[bytes]) -> bytes:
        return read_chunk(stream, part)

    def parse_part() -> None:
        """package.parse, with the rows in the middle read by rowscan where they allow it."""
        stream = package.open(part)
        try:
            parse_stream(stream)
        finally:
            stream.close()

    def parse_stream(stream: IO[bytes]) -> None:
        watch = NoEventWatch(parser, part, bounds)  # as package._parse_in_chunks
        offset = 0  # of the next read in the part
        # Looking for <sheetData> at depth 2, where rowscan may start.
        looking = rows_by_pattern and max_depth >= 5 and longest_wait > 0
        tail = b""
        if looking:
            parser.StartNamespaceDeclHandler = declare
            parser.EndNamespaceDeclHandler = undeclare
        while True:
            chunk = read_piece(stream)
            if looking and offset == 0:
                looking = rowscan.ascii_compatible(chunk[:256])
            pieces = [chunk]
            if looking:
                window = tail + chunk
                at = window.find(rowscan.SHEET_DATA)
                if b"<![CDATA[" in (window if at < 0 else window[:at]):
                    looking = False  # a literal <sheetData> in text would be split here
                elif at >= 0:
                    looking = False
                    split = at + len(rowscan.SHEET_DATA) - len(tail)
                    parse_piece(chunk[:split])
                    if (
                        sheet_data_at == offset + split - len(rowscan.SHEET_DATA)
                        and depth == 2
                        and len(names) + len(fast_names) <= max_names
                    ):
                        parser.StartNamespaceDeclHandler = None
                        parser.EndNamespaceDeclHandler = None
                        scope = frozenset(p for p, open_ in prefixes.items() if open_ > 0)
                        read_fast(stream, chunk[split:], offset + split, scope, watch)
                        offset = -1  # no longer needed
                        continue
                    pieces = [chunk[split:]]
                tail = window[-16:]
            for piece in pieces:
                parse_piece(piece, not chunk)
            if offset >= 0:
                offset += len(chunk)
            watch.fed(len(chunk))
            if not chunk:
                return

    def read_fast(
        stream: IO[bytes], rest: bytes, at: int, scope: frozenset[str], watch: NoEventWatch
    ) -> None:
        """Rows by rowscan from `rest` (at `at` in the part) on, until one is for the handlers;
        the bytes held then go to them, each read as it came, `watch` counting from there."""
        held = [rest]  # what is not yet parsed, by the reads it came in
        mute()
        try:
            end_of_part = False
            while True:
                data = held[0] if len(held) == 1 else b"".join(held)
                done, stop = scan(data, at, end_of_part, scope)
                if done:
                    mute()  # end_row sets the handlers past the budget's cut
                    parse_piece(data[:done])
                    at += done
                    held = drop(held, done)
                if stop:
                    break
                chunk = read_piece(stream)
                if chunk:
                    held.append(chunk)
                else:
                    end_of_part = True
        finally:
            # The held bytes go to the handlers, each read on its own, as package.parse feeds
            # them; the first read had events parsed already.
            unmute()
            for number, piece in enumerate(held):
                if piece:
                    parse_piece(piece)
                if number == 0:
                    watch.restart()
                else:
                    watch.fed(len(piece))

    def drop(held: list[bytes], count: int) -> list[bytes]:
        """`held` without its first `count` bytes."""
        # The read the first held byte came in always had some of its bytes parsed (an empty
        # first piece stands for one wholly parsed).
        while count > len(held[0]):
            count -= len(held[0])
            held = held[1:]
        held[0] = held[0][count:]
        return held

    # A row read whole is shorter than what was held before the last read and that read: kept
    # under the bytes allowed between events, no row rowscan reads could have crossed it.
    longest_wait = min(rowscan.MAX_ROW_BYTES, bounds.max_bytes_between_events - READ_CHUNK)

    def scan(data: bytes, at: int, end_of_part: bool, scope: frozenset[str]) -> tuple[int, bool]:
        """Read the whole rows at the start of `data`: (bytes read, whether to stop)."""
        done = 0
        match_row = rowscan.ROW.match
        while True:
            match = match_row(data, done)
            if match is None or not fast_row(match, at, scope):
                break
            done = match.end()
        waits = (
            not end_of_part
            and len(data) - done < longest_wait
            and rowscan.ROW_START.match(data, done) is not None
            and data.find(b"</row>", done) < 0
            and rowscan.ROW_CLOSED.match(data, done) is None
        )
        return done, not waits

    parser = bounded_parser(part)
    parser.StartElementHandler = start
    parser.EndElementHandler = end
    parser.CharacterDataHandler = characters
    try:
        parse_part()
        if row_cells or row_has_value:
            end_row()
    except PartError as error:
        found.error = error.reason
    except _NotWorksheet:
        pass
    found.elements = elements
    return found
