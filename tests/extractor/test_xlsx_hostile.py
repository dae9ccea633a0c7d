"""Hostile workbooks: each bound of the XLSX reader, with its outcome asserted exactly.

Some run through a real confined child (extractor_sandbox.runner.run_extraction), as the service
runs them, under its default memory and CPU limits.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.xlsx import extract_xlsx
from extractor_sandbox.runner import Limits, run_extraction
from extractor_sandbox.settings import load_settings
from tests.extractor import zips
from tests.extractor.server_check import validated
from tests.extractor.test_xlsx_format import HEAD, MAIN, merged, num, row, rows_of, text, workbook

MIB = 1024 * 1024


def read(data: bytes) -> dict[str, Any]:
    return validated(extract_xlsx(data, {}, name="hostile.xlsx"), data)


def in_child(data: bytes) -> dict[str, Any]:
    limits = Limits.of(load_settings({}))
    artifact: dict[str, Any] = json.loads(run_extraction(data, "xlsx", "hostile.xlsx", {}, limits))
    return validated(artifact, data)


def refusal(data: bytes) -> tuple[str, str]:
    with pytest.raises(ExtractError) as raised:
        extract_xlsx(data, {}, name="hostile.xlsx")
    return raised.value.code, raised.value.message


# Shared strings


def test_one_huge_shared_string_is_left_out_and_counted_in_a_confined_child() -> None:
    # 64 MiB of one string, a few hundred KB zipped: held as "too long", never whole.
    shared = "<si><t>kept</t></si><si><t>" + "x" * (64 * MIB) + "</t></si>"
    sheet = HEAD + row(2, '<c r="A2" t="s"><v>0</v></c>', '<c r="B2" t="s"><v>1</v></c>')
    artifact = in_child(workbook(("S", sheet), shared=shared))
    assert rows_of(artifact) == [["kept"]]
    assert artifact["coverage"]["failed"] == [
        {"unit": "S values", "reason": "left out: 1 over a megabyte"}
    ]
    assert artifact["coverage"]["lost"] == []


def test_shared_strings_past_256_mib_keep_those_before_and_lose_the_rest() -> None:
    # Each string of a million characters (and two) is counted at four bytes a character and
    # 64 for its object, 4,000,072 bytes: the 68th passes 256 MiB, so 67 are held.
    million = "s" * 1_000_000
    shared = "".join(f"<si><t>{n}{million}</t></si>" for n in range(70))
    sheet = HEAD + row(2, '<c r="A2" t="s"><v>66</v></c>', '<c r="B2" t="s"><v>67</v></c>')
    artifact = read(workbook(sheet, shared=shared))
    assert rows_of(artifact) == [["66" + million]]
    assert artifact["coverage"]["lost"] == ["shared_strings"]


def test_millions_of_shared_strings_are_read_within_their_bound() -> None:
    # Two million empty strings: each costs its object, 128 MB counted, under the bound.
    shared = "<si/>" * 2_000_000 + "<si><t>last</t></si>"
    sheet = HEAD + row(2, '<c r="A2" t="s"><v>2000000</v></c>')
    artifact = read(workbook(sheet, shared=shared))
    assert rows_of(artifact) == [["last"]]
    assert artifact["coverage"]["lost"] == []


# Merges


def test_a_sheet_declaring_a_million_merged_ranges_reads_the_first_million() -> None:
    body = row(1, text("A1", "h")) + row(2, text("A2", "v"))
    ranges = ["A2:B2"] * 1_000_001
    artifact = read(workbook(("S", "", {"xml": merged(body, *ranges)})))
    # Two cells held; each range spreads one more until the million cells are spent.
    assert rows_of(artifact) == [["v", "v"]]
    assert artifact["coverage"]["failed"] == [
        {"unit": "S merged cells", "reason": "2 merged ranges not spread: past the cells left"},
        {
            "unit": "S merged cells",
            "reason": "1 merged ranges unread: past 1,000,000 in the workbook",
        },
    ]


def test_a_merge_over_the_whole_sheet_is_skipped_not_spread() -> None:
    # It fills no row past the last held (100): 99 rows of 16,384 cells, past the million.
    body = HEAD + "".join(row(n, text(f"A{n}", "v")) for n in range(2, 101))
    artifact = read(workbook(("S", "", {"xml": merged(body, "A2:XFD1048576")})))
    assert rows_of(artifact) == [["v"]] * 99
    assert artifact["coverage"]["failed"] == [
        {"unit": "S merged cells", "reason": "1 merged ranges not spread: past the cells left"}
    ]


# Values no rule reads


def test_a_style_index_of_5000_digits_reads_as_a_number() -> None:
    styles = '<cellXfs><xf/><xf numFmtId="14"/></cellXfs>'
    sheet = HEAD + row(2, num("A2", 45000, "1" * 5000))
    artifact = read(workbook(sheet, styles=styles))
    assert rows_of(artifact) == [[45000]]
    assert artifact["coverage"]["complete"] is True


def test_a_date_past_year_9999_reads_as_a_number() -> None:
    styles = '<cellXfs><xf/><xf numFmtId="22"/></cellXfs>'
    sheet = HEAD + row(2, num("A2", "2958465.99999999", "1")) + row(3, num("A3", "3e9", "1"))
    artifact = read(workbook(sheet, styles=styles))
    assert rows_of(artifact) == [[2958465.99999999], [3e9]]
    assert artifact["tables"][0]["columns"][0]["type"] == "number"


def test_a_number_format_code_over_255_characters_is_no_date() -> None:
    code = "yyyy" + '"' + "x" * 260 + '"'
    styles = f'<numFmts><numFmt numFmtId="200" formatCode="{code}"/></numFmts><cellXfs><xf/><xf numFmtId="200"/></cellXfs>'
    artifact = read(workbook(HEAD + row(2, num("A2", 45000, "1")), styles=styles))
    assert rows_of(artifact) == [[45000]]


def test_styles_past_65536_keep_those_before_and_lose_number_formats() -> None:
    styles = "<cellXfs>" + '<xf numFmtId="14"/>' * 65_537 + "</cellXfs>"
    sheet = HEAD + row(2, num("A2", 1, "65535"), num("B2", 1, "65536"))
    artifact = read(workbook(sheet, styles=styles))
    assert rows_of(artifact) == [["1900-01-01", 1]]
    assert artifact["coverage"]["lost"] == ["number_formats"]


def test_styles_that_cannot_be_read_lose_number_formats() -> None:
    artifact = read(workbook(HEAD, styles="<cellXfs><xf"))
    assert artifact["coverage"]["lost"] == ["number_formats"]


# The workbook


def test_a_strict_workbook_is_unsupported_in_a_confined_child() -> None:
    strict = "http://purl.oclc.org/ooxml/spreadsheetml/main"
    data = workbook(HEAD)
    data = zips.package(
        {
            "_rels/.rels": zips_read(data, "_rels/.rels"),
            "xl/_rels/workbook.xml.rels": zips_read(data, "xl/_rels/workbook.xml.rels"),
            "xl/worksheets/sheet1.xml": zips_read(data, "xl/worksheets/sheet1.xml"),
            "xl/workbook.xml": zips_read(data, "xl/workbook.xml").replace(MAIN, strict),
        }
    )
    assert refusal(data) == ("unsupported_format", "Strict Open XML workbooks are not supported")
    with pytest.raises(ExtractError) as raised:
        in_child(data)
    assert raised.value.code == "unsupported_format"


def zips_read(data: bytes, part: str) -> str:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.read(part).decode("utf-8")


def without(data: bytes, part: str) -> bytes:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        parts: dict[str, bytes | str] = {
            n: archive.read(n) for n in archive.namelist() if n != part
        }
    return zips.package(parts)


def test_missing_workbook_relationships_are_corrupt() -> None:
    data = without(workbook(HEAD), "xl/_rels/workbook.xml.rels")
    assert refusal(data) == (
        "corrupt",
        "the workbook's relationships (xl/_rels/workbook.xml.rels) are missing",
    )


def test_workbook_relationships_over_4_mib_are_corrupt() -> None:
    data = workbook(HEAD)
    rels = zips_read(data, "xl/_rels/workbook.xml.rels")
    padded = rels.replace("</Relationships>", "<!--" + "p" * (4 * MIB) + "--></Relationships>")
    data = without(data, "xl/_rels/workbook.xml.rels")
    with_rels = zips.package({**_parts(data), "xl/_rels/workbook.xml.rels": padded})
    assert refusal(with_rels) == (
        "corrupt",
        "the workbook's relationships (xl/_rels/workbook.xml.rels) are over 4 MiB",
    )


def test_workbook_relationships_that_are_not_xml_are_corrupt() -> None:
    data = without(workbook(HEAD), "xl/_rels/workbook.xml.rels")
    broken = zips.package({**_parts(data), "xl/_rels/workbook.xml.rels": "<Relationships"})
    code, message = refusal(broken)
    assert code == "corrupt"
    assert message.startswith("the workbook's relationships cannot be read: ")


def _parts(data: bytes) -> dict[str, bytes | str]:
    import io
    import zipfile

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {n: archive.read(n) for n in archive.namelist()}


def test_a_macro_sheet_fails_alone_in_a_confined_child() -> None:
    data = workbook(
        ("Data", HEAD + row(2, num("A2", 1))),
        ("Macro", f'<xm:macrosheet xmlns:xm="{MAIN}"/>', {"kind": "xlMacrosheet"}),
        ("More", HEAD + row(2, num("A2", 2))),
    )
    artifact = in_child(data)
    assert [t["name"] for t in artifact["tables"]] == ["Data", "More"]
    assert artifact["coverage"]["failed"] == [
        {"unit": "Macro", "reason": "a macro sheet is not read"}
    ]
    assert (artifact["coverage"]["total"], artifact["coverage"]["extracted"]) == (3, 2)


def test_sheets_past_10000_are_one_failed_unit() -> None:
    entries = "".join(f'<sheet name="s{n}" sheetId="{n}" r:id="rX"/>' for n in range(10_002))
    data = workbook(HEAD)
    book = zips_read(data, "xl/workbook.xml").replace("</sheets>", entries + "</sheets>")
    data = zips.package({**_parts(data), "xl/workbook.xml": book})
    artifact = read(data)
    failed = artifact["coverage"]["failed"]
    assert failed[-1] == {
        "unit": "sheets 10001-10003",
        "reason": "past the first 10,000 sheets of a workbook",
    }
    assert artifact["coverage"]["total"] == 10_003


# Parts and XML


def test_a_doctype_in_a_sheet_fails_it_alone() -> None:
    evil = '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e "e">]><worksheet/>'
    artifact = read(workbook(("Evil", "", {"xml": evil}), ("Data", HEAD)))
    assert artifact["coverage"]["failed"] == [
        {"unit": "Evil", "reason": "declares a DOCTYPE, which is refused"}
    ]


def test_nesting_past_64_cuts_the_sheet_and_keeps_the_rows_before() -> None:
    deep = "<x>" * 70 + "</x>" * 70
    whole = f'<worksheet xmlns="{MAIN}"><sheetData>{HEAD}{row(2, num("A2", 1))}{deep}</sheetData></worksheet>'
    artifact = read(workbook(("Deep", "", {"xml": whole})))
    assert rows_of(artifact) == [[1]]
    assert artifact["coverage"]["failed"] == [
        {"unit": "Deep rows 3-", "reason": "nests deeper than 64 elements"}
    ]


def test_a_sheet_inflating_past_what_it_declares_fails_alone() -> None:
    parts = _parts(workbook(("Bomb", HEAD), ("Data", HEAD)))
    del parts["xl/worksheets/sheet1.xml"]
    data = zips.bomb(parts, "xl/worksheets/sheet1.xml", inflated=8 * MIB, declared=1024)
    artifact = read(data)
    [failure] = artifact["coverage"]["failed"]
    assert failure["unit"] == "Bomb"
    assert [t["name"] for t in artifact["tables"]] == ["Data"]


def test_a_sheet_declaring_over_256_mib_fails_alone() -> None:
    data = zips.with_declared_size(
        workbook(("Big", HEAD), ("Data", HEAD)), "xl/worksheets/sheet1.xml", 300 * MIB
    )
    artifact = read(data)
    assert artifact["coverage"]["failed"] == [
        {"unit": "Big", "reason": f"declares {300 * MIB:,} bytes, over 256 MiB"}
    ]


def test_a_tag_of_16_mib_cuts_its_sheet() -> None:
    # 16 MiB counted from the first whole chunk read after the last event: 64 KiB more.
    huge = f'<c r="A2" x="{"a" * (16 * MIB + 128 * 1024)}"><v>1</v></c>'
    whole = f'<worksheet xmlns="{MAIN}"><sheetData>{HEAD}<row r="2">{huge}</row></sheetData></worksheet>'
    artifact = read(workbook(("Tag", "", {"xml": whole})))
    assert rows_of(artifact) == []
    assert artifact["coverage"]["failed"] == [
        {"unit": "Tag rows 2-", "reason": "holds a tag or text of 16 MiB or more"}
    ]


def test_more_than_4096_distinct_names_cut_the_sheet() -> None:
    names = "".join(f"<n{i}/>" for i in range(4_100))
    whole = f'<worksheet xmlns="{MAIN}"><sheetData>{HEAD}</sheetData>{names}</worksheet>'
    artifact = read(workbook(("Names", "", {"xml": whole})))
    assert artifact["coverage"]["failed"] == [
        {"unit": "Names rows 2-", "reason": "uses more than 4,096 distinct names"}
    ]


def test_an_element_name_over_1024_characters_cuts_the_sheet() -> None:
    whole = f'<worksheet xmlns="{MAIN}"><sheetData>{HEAD}<{"n" * 1025}/></sheetData></worksheet>'
    artifact = read(workbook(("Long", "", {"xml": whole})))
    assert artifact["coverage"]["failed"] == [
        {"unit": "Long rows 2-", "reason": "uses an element name over 1,024 characters"}
    ]


def test_a_header_16384_columns_wide_widens_rows_only_as_far_as_the_budget_lays_them() -> None:
    """A few seconds: the budget it checks is 40 MiB of laid-out rows, filled for real."""
    # Each row is 16,384 values wide in the table (nulls included; every column is named, so
    # none is dropped as blank): the 40 MiB of laid-out JSON holds a few hundred of them, and
    # the rest are a failed unit, never padded.
    names = "".join(f"<c><v>{c}</v></c>" for c in range(16_384))
    body = row(1, names) + "".join(row(n, num(f"A{n}", n)) for n in range(2, 1_002))
    artifact = read(workbook(("Wide", body)))
    laid = len(rows_of(artifact))
    assert 300 < laid < 500
    assert artifact["coverage"]["failed"] == [
        {"unit": f"Wide rows {laid + 2}-", "reason": "past the table budget (laid-out rows)"}
    ]


def test_elements_are_bounded_over_the_whole_workbook(monkeypatch: pytest.MonkeyPatch) -> None:
    import extractor_sandbox.formats.xlsx as reader

    monkeypatch.setattr(reader, "MAX_ELEMENTS", 40)
    body = HEAD + "".join(row(n, num(f"A{n}", n)) for n in range(2, 20))
    artifact = read(workbook(("First", body), ("Second", HEAD)))
    # The workbook part holds four elements, leaving the sheet 36: six to the end of its header
    # row, three a row after it, so row 12's is the 37th.
    assert rows_of(artifact) == [[n] for n in range(2, 12)]
    assert artifact["coverage"]["failed"] == [
        {"unit": "First rows 12-", "reason": "holds more than 36 elements"},
        {"unit": "sheets 2-2", "reason": "past 40 elements in the workbook: never read"},
    ]


def test_a_header_past_the_laid_out_bytes_fails_its_table(monkeypatch: pytest.MonkeyPatch) -> None:
    from extractor_sandbox.formats import tables

    # Room for the sheet's name heading (170 bytes), not for its header's 134 more.
    monkeypatch.setattr(tables, "MAX_LAYOUT_BYTES", 250)
    names = "".join(text(f"{letter}1", letter * 30) for letter in "ABCD")
    artifact = read(workbook(("Wide", row(1, names) + row(2, num("A2", 1))), ("Next", HEAD)))
    assert artifact["tables"] == []
    assert artifact["coverage"]["failed"] == [
        {"unit": "Wide", "reason": "its header is past the table budget"},
        {"unit": "sheets 2-2", "reason": "past the table budget: never read"},
    ]


def test_a_sheets_name_heading_past_the_laid_out_bytes_fails_the_sheet(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The heading is charged to the table budget as a row block is: a workbook of a million
    # sheets with long names cannot lay out past it.
    from extractor_sandbox.formats import tables

    monkeypatch.setattr(tables, "MAX_LAYOUT_BYTES", 100)
    artifact = read(workbook(("Wide", HEAD + row(2, num("A2", 1))), ("Next", HEAD)))
    assert artifact["blocks"] == [] and artifact["tables"] == []
    assert artifact["coverage"]["failed"] == [
        {"unit": "Wide", "reason": "past the table budget"},
        {"unit": "sheets 2-2", "reason": "past the table budget: never read"},
    ]


# Regions (issue 16): a workbook cannot make a table (a dataset) of every cell


def _two_tables() -> str:
    return (
        row(1, text("A1", "a"), text("B1", "b"))
        + row(2, num("A2", 1), num("B2", 2))
        + row(4, text("A4", "c"), text("B4", "d"))
        + row(5, num("A5", 3), num("B5", 4))
    )


def test_past_the_workbooks_tables_a_sheet_is_one_table(monkeypatch: pytest.MonkeyPatch) -> None:
    import extractor_sandbox.formats.xlsx as xlsx_reader

    monkeypatch.setattr(xlsx_reader, "MAX_TABLES", 3)
    artifact = read(workbook(("One", _two_tables()), ("Two", _two_tables())))
    assert [(t["id"], t["name"]) for t in artifact["tables"]] == [
        ("t0", "One"),
        ("t1", "One"),
        ("t2", "Two"),
    ]
    assert artifact["tables"][2]["locator"] == {"sheet": "Two", "row_start": 1, "row_end": 5}


def test_a_sheet_of_a_thousand_small_tables_is_one_table() -> None:
    body = "".join(
        row(3 * i + 1, text(f"A{3 * i + 1}", "k"), text(f"B{3 * i + 1}", "v"))
        + row(3 * i + 2, text(f"A{3 * i + 2}", "x"), num(f"B{3 * i + 2}", i))
        for i in range(1_000)
    )
    artifact = read(workbook(body))
    [entry] = artifact["tables"]
    assert entry["locator"]["row_end"] == 2_999
