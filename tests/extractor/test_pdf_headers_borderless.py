"""A borderless table's header set apart from its rows (issue 35: the Union budget's statement,
"Plan" and "Non-Plan" over "Revenue Capital Total", a rule's width of space under them, its first
row of figures): the header's lines are the table's header rows, not a paragraph over a table
whose first row of figures names its columns."""

from __future__ import annotations

from typing import Any

from tests.extractor.test_pdf_headers import names, read, row_texts

RIGHTS = (200, 260, 320, 380, 440, 500)  # each figure column's right edge
SUBS = ("Revenue", "Capital", "Total") * 2
ROWS = (
    ("Agriculture", "100.50", "20.25", "120.75", "30.00", "1.50", "31.50"),
    ("Posts", "286.70", "513.30", "800.00", "6907.76", "5.00", "6912.76"),
    ("Culture", "1767.00", "68.00", "1835.00", "676.00", "3.00", "679.00"),
)


def _budget(c: Any) -> None:
    """Group labels centred over their three columns, the columns' names under them, then the
    rows of figures three and a half font sizes below (where a ruled line would be)."""
    c.setFont("Helvetica", 8)
    c.drawString(40, 730, "Budget provisions for the year, in crores of rupees, as under.")
    width = c.stringWidth("Revenue", "Helvetica", 8)
    for first, label in ((0, "Plan"), (3, "Non-Plan")):
        left, right = RIGHTS[first] - width, RIGHTS[first + 2]
        c.drawCentredString((left + right) / 2, 700, label)
    c.drawString(40, 689, "Ministry")
    for right, sub in zip(RIGHTS, SUBS, strict=True):
        c.drawRightString(right, 689, sub)
    for y, row in zip((660, 648, 636), ROWS, strict=True):
        c.drawString(40, y, row[0])
        for right, value in zip(RIGHTS, row[1:], strict=True):
            c.drawRightString(right, y, value)


def test_header_lines_set_apart_over_a_first_row_of_figures_are_the_table_s_header() -> None:
    artifact = read(_budget)
    [table] = artifact["tables"]
    assert names(table) == [
        "Ministry",
        "Plan Revenue",
        "Plan Capital",
        "Plan Total",
        "Non-Plan Revenue",
        "Non-Plan Capital",
        "Non-Plan Total",
    ]
    assert table["header_rows"] == 2
    assert [row[0] for row in table["rows"]] == ["Agriculture", "Posts", "Culture"]
    assert row_texts(artifact)[0].startswith("Ministry: Agriculture | Plan Revenue: 100.5")
    paragraphs = [b["text"] for b in artifact["blocks"] if "table_id" not in b.get("attrs", {})]
    assert not any("Revenue" in text for text in paragraphs)


def _rates(c: Any) -> None:
    """As the loan rates draw it: the header a ruled frame of its own, two rows of words, and
    a hair's breadth under it the body's frame in the same columns, its first row of figures."""
    c.setLineWidth(0.5)
    xs = (40, 140, 240, 340)
    for top, ys in ((700, (700, 685, 670)), (666.7, (666.7, 651.7, 636.7))):
        for y in ys:
            c.line(xs[0], y, xs[-1], y)
        for x in xs:
            c.line(x, ys[-1], x, top)
    c.setFont("Helvetica", 8)
    rows = (
        (690, ("Loan Type", "Variable", "Fixed")),
        (675, ("", "Rate", "Comparison rate")),
        (656, ("Standard", "5.37%", "5.51%")),
        (641, ("3 Year", "3.94%", "5.13%")),
    )
    for y, row in rows:
        for x, cell in zip(xs, row, strict=False):
            c.drawString(x + 4, y, cell)


def test_a_ruled_frame_of_words_just_over_a_frame_of_figures_is_its_header() -> None:
    artifact = read(_rates)
    [table] = artifact["tables"]
    assert names(table) == ["Loan Type", "Variable Rate", "Fixed Comparison rate"]
    assert table["header_rows"] == 2
    assert table["rows"] == [["Standard", "5.37%", "5.51%"], ["3 Year", "3.94%", "5.13%"]]
    assert row_texts(artifact)[0] == (
        "Loan Type: Standard | Variable Rate: 5.37% | Fixed Comparison rate: 5.51%"
    )
