"""Writes the XLSX qualification fixtures and their gold, both by hand.

Each fixture is a workbook built here (with openpyxl, or as raw parts where openpyxl cannot write
what the rule needs: cached formula values, phonetic readings, East Asian formats, t="d" cells)
beside the tables the seed's rules say it holds, written out literally below, not taken from the
extractor. Run from the repository root:

    .venv/bin/python tests/extractor/gold/xlsx/make_fixtures.py
"""

from __future__ import annotations

import io
import json
import zipfile
from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Any

import openpyxl
from openpyxl.chart import BarChart, Reference
from openpyxl.utils.datetime import CALENDAR_MAC_1904

HERE = Path(__file__).resolve().parent
# Saved with a fixed timestamp so the files do not change each time they are made.
FIXED = datetime(2025, 1, 1)


def column(name: str, kind: str) -> dict[str, str]:
    return {"name": name, "type": kind}


def save(book: Any) -> bytes:
    book.properties.created = FIXED
    book.properties.modified = FIXED
    buffer = io.BytesIO()
    book.save(buffer)
    return _normalised(buffer.getvalue())


def _normalised(data: bytes) -> bytes:
    """The zip rewritten with fixed member times, so a rerun writes the same bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=(2025, 1, 1, 0, 0, 0))
            fixed.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(fixed, source.read(info))
    return out.getvalue()


# -- the fixtures ---------------------------------------------------------------------------------


def basic() -> tuple[bytes, list[dict[str, Any]]]:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "People"
    sheet.append(["Name", "Age", "Score", "Member", "Id"])
    sheet.append(["Alice", 30, 0.1 + 0.2, True, 2**70])
    sheet.append(["Bob", 41, 2.5, False, 7])
    sheet.append(["Carol", None, 1e-07, True, 8])
    sheet.append(["  ", None, None, None, None])  # only whitespace: no row
    sheet.append(["Dan", 12, -3, False, 9])
    gold = {
        "columns": [
            column("Name", "string"),
            column("Age", "number"),
            column("Score", "number"),
            column("Member", "bool"),
            column("Id", "number"),
        ],
        "rows": [
            # openpyxl writes 0.1 + 0.2 as 0.3 and 2**70 as 1.180591620717411e+21 (raw_cells
            # holds the exact forms).
            ["Alice", 30, 0.3, True, 1.180591620717411e21],
            ["Bob", 41, 2.5, False, 7],
            ["Carol", None, 1e-07, True, 8],
            ["Dan", 12, -3, False, 9],
        ],
    }
    return save(book), [gold]


def dates() -> tuple[bytes, list[dict[str, Any]]]:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Dates"
    sheet.append(["Day", "Moment", "Clock", "Elapsed", "Mixed", "Custom", "Serial", "Leap"])
    rows = [
        [
            date(2024, 1, 2),
            datetime(2024, 3, 4, 5, 6, 7),
            time(1, 2, 3),
            timedelta(hours=36),
            date(2024, 1, 2),
            date(2023, 5, 6),
            45000,
            60,
        ],
        [
            date(1999, 12, 31),
            datetime(2000, 1, 1),
            time(13, 0, 0),
            timedelta(minutes=90, seconds=5),
            datetime(2024, 1, 2, 12, 0),
            date(2020, 2, 29),
            45000.5,
            61,
        ],
    ]
    for values in rows:
        sheet.append(values)
    for row in (2, 3):
        sheet.cell(row, 6).number_format = "dd/mm/yyyy"
        sheet.cell(row, 7).number_format = "mm-dd-yy"  # built-in 14
        sheet.cell(row, 8).number_format = "yyyy-mm-dd"
    gold = {
        "columns": [
            column("Day", "date"),
            column("Moment", "datetime"),
            column("Clock", "time"),
            column("Elapsed", "duration"),
            column("Mixed", "datetime"),
            column("Custom", "date"),
            column("Serial", "date"),
            column("Leap", "mixed"),
        ],
        "rows": [
            [
                "2024-01-02",
                "2024-03-04T05:06:07",
                "01:02:03",
                "36:00:00",
                "2024-01-02",
                "2023-05-06",
                "2023-03-15",
                "1900-02-29",
            ],
            [
                "1999-12-31",
                "2000-01-01T00:00:00",
                "13:00:00",
                "1:30:05",
                "2024-01-02T12:00:00",
                "2020-02-29",
                "2023-03-15",
                "1900-03-01",
            ],
        ],
    }
    return save(book), [gold]


def epoch1904() -> tuple[bytes, list[dict[str, Any]]]:
    book = openpyxl.Workbook()
    book.epoch = CALENDAR_MAC_1904
    sheet = book.active
    sheet.title = "Mac"
    sheet.append(["Day", "Zero"])
    sheet.append([date(2024, 1, 2), 0])
    sheet.append([date(1904, 1, 2), 1.5])
    for row in (2, 3):
        sheet.cell(row, 2).number_format = "yyyy-mm-dd h:mm"
    gold = {
        "columns": [column("Day", "date"), column("Zero", "datetime")],
        "rows": [
            ["2024-01-02", "1904-01-01T00:00:00"],
            ["1904-01-02", "1904-01-02T12:00:00"],
        ],
    }
    return save(book), [gold]


def errors() -> tuple[bytes, list[dict[str, Any]]]:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Errors"
    sheet.append(["Item", "Ratio"])
    sheet.append(["a", 1.5])
    sheet.append(["b", "#DIV/0!"])
    sheet.append(["c", "#N/A"])
    sheet.append(["d", 2])
    gold = {
        "columns": [column("Item", "string"), column("Ratio", "number")],
        "rows": [
            ["a", 1.5],
            ["b", {"error": "#DIV/0!"}],
            ["c", {"error": "#N/A"}],
            ["d", 2],
        ],
    }
    return save(book), [gold]


def merged_header() -> tuple[bytes, list[dict[str, Any]]]:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Halves"
    sheet["A1"] = "Region"
    sheet.merge_cells("A1:A2")
    sheet["B1"] = 2025
    sheet.merge_cells("B1:C1")
    sheet["B2"], sheet["C2"] = "H1", "H2"
    sheet.append(["North", 10, 20])
    sheet.append(["South", 30, 40])
    gold = {
        "columns": [
            column("Region", "string"),
            column("2025 / H1", "number"),
            column("2025 / H2", "number"),
        ],
        "rows": [["North", 10, 20], ["South", 30, 40]],
    }
    return save(book), [gold]


def title_merged() -> tuple[bytes, list[dict[str, Any]]]:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sales"
    sheet["A1"] = "Sales 2025"
    sheet.merge_cells("A1:C1")
    sheet.append(["Region", "Q1", "Q2"])
    sheet.append(["East", 1.25, 2])
    sheet.append(["West", 3, 4.75])
    gold = {
        "columns": [
            column("Sales 2025 / Region", "string"),
            column("Sales 2025 / Q1", "number"),
            column("Sales 2025 / Q2", "number"),
        ],
        "rows": [["East", 1.25, 2], ["West", 3, 4.75]],
    }
    return save(book), [gold]


def numbers_under_range() -> tuple[bytes, list[dict[str, Any]]]:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Years"
    sheet["A1"], sheet["B1"] = "Team", "Years"
    sheet.merge_cells("B1:C1")
    sheet["B2"], sheet["C2"] = 2024, 2025  # numbers under the range: data, not names
    sheet.append(["Red", 1, 2])
    gold = {
        "columns": [
            column("Team", "string"),
            column("Years", "number"),
            column("Years (2)", "number"),
        ],
        "rows": [[None, 2024, 2025], ["Red", 1, 2]],
    }
    return save(book), [gold]


def sheets() -> tuple[bytes, list[dict[str, Any]]]:
    book = openpyxl.Workbook()
    first = book.active
    first.title = "First"
    first.append(["Fruit", "Count"])
    first.append(["apple", 3])
    first.append(["pear", 5])
    second = book.create_sheet("Second")
    second.append(["Key", "Value"])
    second.append(["k", "v"])
    second.sheet_state = "hidden"
    book.create_sheet("Empty")
    chart_sheet = book.create_chartsheet("Chart")
    chart = BarChart()
    chart.add_data(Reference(first, min_col=2, min_row=1, max_row=3), titles_from_data=True)
    chart_sheet.add_chart(chart)
    gold_first = {
        "columns": [column("Fruit", "string"), column("Count", "number")],
        "rows": [["apple", 3], ["pear", 5]],
    }
    gold_second = {
        "columns": [column("Key", "string"), column("Value", "string")],
        "rows": [["k", "v"]],
    }
    return save(book), [gold_first, gold_second]


def sparse() -> tuple[bytes, list[dict[str, Any]]]:
    book = openpyxl.Workbook()
    sheet = book.active
    sheet.title = "Sparse"
    sheet["B3"], sheet["C3"], sheet["E3"] = "Item", "Qty", "Note"
    sheet["B4"], sheet["C4"], sheet["E4"] = "Pen", 5, "blue"
    sheet["B6"], sheet["D6"] = "Ink", 7
    sheet["B7"], sheet["C7"] = "Cap", "none"
    gold = {
        "columns": [
            column("Item", "string"),
            column("Qty", "mixed"),
            column("column 3", "number"),
            column("Note", "string"),
        ],
        "rows": [["Pen", 5, None, "blue"], ["Ink", None, 7, None], ["Cap", "none", None, None]],
    }
    return save(book), [gold]


# -- raw parts: what openpyxl does not write ----------------------------------------------------

MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
OFFICE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def raw_workbook(sheet_xml: str, shared: str | None = None, styles: str | None = None) -> bytes:
    """A one-sheet workbook of hand-written parts."""
    rels = [f'<Relationship Id="rId1" Type="{OFFICE}/worksheet" Target="worksheets/sheet1.xml"/>']
    parts = {
        "[Content_Types].xml": (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="xml" ContentType="application/xml"/></Types>'
        ),
        "_rels/.rels": (
            f'<Relationships xmlns="{RELS}"><Relationship Id="rId1" '
            f'Type="{OFFICE}/officeDocument" Target="xl/workbook.xml"/></Relationships>'
        ),
        "xl/workbook.xml": (
            f'<workbook xmlns="{MAIN}" xmlns:r="{OFFICE}"><sheets>'
            '<sheet name="Raw" sheetId="1" r:id="rId1"/></sheets></workbook>'
        ),
        "xl/worksheets/sheet1.xml": f'<worksheet xmlns="{MAIN}"><sheetData>{sheet_xml}</sheetData></worksheet>',
    }
    if shared is not None:
        parts["xl/sharedStrings.xml"] = f'<sst xmlns="{MAIN}">{shared}</sst>'
        rels.append(
            f'<Relationship Id="rId2" Type="{OFFICE}/sharedStrings" Target="sharedStrings.xml"/>'
        )
    if styles is not None:
        parts["xl/styles.xml"] = f'<styleSheet xmlns="{MAIN}">{styles}</styleSheet>'
        rels.append(f'<Relationship Id="rId3" Type="{OFFICE}/styles" Target="styles.xml"/>')
    parts["xl/_rels/workbook.xml.rels"] = (
        f'<Relationships xmlns="{RELS}">{"".join(rels)}</Relationships>'
    )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, body in parts.items():
            info = zipfile.ZipInfo(name, date_time=(2025, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, body)
    return out.getvalue()


def raw_cells() -> tuple[bytes, list[dict[str, Any]]]:
    shared = (
        "<si><t>Label</t></si>"
        "<si><t>Formula</t></si>"
        '<si><r><t>東京</t></r><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></si>'
        "<si><t>Era date</t></si>"
        "<si><t>Written</t></si>"
        "<si><t>Exact</t></si>"
    )
    styles = '<cellXfs count="2"><xf numFmtId="0"/><xf numFmtId="57"/></cellXfs>'
    sheet = (
        '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c>'
        '<c r="C1" t="s"><v>3</v></c><c r="D1" t="s"><v>4</v></c><c r="E1" t="s"><v>5</v></c></row>'
        '<row r="2"><c r="A2" t="s"><v>2</v></c><c r="B2"><f>1+1</f><v>2</v></c>'
        '<c r="C2" s="1"><v>45000</v></c><c r="D2" t="d"><v>2024-05-06T07:08:09</v></c>'
        '<c r="E2"><v>0.30000000000000004</v></c></row>'
        '<row r="3"><c r="A3" t="inlineStr"><is><t>大阪</t><rPh><t>オオサカ</t></rPh></is></c>'
        '<c r="B3" t="str"><f>"a"&amp;"b"</f><v>ab</v></c>'
        '<c r="C3" s="1"><v>1</v></c><c r="D3" t="d"><v>2024-05-07</v></c>'
        '<c r="E3"><v>1180591620717411303424</v></c></row>'
        '<row r="4"><c r="A4" t="inlineStr"><is><t>x</t></is></c><c r="B4"><f>NOW()</f></c></row>'
    )
    gold = {
        "columns": [
            column("Label", "string"),
            column("Formula", "mixed"),
            column("Era date", "date"),
            column("Written", "datetime"),
            column("Exact", "number"),
        ],
        "rows": [
            ["東京", 2, "2023-03-15", "2024-05-06T07:08:09", 0.30000000000000004],
            ["大阪", "ab", "1900-01-01", "2024-05-07", "1180591620717411303424"],
            ["x", None, None, None, None],
        ],
    }
    return raw_workbook(sheet, shared, styles), [gold]


FIXTURES: dict[str, Callable[[], tuple[bytes, list[dict[str, Any]]]]] = {
    "basic": basic,
    "dates": dates,
    "epoch1904": epoch1904,
    "errors": errors,
    "merged_header": merged_header,
    "title_merged": title_merged,
    "numbers_under_range": numbers_under_range,
    "sheets": sheets,
    "sparse": sparse,
    "raw_cells": raw_cells,
}


def main() -> None:
    for name, make in FIXTURES.items():
        data, tables = make()
        (HERE / f"{name}.xlsx").write_bytes(data)
        gold = {"tables": tables}
        (HERE / f"{name}.gold.json").write_text(
            json.dumps(gold, ensure_ascii=False, indent=1) + "\n", encoding="utf-8"
        )


if __name__ == "__main__":
    main()
