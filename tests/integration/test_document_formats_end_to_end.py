"""Each document format the extractor declares, through the whole path: a folder, `loom ingest`
through Dagster, published chunks, and a search hit that cites where its text came from (the
sheet and rows of a table, the page of a PDF or a slide, the section of a Word document)."""

from __future__ import annotations

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from extractor_sandbox.source import DECLARED_FORMATS
from loom_dagster import api

PHRASE = "quarterly lighthouse maintenance"


def csv_file() -> bytes:
    return f"task,cost\nroutine check,10\n{PHRASE},250\n".encode()


def xlsx_file() -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Budget"
    sheet.append(["task", "cost"])
    sheet.append(["routine check", 10])
    sheet.append([PHRASE, 250])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def parquet_file() -> bytes:
    import pyarrow
    import pyarrow.parquet

    table = pyarrow.table({"task": ["routine check", PHRASE], "cost": [10, 250]})
    sink = pyarrow.BufferOutputStream()
    pyarrow.parquet.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def docx_file() -> bytes:
    from docx import Document

    document = Document()
    document.add_heading("Operations", level=1)
    document.add_paragraph("An introduction.")
    document.add_heading("Schedule", level=2)
    document.add_paragraph(f"The {PHRASE} happens in spring.")
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def pptx_file() -> bytes:
    from pptx import Presentation

    deck = Presentation()
    for title, body in (("Welcome", "An opening slide."), ("Schedule", f"The {PHRASE} plan.")):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        slide.shapes.title.text = title
        slide.placeholders[1].text = body
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def pdf_file() -> bytes:
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    pdf = canvas.Canvas(buffer)
    # A heading on each page, so the pages' paragraphs sit in sections of their own (blocks under
    # one heading may pack into one chunk, across a page break).
    for title, body in (("Welcome", "An opening page."), ("Schedule", f"The {PHRASE} plan.")):
        pdf.setFont("Helvetica-Bold", 18)
        pdf.drawString(72, 740, title)
        pdf.setFont("Helvetica", 11)
        pdf.drawString(72, 710, body)
        pdf.showPage()
    pdf.save()
    return buffer.getvalue()


# format -> (file name, builder, what the hit's locator says). The phrase is on row 3 of a
# CSV or a sheet (the header is row 1), and on row 2 of a Parquet file (its names are the
# schema's, no row: rows count from 1 by the footer), in a row block that may hold the rows
# around it.
CASES: dict[str, tuple[str, Callable[[], bytes], dict[str, object]]] = {
    "csv": ("costs.csv", csv_file, {"row": 3}),
    "xlsx": ("costs.xlsx", xlsx_file, {"sheet": "Budget", "row": 3}),
    "parquet": ("costs.parquet", parquet_file, {"row": 2}),
    "docx": ("plan.docx", docx_file, {}),
    "pptx": ("plan.pptx", pptx_file, {"page_start": 2, "page_end": 2}),
    "pdf": ("plan.pdf", pdf_file, {"page_start": 2, "page_end": 2}),
}
DECLARED = [fmt for fmt in CASES if fmt in DECLARED_FORMATS]


@pytest.mark.parametrize("fmt", DECLARED)
def test_a_declared_format_is_published_and_its_hit_cites_where_it_came_from(
    loom_home: Path, tmp_path: Path, fmt: str
) -> None:
    name, build, cited = CASES[fmt]
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / name).write_bytes(build())

    report = api.ingest_folder(folder)

    [outcome] = report.outcomes
    assert outcome.status == "published", outcome.detail
    hits = api.search(PHRASE, limit=1)
    assert hits, f"no hit for the {fmt} file"
    [hit] = hits
    assert hit.chunk.path == name and PHRASE in hit.chunk.text
    locator = hit.chunk.locator.to_dict()
    expected = dict(cited)
    row = expected.pop("row", None)
    assert {key: locator.get(key) for key in expected} == expected
    if row is not None:
        assert locator["row_start"] <= row <= locator["row_end"], locator
    if fmt in ("docx", "pptx", "pdf"):
        assert hit.chunk.section_path[-1] == "Schedule"
    if fmt == "docx":
        # A Word document has no pages to cite: its citation is the section path.
        assert "page_start" not in locator


def test_every_document_format_the_contract_names_has_a_case_here() -> None:
    assert set(CASES) == {"csv", "xlsx", "parquet", "docx", "pptx", "pdf"}
