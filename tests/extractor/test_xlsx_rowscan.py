"""rowscan's reading of a sheet's common rows against expat's handlers, the rule it replaces.

Every case reads one worksheet part both ways (read_sheet with and without rows_by_pattern) and
asserts the two SheetCells equal in every field: cells, counters, cut, error, elements. The cases
are the shapes rowscan reads, the ones it must hand to the handlers (each at the row it meets
them), bounds crossed inside its rows, values cut by a read, a damaged stream, and a byte fuzz.
"""

from __future__ import annotations

import io
import random
import zipfile

import pytest

from extractor_sandbox.formats import tables
from extractor_sandbox.formats.package import DEFAULT_BOUNDS, READ_CHUNK, Package, XmlBounds
from extractor_sandbox.formats.tables import Budget
from extractor_sandbox.formats.xlsx import rowscan, sheet
from extractor_sandbox.formats.xlsx.sheet import SheetCells, read_sheet
from extractor_sandbox.formats.xlsx.strings import TooLong

PART = "xl/worksheets/sheet1.xml"
MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
PROLOG = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
ROOT = f'<worksheet xmlns="{MAIN}" xmlns:x14ac="urn:x14ac" xmlns:r="urn:r">'
SHARED: list[str | TooLong] = ["zero", "one", TooLong()]
KINDS = {"1": "date", "2": "percent"}


def package(xml: bytes, *, stored: bool = False) -> bytes:
    buffer = io.BytesIO()
    method = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
    with zipfile.ZipFile(buffer, "w", method) as archive:
        archive.writestr(PART, xml)
    return buffer.getvalue()


def both(data: bytes, bounds: XmlBounds = DEFAULT_BOUNDS) -> tuple[object, object]:
    """Each way's SheetCells, or what it raised (an unknown encoding escapes both alike)."""
    read: list[object] = []
    for fast in (True, False):
        try:
            read.append(
                read_sheet(
                    Package(data),
                    PART,
                    SHARED,
                    KINDS,
                    False,
                    Budget(),
                    bounds,
                    10,
                    rows_by_pattern=fast,
                )
            )
        except LookupError as error:
            read.append((type(error), str(error)))
    return read[0], read[1]


def same(xml: str | bytes, bounds: XmlBounds = DEFAULT_BOUNDS, **kw: bool) -> SheetCells:
    raw = xml.encode() if isinstance(xml, str) else xml
    fast, handlers = both(package(raw, **kw), bounds)
    assert fast == handlers
    assert isinstance(fast, SheetCells)
    return fast


def sheet_of(*rows: str, head: str = "", tail: str = "") -> str:
    return f"{PROLOG}{ROOT}{head}<sheetData>{''.join(rows)}</sheetData>{tail}</worksheet>"


def numbers(count: int, columns: int = 20, seed: int = 3) -> list[str]:
    rng = random.Random(seed)
    letters = [chr(65 + c) for c in range(columns)]
    return [
        f'<row r="{r}">'
        + "".join(f'<c r="{x}{r}"><v>{rng.randint(0, 99_999) / 100}</v></c>' for x in letters)
        + "</row>"
        for r in range(1, count + 1)
    ]


def counted_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts the rows rowscan reads (to show a case takes the path it is meant to)."""
    seen = [0]
    real = rowscan.ROW

    class Counting:
        def match(self, data: bytes, at: int) -> object:
            found = real.match(data, at)
            seen[0] += found is not None
            return found

    monkeypatch.setattr(rowscan, "ROW", Counting())
    return seen


def test_plain_numbers_are_read_by_pattern_and_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = counted_rows(monkeypatch)
    # Over 64 KiB, so rows and values are cut by reads; integers and 5.0 need typed().
    rows = numbers(600) + ['<row r="601"><c r="A601"><v>5.0</v></c><c r="B601"><v>7</v></c></row>']
    found = same(sheet_of(*rows))
    assert seen[0] >= 601
    assert len(found.rows) == 601 and found.rows[601][1].value == 7


CELLS = [
    '<c r="A{r}" s="1"><v>45000.5</v></c>',
    '<c r="B{r}" t="s"><v>1</v></c>',
    '<c r="C{r}" t="s"><v>9</v></c>',  # no such shared string
    '<c r="D{r}" t="s"><v>2</v></c>',  # a shared string too long
    '<c r="E{r}" t="str"><f>A1&amp;B1</f><v>x y</v></c>',
    '<c r="F{r}" t="b"><v>1</v></c>',
    '<c r="G{r}" t="e"><v>#N/A</v></c>',
    '<c r="H{r}" t="d"><v>2024-01-02T03:04:05</v></c>',
    '<c r="I{r}" t="n" s="2"><v>0.25</v></c>',
    '<c r="J{r}" s="2" t="n"><v>0.5</v></c>',
    '<c r="K{r}"><f>SUM(A1:A2)</f></c>',
    '<c r="L{r}"><f t="shared" ref="L1:L9" si="0"/><v>3</v></c>',
    '<c r="M{r}"><v/></c>',
    '<c r="N{r}"><v></v></c>',
    '<c r="O{r}"/>',
    '<c r="P{r}" s="1"/>',
    '<c s="3"><v>12</v></c>',
    "<c><v>13</v></c>",
    '<c r="b{r}"><v>14</v></c>',
    '<c r="AAAA{r}"><v>15</v></c>',
    '<c r="XFE{r}"><v>16</v></c>',
    '<c r="A{r}"><v>twice</v></c>',
    '<c r="Q{r}">\n  <v> 17 </v>\n</c>',
    '<c r="R{r}" ><v>\t18\n</v></c>',
    '<c r="S{r}"><v>1e5</v></c>',
    '<c r="T{r}"><v>-0.000001</v></c>',
    '<c r="U{r}"><v>12345678901234567890</v></c>',
    '<c r="V{r}"><v>   </v></c>',
    '<c r="W{r}" t="inlineStr"><is><t>inline</t></is></c>',
    '<c r="X{r}"><v>a]b</v></c>',
    '<c r="Y{r}"><v>1&#48;</v></c>',
    '<c r="Z{r}"><v><![CDATA[19]]></v></c>',
    '<c r="AA{r}"><v>1\r\n</v></c>',
    '<c r="AB{r}"><v>caf\u00e9</v></c>',
    '<c r="AC{r}" cm="1"><v>20</v></c>',
    '<c r="AD{r}"><f t="a" t="b"/><v>21</v></c>',
    '<c r="AE{r}" t="s" s="1" t="n"><v>1</v></c>',
    '<c r="AF{r}"><v>{long}</v></c>',
    '<c r="AG{r}"><v>1</v><v>2</v></c>',
    '<c r="AH{r}"><!-- note --><v>22</v></c>',
]


@pytest.mark.parametrize("cell", CELLS)
def test_each_kind_of_cell_reads_the_same_alone_between_plain_rows(cell: str) -> None:
    rows = numbers(3)
    odd = cell.replace("{long}", "9" * 1500).format(r=4)
    rows.append(f'<row r="4">{odd}<c r="B4"><v>1</v></c></row>')
    rows += [row.replace('r="1"', 'r="5"') for row in numbers(1)] + ['<row r="6"/>']
    same(sheet_of(*rows, tail='<mergeCells count="1"><mergeCell ref="A1:B2"/></mergeCells>'))


def test_every_kind_of_cell_in_one_row_and_pretty_printed() -> None:
    cells = [c.replace("{long}", "9" * 1500).format(r=2) for c in CELLS]
    same(
        sheet_of(
            '<row r="1"><c r="A1"><v>1</v></c></row>', '<row r="2">' + "".join(cells) + "</row>"
        )
    )
    spaced = "\n  ".join(c.replace("{long}", "8").format(r=3) for c in CELLS[:28])
    same(sheet_of(f'\n <row r="3" spans="1:40" x14ac:dyDescent="0.25" >\n  {spaced}\n </row>\n'))


ROWS = [
    '<row r="7" spans="1:2" ht="15" customHeight="1"><c r="A7"><v>1</v></c></row>',
    '<row r="8" x14ac:dyDescent="0.25"><c r="A8"><v>1</v></c></row>',
    '<row r="9" undeclared:attr="1"><c r="A9"><v>1</v></c></row>',
    '<row r="10" xmlns:p="urn:p" p:a="1"><c r="A10"><v>1</v></c></row>',
    '<row r="11" r:id="x" id="y"><c r="A11"><v>1</v></c></row>',
    '<row r="12" x14ac:r="5"><c r="A12"><v>1</v></c></row>',
    '<row r=" 13 "><c r="A13"><v>1</v></c></row>',
    '<row r="abc"><c r="A14"><v>1</v></c></row>',
    '<row><c r="A15"><v>1</v></c></row>',
    '<row r="3"><c r="A3"><v>again</v></c><c r="Z3"><v>new</v></c></row>',
    '<row r="16" ht="1&amp;"><c r="A16"><v>1</v></c></row>',
    "<row r='17'><c r='A17'><v>1</v></c></row>",
    '<row r="18"/>',
    '<row r="19" spans="1:1"/>',
    '<c r="A20"><v>1</v></c>',
    '<row r="21"><row r="22"><c r="A22"><v>1</v></c></row></row>',
    '<x:row xmlns:x="urn:other" r="23"/>',
    "<!-- a comment between rows -->",
    "<?pi data?>",
]


@pytest.mark.parametrize("odd", ROWS)
def test_each_kind_of_row_reads_the_same(odd: str) -> None:
    rows = numbers(5)
    same(sheet_of(*rows[:3], odd, *rows[3:]))


def test_heads_that_keep_the_handlers_throughout(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = "".join(numbers(4))
    for xml in [
        f'<?xml version="1.0" encoding="ISO-8859-1"?>{ROOT}<sheetData>{rows}</sheetData></worksheet>',
        f"{PROLOG}{ROOT}<!-- <sheetData> --><sheetData>{rows}</sheetData></worksheet>",
        f"{PROLOG}{ROOT}<x><![CDATA[<sheetData>]]></x><sheetData>{rows}</sheetData></worksheet>",
        f"{PROLOG}{ROOT}<sheetView><sheetData>{rows}</sheetData></sheetView></worksheet>",
        f'{PROLOG}<x:worksheet xmlns:x="{MAIN}"><x:sheetData>{rows}</x:sheetData></x:worksheet>',
        f'{PROLOG}<workbook xmlns="{MAIN}"><sheetData>{rows}</sheetData></workbook>',
        f"{PROLOG}{ROOT}<sheetData/></worksheet>",
        f"{ROOT}<sheetData>{rows}</sheetData></worksheet>",
    ]:
        same(xml)
    seen = counted_rows(monkeypatch)
    same(("\ufeff" + sheet_of(rows)).encode("utf-16"))
    assert seen[0] == 0


def test_a_damaged_or_cut_part_stops_at_the_same_row() -> None:
    rows = numbers(400)
    xml = sheet_of(*rows)
    for cut in (len(xml) // 3, len(xml) // 2 + 7, len(xml) - 30):
        same(xml[:cut])
    same(sheet_of(*rows[:100], '<row r="101"><c r="A101"><v>1</v></c>', *rows[101:]))
    same(sheet_of(*rows[:100], "<row r='101'><c r=\"A101\"><v>1</v></row>", *rows[101:]))
    # A damaged deflate stream: zipfile raises in the middle of the part.
    data = bytearray(package(xml.encode()))
    data[len(data) // 2] ^= 0xFF
    fast, handlers = both(bytes(data))
    assert fast == handlers and isinstance(fast, SheetCells) and fast.error


@pytest.mark.parametrize("max_elements", [3, 50, 41 * 17 + 5, 41 * 300 + 2])
def test_the_element_bound_is_crossed_at_the_same_element(max_elements: int) -> None:
    bounds = XmlBounds(max_elements=max_elements)
    found = same(sheet_of(*numbers(400)), bounds)
    assert found.error == f"holds more than {max_elements:,} elements"


@pytest.mark.parametrize(("depth", "names"), [(4, 4096), (5, 4096), (64, 5), (64, 6), (64, 7)])
def test_depth_and_name_bounds_hold_the_same(depth: int, names: int) -> None:
    rows = numbers(3) + ['<row r="4"><c r="A4"><f>1</f><v>1</v></c></row>', "<extra/>"]
    same(sheet_of(*rows, tail="<more/>"), XmlBounds(max_depth=depth, max_names=names))


def test_a_tag_of_16_mib_is_refused_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    # A smaller bound than 16 MiB, the same rule: bytes since expat last moved.
    bounds = XmlBounds(max_bytes_between_events=3 * READ_CHUNK)
    head = numbers(300)
    for huge in ['<row r="301" a="' + "x" * (5 * READ_CHUNK), "<!--" + "y" * (5 * READ_CHUNK)]:
        found = same(
            sheet_of(*head, huge + '"/>' if huge.startswith("<row") else huge + "-->"),
            bounds,
            stored=True,
        )
        assert found.error == "holds a tag or text of 16 MiB or more"


def test_the_budget_cut_and_the_rows_past_it_read_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tables, "MAX_CELLS", 20 * 250 + 7)
    rows = numbers(400)
    rows[300] = '<row r="301"><c r="A301"><v> </v></c><c r="B301"><v/></c></row>'
    rows[301] = '<row r="302"><c r="A302" t="inlineStr"><is><t>x</t></is></c></row>'
    found = same(sheet_of(*rows, tail='<mergeCells><mergeCell ref="A1:C3"/></mergeCells>'))
    assert found.cut_row == 251 and found.rows_past == 149  # 251-400 but 301, all blank


def test_values_cut_by_a_read_are_joined_as_the_handlers_join_them() -> None:
    # A row of long-ish values, shifted a byte at a time across the first 64 KiB boundary.
    for shift in range(0, 40, 3):
        pad = "<c/>" * shift
        rows = [
            f'<row r="{r}">{pad}'
            + "".join(
                f'<c r="{chr(65 + c)}{r}" t="s"><f>F</f><v>{"7" * 30}</v></c>' for c in range(20)
            )
            + "</row>"
            for r in range(1, 120)
        ]
        same(sheet_of(*rows))


def test_a_byte_fuzz_reads_the_same() -> None:
    rng = random.Random(15)
    base = sheet_of(
        *numbers(30, columns=6),
        '<row r="31"><c r="A31" t="s"><v>0</v></c><c r="B31" s="1"><v>3</v></c></row>',
        tail='<mergeCells><mergeCell ref="A1:B1"/></mergeCells>',
    ).encode()
    inserts = [
        b"&amp;",
        b"<",
        b">",
        b"]",
        b"\r",
        b"\xc3\xa9",
        b"\xff",
        b'"',
        b" ",
        b"</c>",
        b"<v>",
        b"/",
    ]
    for _ in range(300):
        data = bytearray(base)
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(data))
            choice = rng.random()
            if choice < 0.4:
                data[at:at] = rng.choice(inserts)
            elif choice < 0.7:
                del data[at : at + rng.randint(1, 5)]
            else:
                data[at] = rng.randrange(256)
        fast, handlers = both(package(bytes(data)))
        assert fast == handlers


def test_sheet_keeps_rows_by_pattern_on_by_default() -> None:
    assert sheet.read_sheet.__kwdefaults__ == {"rows_by_pattern": True}


def test_the_row_pattern_for_plain_numbers_agrees_with_the_rule_per_value() -> None:
    rng = random.Random(2)
    values = ["0.5", "0.0001", "0.00001", "-0.1", "1.10", "10", "1.0", ".5", "0.", "00.5", "1e5"]
    values += ["12345678901234.5", "123456789012345.6", "-0.00005"]
    values += ["".join(rng.choices("0123456789.-", k=rng.randint(1, 18))) for _ in range(20_000)]
    for value in values:
        row = f'<c r="A1"><v>{value}</v></c><c r="B1"><v>1.5</v></c>'
        by_row = rowscan.PLAIN_FLOAT_CELLS.fullmatch(row) is not None
        assert by_row == (sheet._PLAIN_FLOAT(value) is not None), value
