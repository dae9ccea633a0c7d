"""A ruled table's header of several rows: a group's label over the columns it groups, and a
title set inside the table's frame (issue 35: the NICS firearm checks' table)."""

from __future__ import annotations

import io
import logging
from collections.abc import Iterator
from typing import Any

import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from extractor_sandbox.formats.pdf.reader import extract_pdf
from tests.extractor.server_check import validated


@pytest.fixture(autouse=True)
def _quiet_pypdf() -> Iterator[None]:
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def read(draw: Any, pages: int = 1) -> dict[str, Any]:
    buffer = io.BytesIO()
    c = canvas.Canvas(buffer, pagesize=A4, invariant=1)
    for _ in range(pages):
        draw(c)
        c.showPage()
    c.save()
    data = buffer.getvalue()
    return validated(extract_pdf(data, {}, name="doc.pdf"), data)


def names(table: dict[str, Any]) -> list[str]:
    return [column["name"] for column in table["columns"]]


def row_texts(artifact: dict[str, Any]) -> list[str]:
    return [
        line
        for block in artifact["blocks"]
        if "table_id" in block.get("attrs", {})
        for line in block["text"].splitlines()
    ]


GROUPS = {170: "Pre-Pawn", 320: "Returned/Disposition"}  # each over three columns 50 wide
SUBS = ("Handgun", "Long Gun", "Other")


def _grouped(c: Any, title: bool = True) -> None:
    """As the NICS table draws it: a title inside the frame over the group labels (a rule under
    it only between the first and the last column), each group's label over its three columns,
    whose rules end under the label, and the first and last columns' names set on the names'
    line of a cell reaching up to the title."""
    c.setLineWidth(0.5)
    c.line(40, 700, 520, 700)
    c.line(120, 680, 470, 680)
    for y in (650, 625, 600):
        c.line(40, y, 520, y)
    for x in (40, 520):
        c.line(x, 600, x, 700)
    for x in (120, 170, 320, 470):
        c.line(x, 600, x, 680)
    for x in (220, 270, 370, 420):
        c.line(x, 600, x, 671)  # a group's columns: parted under its label only
    if title:
        c.setFont("Helvetica", 10)
        c.drawCentredString(280, 686, "Checks by State November 2015")
    c.setFont("Helvetica", 8)
    for x, label in GROUPS.items():
        c.drawCentredString(x + 75, 673, label)
        for k, sub in enumerate(SUBS):
            c.drawString(x + 4 + 50 * k, 654, sub)
    for x, name in ((44, "State"), (124, "Permit"), (474, "Totals")):
        c.drawString(x, 654, name)
    rows = (("Alabama", 18, 1, 2, 3, 4, 5, 6, 39), ("Alaska", 20, 7, 8, 9, 10, 11, 12, 77))
    for y, row in zip((631, 606), rows, strict=True):
        c.drawString(44, y, row[0])
        for x, value in zip((124, 174, 224, 274, 324, 374, 424, 474), row[1:], strict=True):
            c.drawString(x, y, str(value))


def test_a_groups_label_over_its_columns_names_each_of_them_joined_to_its_own_name() -> None:
    artifact = read(_grouped)
    [table] = artifact["tables"]
    assert names(table) == [
        "State",
        "Permit",
        "Pre-Pawn Handgun",
        "Pre-Pawn Long Gun",
        "Pre-Pawn Other",
        "Returned/Disposition Handgun",
        "Returned/Disposition Long Gun",
        "Returned/Disposition Other",
        "Totals",
    ]
    assert row_texts(artifact)[0] == (
        "State: Alabama | Permit: 18 | Pre-Pawn Handgun: 1 | Pre-Pawn Long Gun: 2 | "
        "Pre-Pawn Other: 3 | Returned/Disposition Handgun: 4 | Returned/Disposition Long Gun: 5 "
        "| Returned/Disposition Other: 6 | Totals: 39"
    )


def test_the_header_s_rows_are_counted_and_its_data_are_the_rows() -> None:
    """The entry's rows are the data, as a workbook's are: a dataset's columns type as the
    figures they hold, not as the header lines' words."""
    [table] = read(_grouped)["tables"]
    assert table["header_rows"] == 2
    assert table["rows"][0] == ["Alabama", 18, 1, 2, 3, 4, 5, 6, 39]
    assert all(row[0] in ("Alabama", "Alaska") for row in table["rows"])
    assert [column["type"] for column in table["columns"]][1:] == ["number"] * 8
    assert table["locator"]["row_start"] == 1
    assert table["locator"]["row_end"] == 4


def test_a_title_across_the_frame_over_the_groups_is_the_page_s_line_no_column_s_name() -> None:
    """One cell across the whole frame, no rule parting it: the page's line, as before the
    title rule (a letterhead's lines over a form stay where the page reads them)."""
    artifact = read(_grouped)
    [table] = artifact["tables"]
    assert not any("Checks by State" in name for name in names(table))
    lines = [b["text"] for b in artifact["blocks"] if "table_id" not in b.get("attrs", {})]
    assert "Checks by State November 2015" in lines


def test_a_table_going_on_to_the_next_page_drops_every_row_of_its_repeated_header() -> None:
    [table] = read(lambda c: _grouped(c, title=False), pages=2)["tables"]
    assert table["header_rows"] == 2
    assert [row[0] for row in table["rows"]] == ["Alabama", "Alaska"] * 2
    assert table["locator"] == {"page_start": 1, "page_end": 2, "row_start": 1, "row_end": 6}


def _over_the_names(c: Any, centre: float, text: str) -> None:
    """A top row, the first column's rule running up through it, over a row of names and one of
    figures; `text` centred at `centre` in it."""
    c.setLineWidth(0.5)
    for y in (700, 680, 655, 630):
        c.line(40, y, 520, y)
    for x in (40, 120, 520):
        c.line(x, 630, x, 700)
    for x in (220, 320, 420):
        c.line(x, 630, x, 680)
    c.setFont("Helvetica", 10)
    c.drawCentredString(centre, 686, text)
    for y, row in ((664, ("Region", "2020", "2021", "2022", "2023")), (639, ("North", *"1234"))):
        for x, cell in zip((44, 124, 224, 324, 424), row, strict=True):
            c.drawString(x, y, cell)


def _titled(c: Any) -> None:
    """A title centred in the frame's top row, over the whole table."""
    _over_the_names(c, 280, "Annual figures by region and year, 2020 to 2024")


def test_a_title_centred_in_the_top_row_is_no_column_s_name() -> None:
    artifact = read(_titled)
    [table] = artifact["tables"]
    assert names(table) == ["Region", "2020", "2021", "2022", "2023"]
    assert table["header_rows"] == 1
    assert table["rows"] == [["North", 1, 2, 3, 4]]
    caption = artifact["blocks"][0]
    assert (caption["type"], caption["text"]) == (
        "paragraph",
        "Annual figures by region and year, 2020 to 2024",
    )


def _labelled(c: Any) -> None:
    """A group's label centred over the columns it spans, beside an empty corner cell."""
    _over_the_names(c, 320, "Sales by year and region, in thousands of euros, before tax")


def test_a_group_s_label_centred_over_its_own_columns_stays_a_header_row() -> None:
    artifact = read(_labelled)
    [table] = artifact["tables"]
    assert names(table)[1] == "Sales by year and region, in thousands of euros, before tax"
    assert table["rows"][0] == ["Region", 2020, 2021, 2022, 2023]
