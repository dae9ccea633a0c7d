"""XLSX extraction: one test per rule of the reference extractor's XLSX reader and its tables."""

from __future__ import annotations

import io
import json
import platform
import zipfile
from pathlib import Path
from typing import Any

import pytest

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats import tables
from extractor_sandbox.formats.xlsx import PARSER_VERSION, extract_xlsx, table
from extractor_sandbox.formats.xlsx.numformats import BUILTIN_KINDS, code_kind, format_kind
from extractor_sandbox.formats.xlsx.values import serial_cell
from extractor_sandbox.source import extract
from tests.extractor import gates
from tests.extractor.server_check import validated

GOLD = Path(__file__).resolve().parent / "gold" / "xlsx"
CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "inputs" / "xlsx"
MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
OFFICE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def workbook(
    *sheets: str | tuple[str, str] | tuple[str, str, dict[str, str]],
    shared: list[str] | str | None = None,
    styles: str | None = None,
    workbook_pr: str = "",
    parts: dict[str, bytes | str] | None = None,
    method: int = zipfile.ZIP_DEFLATED,
) -> bytes:
    """A workbook of hand-written parts. A sheet is its <sheetData> body (a worksheet named
    Sheet<n>), or (name, body), or (name, body, {"kind": rel type, "state": ..., "xml": whole
    part}); the body of another kind is the part as written."""
    rels = []
    entries = []
    files: dict[str, bytes | str] = {
        "[Content_Types].xml": (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="xml" ContentType="application/xml"/></Types>'
        ),
        "_rels/.rels": (
            f'<Relationships xmlns="{RELS}"><Relationship Id="rId1" '
            f'Type="{OFFICE}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ),
    }
    for index, sheet in enumerate(sheets, start=1):
        if isinstance(sheet, str):
            name, body, extra = f"Sheet{index}", sheet, {}
        elif len(sheet) == 2:
            name, body, extra = sheet[0], sheet[1], {}
        else:
            name, body, extra = sheet  # type: ignore[misc]
        kind = extra.get("kind", "worksheet")
        part = f"xl/worksheets/sheet{index}.xml"
        if "xml" in extra:
            files[part] = extra["xml"]
        elif kind == "worksheet":
            files[part] = f'<worksheet xmlns="{MAIN}"><sheetData>{body}</sheetData></worksheet>'
        else:
            files[part] = body
        target = extra.get("target", f"worksheets/sheet{index}.xml")
        rels.append(f'<Relationship Id="rId{index}" Type="{OFFICE}/{kind}" Target="{target}"/>')
        state = f' state="{extra["state"]}"' if "state" in extra else ""
        entries.append(f'<sheet name="{name}" sheetId="{index}" r:id="rId{index}"{state}/>')
    if shared is not None:
        body = (
            shared if isinstance(shared, str) else "".join(f"<si><t>{s}</t></si>" for s in shared)
        )
        files["xl/sharedStrings.xml"] = f'<sst xmlns="{MAIN}">{body}</sst>'
        rels.append(
            f'<Relationship Id="rS" Type="{OFFICE}/sharedStrings" Target="sharedStrings.xml"/>'
        )
    if styles is not None:
        files["xl/styles.xml"] = f'<styleSheet xmlns="{MAIN}">{styles}</styleSheet>'
        rels.append(f'<Relationship Id="rT" Type="{OFFICE}/styles" Target="styles.xml"/>')
    files["xl/workbook.xml"] = (
        f'<workbook xmlns="{MAIN}" xmlns:r="{OFFICE}">{workbook_pr}'
        f"<sheets>{''.join(entries)}</sheets></workbook>"
    )
    files["xl/_rels/workbook.xml.rels"] = (
        f'<Relationships xmlns="{RELS}">{"".join(rels)}</Relationships>'
    )
    files.update(parts or {})
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as archive:
        for name, content in files.items():
            archive.writestr(name, content.encode("utf-8") if isinstance(content, str) else content)
    return buffer.getvalue()


def row(number: int, *cells: str) -> str:
    return f'<row r="{number}">{"".join(cells)}</row>'


def num(ref: str, value: object, style: str | None = None) -> str:
    s = f' s="{style}"' if style is not None else ""
    return f'<c r="{ref}"{s}><v>{value}</v></c>'


def text(ref: str, value: str) -> str:
    return f'<c r="{ref}" t="inlineStr"><is><t>{value}</t></is></c>'


def read(data: bytes, name: str = "book.xlsx") -> dict[str, Any]:
    artifact = extract_xlsx(data, {}, name=name)
    return validated(artifact, data)


def rows_of(artifact: dict[str, Any], index: int = 0) -> list[list[Any]]:
    return list(artifact["tables"][index]["rows"])


def names_of(artifact: dict[str, Any], index: int = 0) -> list[str]:
    return [c["name"] for c in artifact["tables"][index]["columns"]]


def under_headings(artifact: dict[str, Any]) -> list[dict[str, Any]]:
    """The blocks under the sheets' name headings."""
    return [b for b in artifact["blocks"] if b["type"] != "heading"]


def types_of(artifact: dict[str, Any], index: int = 0) -> list[str]:
    return [c["type"] for c in artifact["tables"][index]["columns"]]


HEAD = row(1, text("A1", "a"))


# The envelope and the gold


def test_artifact_envelope_and_tables() -> None:
    artifact = read(workbook(("Data", HEAD + row(2, num("A2", 1)))))
    assert artifact["format"] == "xlsx"
    assert artifact["parser"] == "loom-xlsx"
    assert artifact["parser_version"] == PARSER_VERSION == f"4+python{platform.python_version()}"
    assert artifact["coverage"] == {
        "unit": "sheets",
        "total": 1,
        "extracted": 1,
        "failed": [],
        "lost": [],
        "complete": True,
    }
    assert artifact["attrs"] == {"date_system": 1900}
    [entry] = artifact["tables"]
    assert entry["id"] == "t0" and entry["name"] == "Data" and entry["header_rows"] == 1
    assert entry["locator"] == {"sheet": "Data", "row_start": 1, "row_end": 2}
    # The seed: "per sheet: a table, its name as a heading" the sheet's rows sit under.
    assert artifact["blocks"] == [
        {
            "id": "b0",
            "type": "heading",
            "text": "Data",
            "depth": 1,
            "section_path": [],
            "keys": [],
            "locator": {"sheet": "Data"},
        },
        {
            "id": "b1",
            "type": "paragraph",
            "text": "a: 1",
            "section_path": ["Data"],
            "parent": "b0",
            "keys": [],
            "locator": {"row_start": 2, "row_end": 2, "sheet": "Data"},
            "attrs": {"table_id": "t0"},
        },
    ]


def test_the_fixtures_score_one_on_typed_cells_and_headers() -> None:
    assert len(gates.fixtures("xlsx")) >= 10
    scores = gates.score("xlsx", lambda data, name: extract(data, "xlsx", name, {}))
    assert scores == {"typed cells": 1.0, "headers": 1.0}


@pytest.mark.parametrize("source", sorted(GOLD.glob("*.xlsx")), ids=lambda p: p.name)
def test_every_fixture_passes_the_contract(source: Path) -> None:
    read(source.read_bytes(), source.name)


def test_the_gold_on_disk_is_the_one_the_script_writes() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_fixtures", GOLD / "make_fixtures.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for name, make in module.FIXTURES.items():
        _, gold = make()
        on_disk = json.loads((GOLD / f"{name}.gold.json").read_text(encoding="utf-8"))
        assert {"tables": gold} == on_disk, name


@pytest.mark.skipif(not CORPUS.is_dir(), reason="shared corpus not present")
def test_every_corpus_workbook_passes_the_contract() -> None:
    files = sorted(CORPUS.glob("*.xls*"))
    assert files
    for path in files:
        artifact = read(path.read_bytes(), path.name)
        assert artifact["tables"], path.name


# Number formats


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("yyyy-mm-dd", "date"),
        ("d-mmm-yy", "date"),
        ("mmm yyyy", "date"),
        ("dd/mm/yyyy hh:mm", "datetime"),
        ("yyyy-mm-dd h:mm:ss AM/PM", "datetime"),
        ("h:mm", "time"),
        ("mm:ss", "time"),
        ("h:mm AM/PM", "time"),
        ("[h]:mm", "duration"),
        ("[mm]:ss", "duration"),
        ('[$-411]ggge"年"m"月"d"日"', "date"),
        ("General", None),
        ("0.00", None),
        ("0.00E+00", None),
        ('"day" 0', None),
        ("[Red]#,##0;[Blue]-#,##0", None),
        ("\\d0", None),
        ("0;yyyy", None),  # only the first section is read
        ("y" + "0" * 255, None),  # past Excel's 255 characters: no date
    ],
)
def test_a_custom_code_is_a_date_when_a_date_letter_shows(code: str, kind: str | None) -> None:
    assert code_kind(code) == kind


@pytest.mark.parametrize(
    ("code", "kind"),
    [
        ("General", None),
        ("0", None),
        ("#,##0_);(#,##0)", None),
        ('#,##0" p.c."', None),  # a quoted dot is no decimal point
        ("0.00", "shown"),
        ("0%", "shown"),
        ("0.0E+00", "shown"),
        ("# ?/?", "shown"),
        ("@", "shown"),
        ("0;0.00", None),  # the first section is the one positive numbers take
        ("yyyy-mm-dd", "date"),
    ],
)
def test_a_custom_code_shows_whole_numbers_or_more(code: str, kind: str | None) -> None:
    assert format_kind(code) == kind


def test_the_built_in_date_formats() -> None:
    dates = {i for i, kind in BUILTIN_KINDS.items() if kind == "date"}
    assert dates == {14, 15, 16, 17, 27, 28, 29, 30, 31, 36, *range(50, 59)}
    assert BUILTIN_KINDS[22] == "datetime"
    assert {i for i, kind in BUILTIN_KINDS.items() if kind == "time"} == {18, 19, 20, 21, 45, 47}
    assert BUILTIN_KINDS[46] == "duration"


@pytest.mark.parametrize(
    ("serial", "kind", "date1904", "value"),
    [
        ("59", "date", False, "1900-02-28"),
        ("60", "date", False, "1900-02-29"),  # Excel's day that never was: text
        ("61", "date", False, "1900-03-01"),
        ("1", "date", False, "1900-01-01"),
        ("0", "date", True, "1904-01-01"),
        ("45000.99999999", "datetime", False, "2023-03-16T00:00:00"),  # to the nearest second
        ("45000.25", "time", False, "06:00:00"),
        ("1.5", "duration", False, "36:00:00"),
        ("-0.5", "duration", False, "-12:00:00"),
        ("2958465", "date", False, "9999-12-31"),
        ("2958466", "date", False, 2958466),  # past year 9999: the number
        ("-1", "date", False, -1),
        ("1e308", "datetime", False, 1e308),
        ("x", "date", False, "x"),
    ],
)
def test_a_serial_reads_as_its_format_says(
    serial: str, kind: str, date1904: bool, value: object
) -> None:
    cell = serial_cell(serial, kind, date1904)
    assert cell is not None and cell.value == value


def test_the_leap_day_is_text_and_its_column_mixed() -> None:
    styles = '<numFmts><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/></numFmts><cellXfs><xf/><xf numFmtId="164"/></cellXfs>'
    sheet = HEAD + row(2, num("A2", 60, "1")) + row(3, num("A3", 61, "1"))
    artifact = read(workbook(sheet, styles=styles))
    assert rows_of(artifact) == [["1900-02-29"], ["1900-03-01"]]
    assert types_of(artifact) == ["mixed"]


def test_the_1904_system() -> None:
    sheet = HEAD + row(2, num("A2", 1, "1"))
    data = workbook(
        sheet,
        styles='<cellXfs><xf/><xf numFmtId="14"/></cellXfs>',
        workbook_pr='<workbookPr date1904="1"/>',
    )
    artifact = read(data)
    assert rows_of(artifact) == [["1904-01-02"]]
    assert artifact["attrs"]["date_system"] == 1904


def test_the_cell_style_table_is_cell_xfs_not_cell_style_xfs() -> None:
    styles = '<cellStyleXfs><xf numFmtId="14"/></cellStyleXfs><cellXfs><xf numFmtId="0"/><xf numFmtId="14"/></cellXfs>'
    sheet = HEAD + row(2, num("A2", 2, "0")) + row(3, num("A3", 2, "1"))
    assert rows_of(read(workbook(sheet, styles=styles))) == [[2], ["1900-01-02"]]


def test_a_float_row_text_shows_fifteen_digits_and_the_table_keeps_it_exact() -> None:
    artifact = read(workbook(HEAD + row(2, num("A2", "0.30000000000000004"))))
    assert rows_of(artifact) == [[0.30000000000000004]]
    assert under_headings(artifact)[0]["text"] == "a: 0.3"


def test_a_whole_number_written_as_a_float_is_an_integer_unless_its_format_shows_decimals() -> None:
    # Styles: 0 General, 1 the built-in 0, 2 a custom #,##0, 3 the built-in 0.00, 4 a custom 0.0%.
    styles = (
        '<numFmts><numFmt numFmtId="164" formatCode="#,##0"/>'
        '<numFmt numFmtId="165" formatCode="0.0%"/></numFmts>'
        '<cellXfs><xf numFmtId="0"/><xf numFmtId="1"/><xf numFmtId="164"/><xf numFmtId="2"/>'
        '<xf numFmtId="165"/></cellXfs>'
    )
    written = [
        num("A2", "1.0"),  # no style
        num("B2", "3E+2", "0"),
        num("C2", "7.0", "1"),
        num("D2", "1.2E+4", "2"),
        num("E2", "2.0", "3"),
        num("F2", "1.0", "4"),
        num("G2", "2.5"),
        num("H2", "1E+300"),  # whole, but past what a double holds exactly
    ]
    head = row(1, *(text(f"{c}1", c.lower()) for c in "ABCDEFGH"))
    artifact = read(workbook(head + row(2, *written), styles=styles))
    values = rows_of(artifact)[0]
    assert values == [1, 300, 7, 12000, 2.0, 1.0, 2.5, 1e300]
    assert [type(v) for v in values] == [int] * 4 + [float] * 4
    assert under_headings(artifact)[0]["text"].startswith("a: 1 | b: 300 | c: 7 | d: 12000 | ")
    assert types_of(artifact) == ["number"] * 8


def test_an_integer_past_64_bits_keeps_its_digits_and_a_nan_is_text() -> None:
    sheet = HEAD + row(2, num("A2", "123456789012345678901234")) + row(3, num("A3", "NaN"))
    assert rows_of(read(workbook(sheet))) == [["123456789012345678901234"], ["NaN"]]


# Cells


def test_cells_as_the_workbook_holds_them() -> None:
    sheet = row(
        1, text("A1", "s"), text("B1", "b"), text("C1", "e"), text("D1", "d"), text("E1", "str")
    ) + row(
        2,
        '<c r="A2" t="s"><v>0</v></c>',
        '<c r="B2" t="b"><v>1</v></c>',
        '<c r="C2" t="e"><v>#DIV/0!</v></c>',
        '<c r="D2" t="d"><v>2024-02-03</v></c>',
        '<c r="E2" t="str"><f>A2</f><v>shared</v></c>',
    )
    artifact = read(workbook(sheet, shared=["shared"]))
    assert rows_of(artifact) == [["shared", True, {"error": "#DIV/0!"}, "2024-02-03", "shared"]]
    assert types_of(artifact) == ["string", "bool", "string", "date", "string"]
    assert (
        under_headings(artifact)[0]["text"]
        == "s: shared | b: TRUE | e: #DIV/0! | d: 2024-02-03 | str: shared"
    )


def test_phonetic_readings_are_dropped_from_shared_and_inline_strings() -> None:
    shared = '<si><r><t>東</t></r><r><t>京</t></r><rPh sb="0" eb="1"><t>トウ</t></rPh></si>'
    sheet = (
        HEAD
        + row(2, '<c r="A2" t="s"><v>0</v></c>')
        + row(3, '<c r="A3" t="inlineStr"><is><t>大阪</t><rPh><t>オオサカ</t></rPh></is></c>')
    )
    assert rows_of(read(workbook(sheet, shared=shared))) == [["東京"], ["大阪"]]


def test_a_string_of_only_whitespace_is_empty() -> None:
    sheet = HEAD + row(2, text("A2", "   "), num("B2", 1))
    assert rows_of(read(workbook(sheet))) == [[None, 1]]


def test_a_missing_shared_string_reads_empty_and_loses_shared_strings() -> None:
    sheet = HEAD + row(2, '<c r="A2" t="s"><v>7</v></c>', num("B2", 1))
    artifact = read(workbook(sheet, shared=["only"]))
    assert rows_of(artifact) == [[None, 1]]
    assert artifact["coverage"]["lost"] == ["shared_strings"]


def test_a_formula_reads_its_cached_value_and_one_with_none_loses_formula_values() -> None:
    sheet = (
        HEAD
        + row(2, '<c r="A2"><f>1+1</f><v>2</v></c>')
        + row(3, '<c r="A3"><f>NOW()</f></c>', num("B3", 1))
    )
    artifact = read(workbook(sheet))
    assert rows_of(artifact) == [[2, None], [None, 1]]
    assert artifact["coverage"]["lost"] == ["formula_values"]
    assert artifact["coverage"]["complete"] is False


def test_a_cell_or_row_with_no_position_takes_the_next() -> None:
    head = row(1, *(text(f"{c}1", c.lower()) for c in "ABCDEF"))
    sheet = head + '<row><c><v>1</v></c><c><v>2</v></c><c r="E2"><v>5</v></c><c><v>6</v></c></row>'
    artifact = read(workbook(sheet))
    assert rows_of(artifact) == [[1, 2, None, None, 5, 6]]
    assert under_headings(artifact)[0]["locator"]["row_start"] == 2


def test_a_cell_written_twice_keeps_the_later_and_is_counted() -> None:
    sheet = HEAD + row(2, num("A2", 1), num("A2", 2))
    artifact = read(workbook(("S", sheet)))
    assert rows_of(artifact) == [[2]]
    assert artifact["coverage"]["failed"] == [
        {
            "unit": "S values",
            "reason": "left out: 1 written twice at one position (the earlier value)",
        }
    ]


def test_a_cell_past_column_16384_is_left_out_and_counted() -> None:
    sheet = HEAD + row(2, num("A2", 1), num("XFD2", 2), num("XFE2", 3))
    artifact = read(workbook(("S", sheet)))
    # The blank columns between are none of the table's; the last one holds its value.
    assert names_of(artifact) == ["a", "column 2"]
    assert artifact["tables"][0]["rows"] == [[1, 2]]
    assert artifact["coverage"]["failed"] == [
        {"unit": "S values", "reason": "left out: 1 past column 16,384"}
    ]


def test_a_value_over_a_megabyte_is_left_out_and_counted() -> None:
    big = "x" * (1024 * 1024 + 1)
    head = row(1, text("A1", "a"), text("B1", "b"), text("C1", "c"))
    sheet = head + row(2, text("A2", big), '<c r="B2" t="s"><v>0</v></c>', num("C2", 1))
    artifact = read(workbook(("S", sheet), shared=[big]))
    assert rows_of(artifact) == [[None, None, 1]]
    assert artifact["coverage"]["failed"] == [
        {"unit": "S values", "reason": "left out: 2 over a megabyte"}
    ]


def test_a_value_of_exactly_a_megabyte_is_kept() -> None:
    value = "y" * (1024 * 1024)
    artifact = read(workbook(HEAD + row(2, text("A2", value))))
    assert rows_of(artifact) == [[value]]


# Sheets


def test_sheets_in_the_workbooks_order_hidden_ones_marked() -> None:
    data = workbook(
        ("One", HEAD),
        ("Two", HEAD, {"state": "hidden"}),
        ("Three", HEAD, {"state": "veryHidden"}),
    )
    artifact = read(data)
    assert [t["name"] for t in artifact["tables"]] == ["One", "Two", "Three"]
    assert [t.get("attrs") for t in artifact["tables"]] == [
        None,
        {"hidden": True},
        {"hidden": True},
    ]
    assert [t["id"] for t in artifact["tables"]] == ["t0", "t1", "t2"]


def test_a_chart_or_dialog_sheet_holds_no_cells() -> None:
    chart = f'<chartsheet xmlns="{MAIN}"/>'
    data = workbook(
        ("Data", HEAD),
        ("Chart", chart, {"kind": "chartsheet"}),
        ("Dialog", f'<dialogsheet xmlns="{MAIN}"/>', {"kind": "dialogsheet"}),
    )
    artifact = read(data)
    assert [t["name"] for t in artifact["tables"]] == ["Data"]
    assert artifact["coverage"]["extracted"] == artifact["coverage"]["total"] == 3


def _headings(artifact: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [
        (b["id"], b["text"], b.get("attrs", {}))
        for b in artifact["blocks"]
        if b["type"] == "heading"
    ]


def test_each_sheets_name_is_a_heading_its_blocks_sit_under() -> None:
    # The seed's XLSX row: "per sheet: a table, its name as a heading". Before, a sheet's rows
    # sat under no heading and a search hit could not say which sheet by its section.
    ducks = (
        row(1, text("A1", "Duck observations 2024"))
        + row(3, text("A3", "Year"), text("B3", "Ducks"))
        + row(4, num("A4", 2023), num("B4", 160))
    )
    data = workbook(("Ducks", ducks), ("Geese", HEAD + row(2, num("A2", 1)), {"state": "hidden"}))
    artifact = read(data)
    assert [
        (b["type"], b.get("depth"), b["section_path"], b.get("parent")) for b in artifact["blocks"]
    ] == [
        ("heading", 1, [], None),
        ("paragraph", None, ["Ducks"], "b0"),  # the title outside the table
        ("paragraph", None, ["Ducks"], "b0"),  # the table's rows
        ("heading", 1, [], None),
        ("paragraph", None, ["Geese"], "b3"),
    ]
    assert _headings(artifact) == [("b0", "Ducks", {}), ("b3", "Geese", {"hidden": True})]
    assert artifact["blocks"][3]["locator"] == {"sheet": "Geese"}


def test_an_empty_sheet_and_a_chart_sheet_are_their_names_alone() -> None:
    chart = f'<chartsheet xmlns="{MAIN}"/>'
    data = workbook(("Empty", ""), ("Chart", chart, {"kind": "chartsheet"}), ("Data", HEAD))
    artifact = read(data)
    assert [text for _, text, _ in _headings(artifact)] == ["Empty", "Chart", "Data"]
    assert artifact["coverage"]["complete"] is True


def test_a_sheet_name_of_only_whitespace_heads_nothing_and_a_line_break_in_one_is_a_space() -> None:
    artifact = read(workbook(("&#10; ", HEAD + row(2, num("A2", 1))), ("Q1&#10;2025", HEAD)))
    assert [text for _, text, _ in _headings(artifact)] == ["Q1 2025"]
    assert artifact["blocks"][0]["section_path"] == []
    assert artifact["blocks"][1]["locator"]["sheet"] == "Q1\n2025"


def test_a_sheet_of_notes_and_no_table_keeps_its_notes() -> None:
    # Two prose regions and no table: before, the sheet's blocks were dropped (only a sheet
    # with a table kept its blocks) and the sheet still counted as read.
    body = row(1, text("A1", "These figures were withdrawn in March and are not to be used")) + row(
        3, text("A3", "See the sheet Revised for the corrected counts of each pond")
    )
    artifact = read(workbook(("Notes", body)))
    assert artifact["tables"] == []
    assert [(b["type"], b["text"][:10]) for b in artifact["blocks"]] == [
        ("heading", "Notes"),
        ("paragraph", "These figu"),
        ("paragraph", "See the sh"),
    ]
    assert artifact["coverage"]["complete"] is True


def test_a_macro_sheet_or_an_unknown_kind_fails_alone() -> None:
    data = workbook(
        ("Macro", "<xm/>", {"kind": "xlMacrosheet"}),
        ("Data", HEAD),
        ("Odd", "<odd/>", {"kind": "somethingElse"}),
    )
    artifact = read(data)
    assert [t["name"] for t in artifact["tables"]] == ["Data"]
    assert artifact["coverage"]["failed"] == [
        {"unit": "Macro", "reason": "a macro sheet is not read"},
        {"unit": "Odd", "reason": "a sheet of kind somethingElse is not read"},
    ]
    assert (artifact["coverage"]["total"], artifact["coverage"]["extracted"]) == (3, 1)


def test_a_sheet_whose_relationship_names_no_part_fails_alone() -> None:
    data = workbook(("Gone", HEAD, {"target": "worksheets/missing.xml"}), ("Data", HEAD))
    artifact = read(data)
    assert artifact["coverage"]["failed"] == [
        {"unit": "Gone", "reason": "its relationship names no part"}
    ]
    assert [t["name"] for t in artifact["tables"]] == ["Data"]


def test_a_sheet_whose_root_is_no_worksheet_fails_alone() -> None:
    other = '<worksheet xmlns="urn:other"><sheetData/></worksheet>'
    artifact = read(workbook(("Odd", "", {"xml": other}), ("Data", HEAD)))
    assert artifact["coverage"]["failed"] == [
        {"unit": "Odd", "reason": "its root is urn:other}worksheet, not a worksheet"}
    ]


def test_a_damaged_sheet_keeps_the_rows_read_before_the_damage() -> None:
    whole = f'<worksheet xmlns="{MAIN}"><sheetData>{HEAD}{row(2, num("A2", 1))}<row r="3"><c r="A3"><v>2</v>'
    artifact = read(workbook(("Cut", "", {"xml": whole}), ("Data", HEAD)))
    assert rows_of(artifact) == [[1]]
    [failure] = artifact["coverage"]["failed"]
    assert failure["unit"] == "Cut rows 3-"
    assert failure["reason"].startswith("is not well-formed XML: no element found")
    assert artifact["coverage"]["extracted"] == 1


def test_a_sheet_damaged_before_any_row_fails_alone() -> None:
    artifact = read(workbook(("Bad", "", {"xml": "not xml"}), ("Data", HEAD)))
    [failure] = artifact["coverage"]["failed"]
    assert failure["unit"] == "Bad" and failure["reason"].startswith("is not well-formed XML")
    assert [text for _, text, _ in _headings(artifact)] == ["Data"]  # a failed sheet heads nothing


def test_a_sheet_name_is_cut_to_500_characters() -> None:
    name = "n" * 501
    artifact = read(workbook((name, HEAD)))
    assert artifact["tables"][0]["name"] == "n" * 500
    assert artifact["tables"][0]["locator"]["sheet"] == "n" * 500
    assert artifact["coverage"]["failed"] == [
        {"unit": "sheet names", "reason": "a sheet name cut to 500 characters"}
    ]


def test_a_sheet_with_no_cells_has_no_table_and_is_read() -> None:
    artifact = read(workbook(("Empty", ""), ("Data", HEAD)))
    assert [t["name"] for t in artifact["tables"]] == ["Data"]
    assert artifact["coverage"]["complete"] is True


# Headers and merges


def test_the_header_is_the_first_row_with_a_value_and_blocks_cite_sheet_rows() -> None:
    sheet = row(3, text("B3", "k"), text("C3", "v")) + row(5, text("B5", "x"), num("C5", 1))
    artifact = read(workbook(("S", sheet)))
    assert names_of(artifact) == ["k", "v"]
    assert artifact["tables"][0]["locator"] == {"sheet": "S", "row_start": 3, "row_end": 5}
    assert under_headings(artifact)[0]["locator"] == {"row_start": 5, "row_end": 5, "sheet": "S"}


def test_a_header_with_no_rows_is_a_block_at_its_own_rows() -> None:
    sheet = row(4, text("A4", "only"), text("B4", "names"))
    artifact = read(workbook(("S", sheet)))
    assert under_headings(artifact)[0]["text"] == "only | names"
    assert under_headings(artifact)[0]["locator"] == {"row_start": 4, "row_end": 4, "sheet": "S"}


def merged(body: str, *ranges: str) -> str:
    cells = "".join(f'<mergeCell ref="{r}"/>' for r in ranges)
    return f'<worksheet xmlns="{MAIN}"><sheetData>{body}</sheetData><mergeCells>{cells}</mergeCells></worksheet>'


def test_a_range_over_text_cells_makes_a_two_row_header() -> None:
    body = (
        row(1, text("B1", "2025"))
        + row(2, text("A2", "Region"), text("B2", "H1"), text("C2", "H2"))
        + row(3, text("A3", "North"), num("B3", 1), num("C3", 2))
    )
    artifact = read(workbook(("S", "", {"xml": merged(body, "B1:C1")})))
    assert names_of(artifact) == ["Region", "2025 / H1", "2025 / H2"]
    assert artifact["tables"][0]["header_rows"] == 2
    assert rows_of(artifact) == [["North", 1, 2]]
    assert under_headings(artifact)[0]["locator"]["row_start"] == 3


def test_the_header_is_found_under_sparser_note_rows_which_stay_a_paragraph() -> None:
    # readxl's deaths.xlsx: notes over the table (one merged across), the names under them.
    body = (
        row(1, text("A1", "people"), text("D1", "cannot resist"))
        + row(2, text("A2", "writing"), text("B2", "notes"), text("D2", "up here"))
        + row(3, text("A3", "or"), text("B3", "merging"), text("D3", "cells"))
        + row(4, text("A4", "Name"), text("B4", "Job"), text("C4", "Age"), text("D4", "Kids"))
        + row(5, text("A5", "Bowie"), text("B5", "musician"), num("C5", 69), num("D5", 1))
    )
    artifact = read(workbook(("S", "", {"xml": merged(body, "B3:C3")})))
    assert names_of(artifact) == ["Name", "Job", "Age", "Kids"]
    assert rows_of(artifact) == [["Bowie", "musician", 69, 1]]
    assert artifact["tables"][0]["locator"] == {"sheet": "S", "row_start": 4, "row_end": 5}
    notes, first_row = under_headings(artifact)[:2]
    assert notes["type"] == "paragraph"
    assert notes["locator"] == {"row_start": 1, "row_end": 3, "sheet": "S"}
    assert "cannot resist" in notes["text"] and "merging" in notes["text"]
    assert first_row["locator"]["row_start"] == 5


def test_a_full_row_of_names_over_text_rows_stays_the_header() -> None:
    # The row right over the first number is no wider than the names: it is data, not a header.
    body = (
        row(1, text("A1", "Name"), text("B1", "City"))
        + row(2, text("A2", "Ann"), text("B2", "Paris"))
        + row(3, text("A3", "Bob"), text("B3", "Oslo"))
        + row(4, text("A4", "Cy"), num("B4", 12))
    )
    artifact = read(workbook(("S", body)))
    assert names_of(artifact) == ["Name", "City"]
    assert len(rows_of(artifact)) == 3


def test_a_sparse_row_right_over_the_names_is_the_header_upper_row() -> None:
    # Nestlé's segments: the unit and the period (no merge) over the measures' names.
    body = (
        row(1, text("A1", "In millions of CHF"), text("D1", "January-June 2023"))
        + row(2, text("B2", "Sales"), text("C2", "Profit"), text("D2", "Depreciation"))
        + row(3, text("A3", "Zone NA"), num("B3", 12553), num("C3", 2713), num("D3", -337))
    )
    artifact = read(workbook(("S", body)))
    assert names_of(artifact) == [
        "In millions of CHF",
        "Sales",
        "Profit",
        "January-June 2023 / Depreciation",
    ]
    assert artifact["tables"][0]["header_rows"] == 2
    assert rows_of(artifact) == [["Zone NA", 12553, 2713, -337]]


def test_a_header_band_over_a_blank_row_names_the_rows_under_it() -> None:
    # Vodafone's sheets: the periods over a blank row, the rows' names in a column left of them
    # with no header cell; one table, not the periods alone and the first row read as names.
    body = (
        row(3, text("C3", "Q1 22/23"), text("D3", "Q1 23/24"))
        + row(5, text("B5", "Germany"), num("C5", 3061), num("D5", 3001))
        + row(6, text("B6", "Italy"), num("C6", 1200), num("D6", 1206))
    )
    artifact = read(workbook(("S", body)))
    assert len(artifact["tables"]) == 1
    assert names_of(artifact) == ["column 1", "Q1 22/23", "Q1 23/24"]
    assert rows_of(artifact) == [["Germany", 3061, 3001], ["Italy", 1200, 1206]]
    assert under_headings(artifact)[0]["text"].startswith("column 1: Germany | Q1 22/23: 3061")


def test_a_header_band_joins_rows_headed_by_a_label_alone() -> None:
    # A label alone in the names column (Group) over the first rows holding numbers.
    body = (
        row(3, text("C3", "Q1 22/23"), text("D3", "Q1 23/24"))
        + row(5, text("B5", "Group"))
        + row(6, text("B6", "Europe"), num("C6", 8473), num("D6", 8226))
    )
    artifact = read(workbook(("S", body)))
    assert len(artifact["tables"]) == 1
    assert names_of(artifact) == ["column 1", "Q1 22/23", "Q1 23/24"]
    assert rows_of(artifact) == [["Group", None, None], ["Europe", 8473, 8226]]


def test_row_names_across_a_blank_column_name_the_rows_beside_them() -> None:
    # Vodafone's churn sheet: the names in column B, column C empty, the periods and the
    # figures from D on; one table, not the names read as a table of their own.
    body = (
        row(1, text("D1", "Q1 22/23"), text("E1", "Q1 23/24"))
        + row(2, text("B2", "Total"), num("D2", 0.14), num("E2", 0.18))
        + row(3, text("B3", "Contract"), num("D3", 0.12), num("E3", 0.11))
    )
    artifact = read(workbook(("S", body)))
    assert len(artifact["tables"]) == 1
    assert names_of(artifact) == ["column 1", "Q1 22/23", "Q1 23/24"]
    assert rows_of(artifact) == [["Total", 0.14, 0.18], ["Contract", 0.12, 0.11]]


def test_side_by_side_tables_starting_on_one_row_stay_apart() -> None:
    body = row(1, text("A1", "Name"), text("C1", "Q1")) + row(2, text("A2", "Ann"), num("C2", 1))
    artifact = read(workbook(("S", body)))
    assert len(artifact["tables"]) == 2


def test_a_text_band_over_narrower_rows_is_no_header_band() -> None:
    # Names over a column the rows under them leave empty (and no name over their first
    # column): two tables, as before.
    body = row(1, text("B1", "Topic"), text("C1", "Page"), text("D1", "Link")) + row(
        3, text("A3", "Revenue"), text("B3", "x"), num("C3", 1)
    )
    artifact = read(workbook(("S", body)))
    assert len(artifact["tables"]) == 2


def test_a_unit_row_under_the_names_is_a_paragraph_not_a_row() -> None:
    # A period row and its unit row (€m written over each column, % over the next ones) over
    # the numbers: the unit row would make every column text; it reads as a paragraph.
    body = (
        row(1, text("B1", "H1 22/23"), text("C1", "H2 22/23"), text("D1", "H1"), text("E1", "H2"))
        + row(2, text("B2", "€m"), text("C2", "€m"), text("D2", "%"), text("E2", "%"))
        + row(
            3,
            text("A3", "Revenue"),
            num("B3", 22930),
            num("C3", 22776),
            num("D3", 1.5),
            num("E3", -0.5),
        )
    )
    artifact = read(workbook(("S", body)))
    assert names_of(artifact) == ["column 1", "H1 22/23", "H2 22/23", "H1", "H2"]
    assert artifact["tables"][0]["header_rows"] == 1
    assert rows_of(artifact) == [["Revenue", 22930, 22776, 1.5, -0.5]]
    assert types_of(artifact)[1:] == ["number"] * 4
    unit, first_row = under_headings(artifact)[:2]
    assert unit["type"] == "paragraph" and unit["text"] == "€m %"
    assert unit["locator"] == {"row_start": 2, "row_end": 2, "sheet": "S"}
    assert first_row["locator"]["row_start"] == 3


@pytest.mark.parametrize(
    "second",
    [
        row(2, text("B2", "yes"), text("C2", "no")),  # texts of their own, no run of one
        row(2, text("A2", "East"), text("B2", "East")),  # under no name in column A
    ],
)
def test_a_text_row_over_numbers_that_is_no_unit_row_stays_data(second: str) -> None:
    body = (
        row(1, text("B1", "Q1"), text("C1", "Q2"))
        + second
        + row(3, num("A3", 1), num("B3", 2), num("C3", 3))
    )
    artifact = read(workbook(("S", body)))
    assert len(rows_of(artifact)) == 2
    assert [b["type"] for b in under_headings(artifact)] == ["paragraph"]  # the rows' block


def test_a_title_over_the_whole_row_heads_every_name() -> None:
    body = (
        row(1, text("A1", "Sales"))
        + row(2, text("A2", "Region"), text("B2", "Q1"))
        + row(3, text("A3", "E"), num("B3", 1))
    )
    artifact = read(workbook(("S", "", {"xml": merged(body, "A1:B1")})))
    assert names_of(artifact) == ["Sales / Region", "Sales / Q1"]


def test_text_data_under_merges_covering_it_reads_as_the_second_header_row() -> None:
    body = row(1, text("A1", "Name")) + row(2, text("A2", "Alice"), text("B2", "Smith"))
    artifact = read(workbook(("S", "", {"xml": merged(body, "A1:B1")})))
    assert names_of(artifact) == ["Name / Alice", "Name / Smith"]
    assert artifact["tables"][0]["header_rows"] == 2
    assert rows_of(artifact) == []
    assert under_headings(artifact)[0]["locator"] == {"row_start": 1, "row_end": 2, "sheet": "S"}


@pytest.mark.parametrize(
    "second",
    [
        row(2, num("A2", 2024), num("B2", 2025)),  # numbers under the range
        row(2, text("A2", "H1"), text("B2", "H2"), text("C2", "x")),  # text under a plain name
    ],
)
def test_other_cells_in_the_second_row_make_it_data(second: str) -> None:
    body = row(1, text("A1", "Years"), text("C1", "Plain")) + second
    artifact = read(workbook(("S", "", {"xml": merged(body, "A1:B1")})))
    assert artifact["tables"][0]["header_rows"] == 1
    assert names_of(artifact) == ["Years", "Years (2)", "Plain"]
    assert len(rows_of(artifact)) == 1


def test_a_merge_fills_each_cell_but_no_row_past_the_last_held() -> None:
    body = HEAD + row(2, text("A2", "x"), num("C2", 1)) + row(3, num("C3", 2))
    artifact = read(workbook(("S", "", {"xml": merged(body, "A2:B9")})))
    assert rows_of(artifact) == [["x", "x", 1], ["x", "x", 2]]
    assert artifact["tables"][0]["locator"]["row_end"] == 3


def test_a_merge_adds_the_empty_rows_it_covers() -> None:
    body = HEAD + row(2, text("A2", "x")) + row(4, text("A4", "y"))
    artifact = read(workbook(("S", "", {"xml": merged(body, "A2:A3")})))
    assert rows_of(artifact) == [["x"], ["x"], ["y"]]


# Row blocks and budgets


def test_rows_are_twenty_to_a_block() -> None:
    body = HEAD + "".join(row(n, num(f"A{n}", n)) for n in range(2, 43))
    artifact = read(workbook(("S", body)))
    assert [
        (b["locator"]["row_start"], b["locator"]["row_end"]) for b in under_headings(artifact)
    ] == [
        (2, 21),
        (22, 41),
        (42, 42),
    ]


def test_rows_past_the_cell_budget_are_counted_and_the_sheets_after_never_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(tables, "MAX_CELLS", 10)
    monkeypatch.setattr(table, "MAX_CELLS", 10)
    body = HEAD + "".join(row(n, num(f"A{n}", n), num(f"B{n}", n)) for n in range(2, 12))
    artifact = read(workbook(("S", body), ("Later", HEAD), ("After", HEAD)))
    # The header's cell and four rows of two are nine cells: the fifth row would pass ten.
    assert rows_of(artifact) == [[n, n] for n in range(2, 6)]
    assert artifact["coverage"]["failed"] == [
        {"unit": "S rows 6-11", "reason": "6 rows past 10 cells"},
        {"unit": "sheets 2-3", "reason": "past the table budget: never read"},
    ]
    assert [t["name"] for t in artifact["tables"]] == ["S"]


def test_a_workbook_is_refused_as_corrupt_when_its_zip_is_not_one() -> None:
    with pytest.raises(ExtractError) as raised:
        extract_xlsx(b"PK\x03\x04 not a zip", {}, name="x.xlsx")
    assert raised.value.code == "corrupt"


# Regions: a sheet of several tables, titles and notes (issue 16)


def _prose(artifact: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (b["text"], b["locator"])
        for b in under_headings(artifact)
        if "table_id" not in b.get("attrs", {})
    ]


def test_tables_under_one_another_with_blank_rows_between_are_separate_tables() -> None:
    body = (
        row(1, text("A1", "Region"), text("B1", "Sales"))
        + row(2, text("A2", "North"), num("B2", 10))
        + row(4, text("A4", "Product"), text("B4", "Units"), text("C4", "Price"))
        + row(5, text("A5", "Pen"), num("B5", 3), num("C5", 1.5))
    )
    artifact = read(workbook(("Book", body)))
    assert [t["id"] for t in artifact["tables"]] == ["t0", "t1"]
    assert [t["name"] for t in artifact["tables"]] == ["Book", "Book"]
    assert names_of(artifact, 0) == ["Region", "Sales"] and rows_of(artifact, 0) == [["North", 10]]
    assert names_of(artifact, 1) == ["Product", "Units", "Price"]
    assert rows_of(artifact, 1) == [["Pen", 3, 1.5]]
    assert artifact["tables"][1]["locator"] == {"sheet": "Book", "row_start": 4, "row_end": 5}
    assert [b["attrs"]["table_id"] for b in under_headings(artifact)] == ["t0", "t1"]


def test_tables_side_by_side_with_a_blank_column_between_are_separate_tables() -> None:
    body = (
        row(1, text("A1", "k"), text("B1", "v"), text("D1", "name"), text("E1", "age"))
        + row(2, text("A2", "x"), num("B2", 1), text("D2", "Ann"), num("E2", 30))
        + row(3, text("D3", "Bob"), num("E3", 31))
    )
    artifact = read(workbook(body))
    assert [names_of(artifact, i) for i in range(2)] == [["k", "v"], ["name", "age"]]
    assert rows_of(artifact, 1) == [["Ann", 30], ["Bob", 31]]


def test_a_title_and_a_note_outside_the_tables_are_paragraphs() -> None:
    body = (
        row(1, text("A1", "Duck observations 2024"))
        + row(3, text("A3", "Year"), text("B3", "Ducks"))
        + row(4, num("A4", 2023), num("B4", 160))
        + row(5, num("A5", 2024), num("B5", 180))
        + row(7, text("A7", "Source: the pond survey, counted each spring"))
    )
    artifact = read(workbook(("Ducks", body)))
    [entry] = artifact["tables"]
    assert [c["name"] for c in entry["columns"]] == ["Year", "Ducks"]
    assert entry["rows"] == [[2023, 160], [2024, 180]]
    assert _prose(artifact) == [
        ("Duck observations 2024", {"sheet": "Ducks", "row_start": 1, "row_end": 1}),
        (
            "Source: the pond survey, counted each spring",
            {"sheet": "Ducks", "row_start": 7, "row_end": 7},
        ),
    ]
    assert [b["type"] for b in under_headings(artifact)] == ["paragraph"] * 3
    assert under_headings(artifact)[0]["text"] == "Duck observations 2024"  # reading order


def test_a_title_right_above_the_names_and_a_note_right_under_the_rows_are_paragraphs() -> None:
    body = (
        row(1, text("A1", "Fleet"))
        + row(2, text("A2", "Ship"), text("B2", "Crew"))
        + row(3, text("A3", "Ark"), num("B3", 8))
        + row(4, text("A4", "figures as of the last census"))
    )
    artifact = read(workbook(body))
    assert names_of(artifact) == ["Ship", "Crew"] and rows_of(artifact) == [["Ark", 8]]
    assert [text for text, _ in _prose(artifact)] == ["Fleet", "figures as of the last census"]


def test_a_title_merged_over_the_whole_first_row_still_heads_the_names() -> None:
    body = (
        row(1, text("A1", "Sales 2025"))
        + row(2, text("A2", "Region"), text("B2", "Total"))
        + row(3, text("A3", "North"), num("B3", 5))
        + row(5, text("A5", "Other"), text("B5", "Sum"))
        + row(6, text("A6", "x"), num("B6", 1))
    )
    artifact = read(workbook(("S", "", {"xml": merged(body, "A1:B1")})))
    assert names_of(artifact, 0) == ["Sales 2025 / Region", "Sales 2025 / Total"]
    assert names_of(artifact, 1) == ["Other", "Sum"]


def test_rows_after_a_blank_row_that_start_with_data_go_on_with_the_table() -> None:
    body = (
        row(1, text("A1", "k"), text("B1", "v"))
        + row(2, text("A2", "a"), num("B2", 1))
        + row(4, text("A4", "b"), num("B4", 2))
    )
    artifact = read(workbook(body))
    assert len(artifact["tables"]) == 1
    assert rows_of(artifact) == [["a", 1], ["b", 2]]


def test_a_block_right_of_a_blank_column_that_starts_with_data_goes_on_with_the_table() -> None:
    body = row(1, text("A1", "k"), text("B1", "v")) + row(
        2, text("A2", "a"), num("B2", 1), num("D2", 2)
    )
    artifact = read(workbook(body))
    # Column D's values are the table's, under a name made for them (the seed's generated name,
    # which the dataset asks about); the blank column C, no name and no value, is no column.
    assert names_of(artifact) == ["k", "v", "column 3"]
    assert rows_of(artifact) == [["a", 1, 2]]


def test_a_blank_header_cell_over_values_gets_a_generated_name() -> None:
    body = row(1, text("A1", "Team"), text("C1", "Score")) + row(
        2, text("A2", "Red"), num("B2", 5), num("C2", 1)
    )
    artifact = read(workbook(body))
    assert names_of(artifact) == ["Team", "column 2", "Score"]
    assert rows_of(artifact) == [["Red", 5, 1]]


def test_a_title_merged_wider_than_the_table_adds_no_columns() -> None:
    body = (
        row(1, text("A1", "Report"))
        + row(2, text("A2", "Team"), text("B2", "Score"))
        + row(3, text("A3", "Red"), num("B3", 1))
    )
    artifact = read(workbook(("S", "", {"xml": merged(body, "A1:D1")})))
    # Over the table's own columns it heads the names, as the seed's title over the whole
    # first row does; the columns it alone reaches (C, D) hold no name and no value of their own.
    assert names_of(artifact) == ["Report / Team", "Report / Score"]
    assert rows_of(artifact) == [["Red", 1]]


def test_a_lone_note_beside_the_names_across_a_blank_column_is_a_paragraph() -> None:
    body = (
        row(1, text("A1", "Team"), text("B1", "Score"), text("D1", "figures are provisional"))
        + row(2, text("A2", "Red"), num("B2", 1))
        + row(3, text("A3", "Blue"), num("B3", 2))
    )
    artifact = read(workbook(("S", body)))
    assert names_of(artifact) == ["Team", "Score"]
    assert rows_of(artifact) == [["Red", 1], ["Blue", 2]]
    assert _prose(artifact) == [
        ("figures are provisional", {"sheet": "S", "row_start": 1, "row_end": 1})
    ]


def test_a_lone_row_of_names_beside_the_names_is_still_more_of_the_header() -> None:
    body = row(1, text("A1", "k"), text("B1", "v"), text("D1", "x"), text("E1", "y")) + row(
        2, text("A2", "a"), num("B2", 1)
    )
    artifact = read(workbook(body))
    assert names_of(artifact) == ["k", "v", "x", "y"]
    assert rows_of(artifact) == [["a", 1, None, None]]


def test_a_sheet_of_one_value_is_still_a_table() -> None:
    artifact = read(workbook(HEAD))
    assert names_of(artifact) == ["a"] and _prose(artifact) == []


def test_a_scatter_of_cells_past_the_regions_bound_is_read_as_one_table() -> None:
    from extractor_sandbox.formats.xlsx import regions

    cells = [text(f"{'ACEGIKMOQSUWY'[i % 13]}{2 * (i // 13) + 1}", f"v{i}") for i in range(200)]
    by_row: dict[int, list[str]] = {}
    for i, cell in enumerate(cells):
        by_row.setdefault(2 * (i // 13) + 1, []).append(cell)
    body = "".join(row(r, *cs) for r, cs in sorted(by_row.items()))
    artifact = read(workbook(body))
    assert len(artifact["tables"]) == 1
    assert regions.MAX_REGIONS < 200


def test_the_split_tables_pass_the_contract_and_their_datasets_are_keyed_apart() -> None:
    from loom_dagster.contract.validate import parse_artifact
    from loom_dagster.datasets.infer import table_keys

    body = (
        row(1, text("A1", "a"), text("B1", "b"))
        + row(2, num("A2", 1), num("B2", 2))
        + row(4, text("A4", "c"))
        + row(5, num("A5", 3))
    )
    data = workbook(("S", body))
    raw = json.dumps(read(data)).encode()
    parsed = parse_artifact(raw, expected_format="xlsx", original_size=len(data))
    assert table_keys(parsed) == ["S/t0", "S/t1"]


def test_a_merged_note_is_one_value_and_equal_strings_side_by_side_are_two() -> None:
    # Told apart by the merged ranges, not by the cells being one object: a reader may share
    # one cell between equal shared strings.
    body = (
        row(1, text("A1", "k"), text("B1", "v"))
        + row(2, text("A2", "a"), num("B2", 1))
        + row(4, '<c r="A4" t="s"><v>0</v></c>', '<c r="B4" t="s"><v>0</v></c>')
        + row(5, '<c r="A5" t="s"><v>0</v></c>', '<c r="B5" t="s"><v>0</v></c>')
        + row(7, text("A7", "a note merged over the table"))
    )
    data = workbook(("S", "", {"xml": merged(body, "A7:B7")}), shared=["same"])
    artifact = read(data)
    assert [names_of(artifact, i) for i in range(2)] == [["k", "v"], ["same", "same (2)"]]
    assert _prose(artifact) == [
        ("a note merged over the table", {"sheet": "S", "row_start": 7, "row_end": 7})
    ]
