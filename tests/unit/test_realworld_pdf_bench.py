"""The real-world PDF bench's gold converter and its outline stripping (bench/realworld_pdf*.py)."""

from __future__ import annotations

import io

import pypdf
from reportlab.pdfgen import canvas

from bench.realworld_pdf import without_outline
from bench.realworld_pdf_gold import icdar_tables, outline_headings

STRUCTURE = b"""<?xml version="1.0" encoding="UTF-8"?>
<document filename="x-str.xml">
  <table id="1">
    <region id="1" page="2">
      <cell id="1" start-row="0" start-col="1" end-col="2">
        <bounding-box x1="100" x2="300" y1="500" y2="510"/><content>All
        items</content></cell>
      <cell id="2" start-row="1" start-col="0"><bounding-box x1="50" x2="90" y1="480" y2="26\xc3\x9f"/>
        <content>North</content></cell>
      <cell id="3" start-row="1" start-col="2"><content>12</content></cell>
    </region>
    <region id="2" page="3">
      <cell id="1" start-row="0" start-col="0"><content>South</content></cell>
    </region>
  </table>
</document>"""


def test_each_region_is_a_gold_table_on_its_page_its_cells_at_their_start() -> None:
    first, second = icdar_tables(STRUCTURE)
    assert first["page"] == 2 and second["page"] == 3
    assert first["rows"] == [["", "All items", ""], ["North", "", "12"]]
    assert first["bbox"] == [50.0, 480.0, 300.0, 510.0]  # "26ß": the stray letter dropped
    assert second["rows"] == [["South"]]


def paper() -> bytes:
    buffer = io.BytesIO()
    c = canvas.Canvas(buffer, invariant=1)
    for number, title in enumerate(["1 Introduction", "2 Methods"], start=1):
        c.drawString(72, 700, title)
        c.bookmarkPage(f"s{number}")
        c.addOutlineEntry(title, f"s{number}", level=0)
        if number == 2:
            c.bookmarkPage("s2.1")
            c.addOutlineEntry("2.1 Data", "s2.1", level=1)
        c.showPage()
    c.save()
    return buffer.getvalue()


def test_the_outline_is_the_gold_and_is_gone_before_a_reader_reads_the_pdf() -> None:
    data = paper()
    assert outline_headings(data) == [
        {"type": "heading", "text": "1 Introduction", "level": 1, "page": 1},
        {"type": "heading", "text": "2 Methods", "level": 1, "page": 2},
        {"type": "heading", "text": "2.1 Data", "level": 2, "page": 2},
    ]
    stripped = pypdf.PdfReader(io.BytesIO(without_outline(data)))
    assert stripped.outline == []
    assert "2 Methods" in stripped.pages[1].extract_text()
