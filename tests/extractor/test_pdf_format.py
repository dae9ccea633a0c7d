"""PDF extraction: one test per rule of the layout reader.

The generated fixtures (bench/docparse/pdf, written by bench/docparse/generate_pdf.py with exact
gold) are the gate's slice, scored in tests/extractor/test_docparse_gates.py with the bench's
scorer against the floors of docs/qualification.md.
"""

from __future__ import annotations

import io
import json
import logging
from pathlib import Path
from typing import Any

import pypdf
import pytest
from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

from extractor_sandbox.formats.pdf import reader
from extractor_sandbox.formats.pdf.content import Rule, read_drawing
from extractor_sandbox.formats.pdf.grids import LINE_NUMBER_ROWS, _line_numbers, chart_areas
from extractor_sandbox.formats.pdf.reader import PARSER_VERSION, extract_pdf, page_cell
from extractor_sandbox.registry import SPECS
from extractor_sandbox.source import DECLARED_FORMATS, extract
from tests.extractor.pdf_build import one_page, pdf, stream, text_content
from tests.extractor.server_check import validated

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "bench" / "docparse" / "pdf"
CORPUS = ROOT.parent / "shared" / "corpus"
WIDTH, HEIGHT = A4


@pytest.fixture(autouse=True)
def _quiet_pypdf():
    logging.disable(logging.WARNING)
    yield
    logging.disable(logging.NOTSET)


def read(data: bytes, name: str = "doc.pdf") -> dict[str, Any]:
    return validated(extract_pdf(data, {}, name=name), data)


def fixture(name: str) -> dict[str, Any]:
    return read((GENERATED / f"{name}.pdf").read_bytes(), f"{name}.pdf")


def drawn(draw: Any, pages: int = 1) -> bytes:
    buffer = io.BytesIO()
    c = canvas.Canvas(buffer, pagesize=A4, invariant=1)
    for page in range(pages):
        draw(c, page)
        c.showPage()
    c.save()
    return buffer.getvalue()


def texts(artifact: dict[str, Any], kind: str | None = None) -> list[str]:
    return [b["text"] for b in artifact["blocks"] if kind is None or b["type"] == kind]


# Wiring and the envelope


def test_pdf_is_declared_and_routed_to_the_layout_reader() -> None:
    assert DECLARED_FORMATS["pdf"] == ()
    assert SPECS["pdf"].reader() is extract_pdf
    data = (GENERATED / "ruled_table.pdf").read_bytes()
    assert extract(data, "pdf", "t.pdf", {})["format"] == "pdf"


def test_artifact_envelope_and_page_coverage() -> None:
    artifact = fixture("one_column")
    assert artifact["parser"] == "loom-pdf"
    assert artifact["parser_version"] == PARSER_VERSION
    assert artifact["coverage"] == {
        "unit": "pages",
        "total": 2,
        "extracted": 2,
        "failed": [],
        "lost": [],
        "complete": True,
    }


@pytest.mark.parametrize("path", sorted(GENERATED.glob("*.pdf")), ids=lambda p: p.stem)
def test_every_block_cites_its_pages(path: Path) -> None:
    artifact = read(path.read_bytes(), path.name)
    for block in artifact["blocks"]:
        assert 1 <= block["locator"]["page_start"] <= block["locator"]["page_end"]


@pytest.mark.skipif(not (CORPUS / "inputs" / "pdf").exists(), reason="no shared corpus")
def test_every_real_pdf_in_the_corpus_passes_the_contract() -> None:
    for path in sorted((CORPUS / "inputs" / "pdf").glob("*.pdf")):
        artifact = read(path.read_bytes(), path.name)
        assert artifact["blocks"], path.name


# Runs and lines


def test_a_gap_wider_than_the_font_size_cuts_a_line_into_segments_of_a_table() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        for k, row in enumerate([("Name", "Owner"), ("alpha", "ops"), ("beta", "data")]):
            c.drawString(72, 700 - 14 * k, row[0])
            c.drawString(250, 700 - 14 * k, row[1])

    artifact = read(drawn(draw))
    [table] = artifact["tables"]
    assert [c["name"] for c in table["columns"]] == ["Name", "Owner"]
    assert table["rows"] == [["alpha", "ops"], ["beta", "data"]]


def test_runs_set_close_together_are_one_word_and_a_space_gap_parts_them() -> None:
    # three text operators in one text object: the text layer reads "extraction works" too
    content = b"BT /F1 10 Tf 72 700 Td (extrac) Tj (tion) Tj [-300 (works)] TJ ET"
    assert texts(read(pdf(one_page(content)))) == ["extraction works"]


def test_a_run_drawn_twice_in_place_is_read_once() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        c.drawString(72, 700, "Shadowed words")
        c.drawString(72.4, 700.3, "Shadowed words")

    assert texts(read(drawn(draw))) == ["Shadowed words"]


def test_a_character_with_no_unicode_mapping_is_the_replacement_character_with_a_warning() -> None:
    objects = one_page(b"BT /F1 12 Tf 72 700 Td <0041D8000042> Tj ET")
    objects[4] = (
        b"<< /Type /Font /Subtype /Type0 /BaseFont /X /Encoding /Identity-H "
        b"/DescendantFonts [6 0 R] >>"
    )
    objects.append(
        b"<< /Type /Font /Subtype /CIDFontType2 /BaseFont /X /CIDSystemInfo << /Registry (Adobe) "
        b"/Ordering (Identity) /Supplement 0 >> /W [65 [500 500]] >>"
    )
    artifact = read(pdf(objects))
    assert texts(artifact) == ["A\ufffdB"]
    assert any("U+FFFD on pages 1" in w for w in artifact["warnings"])


def test_a_page_turned_by_rotate_and_content_drawn_turned_read_left_to_right() -> None:
    artifact = fixture("rotated")
    assert "Landscape results" in texts(artifact, "heading")
    paragraphs = [b for b in artifact["blocks"] if b["locator"]["page_start"] == 2]
    assert paragraphs[1]["text"].startswith("Line looks tables") or len(paragraphs) == 2


def test_text_in_another_direction_is_kept_as_its_own_paragraph_after_the_page() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        for k in range(5):
            c.drawString(72, 700 - 14 * k, f"Body line number {k} of the page")
        c.saveState()
        c.translate(40, 300)
        c.rotate(90)
        c.drawString(0, 0, "Sideways margin note")
        c.restoreState()

    artifact = read(drawn(draw))
    last = artifact["blocks"][-1]
    assert last["text"] == "Sideways margin note"
    assert last["attrs"]["orientation"] == 90


# Page structure


def test_two_columns_are_read_left_then_right() -> None:
    artifact = fixture("two_columns")
    headings = texts(artifact, "heading")
    assert headings == ["Two columns of text on one page", "1 Left column", "2 Right column"]
    order = texts(artifact)
    assert order.index("1 Left column") < order.index("2 Right column")


def test_headings_by_size_and_numbering_with_their_levels() -> None:
    artifact = fixture("one_column")
    heads = [(b["text"], b["depth"]) for b in artifact["blocks"] if b["type"] == "heading"]
    assert heads == [
        ("Reading documents as they are laid out", 1),
        ("1 Introduction", 2),
        ("1.1 Scope of the reader", 3),
        ("2 Configuration", 2),
        ("2.1 Limits", 3),
    ]
    section = next(b for b in artifact["blocks"] if b["text"].startswith("The service reads"))
    assert section["section_path"] == ["Reading documents as they are laid out", "2 Configuration"]


def _bold_form(c: Any, _: int) -> None:
    """A form set bold throughout (over a thousand characters): a larger title, then numbered
    labels (most wrapped, their lines 12 points apart) each over its value in a box set apart by
    more than that."""
    c.setFont("Helvetica-Bold", 16)
    c.drawString(150, 780, "Disclosure of Contract")
    fields = [
        (["1. Tender Number:"], "1295"),
        (
            [
                "2. Name and business address of the contractor, and of its parent body",
                "where it has one:",
            ],
            "Name: Reino International",
        ),
        (
            [
                "3. Particulars of any related body corporate of the contractor that will be",
                "involved in carrying out any of the contractor's obligations under the",
                "contract or will receive a benefit under the contract:",
            ],
            "N/A",
        ),
        (
            [
                "4. Particulars of the project to be undertaken, the goods or services to be",
                "provided or the real property to be transferred or leased under the",
                "contract:",
            ],
            "Supply and Maintenance of Parking Ticket Machines",
        ),
        (["5. Estimated amount payable to the contractor under the contract:"], "$3,148,800.00"),
        (
            [
                "6. In the case of a contract arising from a tendering process, the method of",
                "tendering and a summary of the criteria against which the various tenders",
                "were assessed:",
            ],
            "Open Tender",
        ),
        (
            [
                "7. Description of any provisions under which the amount payable to the",
                "contractor may be varied:",
            ],
            "N/A",
        ),
        (
            [
                "8. Description of any provision with respect to the renegotiation of the",
                "contract:",
            ],
            "N/A",
        ),
        (
            [
                "9. Particulars of future transfers of assets to the State at no cost, and",
                "of any right to receive payments from the contractor:",
            ],
            "None",
        ),
    ]
    y = 730.0
    c.setFont("Helvetica-Bold", 10)
    for label, value in fields:
        for k, line in enumerate(label):
            c.drawString(72 if k == 0 else 90, y, line)
            y -= 12
        y -= 8
        c.rect(90, y - 4, 420, 15)
        c.drawString(94, y, value)
        y -= 26


def test_bold_lines_in_a_document_set_bold_throughout_are_no_headings() -> None:
    # bold sets a line apart only from a body that is not bold: a form set bold throughout
    # reads its labels as list items and paragraphs, its title (set larger) the one heading
    artifact = read(drawn(_bold_form))
    heads = [b["text"] for b in artifact["blocks"] if b["type"] == "heading"]
    assert heads == ["Disclosure of Contract"]


def test_bold_titles_over_tables_stay_headings_though_no_other_line_is_outside_them() -> None:
    # a page of tables whose only lines outside them are their bold titles has no bold body:
    # a few bold lines say nothing of the body's face, and the titles are headings
    def draw(c: Any, _: int) -> None:
        for t, top in enumerate((760, 560)):
            c.setFont("Helvetica-Bold", 10)
            c.drawString(72, top + 12, f"{t + 2}. Admission to the exchange")
            xs, ys = [72, 250, 420], [top - 20 * k for k in range(6)]
            for y in ys:
                c.line(xs[0], y, xs[-1], y)
            for x in xs:
                c.line(x, ys[0], x, ys[-1])
            for k in range(5):
                c.setFont("Helvetica-Bold", 10)
                c.drawString(xs[0] + 6, ys[k] - 14, f"Date of step {k + 1}")
                c.setFont("Helvetica", 10)
                c.drawString(xs[1] + 6, ys[k] - 14, f"2024-0{k + 1}-19")

    artifact = read(drawn(draw))
    heads = [b["text"] for b in artifact["blocks"] if b["type"] == "heading"]
    assert heads == ["2. Admission to the exchange", "3. Admission to the exchange"]
    assert len(artifact["tables"]) == 2


def test_a_forms_label_and_its_value_are_one_passage() -> None:
    from loom_dagster.chunking import chunk_artifact
    from loom_dagster.contract.validate import parse_artifact

    data = drawn(_bold_form)
    raw = json.dumps(read(data)).encode("utf-8")
    artifact = parse_artifact(raw, expected_format="pdf", original_size=len(data))
    passages = [chunk.text for chunk in chunk_artifact(artifact, revision="r1")]
    assert any("1. Tender Number:" in text and "1295" in text for text in passages)


def test_code_in_a_monospaced_font_keeps_its_indentation() -> None:
    [code] = texts(fixture("one_column"), "code")
    assert code.splitlines()[1] == "    timeout = float(env.get('TIMEOUT', '30'))"
    assert code.splitlines()[3] == "        raise ValueError('timeout')"


def test_list_items_are_list_blocks_and_their_markers_no_table_column() -> None:
    artifact = fixture("one_column")
    assert len(texts(artifact, "list")) == 3
    assert artifact["tables"] == []


def test_running_headers_and_page_numbers_are_furniture_left_out_with_a_warning() -> None:
    artifact = fixture("one_column")
    assert not any("revision 4" in t for t in texts(artifact))
    assert artifact["attrs"]["furniture"] == [
        {"text": "Loom field guide - revision 4", "pages": 2},
        {"text": "1", "pages": 2},
    ]
    assert any("furniture" in w for w in artifact["warnings"])


def test_paragraphs_split_at_a_gap_past_the_usual_line_spacing() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        for k in range(3):
            c.drawString(72, 700 - 12 * k, f"first paragraph line {k}")
        for k in range(3):
            c.drawString(72, 640 - 12 * k, f"second paragraph line {k}")

    assert texts(read(drawn(draw))) == [
        "first paragraph line 0 first paragraph line 1 first paragraph line 2",
        "second paragraph line 0 second paragraph line 1 second paragraph line 2",
    ]


def test_one_box_around_text_is_no_table() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        c.rect(60, 650, 300, 60)
        c.drawString(72, 690, "A boxed note that is no table")

    artifact = read(drawn(draw))
    assert artifact["tables"] == []
    assert texts(artifact) == ["A boxed note that is no table"]


# Tables


def test_a_ruled_table_is_typed_as_a_tabular_source_with_row_blocks() -> None:
    artifact = fixture("ruled_table")
    [table] = artifact["tables"]
    assert [c["name"] for c in table["columns"]] == [
        "Region",
        "Units",
        "Price",
        "Version",
        "Shipped",
    ]
    assert [c["type"] for c in table["columns"]] == [
        "string",
        "number",
        "string",
        "mixed",
        "date",
    ]  # 1.10 stays text; 1.11 reads back as a number
    assert table["rows"][0] == ["North 1", 100, "1.50", "1.10", "2024-01-10"]
    assert table["locator"] == {"page_start": 1, "page_end": 1, "row_start": 1, "row_end": 9}
    rows = [b for b in artifact["blocks"] if b.get("attrs", {}).get("table_id") == "t0"]
    assert rows[0]["locator"] == {"row_start": 2, "row_end": 9, "page_start": 1, "page_end": 1}
    assert rows[0]["text"].splitlines()[0] == (
        "Region: North 1 | Units: 100 | Price: 1.50 | Version: 1.10 | Shipped: 2024-01-10"
    )


def test_a_cell_is_typed_only_when_it_reads_back_as_the_page_shows_it() -> None:
    assert page_cell("1.50").kind == "string"  # type: ignore[union-attr]
    assert page_cell("1.5").value == 1.5  # type: ignore[union-attr]
    assert page_cell("007").kind == "string"  # type: ignore[union-attr]
    assert page_cell("42").value == 42  # type: ignore[union-attr]
    assert page_cell("  ") is None


def test_a_borderless_table_and_its_wrapped_cell() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        rows = [
            ("Key", "Meaning"),
            ("timeout", "seconds a call may"),
            ("", "take in all"),
            ("retries", "attempts"),
        ]
        for k, (a, b) in enumerate(rows):
            if a:
                c.drawString(72, 700 - 13 * k, a)
            c.drawString(250, 700 - 13 * k, b)

    [table] = read(drawn(draw))["tables"]
    assert table["rows"] == [["timeout", "seconds a call may take in all"], ["retries", "attempts"]]


def test_a_table_going_on_to_the_next_page_is_one_table_its_repeated_header_dropped() -> None:
    artifact = fixture("table_across_pages")
    [table] = artifact["tables"]
    assert len(table["rows"]) == 45
    assert table["rows"][-1] == ["Part 045", 133, "B2"]
    assert table["locator"]["page_start"] == 1 and table["locator"]["page_end"] == 2
    row_blocks = [b for b in artifact["blocks"] if b.get("attrs", {}).get("table_id") == "t0"]
    assert row_blocks[-1]["locator"]["page_end"] == 2
    assert not any("Item: Item" in b["text"] for b in row_blocks)


# Document structure


def test_the_outline_gives_the_headings_and_their_levels() -> None:
    artifact = fixture("outlined")
    heads = [(b["text"], b["depth"]) for b in artifact["blocks"] if b["type"] == "heading"]
    assert heads == [
        ("Operations handbook", 1),
        ("Starting the service", 2),
        ("Stopping the service", 2),
        ("Recovering from a crash", 3),
        ("Upgrades", 2),
    ]


# Safety nets


def test_a_page_with_only_an_image_is_a_failed_unit_that_needs_ocr() -> None:
    artifact = fixture("image_page")
    assert artifact["coverage"]["failed"] == [
        {"unit": "page 2", "reason": "the page has no text and draws an image: its text needs OCR"}
    ]
    assert artifact["coverage"]["extracted"] == 1
    assert artifact["coverage"]["complete"] is False


def test_a_small_picture_beside_text_is_named_in_images_unread() -> None:
    from PIL import Image
    from reportlab.lib.utils import ImageReader

    picture = io.BytesIO()
    Image.new("L", (8, 8), 128).save(picture, format="PNG")

    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        c.drawString(72, 700, "A page with a logo")
        picture.seek(0)
        c.drawImage(ImageReader(picture), 400, 700, 40, 40)

    artifact = read(drawn(draw))
    assert artifact["attrs"]["images_unread"] == [1]
    assert artifact["coverage"]["complete"] is True
    assert any("not read" in w for w in artifact["warnings"])


def test_a_page_past_5000_lines_is_read_as_its_text_layer_with_a_warning() -> None:
    lines = [f"l{k}" for k in range(5_100)]
    content = (
        b"BT /F1 0.4 Tf\n"
        + b"\n".join(
            b"1 0 0 1 72 %.2f Tm (%s) Tj" % (780 - k * 0.15, line.encode())
            for k, line in enumerate(lines)
        )
        + b"\nET"
    )
    artifact = read(pdf(one_page(content)))
    assert any(
        "page 1 is read as its text layer" in w and "5,000 lines" in w for w in artifact["warnings"]
    )
    assert "l5099" in " ".join(texts(artifact))


def test_a_layout_that_cannot_be_read_falls_back_to_the_text_layer(monkeypatch) -> None:
    def broken(number: int, drawing: Any, layer: Any = None) -> Any:
        raise ValueError("broken layout")

    monkeypatch.setattr(reader, "read_page", broken)
    artifact = read(pdf(one_page(text_content(["Kept through the text layer"]))))
    assert texts(artifact) == ["Kept through the text layer"]
    assert artifact["warnings"] == [
        "page 1 is read as its text layer: its layout cannot be read (ValueError: broken layout)"
    ]
    assert artifact["attrs"]["text_layer_pages"] == [1]


def test_a_layout_that_drops_letters_falls_back_to_the_text_layer(monkeypatch) -> None:
    real = reader.read_page

    def dropping(number: int, drawing: Any, layer: Any = None) -> Any:
        reading = real(number, drawing, layer)
        reading.items = reading.items[:1]
        return reading

    monkeypatch.setattr(reader, "read_page", dropping)
    artifact = read(pdf(one_page(text_content(["First line", "", "", "Second line far below"]))))
    assert "Second line far below" in " ".join(texts(artifact))
    assert "holds" in artifact["warnings"][0] and "letters and digits" in artifact["warnings"][0]


def test_a_page_pypdf_cannot_read_is_a_failed_unit_not_the_file() -> None:
    objects = one_page(text_content(["Fine page"]))
    objects[1] = b"<< /Type /Pages /Kids [3 0 R 6 0 R] /Count 2 >>"
    objects.append(
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 7 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>"
    )
    objects.append(
        b"<< /Length 20 /Filter /NoSuchFilter >>\nstream\nxxxxxxxxxxxxxxxxxxxx\nendstream"
    )
    artifact = read(pdf(objects))
    assert texts(artifact) == ["Fine page"]
    assert artifact["coverage"]["failed"][0]["unit"] == "page 2"
    assert artifact["coverage"]["extracted"] == 1


# The floors are gated in tests/extractor/test_docparse_gates.py, with the bench's scorer.


def test_a_page_that_is_only_a_picture_is_a_failed_unit_and_never_read_as_empty() -> None:
    data = (GENERATED / "image_page.pdf").read_bytes()
    artifact = read(data, "image_page.pdf")
    failed = {f["unit"]: f["reason"] for f in artifact["coverage"]["failed"]}
    assert "page 2" in failed and "OCR" in failed["page 2"]
    assert not [b for b in artifact["blocks"] if b["locator"]["page_start"] == 2]


def test_the_service_extracts_a_pdf_in_its_confined_child(extractor: Any) -> None:
    import httpx

    data = (GENERATED / "ruled_table.pdf").read_bytes()
    with httpx.Client(headers={"Authorization": f"Bearer {extractor.token}"}, timeout=60) as http:
        response = http.post(
            f"{extractor.url}/v1/extract", params={"format": "pdf", "name": "x.pdf"}, content=data
        )
    assert response.status_code == 200
    artifact = validated(response.json(), data)
    assert artifact["tables"][0]["columns"][0]["name"] == "Region"


def test_a_letter_spaced_word_drawn_in_pieces_stays_one_word() -> None:
    content = b"BT /F1 11 Tf 1.2 Tc 72 700 Td (ins) Tj (ert) Tj ( here) Tj ET"
    assert texts(read(pdf(one_page(content)))) == ["insert here"]


def test_a_right_to_left_line_drawn_in_visual_order_reads_in_logical_order() -> None:
    from extractor_sandbox.formats.pdf.lines import logical_order

    arabic = "عالم"  # drawn left to right as its reverse
    assert logical_order(f"{arabic[::-1]} Python 3.11") == f"3.11 Python {arabic}"
    # a lam-alef glyph stands for two characters: the run keeps them reversed in its drawing
    # order (Run.visual), so that reversing the line puts them back
    assert logical_order("ال"[::-1] + "ب") == "بال"
    # a Latin word set against an Arabic letter is a word of its own
    assert logical_order("Python" + "و") == "و Python"


def test_one_outline_entry_leaves_the_headings_to_the_styles() -> None:
    def draw(c: Any, page: int) -> None:
        c.bookmarkPage("title")
        c.addOutlineEntry("A document", "title", level=0)
        c.setFont("Helvetica-Bold", 16)
        c.drawString(72, 760, "A document")
        c.setFont("Helvetica-Bold", 12)
        c.drawString(72, 720, "1 First section")
        c.setFont("Helvetica", 10)
        c.drawString(72, 700, "Body text of the first section, long enough to be the body.")

    artifact = read(drawn(draw))
    assert [(b["text"], b["depth"]) for b in artifact["blocks"] if b["type"] == "heading"] == [
        ("A document", 1),
        ("1 First section", 2),
    ]


def test_one_row_of_boxes_is_no_table() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        c.grid([72, 200, 330], [680, 700])
        c.drawString(80, 686, "Left label")
        c.drawString(208, 686, "Right label")

    artifact = read(drawn(draw))
    assert artifact["tables"] == []
    assert texts(artifact) == ["Left label Right label"]


def test_a_numbered_list_item_set_large_on_one_line_is_a_heading() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 13)
        c.drawString(72, 740, "(1) Scope of the rules")
        c.setFont("Helvetica", 10)
        for k in range(4):
            c.drawString(72, 720 - 12 * k, f"Body line {k} that says what the rules cover.")

    artifact = read(drawn(draw))
    assert texts(artifact, "heading") == ["(1) Scope of the rules"]


def test_characters_spread_apart_by_character_spacing_are_read_where_they_are_drawn() -> None:
    rules = (
        b"0.5 w "
        + b" ".join(b"%d 700 m %d 740 l S" % (x, x) for x in (72, 200, 260, 320))
        + b" 72 700 m 320 700 l S 72 720 m 320 720 l S 72 740 m 320 740 l S"
    )
    text = (
        b" BT /F1 10 Tf 80 726 Td (Action) Tj ET BT /F1 10 Tf 210 726 Td (A) Tj ET"
        b" BT /F1 10 Tf 270 726 Td (B) Tj ET"
        b" BT /F1 10 Tf 80 706 Td (start) Tj ET BT /F1 10 Tf 54 Tc 226 706 Td (XX) Tj ET"
    )
    [table] = read(pdf(one_page(rules + text)))["tables"]
    assert table["rows"] == [["start", "X", "X"]]


def test_runs_set_together_are_parted_when_the_text_layer_has_both_parts_and_not_the_word() -> None:
    from extractor_sandbox.formats.pdf.content import Run
    from extractor_sandbox.formats.pdf.lines import TextLayer, build_line

    def runs(second_op: int) -> list[Run]:
        return [
            Run("name", 0, 0, 20, 0, 10, "F", False, False, 0, 1, None, 1),
            Run("value", 20, 0, 45, 0, 10, "F", False, False, 0, 2, None, second_op),
        ]

    parted = TextLayer(lambda: "the name\nvalue here")
    glued = TextLayer(lambda: "the namevalue here")
    assert build_line(runs(2), parted).text == "name value"  # type: ignore[union-attr]
    assert build_line(runs(2), glued).text == "namevalue"  # type: ignore[union-attr]
    # pieces of one text operator (a TJ's kerning) are never parted
    assert build_line(runs(1), parted).text == "namevalue"  # type: ignore[union-attr]


def test_a_page_read_as_its_text_layer_keeps_the_outline_headings_at_their_lines(
    monkeypatch,
) -> None:
    def draw(c: Any, page: int) -> None:
        c.setFont("Helvetica", 10)
        title = ["Alpha", "Beta"][page]
        c.bookmarkPage(title)
        c.addOutlineEntry(title, title, level=0)
        c.drawString(72, 700, f"Before the {title.lower()} section")
        c.drawString(72, 688, title)
        c.drawString(72, 676, f"After the {title.lower()} title")

    real = reader.read_page

    def second_broken(number: int, drawing: Any, layer: Any = None) -> Any:
        if number == 2:
            raise ValueError("broken layout")
        return real(number, drawing, layer)

    monkeypatch.setattr(reader, "read_page", second_broken)
    artifact = read(drawn(draw, pages=2))
    page_two = [
        (b["type"], b["text"]) for b in artifact["blocks"] if b["locator"]["page_start"] == 2
    ]
    assert page_two == [
        ("paragraph", "Before the beta section"),
        ("heading", "Beta"),
        ("paragraph", "After the beta title"),
    ]


def test_two_columns_under_a_full_width_abstract_are_read_left_then_right() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        for k in range(5):
            c.drawString(72, 760 - 12 * k, f"Abstract line {k} " + "runs across the page " * 4)
        for k in range(16):
            c.drawString(72, 680 - 12 * k, f"left {k:02d} " + "text in the left column")
            c.drawString(320, 680 - 12 * k, f"right {k:02d} " + "text in the right column")

    order = " ".join(texts(read(drawn(draw))))
    assert order.index("Abstract line 4") < order.index("left 00") < order.index("left 15")
    assert order.index("left 15") < order.index("right 00")


def test_two_pages_set_side_by_side_are_read_left_page_first() -> None:
    def draw(c: Any, _: int) -> None:
        c.setPageSize((1224, 792))
        c.setFont("Helvetica", 10)
        for k in range(12):
            c.drawString(130, 700 - 18 * k, f"Left option {k:02d}")
            c.drawString(760, 707 - 15 * k, f"Right option {k:02d} is a longer answer")

    order = " ".join(texts(read(drawn(draw))))
    assert order.index("Left option 11") < order.index("Right option 00")


def test_a_ruled_table_stroked_cell_by_cell_and_open_at_its_sides_is_one_table() -> None:
    # vertical rules drawn one row at a time, none at the table's outer edges (as LaTeX draws)
    rules = [b"0.5 w"]
    for y in (740, 720, 700, 680):
        rules.append(b"60 %d m 300 %d l S" % (y, y))
    for x in (140, 220):
        for top in (740, 720, 700):
            rules.append(b"%d %d m %d %d l S" % (x, top - 0.2, x, top - 19.8))
    cells = [("Name", "Kind", "Size"), ("alpha", "file", "12"), ("beta", "folder", "7")]
    text = [b"BT /F1 10 Tf"]
    for k, row in enumerate(cells):
        for x, cell in zip((70, 150, 230), row, strict=True):
            text.append(b"1 0 0 1 %d %d Tm (%s) Tj" % (x, 726 - 20 * k, cell.encode()))
    text.append(b"ET")
    [table] = read(pdf(one_page(b"\n".join(rules + text))))["tables"]
    assert [c["name"] for c in table["columns"]] == ["Name", "Kind", "Size"]
    assert table["rows"] == [["alpha", "file", 12], ["beta", "folder", 7]]


def test_a_running_header_over_a_borderless_table_is_furniture_and_its_own_header_a_row() -> None:
    def draw(c: Any, page: int) -> None:
        c.setFont("Helvetica", 9)
        c.drawString(72, 800, "Acme quarterly report")  # a running header of two segments
        c.drawString(400, 800, "Confidential")
        c.setFont("Helvetica", 10)
        rows = [("Item", "Count", "Bin")] + [
            (f"Part {page * 40 + k:03d}", str(k), f"B{k % 3}") for k in range(40)
        ]
        for k, row in enumerate(rows):
            for x, cell in zip((72, 250, 400), row, strict=True):
                c.drawString(x, 786 - 14 * k, cell)
        c.drawCentredString(300, 30, str(page + 1))

    artifact = read(drawn(draw, pages=2))
    [table] = artifact["tables"]
    assert [c["name"] for c in table["columns"]] == ["Item", "Count", "Bin"]
    assert len(table["rows"]) == 80  # the second page's repeated header dropped
    assert table["locator"]["page_end"] == 2
    assert not any("Acme" in t for t in texts(artifact))
    assert {"text": "Acme quarterly report Confidential", "pages": 2} in artifact["attrs"][
        "furniture"
    ]


def test_a_boxed_note_with_a_rule_under_its_title_is_no_table() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        c.grid([72, 400], [600, 680, 700])
        c.drawString(80, 686, "Note")
        c.drawString(80, 660, "The service restarts itself after an upgrade.")

    artifact = read(drawn(draw))
    assert artifact["tables"] == []
    assert "The service restarts itself after an upgrade." in " ".join(texts(artifact))


# Real-world tables (issue 16): a wide table is no two columns of text, figures set close


def _wide_table(c: Any, top: float) -> None:
    """A statistical table of ten columns, its widest gap (between the fifth and the sixth)
    near the middle of the page, as a gutter between two columns of text would be."""
    xs = (50, 110, 160, 210, 260, 335, 385, 435, 485, 535)
    c.drawString(xs[0], top, "Year")
    for k, x in enumerate(xs[1:]):
        c.drawString(x, top, f"C{k + 1}")
    for r in range(24):
        y = top - 12 * (r + 1)
        c.drawString(xs[0], y, str(1990 + r))
        for k, x in enumerate(xs[1:]):
            c.drawString(x, y, f"{(r + 3) * (k + 7) % 997},{r:03d}")


def test_a_wide_table_is_one_table_not_cut_at_its_widest_gap_into_columns() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        c.drawString(50, 780, "Table 1. Enrollment by year and grade")
        _wide_table(c, 760)

    [table] = read(drawn(draw))["tables"]
    assert [c["name"] for c in table["columns"]] == ["Year"] + [f"C{k}" for k in range(1, 10)]
    assert len(table["rows"]) == 24
    assert table["rows"][0][:2] == [1990, "21,000"]


def test_two_columns_of_text_under_a_wide_table_are_still_read_left_then_right() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        _wide_table(c, 780)
        c.setFont("Helvetica", 10)
        for k in range(20):
            c.drawString(
                50, 450 - 12 * k, f"left {k:02d} prose that runs to the gutter, as text does"
            )
            c.drawString(
                320, 450 - 12 * k, f"right {k:02d} prose that runs to the margin, as text does"
            )

    artifact = read(drawn(draw))
    [table] = artifact["tables"]
    assert len(table["columns"]) == 10 and len(table["rows"]) == 24
    order = " ".join(texts(artifact))
    assert order.index("left 00") < order.index("left 19") < order.index("right 00")


def test_figures_set_closer_than_a_font_size_are_cells_of_their_own() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        c.drawString(72, 700, "State")
        c.drawString(180, 700, "Deaths  Rate  (95% CI)")
        rows = [
            ("Ohio", "19,820", "154.0", "(151.8-156.1)"),
            ("Iowa", "5,469", "41.6", "(37.7-45.4)"),
            ("Maine", "2 753 438", "47.2", "(40.1-50.3)"),
        ]
        for k, (state, *figures) in enumerate(rows):
            y = 686 - 12 * k
            c.drawString(72, y, state)
            # each figure right-aligned in its column, 3 points from the next: one segment
            for right, figure in zip((225, 250, 307), figures, strict=True):
                c.drawRightString(right, y, figure)
        c.drawString(72, 600, "As the notes say, see 11, 12")

    artifact = read(drawn(draw))
    [table] = artifact["tables"]
    assert table["rows"] == [
        ["Ohio", "19,820", "154.0", "(151.8-156.1)"],
        ["Iowa", "5,469", 41.6, "(37.7-45.4)"],
        ["Maine", "2 753 438", 47.2, "(40.1-50.3)"],
    ]
    assert "As the notes say, see 11, 12" in texts(artifact)


def _figures_table(
    c: Any, top: float, label: str, label_x: float, gap: float, sublabel: str = ""
) -> float:
    """Rows of a stub and three figure columns (flush right), a second group under `label`
    set `gap` points under the first, at label_x. Returns where the table ends."""
    c.drawString(72, top, "Item")
    for right, name in zip((300, 380, 460), ("2019", "2020", "2021"), strict=True):
        c.drawRightString(right, top, name)
    y = top
    for group in range(2):
        if group:
            y -= gap
            c.drawString(label_x, y, label)
            if sublabel:
                y -= 12
                c.drawString(label_x + 6, y, sublabel)
        for k in range(4):
            y -= 12
            c.drawString(72, y, f"Group {group} line {k}")
            for right, figure in zip((300, 380, 460), (k + 1, 10 * k + 7, 1000 + k), strict=True):
                c.drawRightString(right, y, f"{figure:,}")
    return y


def test_groups_of_a_table_apart_by_a_wider_space_or_a_label_are_one_table() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        _figures_table(c, 760, "Private schools", 72, 24)  # the label in the stub column
        _figures_table(c, 560, "Percent change", 320, 24)  # the label over the figures

    tables = read(drawn(draw))["tables"]
    assert len(tables) == 2
    for table, label in zip(tables, ("Private schools", "Percent change"), strict=True):
        assert len(table["rows"]) == 9
        assert table["rows"][4] == [label, None, None, None]


def test_groups_under_a_label_and_a_sublabel_are_one_table() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        _figures_table(c, 760, "Sex, by race", 72, 24, sublabel="Male")

    [table] = read(drawn(draw))["tables"]
    assert len(table["rows"]) == 10
    assert [row[0] for row in table["rows"][4:6]] == ["Sex, by race", "Male"]


def test_a_group_label_wrapped_onto_a_second_line_is_one_row() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        _figures_table(c, 760, "Highest enrollment after", 72, 24, sublabel="degree by 2003")

    [table] = read(drawn(draw))["tables"]
    assert len(table["rows"]) == 9
    assert table["rows"][4][0] == "Highest enrollment after degree by 2003"


def test_two_tables_apart_by_a_title_from_the_margin_stay_two_tables() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        _figures_table(c, 760, "Table 2. Counts", 72, 24)
        _figures_table(
            c,
            560,
            "Counts of items by year in all the schools of the district, the region and the state",
            72,
            24,
        )

    tables = read(drawn(draw))["tables"]
    assert [len(t["rows"]) for t in tables] == [4, 3, 4, 3]


# Headings on real papers (issue 16)


def test_a_bold_question_that_runs_on_in_lower_case_is_a_paragraph_not_a_heading() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        c.drawString(72, 760, "Body text of the datasheet, set in the body's face and size.")
        c.setFont("Helvetica-Bold", 10)
        c.drawString(
            72, 730, "Have any third parties imposed restrictions on the data of the set's"
        )
        c.setFont("Helvetica", 10)
        c.drawString(72, 718, "instances? If so, please describe these restrictions.")
        c.drawString(72, 690, "No third party has imposed any restriction on the data set.")
        c.setFont("Helvetica-Bold", 10)
        c.drawString(72, 660, "Does the dataset hold data (e.g., by age)? If so, how")
        for k in range(4):
            c.setFont("Helvetica", 10)
            c.drawString(72, 630 - 12 * k, f"Line {k} of the answer, in the body's face and size.")

    artifact = read(drawn(draw))
    assert texts(artifact, "heading") == []
    assert (
        "Have any third parties imposed restrictions on the data of the set's instances? If so, "
        "please describe these restrictions."
    ) in texts(artifact, "paragraph")


def test_authors_set_apart_on_a_title_page_are_no_heading() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica-Bold", 16)
        c.drawString(120, 760, "A Title Set Large")
        c.setFont("Helvetica-Bold", 10)
        for x, name in zip(
            (100, 200, 300, 400),
            ("Ada Lovelace", "Alan Turing", "Grace Hopper", "Kurt Goedel"),
            strict=True,
        ):
            c.drawString(x, 730, name)
        c.setFont("Helvetica", 10)
        for k in range(6):
            c.drawString(
                72, 700 - 12 * k, f"Line {k} of the abstract, in the body's face and size."
            )
        c.setFont("Helvetica-Bold", 10)
        c.drawString(72, 610, "1 Introduction")
        c.setFont("Helvetica", 10)
        for k in range(6):
            c.drawString(72, 595 - 12 * k, f"Line {k} of the introduction, in the body's face.")

    assert texts(read(drawn(draw)), "heading") == ["A Title Set Large", "1 Introduction"]


# Ruled tables on real documents (issue 16, pdfruled)


def test_rules_of_two_tables_a_hair_apart_in_line_are_each_tables_own() -> None:
    # the lower table's column rules sit a third of a point right of the upper table's: taken
    # in order across the line only, the lower table's pieces were read as inside the upper's
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        for top, shift, names in ((760, 0.0, ("a", "b", "c")), (560, 0.3, ("x", "y", "z"))):
            c.grid([72 + shift, 200 + shift, 320 + shift, 440 + shift], [top, top - 20, top - 40])
            for k, name in enumerate(names):
                c.drawString(80 + 120 * k, top - 14, f"Head {name}")
                c.drawString(80 + 120 * k, top - 34, f"cell {name}")

    tables = read(drawn(draw))["tables"]
    assert [[c["name"] for c in t["columns"]] for t in tables] == [
        ["Head a", "Head b", "Head c"],
        ["Head x", "Head y", "Head z"],
    ]
    assert [t["rows"] for t in tables] == [
        [["cell a", "cell b", "cell c"]],
        [["cell x", "cell y", "cell z"]],
    ]
    assert [t["attrs"].get("ruled") for t in tables] == [True, True]


def test_a_ruled_header_cell_no_rule_parts_spans_its_rows_and_columns() -> None:
    # "Country" and "Sample unit" over two header rows (no rule under them), "2007" over its
    # two columns (no rule between them in the first row): each is one cell, its text at its
    # top left, as a merged range's value is its first cell's
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        xs, ys = [72, 160, 250, 320, 390], [760, 740, 720, 700, 680]
        c.line(xs[0], ys[0], xs[-1], ys[0])
        c.line(xs[2], ys[1], xs[-1], ys[1])  # under "2007" only
        for y in ys[2:]:
            c.line(xs[0], y, xs[-1], y)
        for x in (xs[0], xs[1], xs[2], xs[-1]):
            c.line(x, ys[0], x, ys[-1])
        c.line(xs[3], ys[1], xs[3], ys[-1])  # between "n" and "%", not through "2007"
        c.drawString(80, 736, "Country")
        c.drawString(168, 746, "Sample")
        c.drawString(168, 726, "unit")
        c.drawString(300, 746, "2007")
        c.drawString(258, 726, "n")
        c.drawString(328, 726, "%")
        body = (("Austria", "Single", "109", "0.9"), ("Spain", "Pooled", "36", "0"))
        for k, row in enumerate(body):
            for x, cell in zip(xs, row, strict=False):
                c.drawString(x + 8, 706 - 20 * k, cell)

    [table] = read(drawn(draw))["tables"]
    names = [c["name"] for c in table["columns"]]
    assert names == ["Country", "Sample unit", "2007", "column 4"]
    assert [[str(v) for v in row] for row in table["rows"]] == [
        ["None", "None", "n", "%"],
        ["Austria", "Single", "109", "0.9"],
        ["Spain", "Pooled", "36", "0"],
    ]


def test_rows_no_rule_parts_inside_a_ruled_table_are_rows_a_line_each() -> None:
    # rules under the header and over the total only: each line of the body whose first cell
    # has text opens a row; a header's second line and a first cell wrapped in lower case join
    # the row above, a name in lower case beside figures opens its own
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        xs = [72, 200, 300, 400, 500]
        for y in (760, 720, 610, 590):
            c.line(xs[0], y, xs[-1], y)
        for x in xs:
            c.line(x, 760, x, 590)
        for x, (top, under) in zip(
            xs,
            (("Country", ""), ("Cohesion", "EURbn"), ("ERDF", "EURbn"), ("Total", "EURbn")),
            strict=False,
        ):
            c.drawString(x + 6, 744, top)
            c.drawString(x + 6, 730, under)
        body = [
            ("New members:", "", "", ""),
            ("Bulgaria", "2.3", "3.2", "5.5"),
            ("Czech", "8.8", "13.4", "22.2"),
            ("republic", "", "", ""),
            ("Old members:", "", "", ""),
            ("Estonia", "1.1", "1.9", "3.0"),
            ("netherlands", "0.4", "0.5", "0.9"),
        ]
        for k, row in enumerate(body):
            for x, cell in zip(xs, row, strict=False):
                c.drawString(x + 6, 706 - 14 * k, cell)
        for x, cell in zip(xs, ("TOTAL", "12.2", "18.5", "30.7"), strict=False):
            c.drawString(x + 6, 596, cell)

    [table] = read(drawn(draw))["tables"]
    assert [c["name"] for c in table["columns"]] == [
        "Country",
        "Cohesion EURbn",
        "ERDF EURbn",
        "Total EURbn",
    ]
    assert [[str(v) for v in row] for row in table["rows"]] == [
        ["New members:", "None", "None", "None"],
        ["Bulgaria", "2.3", "3.2", "5.5"],
        ["Czech republic", "8.8", "13.4", "22.2"],
        ["Old members:", "None", "None", "None"],
        ["Estonia", "1.1", "1.9", "3.0"],
        ["netherlands", "0.4", "0.5", "0.9"],
        ["TOTAL", "12.2", "18.5", "30.7"],
    ]


def test_a_ruled_row_whose_first_cell_is_set_lower_stays_one_row() -> None:
    # a three-line header whose first cell starts on its second line: one row, not three
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        c.grid([72, 220, 330, 440], [760, 714, 694, 674])
        lines = (
            ("", "Schools Identified", "Schools Not"),
            ("Designation Under", "Under NCLB", "Identified"),
            ("Initiative", "(n = 469)", "(n = 918)"),
        )
        for k, row in enumerate(lines):
            for x, cell in zip((78, 226, 336), row, strict=True):
                c.drawString(x, 748 - 13 * k, cell)
        for k, row in enumerate((("Low-performing", "34%", "3%"), ("Other", "14%", "9%"))):
            for x, cell in zip((78, 226, 336), row, strict=True):
                c.drawString(x, 700 - 20 * k, cell)

    [table] = read(drawn(draw))["tables"]
    assert [c["name"] for c in table["columns"]] == [
        "Designation Under Initiative",
        "Schools Identified Under NCLB (n = 469)",
        "Schools Not Identified (n = 918)",
    ]
    assert len(table["rows"]) == 2


def test_a_title_and_a_note_across_a_ruled_tables_frame_are_no_rows() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        xs, ys = [72, 250, 400], [780, 760, 740, 720, 700, 680]
        for y in ys:
            c.line(xs[0], y, xs[-1], y)
        c.line(xs[0], ys[0], xs[0], ys[-1])
        c.line(xs[-1], ys[0], xs[-1], ys[-1])
        c.line(xs[1], ys[1], xs[1], ys[-2])  # the column rule stops at the title and the note
        c.drawString(78, 766, "Exhibit 19 Share of schools by designation")
        for k, row in enumerate((("Designation", "Share"), ("Low", "34%"), ("High", "2%"))):
            for x, cell in zip(xs, row, strict=False):
                c.drawString(x + 6, 746 - 20 * k, cell)
        c.drawString(78, 686, "Exhibit reads: a third of the schools are low-performing.")

    artifact = read(drawn(draw))
    [table] = artifact["tables"]
    assert [c["name"] for c in table["columns"]] == ["Designation", "Share"]
    assert [row[0] for row in table["rows"]] == ["Low", "High"]
    assert "Exhibit 19 Share of schools by designation" in " ".join(texts(artifact))


def test_a_word_drawn_in_pieces_across_where_a_rule_would_be_is_one_cell() -> None:
    # "2010" shown as "20" and "10", its halves either side of the line between two columns
    # of the row under it, which no rule draws in its own row
    rules = [b"0.5 w"]
    for y in (760, 740, 720, 700):
        rules.append(b"72 %d m 372 %d l S" % (y, y))
    for x in (72, 172, 372):
        rules.append(b"%d 760 m %d 700 l S" % (x, x))
    for x in (222, 272, 322):
        rules.append(b"%d 740 m %d 700 l S" % (x, x))
    text = [b"BT /F1 10 Tf"]
    cells = [(80, 746, "Year"), (180, 746, "2005"), (262, 746, "20"), (273.12, 746, "10")]
    cells += [(80, 726, "Kind"), (180, 726, "n"), (230, 726, "n"), (280, 726, "%"), (330, 726, "r")]
    cells += [(80, 706, "All"), (180, 706, "7"), (230, 706, "8"), (280, 706, "9"), (330, 706, "5")]
    for x, y, cell in cells:
        text.append(b"1 0 0 1 %.2f %d Tm (%s) Tj" % (x, y, cell.encode()))
    text.append(b"ET")
    [table] = read(pdf(one_page(b"\n".join(rules + text))))["tables"]
    assert "2010" in [c["name"] for c in table["columns"]]


def test_columns_no_rule_parts_inside_a_ruled_column_are_columns_and_a_marker_is_none() -> None:
    # two boxes side by side, each holding "Age" and "Total" columns with no rule between them;
    # a third column of notes, each item's marker set apart from its text, is one column
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        c.grid([72, 232, 392, 540], [780, 640])
        for k in range(7):
            y = 766 - 18 * k
            for left, first in ((72, 0), (232, 40)):
                c.drawString(left + 6, y, f"{first + k - 1} years" if k else "Age")
                c.drawString(left + 90, y, f"{3_000_000 + 1_000 * k:,}" if k else "Total")
            if k:
                c.drawString(398, y, "-")
            c.drawString(420, y, "Counted twice" if k else "Note")

    [table] = read(drawn(draw))["tables"]
    names = [c["name"] for c in table["columns"]]
    assert names == ["Age", "Total", "Age (2)", "Total (2)", "Note"]
    assert [str(v) for v in table["rows"][0]] == [
        "0 years",
        "3,001,000",
        "40 years",
        "3,001,000",
        "- Counted twice",
    ]


def test_a_charts_gridlines_over_its_scattered_labels_are_no_ruled_table() -> None:
    # a bar chart's grid: ten by six boxes, a value or a label in a few of them
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        c.grid([72 + 40 * k for k in range(11)], [760 - 20 * k for k in range(7)])
        for col, row, value in (
            (0, 0, "50"),
            (1, 2, "41"),
            (3, 1, "34"),
            (5, 4, "17"),
            (8, 3, "22"),
        ):
            c.drawString(80 + 40 * col, 746 - 20 * row, value)
        for col in range(0, 10, 3):
            c.drawString(80 + 40 * col, 646, f"{1950 + 10 * col}s")

    artifact = read(drawn(draw))
    assert not any(t["attrs"].get("ruled") for t in artifact["tables"])
    assert "1950s" in " ".join(texts(artifact))


def test_a_grid_whose_rules_cut_through_its_figures_is_a_chart_not_a_table() -> None:
    # a chart's gridlines drawn through its value labels: "30.5" shown as "30" and ".5" either
    # side of a rule, with no space between them, in two places
    rules = [b"0.5 w"]
    for y in (760, 740, 720):
        rules.append(b"72 %d m 372 %d l S" % (y, y))
    for x in (72, 172, 272, 372):
        rules.append(b"%d 760 m %d 720 l S" % (x, x))
    text = [b"BT /F1 10 Tf"]
    pieces = [(80, 746, "Year"), (160.88, 746, "30"), (172, 746, ".5"), (280, 746, "Rate")]
    pieces += [(80, 726, "1996"), (160.88, 726, "29"), (172, 726, ".7"), (280, 726, "48.6")]
    for x, y, piece in pieces:
        text.append(b"1 0 0 1 %.2f %d Tm (%s) Tj" % (x, y, piece.encode()))
    text.append(b"ET")
    artifact = read(pdf(one_page(b"\n".join(rules + text))))
    assert not any(t["attrs"].get("ruled") for t in artifact["tables"])


def _table_page(paths: list[bytes]) -> bytes:
    """A page of a three by three table drawn by `paths`, its text in the boxes of
    72-372 x 700-760."""
    text = [b"BT /F1 10 Tf"]
    rows = (("Name", "Kind", "Size"), ("alpha", "file", "12"), ("beta", "dir", "7"))
    for k, row in enumerate(rows):
        for x, cell in zip((80, 180, 280), row, strict=True):
            text.append(b"1 0 0 1 %d %d Tm (%s) Tj" % (x, 746 - 20 * k, cell.encode()))
    text.append(b"ET")
    return pdf(one_page(b"\n".join(paths + text)))


def test_rules_filled_as_thin_boxes_drawn_with_lines_are_rules() -> None:
    # each rule a thin box outlined with m l l l h and filled, as some writers draw them
    paths: list[bytes] = []
    for y in (760, 740, 720, 700):
        a, b, c, d = 72, y - 0.25, 372, y + 0.25
        paths.append(
            b"%.2f %.2f m %.2f %.2f l %.2f %.2f l %.2f %.2f l h f" % (a, b, c, b, c, d, a, d)
        )
    for x in (72, 172, 272, 372):
        a, b, c, d = x - 0.25, 700, x + 0.25, 760
        paths.append(
            b"%.2f %.2f m %.2f %.2f l %.2f %.2f l %.2f %.2f l h f" % (a, b, c, b, c, d, a, d)
        )
    [table] = read(_table_page(paths))["tables"]
    assert table["attrs"].get("ruled") is True
    assert table["rows"] == [["alpha", "file", 12], ["beta", "dir", 7]]


def test_a_closed_path_stroked_draws_its_closing_side_as_a_rule() -> None:
    # m l l l then h and S, or s: the fourth side is the one the closing draws
    for ops in (
        b"72 700 m 72 760 l 372 760 l 372 700 l h S",
        b"72 700 m 72 760 l 372 760 l 372 700 l s",
    ):
        page = pypdf.PdfReader(io.BytesIO(pdf(one_page(ops)))).pages[0]
        rules = read_drawing(page, None).rules
        sides = sorted((r.x0, r.y0, r.x1, r.y1) for r in rules)
        assert sides == [
            (72, 700, 72, 760),
            (72, 700, 372, 700),
            (72, 760, 372, 760),
            (372, 700, 372, 760),
        ]


def test_a_ruled_stub_cell_wrapped_over_two_rows_no_rule_parts_is_one_cell() -> None:
    # "Chronic fatigue" over "syndrome" beside a Count and a Percentage row: the rule between
    # them stops at the stub, whose text goes on in lower case in the box under it
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        xs = [72, 200, 290, 380]
        for y in (760, 740, 700):
            c.line(xs[0], y, xs[-1], y)
        c.line(xs[1], 720, xs[-1], 720)
        for x in xs:
            c.line(x, 760, x, 700)
        for x, cell in zip(xs, ("Illness", "Measure", "Suffered"), strict=False):
            c.drawString(x + 6, 746, cell)
        rows = (("Chronic fatigue", "Count", "19"), ("syndrome", "Percentage", "3.8%"))
        for k, row in enumerate(rows):
            for x, cell in zip(xs, row, strict=False):
                c.drawString(x + 6, 726 - 20 * k, cell)

    [table] = read(drawn(draw))["tables"]
    assert [[str(v) for v in row] for row in table["rows"]] == [
        ["Chronic fatigue syndrome", "Count", "19"],
        ["None", "Percentage", "3.8%"],
    ]


# Borderless tables on real reports (issue 16: pdfborder)


def _grouped_years(c: Any, top: float, names: tuple[str, str, str], gap: float) -> None:
    """A header of wide names over three columns of small figures set flush right, then rows
    under "Actual" and, `gap` points under them, rows under "Projected"."""
    c.drawString(72, top, "Year")
    for right, name in zip((300, 380, 460), names, strict=True):
        c.drawRightString(right, top, name)
    y = top
    for group, label in enumerate(("Actual", "Projected")):
        y -= gap if group else 14
        c.drawString(72, y, label)
        for k in range(4):
            y -= 12
            c.drawString(72, y, str(2000 + 4 * group + k))
            for right, figure in zip((300, 380, 460), (k + 1, 10 * k + 7, 20 + k), strict=True):
                c.drawRightString(right, y, str(figure))


def test_groups_under_wide_header_cells_are_one_table_though_their_columns_start_apart() -> None:
    # the header's wide cells start the first group's columns far left of where the second
    # group's figures start; each column still meets the other group's column of its place
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        _grouped_years(c, 760, ("Pupils (000s)", "Teachers (000s)", "Schools (000s)"), 24)

    [table] = read(drawn(draw))["tables"]
    assert len(table["rows"]) == 10  # "Actual", four rows, "Projected", four rows
    assert table["rows"][5] == ["Projected", None, None, None]
    assert [c["name"] for c in table["columns"]][:2] == ["Year", "Pupils (000s)"]
    assert table["rows"][-1][0] == 2007


def _spaced_rows(c: Any, top: float, pitch: float) -> None:
    """Rows of a name and three figures `pitch` points apart at 8 points; the third row's name
    is on two lines, one above its figures and one below them (the name set around the row's
    middle)."""
    c.setFont("Helvetica", 8)
    c.drawString(72, top, "Measure")
    for x, year in zip((260, 340, 420), ("2001", "2002", "2003"), strict=True):
        c.drawString(x, top, year)
    names = ("Median income", "Income inequality", None, "Premature mortality")
    for k, name in enumerate(names):
        y = top - pitch * (k + 1)
        if name is None:
            c.drawString(72, y + 4.5, "Between-state income inequality (Gini")
            c.drawString(72, y - 4.5, "index)")
        else:
            c.drawString(72, y, name)
        for x, figure in zip((260, 340, 420), (0.45 + k, 0.46 + k, 0.47 + k), strict=True):
            c.drawString(x, y, f"{figure:.4f}")


def test_a_row_name_on_lines_around_its_figures_is_one_cell_of_that_row() -> None:
    [table] = read(drawn(lambda c, _: _spaced_rows(c, 700, 16)))["tables"]
    assert [row[0] for row in table["rows"]] == [
        "Median income",
        "Income inequality",
        "Between-state income inequality (Gini index)",
        "Premature mortality",
    ]
    assert table["rows"][2][1:] == ["2.4500", "2.4600", "2.4700"]


def test_rows_spaced_wider_than_usual_in_the_same_columns_are_one_table() -> None:
    # rows 2.6 font sizes apart, room for names on two lines
    [table] = read(drawn(lambda c, _: _spaced_rows(c, 700, 21)))["tables"]
    assert [c["name"] for c in table["columns"]] == ["Measure", "2001", "2002", "2003"]
    assert len(table["rows"]) == 4


def test_a_plain_text_table_in_a_monospaced_font_is_cut_at_the_columns_no_row_writes_in() -> None:
    # columns laid out with spaces, a rule typed as dashes under the header, dot leaders, and
    # figures one space apart ("960 1,040"); aligned code above it stays code
    code = ["timeout    = 30", "retries    = 5", "log_level  = 'info'"]
    head = f"{'Share':<16}" + "".join(f"{h:>6}" for h in ("1.0", "1.2", "1.4", "1.6"))
    rows = [
        f"{name} {'.' * 10} " + "".join(f"{v:>6}" for v in values)
        for name, values in (
            ("0.99", ("800", "960", "1,040", "1,280")),
            ("0.95", ("160", "192", "208", "256")),
            ("0.90", ("80", "96", "104", "128")),
        )
    ]

    def draw(c: Any, _: int) -> None:
        c.setFont("Courier", 10)
        for k, text in enumerate([*code, "", head, "-" * len(head), *rows]):
            c.drawString(72, 760 - 12 * k, text)

    artifact = read(drawn(draw))
    [table] = artifact["tables"]
    assert [c["name"] for c in table["columns"]] == ["Share", "1.0", "1.2", "1.4", "1.6"]
    assert table["rows"][0] == [0.99, 800, 960, "1,040", "1,280"]
    assert table["rows"][2] == ["0.90", 80, 96, 104, 128]
    assert texts(artifact, "code") == ["timeout = 30\nretries = 5\nlog_level = 'info'"]


def test_a_grid_ruled_between_blocks_of_columns_but_not_between_rows_reads_a_row_a_line() -> None:
    # two blocks of "Age | Population" side by side, a rule between them and rules above, under
    # the header and below: the grid's boxes each hold ten rows
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        for left in (72, 272):
            c.drawString(left + 6, 744, "Age")
            c.drawRightString(left + 190, 744, "Population")
            for k in range(10):
                y = 724 - 14 * k
                c.drawString(left + 6, y, f"{k + 10 * (left > 100)} years")
                c.drawRightString(left + 190, y, f"{3_000_000 - 1_000 * k:,}")
        for y in (758, 738, 584):
            c.line(72, y, 472, y)
        for x in (72, 272, 472):
            c.line(x, 758, x, 584)

    [table] = read(drawn(draw))["tables"]
    assert [c["name"] for c in table["columns"]] == [
        "Age",
        "Population",
        "Age (2)",
        "Population (2)",
    ]
    assert table["rows"][0] == ["0 years", "3,000,000", "10 years", "3,000,000"]
    assert len(table["rows"]) == 10


def test_a_header_cell_written_upward_over_one_column_is_one_header_row() -> None:
    # "Elementary" over "ungraded": the header's top line leaves the first column and others
    # blank; a header line that fills every column but the first stays the header by itself
    rights = (300, 380, 460, 540)

    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        c.drawRightString(460, 760, "Elementary")
        c.drawRightString(540, 760, "Secondary")
        c.drawString(72, 749, "Year")
        for right, name in zip(rights, ("7", "8", "ungraded", "ungraded"), strict=True):
            c.drawRightString(right, 749, name)
        for k in range(3):
            c.drawString(72, 737 - 12 * k, str(2001 + k))
            for right, figure in zip(rights, (k + 1, k + 5, k + 9, k), strict=True):
                c.drawRightString(right, 737 - 12 * k, str(figure))
        for right, name in zip(rights, ("2006", "2007", "2008", "2009"), strict=True):
            c.drawRightString(right, 660, name)
        for k, name in enumerate(("Sales", "Costs")):
            c.drawString(72, 648 - 12 * k, name)
            for right, figure in zip(rights, (k + 1, k + 5, k + 9, k), strict=True):
                c.drawRightString(right, 648 - 12 * k, str(figure))

    first, second = read(drawn(draw))["tables"]
    assert [c["name"] for c in first["columns"]] == [
        "Year",
        "7",
        "8",
        "Elementary ungraded",
        "Secondary ungraded",
    ]
    assert first["rows"][0] == [2001, 1, 5, 9, 0]
    assert [c["name"] for c in second["columns"]] == ["column 1", "2006", "2007", "2008", "2009"]
    assert second["rows"][0] == ["Sales", 1, 5, 9, 0]


def test_a_chart_s_value_axes_and_legend_are_no_table_but_years_beside_counts_are() -> None:
    # two charts side by side: each a value axis stepping by 50 down six ticks, its legend
    # beside the top ticks; then a table of years (stepping by one) beside counts
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 6)
        for left in (72, 300):
            c.drawString(left + 60, 770, "Spread vs Germany (bp)")
            for k in range(6):
                c.drawRightString(left + 20, 760 - 11 * k, str(250 - 50 * k))
            c.drawString(left + 60, 749, "Diff 5-y CDS spread")
        c.setFont("Helvetica", 9)
        c.drawString(72, 600, "Year")
        c.drawRightString(300, 600, "Pupils")
        for k, count in enumerate((3051, 3138, 3230, 3319, 3366, 3440)):
            c.drawString(72, 588 - 12 * k, str(1996 + k))
            c.drawRightString(300, 588 - 12 * k, f"{count:,}")

    artifact = read(drawn(draw))
    [table] = artifact["tables"]
    assert [c["name"] for c in table["columns"]] == ["Year", "Pupils"]
    assert "Diff 5-y CDS spread" in " ".join(texts(artifact))


def _justified(c: Any, text: str, left: float, right: float, y: float) -> None:
    """A line of words spread to fill left..right, as justified text sets it."""
    words = text.split()
    widths = [c.stringWidth(word, "Helvetica", 9) for word in words]
    gap = (right - left - sum(widths)) / (len(words) - 1)
    x = left
    for word, width in zip(words, widths, strict=True):
        c.drawString(x, y, word)
        x += width + gap


def test_two_columns_of_justified_prose_side_by_side_are_no_table() -> None:
    # full-width lines above keep the page from splitting at the gutter; the lines below are
    # cut into two segments each, both columns justified to one left and one right edge
    left = [
        "the reader of this report will find that the method",
        "used to count households in each of the states",
        "follows the census of the year before and a sample of",
        "addresses kept by the bureau",
    ]
    right = [
        "income inequality between the states rose from a low",
        "point in the first year to a high in the last one and",
        "the gap between the richest and the poorest states",
        "widened in most of the years of the period studied",
    ]

    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        for k in range(4):
            c.drawString(
                72, 760 - 12 * k, "A line of prose across the whole page, set in the body's face."
            )
        for k, (a, b) in enumerate(zip(left, right, strict=True)):
            _justified(c, a, 72, 290, 660 - 12 * k)
            _justified(c, b, 310, 528, 660 - 12 * k)

    artifact = read(drawn(draw))
    assert artifact["tables"] == []
    assert "widened in most of the years of the period studied" in " ".join(texts(artifact))


def test_two_columns_of_ragged_prose_whose_lines_run_on_are_no_table() -> None:
    # left-aligned lines of two columns, each line going on in lower case from the one above
    left = [
        "Specialized sections of the website",
        "bring together data suppliers and",
        "consumers around a specific topic",
        "and give citizens a place to talk.",
    ]
    right = [
        "Communities are able to gather",
        "content, share it with others and",
        "ask the agencies for more of the",
        "data they hold about each place.",
    ]

    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        for k in range(4):
            c.drawString(
                72, 760 - 12 * k, "A line of prose across the whole page, in the body's face."
            )
        for k, (a, b) in enumerate(zip(left, right, strict=True)):
            c.drawString(72, 660 - 12 * k, a)
            c.drawString(310, 660 - 12 * k, b)

    artifact = read(drawn(draw))
    assert artifact["tables"] == []
    assert "data they hold about each place." in " ".join(texts(artifact))


def test_a_header_cell_written_upward_under_a_group_s_cell_joins_its_line_below() -> None:
    # two blocks of columns: "total occupied" over "housing units" (one column) joins it; the
    # group's cell over two columns above them stays a row of its own
    blocks = ((200, 260, 320), (420, 480, 540))

    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        for first, second, third in blocks:
            c.drawString(second - 35, 760, "Inadequate housing units")
            c.drawRightString(first, 749, "total occupied")
            names = ("housing units", "no.", "(%)")
            for right, name in zip((first, second, third), names, strict=True):
                c.drawRightString(right, 738, name)
        c.drawString(72, 738, "Characteristic")
        for k, (name, figures) in enumerate(
            (("Male", ("61,206", "2,862", "(4.7)")), ("Female", ("49,486", "2,909", "(5.9)")))
        ):
            c.drawString(72, 726 - 12 * k, name)
            for right, figure in zip((*blocks[0], *blocks[1]), figures * 2, strict=True):
                c.drawRightString(right, 726 - 12 * k, figure)

    [table] = read(drawn(draw))["tables"]
    assert [c["name"] for c in table["columns"]][2] == "Inadequate housing units"
    assert table["rows"][0][:4] == [
        "Characteristic",
        "total occupied housing units",
        "no.",
        "(%)",
    ]


def test_a_table_under_a_caption_set_in_two_cells_is_found_under_its_title() -> None:
    # "Table 6:" in the margin and its title beside it (two cells), the title's second line
    # under it, then the table's rows: no table with the caption, the table from its rows
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 11)
        c.drawString(72, 760, "Table 6:")
        c.drawString(136, 760, "Number of participants in education and training in")
        c.drawString(136, 746, "educational institutions in 2002 and 2004")
        rows = (("2002", "2004"), ("13 951", "12 068"), ("44 307", "60 152"), ("20 922", "22 083"))
        for k, (a, b) in enumerate(rows):
            c.drawRightString(420, 726 - 16 * k, a)
            c.drawRightString(500, 726 - 16 * k, b)

    [table] = read(drawn(draw))["tables"]
    assert [c["name"] for c in table["columns"]] == ["2002", "2004"]
    assert len(table["rows"]) == 3


def test_a_plain_text_grid_wider_than_a_thousand_characters_is_not_built() -> None:
    # monospaced lines with a second run ninety million points to the right, on a page that
    # wide: a grid of characters that wide is never built, the lines stay as the segments
    # the gap cuts them into (its figures apart)
    buffer = io.BytesIO()
    c = canvas.Canvas(buffer, pagesize=(1e8, 800), invariant=1)
    c.setFont("Courier", 10)
    for k in range(4):
        c.drawString(72, 700 - 12 * k, f"0.9{k} .......   {800 + k}   {880 + k}   {960 + k}")
        c.drawString(9e7, 700 - 12 * k, "  12   13")
    c.showPage()
    c.save()
    [table] = read(buffer.getvalue())["tables"]
    assert [col["name"] for col in table["columns"]] == ["0.90 ....... 800 880 960", "12", "13"]


# Charts and figures read as tables (pdfcharts)


def _line_chart(c: Any, left: float, title: str) -> None:
    """A line chart as statistical reports draw one: its title, a value axis stepping by 50,
    its legend's labels set among the top ticks, the curve, and the dates under the axis."""
    c.setFont("Helvetica", 6)
    c.drawString(left, 770, title)
    for k in range(10):
        c.drawRightString(left + 20, 758 - 11 * k, str(400 - 50 * k))
        if k in (2, 4):
            c.drawString(left, 752 - 11 * k, "Diff 5-y CDS spread" if k == 2 else "Diff bond yield")
    path = c.beginPath()
    path.moveTo(left + 25, 700)
    for k in range(1, 20):
        path.lineTo(left + 25 + 8 * k, 700 + 30 * ((k * 7) % 5 - 2))
    c.drawPath(path, stroke=1, fill=0)
    for k, date in enumerate(("Jan-08", "Jul-08", "Jan-09", "Jul-09")):
        c.drawString(left + 25 + 40 * k, 647, date)


def test_a_value_axis_with_its_legend_set_among_the_ticks_is_no_table() -> None:
    # two line charts side by side: each value axis (ten ticks stepping by 50) holds the
    # legend's labels between its ticks and the dates under it, the rest of the "table" empty;
    # the ticks, legend and dates stay the page's lines
    def draw(c: Any, _: int) -> None:
        _line_chart(c, 72, "Portugal vs Germany (bp)")
        _line_chart(c, 320, "Spain vs Germany (bp)")

    artifact = read(drawn(draw))
    assert artifact["tables"] == []
    assert "Diff 5-y CDS spread" in " ".join(texts(artifact))


def test_labels_and_values_beside_a_bar_chart_s_bars_are_no_table() -> None:
    # a horizontal bar chart: each age group's name at the left of its bar (filled boxes
    # standing on one base, each its own length), its value at the bar's end; then a table
    # whose rows are shaded (filled boxes of one length), which stays a table
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 8)
        groups = (("Under 15", 10.8), ("15 to 24", 14.2), ("25 to 44", 21.6), ("45 to 64", 35.4))
        groups += (("65 to 74", 52.9), ("75 and over", 70.5))
        for k, (name, value) in enumerate(groups):
            y = 700 - 14 * k
            c.setFillGray(0.5)
            c.rect(140, y - 3, 4 * value, 12, stroke=0, fill=1)
            c.setFillGray(0)
            c.drawRightString(130, y, name)
            c.drawString(146 + 4 * value, y, f"{value}")
        for k, (name, count) in enumerate((("Men", "1,204"), ("Women", "1,377"), ("All", "2,581"))):
            y = 500 - 14 * k
            c.setFillGray(0.9)
            c.rect(70, y - 3, 300, 13, stroke=0, fill=1)
            c.setFillGray(0)
            c.drawString(72, y, name)
            c.drawRightString(360, y, count)

    artifact = read(drawn(draw))
    [table] = artifact["tables"]
    assert [c["name"] for c in table["columns"]] == ["Men", "1,204"]
    assert "75 and over 70.5" in " ".join(texts(artifact))


def test_bars_are_told_from_a_table_s_shaded_cells_and_a_dotted_line() -> None:
    # upright bars of one width on one base, each its own height: one chart area
    bars = [Rule(100 + 20 * k, 400, 112 + 20 * k, 420 + 13 * k) for k in range(5)]
    assert [(a.x0, a.y0, a.x1, a.y1) for a in chart_areas(bars)] == [(100, 400, 192, 472)]
    # a header's shaded cells over one, two and four columns, set edge to edge: cells that go
    # on one from the other, and the full row repeats no length, yet they are no bars
    header = [Rule(134, 492, 190, 503), Rule(191, 492, 296, 503), Rule(297, 492, 466, 503)]
    header += [Rule(134, 504, 296, 515), Rule(297, 504, 466, 515), Rule(134, 516, 466, 527)]
    assert chart_areas(header) == []
    # a table's shaded first column, its groups' boxes of three lengths each repeated, and a
    # dotted line
    stub = [Rule(97, 94 + 10 * k, (262, 267, 278)[k % 3], 103 + 10 * k) for k in range(9)]
    dots = [Rule(256 + 1.4 * k, 490.6, 256.7 + 1.4 * k, 491.2) for k in range(30)]
    assert chart_areas(stub) == [] and chart_areas(dots) == []


def test_past_two_thousand_filled_boxes_a_page_gives_no_bars() -> None:
    # a picture drawn in boxes: bars are looked for only among a bounded number of boxes, as
    # the work to find them grows with the boxes on one base
    bars = [Rule(100 + 20 * k, 400, 112 + 20 * k, 420 + 13 * k) for k in range(5)]
    specks = [Rule(k % 50, 10 + k // 50, k % 50 + 0.5, 10.5 + k // 50) for k in range(1_996)]
    assert chart_areas(bars + specks) == []
    assert len(chart_areas(bars + specks[:-1])) == 1


# Letter-spaced words and lines drawn a letter a run (issue 16, pdfspacing)


def _letter_by_letter(c: Any, text: str, x: float, y: float, size: float, tracking: float) -> None:
    # each letter its own text object, placed where the tracked line puts it (as a page printed
    # glyph by glyph draws its headings); a space is a step of the space's width, not drawn
    c.setFont("Helvetica-Bold", size)
    for ch in text:
        if ch != " ":
            c.drawString(x, y, ch)
        x += c.stringWidth(ch, "Helvetica-Bold", size) + tracking


def test_a_tracked_heading_drawn_a_letter_a_run_reads_as_whole_words() -> None:
    def draw(c: Any, _: int) -> None:
        _letter_by_letter(c, "COMPOSITION", 72, 720, 14, 3.0)  # tracking 0.21 em
        c.setFont("Helvetica", 10)
        c.drawString(72, 690, "What do the instances that comprise the dataset represent?")
        _letter_by_letter(c, "DATA SHEET", 72, 650, 14, 3.0)
        c.setFont("Helvetica", 10)
        c.drawString(72, 620, "The dataset is described in this sheet, question by question.")

    headings = texts(read(drawn(draw)), "heading")
    assert headings == ["COMPOSITION", "DATA SHEET"]


def test_letters_spaced_by_a_tj_array_read_as_words_and_a_wider_gap_parts_them() -> None:
    # [(C) -250 (O) -250 ...]: every letter a quarter em from the next, the words' gap wider
    def tracked(word: str) -> bytes:
        return b" -250 ".join(b"(%s)" % ch.encode() for ch in word)

    content = (
        b"BT /F1 12 Tf 72 700 Td [" + tracked("COMPOSITION") + b"] TJ ET\n"
        b"BT /F1 12 Tf 72 670 Td [" + tracked("LETTER") + b" -700 " + tracked("SPACED") + b"] TJ ET"
    )
    assert texts(read(pdf(one_page(content)))) == ["COMPOSITION LETTER SPACED"]


def test_character_spacing_keeps_a_tracked_line_whole_and_its_word_space() -> None:
    def draw(c: Any, _: int) -> None:
        text = c.beginText(72, 700)
        text.setFont("Helvetica", 12)
        text.setCharSpace(3)
        text.textLine("TRACKED CAPITALS")
        c.drawText(text)

    assert texts(read(drawn(draw))) == ["TRACKED CAPITALS"]


def test_justified_text_keeps_every_space_set_by_word_spacing_or_by_gaps() -> None:
    def draw(c: Any, _: int) -> None:
        text = c.beginText(72, 700)
        text.setFont("Helvetica", 10)
        text.setWordSpace(6)
        text.textLine("ordinary justified text keeps every space")
        c.drawText(text)
        # the same words drawn a letter a run, no space drawn: the words' gaps alone part them
        x = 72.0
        c.setFont("Helvetica", 10)
        for word in "a b c letters drawn one by one".split():
            for ch in word:
                c.drawString(x, 680, ch)
                x += c.stringWidth(ch, "Helvetica", 10)
            x += 4.0

    assert texts(read(drawn(draw))) == [
        "ordinary justified text keeps every space a b c letters drawn one by one"
    ]


def test_a_line_drawn_a_letter_a_run_is_not_parted_by_the_text_layers_one_letter_words() -> None:
    from extractor_sandbox.formats.pdf.content import Run
    from extractor_sandbox.formats.pdf.lines import TextLayer, build_line

    # "MAINTENANCE" a letter an operator, set close; the page's text layer holds "main" and the
    # one-letter words "t", "e", "n" (of "don't", "e.g.") that would part every letter
    runs, x = [], 0.0
    for k, ch in enumerate("MAINTENANCE"):
        runs.append(Run(ch, x, 0, x + 9, 0, 14, "F", True, False, 0, k, None, k))
        x += 9
    layer = TextLayer(lambda: "the main contact; don't, e.g. n ance")
    assert build_line(runs, layer).text == "MAINTENANCE"  # type: ignore[union-attr]


def test_a_bold_question_wrapped_into_a_plain_line_is_its_paragraphs_first_line() -> None:
    # the question's first line ends short of the next line's end by more than three font sizes
    # (37 points), because the next word ("reorganisations)?", 88 points) did not fit after it
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica-Bold", 11)
        c.drawString(72, 700, "Will the dataset be updated (e.g., to correct labeling errors, add")
        c.setFont("Helvetica", 11)
        c.drawString(
            72, 686, "reorganisations)? If so, please describe how often, by whom, and how it will"
        )
        c.drawString(72, 672, "be communicated to users of the dataset (mailing list).")
        for k in range(6):
            c.drawString(72, 640 - 14 * k, "Body text of the page, set plain at the body size.")

    artifact = read(drawn(draw))
    assert texts(artifact, "heading") == []
    assert texts(artifact)[0].startswith("Will the dataset be updated (e.g., to correct")


def _body(c: Any, top: float, lines: int) -> None:
    c.setFont("Helvetica", 10)
    for k in range(lines):
        c.drawString(
            72, top - 12 * k, "Plain body text of the page, set at the body's own size here."
        )


def test_bold_lines_over_a_tables_columns_are_its_header_not_headings() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica-Bold", 10)
        c.drawString(72, 760, "Results")
        _body(c, 742, 4)
        # a group's name over two columns, set bold at the body's size just over the table
        c.setFont("Helvetica-Bold", 10)
        c.drawString(220, 670, "Number of Parameters")
        c.setFont("Helvetica", 10)
        for k, row in enumerate(
            [("Model", "Medium", "Large"), ("Fine tuning", "354", "774"), ("Adapter", "25", "47")]
        ):
            for x, cell in zip((72, 220, 320), row, strict=True):
                c.drawString(x, 655 - 12 * k, cell)
        _body(c, 600, 4)

    artifact = read(drawn(draw))
    assert texts(artifact, "heading") == ["Results"]
    assert "Number of Parameters" in texts(artifact, "paragraph")
    [table] = artifact["tables"]
    assert table["rows"][0] == ["Fine tuning", 354, 774]


def test_a_large_line_that_ends_in_a_web_address_is_no_heading() -> None:
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 16)
        c.drawString(72, 760, 'This figure "QQP140.png" is available in "png" format from:')
        c.drawString(72, 740, "http://arxiv.org/ps/2202.00535v1")
        _body(c, 700, 6)

    assert texts(read(drawn(draw)), "heading") == []


def test_a_numbered_heading_set_just_over_a_table_stays_a_heading() -> None:
    # the shared corpus's right_to_left_03: "2-5- ..." bold at the body's size, right over a table
    def draw(c: Any, _: int) -> None:
        _body(c, 760, 4)
        c.setFont("Helvetica-Bold", 10)
        c.drawString(230, 700, "2-5- Standard goods")
        c.setFont("Helvetica", 10)
        for k, row in enumerate(
            [("Model", "Medium", "Large"), ("Fine tuning", "354", "774"), ("Adapter", "25", "47")]
        ):
            for x, cell in zip((72, 220, 320), row, strict=True):
                c.drawString(x, 685 - 12 * k, cell)
        _body(c, 630, 4)

    artifact = read(drawn(draw))
    assert texts(artifact, "heading") == ["2-5- Standard goods"]
    assert len(artifact["tables"]) == 1


def test_a_short_heading_over_lines_in_lower_case_stays_a_heading() -> None:
    # a title of two words over a column of web addresses, the first wider than three font
    # sizes past the title's end: no sentence wrapped there
    def draw(c: Any, _: int) -> None:
        _body(c, 760, 5)
        c.setFont("Helvetica-Bold", 10)
        c.drawString(72, 690, "Helpful Links")
        c.setFont("Helvetica", 10)
        links = ["www.gsa.gov/ocsit/innovation/programs", "www.usa.gov", "www.search.usa.gov"]
        for k, link in enumerate(links):
            c.drawString(72, 676 - 12 * k, link)

    assert texts(read(drawn(draw)), "heading") == ["Helpful Links"]


def test_letter_gaps_of_rounded_positions_are_no_tracking_and_a_word_gap_stays_a_space() -> None:
    from extractor_sandbox.formats.pdf.content import Run
    from extractor_sandbox.formats.pdf.lines import build_line

    # a chart's legend drawn glyph by glyph at 5.4 points (eu-011): letters 0.2 apart (0.04 em,
    # the positions' rounding), the words 0.9 apart (0.17 em, over SPACE_GAP)
    runs, x = [], 0.0
    for k, ch in enumerate("yieldbond"):
        x += 0.9 if k == 5 else (0.2 if k else 0.0)
        runs.append(Run(ch, x, 0, x + 3, 0, 5.4, "F", False, False, 0, k, None, k))
        x += 3
    assert build_line(runs).text == "yield bond"  # type: ignore[union-attr]


# Borderless tables and contents pages where other parsers did better (issue 36)


def _brake_pads(c: Any, wrapped: bool) -> None:
    """A borderless table of brake pads: four columns, "Pad (mm)" ending a hair before "Next
    inspection" starts (the rows under them keep the two columns apart), or three columns whose
    first cell wraps onto a second line on every row."""
    c.setFont("Helvetica", 10)
    c.drawString(72, 780, "Brake pads measured at the depot this week are listed below.")
    figures = (("4.5", "12 May 2026"), ("11.0", "3 June 2026"), ("6.2", "20 May 2026"))
    y = 740.0
    if not wrapped:
        for x, name in zip(
            (72, 160, 230, 276), ("Vehicle", "Axle", "Pad (mm)", "Next inspection"), strict=True
        ):
            c.drawString(x, y, name)
        for k, (pad, date) in enumerate(figures):
            y -= 14
            for x, cell in zip(
                (72, 160, 230, 276), (f"Bus 10{k}", "Front", pad, date), strict=True
            ):
                c.drawString(x, y, cell)
        return
    for x, name in zip((72, 200, 290), ("Component", "Pad (mm)", "Next inspection"), strict=True):
        c.drawString(x, y, name)
    y -= 6
    for side, (pad, date) in zip(("Front left", "Rear right", "Front right"), figures, strict=True):
        y -= 14
        for x, cell in zip((72, 200, 290), (f"{side} brake", pad, date), strict=True):
            c.drawString(x, y, cell)
        y -= 12
        c.drawString(72, y, "assembly")
    c.drawString(72, y - 40, "The next inspection is due after the summer.")


def test_header_cells_set_closer_than_a_font_size_stay_the_columns_the_rows_keep_apart() -> None:
    [table] = read(drawn(lambda c, _: _brake_pads(c, wrapped=False)))["tables"]
    assert [c["name"] for c in table["columns"]] == [
        "Vehicle",
        "Axle",
        "Pad (mm)",
        "Next inspection",
    ]
    assert table["rows"][0][2:] == [4.5, "12 May 2026"]


def test_two_columns_set_closer_than_a_font_size_on_every_row_are_parted_where_none_crosses() -> (
    None
):
    # the pads' figures set flush right 8 points before the dates start, on every line: no line
    # parts them by a font size, the gap down the rows does
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        rows = [("Pad (mm)", "Next inspection"), ("4.5", "12 May 2026"), ("11.0", "3 June 2026")]
        for k, (pad, date) in enumerate([*rows, ("6.2", "20 May 2026")]):
            y = 740 - 14 * k
            c.drawString(72, y, "Vehicle" if k == 0 else f"Bus 10{k}")
            c.drawRightString(268, y, pad)
            c.drawString(276, y, date)

    [table] = read(drawn(draw))["tables"]
    assert [c["name"] for c in table["columns"]] == ["Vehicle", "Pad (mm)", "Next inspection"]
    assert table["rows"][1] == ["Bus 102", "11.0", "3 June 2026"]


def test_a_first_cell_wrapped_on_every_row_is_one_cell_of_its_row() -> None:
    artifact = read(drawn(lambda c, _: _brake_pads(c, wrapped=True)))
    [table] = artifact["tables"]
    assert [row[0] for row in table["rows"]] == [
        "Front left brake assembly",
        "Rear right brake assembly",
        "Front right brake assembly",
    ]
    assert [row[2] for row in table["rows"]] == ["12 May 2026", "3 June 2026", "20 May 2026"]
    assert "assembly" not in texts(artifact, "paragraph")  # the last row's too


def _side_by_side(left: list[str], right: list[str]) -> bytes:
    """A title, then lines of two columns side by side, too few for the page's gutter."""

    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 9)
        c.drawString(72, 780, "Station report")
        for k, (a, b) in enumerate(zip(left, right, strict=True)):
            c.drawString(72, 750 - 12 * k, a)
            c.drawString(310, 750 - 12 * k, b)

    return drawn(draw)


def test_two_columns_of_prose_too_short_for_a_gutter_are_no_table_and_read_a_column_at_a_time() -> (
    None
):
    # four lines of sentences each side, no cell short or a figure, too few lines for the page's
    # gutter; each line ends a sentence, so no line runs on into the next in lower case
    left = [
        "The pumps at the north station were serviced in May.",
        "Both of them ran well for the rest of the season.",
        "Staff checked the seals and replaced two of them.",
        "No leaks were found when the tanks were filled.",
    ]
    right = [
        "The south station needs new valves before winter.",
        "Orders for them were placed with the supplier.",
        "Delivery is expected at the end of the month.",
        "The crew will fit them during the next shutdown.",
    ]

    artifact = read(_side_by_side(left, right))
    assert artifact["tables"] == []
    assert texts(artifact, "paragraph")[-2:] == [" ".join(left), " ".join(right)]


def test_two_columns_of_paragraphs_ending_in_short_lines_are_no_table() -> None:
    # each column two paragraphs, each ending in a short line that goes on in lower case and
    # ends its sentence; a year among the words
    left = [
        "The pumps at the north station were serviced in May",
        "and both of them ran well for the rest",
        "of the season.",
        "Staff checked the seals and replaced two of them",
        "after no leaks were found in 2025.",
    ]
    right = [
        "The south station needs new valves before winter",
        "and orders for them were placed with the supplier",
        "last week.",
        "Delivery is expected at the end of the month and",
        "the crew will fit them during the shutdown.",
    ]

    artifact = read(_side_by_side(left, right))
    assert artifact["tables"] == []
    assert texts(artifact, "paragraph")[1:] == [
        " ".join(left[:3]),
        " ".join(left[3:]),
        " ".join(right[:3]),
        " ".join(right[3:]),
    ]


CONTENTS_ENTRIES = (
    ("1", "Introduction", "2"),
    ("2", "Installing the pumps", "3"),
    ("2.1", "Tools you need", "4"),
)


# the handbook's headings, with their levels, whether its outline or its styles give them
HANDBOOK_HEADINGS = [
    ("Pump handbook", 1),
    ("Contents", 2),
    ("1 Introduction", 2),
    ("2 Installing the pumps", 2),
    ("2.1 Tools you need", 3),
]


def _handbook(c: Any, page: int, outlined: bool) -> None:
    """A handbook: its title and a contents page (entries set as number, title and page), then
    a numbered section a page, each (when `outlined`) in the outline by its title alone, with no
    number, as LaTeX's hyperref writes it."""
    if page == 0:
        c.setFont("Helvetica-Bold", 16)
        c.drawString(72, 760, "Pump handbook")
        c.setFont("Helvetica-Bold" if outlined else "Helvetica", 12 if outlined else 10)
        c.drawString(72, 720, "Contents")
        c.setFont("Helvetica", 10)
        for k, (number, title, at) in enumerate(CONTENTS_ENTRIES):
            c.drawString(72, 695 - 16 * k, f"{number}  {title}")
            c.drawRightString(523, 695 - 16 * k, at)
        return
    number, title, _ = CONTENTS_ENTRIES[page - 1]
    c.setFont("Helvetica-Bold", 12)
    c.drawString(72, 760, f"{number}   {title}")
    if outlined:
        c.bookmarkPage(f"p{page}")
        c.addOutlineEntry(title, f"p{page}", level=number.count("."))
    c.setFont("Helvetica", 10)
    for k in range(4):
        c.drawString(
            72, 730 - 13 * k, "This section says how the crew on site look after the pumps."
        )


def test_an_outline_entry_without_its_section_number_keeps_the_number_in_the_heading() -> None:
    artifact = read(drawn(lambda c, page: _handbook(c, page, outlined=True), pages=4))
    heads = [(b["text"], b["depth"]) for b in artifact["blocks"] if b["type"] == "heading"]
    assert heads == HANDBOOK_HEADINGS
    section = next(b for b in artifact["blocks"] if b["text"].startswith("This section"))
    assert section["locator"]["page_start"] == 2


def test_a_contents_page_title_in_the_body_s_face_is_a_heading_and_its_entries_are_not() -> None:
    artifact = read(drawn(lambda c, page: _handbook(c, page, outlined=False), pages=4))
    heads = [(b["text"], b["depth"]) for b in artifact["blocks"] if b["type"] == "heading"]
    assert heads == HANDBOOK_HEADINGS


def test_contents_entries_set_bold_with_their_page_numbers_are_no_headings() -> None:
    # a chapter's entry set bold as LaTeX sets it (its number apart from its title, its page
    # number at the right margin), its section's entry led to the page by dots, each chapter's
    # entries apart from the next's by a blank line
    chapters = (
        ("1", "Introduction", "3"),
        ("2", "Installing the pumps", "5"),
        ("3", "Servicing", "9"),
    )

    def draw(c: Any, page: int) -> None:
        if page == 0:
            c.setFont("Helvetica-Bold", 14)
            c.drawString(72, 720, "Contents")
            for k, (number, title, at) in enumerate(chapters):
                y = 690 - 40 * k
                c.setFont("Helvetica-Bold", 10)
                c.drawString(72, y, number)
                c.drawString(90, y, title)
                c.drawRightString(523, y, at)
                c.setFont("Helvetica", 10)
                c.drawString(90, y - 14, f"{number}.1  Overview")
                c.drawString(250, y - 14, " ." * 40)
                c.drawRightString(523, y - 14, at)
            return
        number, title, _ = chapters[page - 1]
        c.setFont("Helvetica-Bold", 12)
        c.drawString(72, 760, number)
        c.drawString(96, 760, title)
        c.setFont("Helvetica", 10)
        c.drawString(72, 730, "This section says how the crew on site look after the pumps.")

    artifact = read(drawn(draw, pages=4))
    heads = [(b["text"], b["depth"]) for b in artifact["blocks"] if b["type"] == "heading"]
    assert heads == [
        ("Contents", 1),
        ("1 Introduction", 1),
        ("2 Installing the pumps", 1),
        ("3 Servicing", 1),
    ]


def test_a_glyph_mapped_to_a_space_and_a_mark_prints_the_mark_alone() -> None:
    """A bold face whose ToUnicode maps its period to " ." (Statistical Abstract, Table 324) read
    "11,062.6" as "11,062 .6": a glyph draws no space beside its mark, so the figure is whole."""
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap "
        b"/CMapName /Adobe-Identity-UCS def /CMapType 2 def "
        b"1 begincodespacerange <00> <FF> endcodespacerange "
        b"1 beginbfchar <2E> <0020002E> endbfchar "
        b"endcmap CMapName currentdict /CMap defineresource pop end end"
    )
    objects = one_page(b"BT /F1 10 Tf 72 700 Td (11,062) Tj (.) Tj (6) Tj ET")
    objects[4] = (
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica-Bold "
        b"/Encoding /WinAnsiEncoding /ToUnicode 6 0 R >>"
    )
    objects.append(stream(cmap))
    assert texts(read(pdf(objects))) == ["11,062.6"]


def test_a_row_name_wrapped_over_the_line_its_figures_are_on_is_one_row() -> None:
    # Statistical Abstract's Table 324: "Murder and nonnegligent" alone on a line, then
    # "manslaughter" beside the row's figures; a name alone ending in "and" goes on too. A
    # group's label ending in a colon still stands as a row of its own, and so does a short name
    # alone whose next line's first word would have fitted beside it (no wrap).
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        xs = [72, 250, 350, 450]
        for y in (760, 730, 600):
            c.line(xs[0], y, xs[-1], y)
        for x in xs:
            c.line(x, 760, x, 600)
        for x, name in zip(xs, ("Offense", "Total", "Male"), strict=False):
            c.drawString(x + 6, 742, name)
        body = [
            ("Violent crime", "467.9", "380.2"),
            ("Murder and nonnegligent", "", ""),
            ("manslaughter", "10.0", "9.0"),
            ("Offenses against the family and", "", ""),
            ("Children", "92.4", "68.9"),
            ("Drug abuse:", "", ""),
            ("Sale", "1.5", "1.2"),
            ("Arson", "", ""),
            ("vandalism", "0.3", "0.2"),
        ]
        for k, row in enumerate(body):
            for x, cell in zip(xs, row, strict=False):
                if cell:
                    c.drawString(x + 6, 716 - 14 * k, cell)

    [table] = read(drawn(draw))["tables"]
    assert [[str(v) for v in row] for row in table["rows"]] == [
        ["Violent crime", "467.9", "380.2"],
        ["Murder and nonnegligent manslaughter", "10.0", "9.0"],
        ["Offenses against the family and Children", "92.4", "68.9"],
        ["Drug abuse:", "None", "None"],
        ["Sale", "1.5", "1.2"],
        ["Arson", "None", "None"],
        ["vandalism", "0.3", "0.2"],
    ]


def test_a_row_name_wrapped_over_its_figures_line_is_one_row_in_a_borderless_table() -> None:
    # The same as in a ruled table, with no rules: the name's last line beside the figures.
    def draw(c: Any, _: int) -> None:
        c.setFont("Helvetica", 10)
        rows = [
            ("Offense", "Total", "Male"),
            ("Violent crime", "467.9", "380.2"),
            ("Murder and nonnegligent", "", ""),
            ("manslaughter", "10.0", "9.0"),
            ("Offenses against the family and", "", ""),
            ("Children", "92.4", "68.9"),
            ("Robbery", "102.1", "90.0"),
            ("Arson", "", ""),
            ("vandalism", "0.3", "0.2"),
            ("Forgery", "1.2", "0.7"),
        ]
        for k, row in enumerate(rows):
            for x, text in zip((72, 250, 350), row, strict=True):
                if text:
                    c.drawString(x, 700 - 13 * k, text)

    [table] = read(drawn(draw))["tables"]
    assert [[str(v) for v in row] for row in table["rows"]] == [
        ["Violent crime", "467.9", "380.2"],
        ["Murder and nonnegligent manslaughter", "10.0", "9.0"],
        ["Offenses against the family and Children", "92.4", "68.9"],
        ["Robbery", "102.1", "90.0"],
        ["Arson", "None", "None"],
        ["vandalism", "0.3", "0.2"],
        ["Forgery", "1.2", "0.7"],
    ]


def test_a_transcript_s_margin_line_numbers_make_no_table_but_numbered_rows_do() -> None:
    """A court transcript numbers its lines 1 to 25 down the margin, a line with no text among
    them: read as a table, its title became a column's name and each line a row. A table whose
    rows are numbered fills each of them and is still a table."""
    transcript = [
        "IN THE SUPREME COURT OF THE UNITED STATES",
        "MICHAEL A. KNOWLES, WARDEN, :",
        "Petitioner :",
        "v. : No. 07-1315",
        "ALEXANDRE MIRZAYANCE. :",
        "Washington, D.C.",
        "Tuesday, January 13, 2009",
        "",
        "The above-entitled matter came on for oral argument",
        "before the Supreme Court of the United States",
        "at 1:01 p.m.",
        "APPEARANCES:",
        "STEVEN E. MERCER, ESQ., Deputy Attorney General, Los",
        "Angeles, Cal.; on behalf of the Petitioner.",
    ]

    def numbered(lines: list[str]) -> Any:
        def draw(c: Any, _: int) -> None:
            c.setFont("Courier", 11)
            for k, line in enumerate(lines, start=1):
                c.drawRightString(60, 760 - 22 * k, str(k))
                if line:
                    c.drawString(110, 760 - 22 * k, line)

        return draw

    artifact = read(drawn(numbered(transcript)))
    assert artifact["tables"] == []
    assert any("on behalf of the Petitioner." in text for text in texts(artifact))

    ranked = ["Alder", "Birch", "Cedar", "Elm", "Fir", "Hazel", "Larch", "Maple", "Oak", "Pine"]
    [table] = read(drawn(numbered(ranked)))["tables"]
    assert [row[1] for row in table["rows"]][-3:] == ["Maple", "Oak", "Pine"]


def test_a_column_of_superscript_digits_is_no_margin_of_line_numbers() -> None:
    """A hostile table's first column of digits int() cannot read ("²" is a digit, not a
    decimal): read as a table's cells, never counted as line numbers (it raised)."""
    rows = [["²", "a line of the page's text goes here"] for _ in range(LINE_NUMBER_ROWS + 2)]
    assert not _line_numbers(rows, [0, 1])
    numbered = [[str(k), "a line of the page's text goes here"] for k in range(1, 11)]
    assert _line_numbers(numbered, [0, 1])
