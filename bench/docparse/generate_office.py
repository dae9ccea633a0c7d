"""Write the parsing bench's generated DOCX and PPTX documents and their exact gold labels.

    .venv/bin/python bench/docparse/generate_office.py

Each document is built with python-docx or python-pptx, and what they cannot write (tracked
changes, content controls, custom XML, alternate content, footnotes, an altChunk, hidden slides, a
slide order other than the parts' names) is injected as XML. The gold is written beside each
document (`<name>.gold.json`, docparse-gold/1, read by tests/support/docparse_score.py) from the same
description the document is built from, never from a reader's output, so it is exact:

- `blocks`: what a reader must find, in reading order, with a heading's level (docx: the depth the
  Title rule gives; pptx: the slide title at 1) and a deck's slide as `page`;
- `tables`: each table's rows (and slide);
- `notes`: a deck's speaker notes and their slide;
- `images`: each picture, chart or diagram (and its slide), for the announced-loss metric.

Text a document holds but must not be read (deleted, moved away, a fallback, a header, a comment)
is in no gold block, so a reader that reads it loses precision, and one that misses inserted
text loses recall. The zips are written with a fixed date, so a rerun writes the same bytes, but
for the chart's embedded workbook, which python-pptx dates.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import docx
import pptx
from docx.enum.style import WD_STYLE_TYPE
from docx.oxml import parse_xml
from docx.oxml.ns import nsdecls
from pptx.chart.data import CategoryChartData
from pptx.enum.chart import XL_CHART_TYPE
from pptx.util import Emu, Inches

HERE = Path(__file__).resolve().parent
FIXED_DATE = (2026, 1, 1, 0, 0, 0)
W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"

Gold = dict[str, Any]


def gold(blocks: list[dict[str, Any]], **extra: Any) -> Gold:
    return {"gold_schema": "docparse-gold/1", "blocks": blocks, **extra}


def heading(text: str, level: int, page: int | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "heading", "text": text, "level": level}
    return block | ({"page": page} if page else {})


def para(text: str, page: int | None = None, kind: str = "paragraph") -> dict[str, Any]:
    return {"type": kind, "text": text} | ({"page": page} if page else {})


def png(width: int = 4, height: int = 4) -> bytes:
    """A small grey PNG, written with the standard library."""

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    idat = chunk(b"IDAT", zlib.compress(rows))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + idat + chunk(b"IEND", b"")


def saved(document: Any) -> bytes:
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def rewrite(data: bytes, edits: dict[str, Callable[[str | None], str]]) -> bytes:
    """The package with each part in `edits` replaced by its edit of the part's text (None when the
    part is new), every member dated FIXED_DATE so the output does not change between runs."""
    source = zipfile.ZipFile(io.BytesIO(data))
    names = source.namelist() + [name for name in edits if name not in source.namelist()]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for name in names:
            body: bytes | str
            if name in edits:
                old = source.read(name).decode("utf-8") if name in source.namelist() else None
                body = edits[name](old)
            else:
                body = source.read(name)
            info = zipfile.ZipInfo(name, FIXED_DATE)
            info.compress_type = zipfile.ZIP_DEFLATED
            target.writestr(info, body)
    return buffer.getvalue()


def add_relationship(rels: str | None, rid: str, kind: str, target: str) -> str:
    assert rels is not None
    entry = f'<Relationship Id="{rid}" Type="{REL}/{kind}" Target="{target}"/>'
    return rels.replace("</Relationships>", entry + "</Relationships>")


def add_content_type(types: str | None, part: str, content_type: str) -> str:
    assert types is not None
    entry = f'<Override PartName="/{part}" ContentType="{content_type}"/>'
    return types.replace("</Types>", entry + "</Types>")


# DOCX documents


def docx_headings() -> tuple[bytes, Gold]:
    """Heading N and Title styles, outline levels along basedOn chains, level 9 as body text."""
    document = docx.Document()
    styles = document.styles
    derived = styles.add_style("Derived Heading", WD_STYLE_TYPE.PARAGRAPH)
    derived.base_style = styles["Heading 2"]  # no outline level of its own: Heading 2's (1)
    quiet = styles.add_style("Quiet Heading", WD_STYLE_TYPE.PARAGRAPH)
    quiet.base_style = styles["Heading 1"]
    quiet.element.get_or_add_pPr().append(parse_xml(f'<w:outlineLvl {nsdecls("w")} w:val="9"/>'))
    chapter = styles.add_style("Chapter Style", WD_STYLE_TYPE.PARAGRAPH)
    chapter.element.get_or_add_pPr().append(parse_xml(f'<w:outlineLvl {nsdecls("w")} w:val="0"/>'))
    child = styles.add_style("Chapter Child", WD_STYLE_TYPE.PARAGRAPH)
    child.base_style = chapter

    document.add_heading("Preface before the title", level=1)
    document.add_paragraph("A heading before any title keeps its own level.")
    document.add_heading("Annual Review of the Harbour Works", level=0)
    document.add_paragraph("The harbour works ran through the whole year without a stop.")
    document.add_heading("Dredging", level=1)
    document.add_paragraph("Dredging moved forty thousand cubic metres of silt.")
    document.add_paragraph("Derived section on the north basin", style="Derived Heading")
    document.add_paragraph("The north basin reached its planned depth in May.")
    document.add_paragraph(
        "This quiet line looks like a heading but reads as body text.", style="Quiet Heading"
    )
    document.add_heading("Moorings", level=1)
    document.add_heading("Floating pontoons", level=3)
    document.add_paragraph("Twelve pontoons were replaced with steel ones.")
    document.add_paragraph("Chapter by outline level", style="Chapter Child")
    document.add_paragraph("A chapter style sets outline level zero for its children.")
    own = document.add_paragraph("Own outline level three")
    own._p.get_or_add_pPr().append(parse_xml(f'<w:outlineLvl {nsdecls("w")} w:val="2"/>'))
    document.add_paragraph("The paragraph above carries its outline level itself.")
    blocks = [
        heading("Preface before the title", 1),
        para("A heading before any title keeps its own level."),
        heading("Annual Review of the Harbour Works", 1),
        para("The harbour works ran through the whole year without a stop."),
        heading("Dredging", 2),
        para("Dredging moved forty thousand cubic metres of silt."),
        heading("Derived section on the north basin", 3),
        para("The north basin reached its planned depth in May."),
        para("This quiet line looks like a heading but reads as body text."),
        heading("Moorings", 2),
        heading("Floating pontoons", 4),
        para("Twelve pontoons were replaced with steel ones."),
        heading("Chapter by outline level", 2),
        para("A chapter style sets outline level zero for its children."),
        heading("Own outline level three", 4),
        para("The paragraph above carries its outline level itself."),
    ]
    return saved(document), gold(blocks)


def docx_lists_and_tables() -> tuple[bytes, Gold]:
    """List styles and numbered paragraphs as list runs; tables, a merged cell, a one-cell frame."""
    document = docx.Document()
    document.add_heading("Inventory", level=1)
    document.add_paragraph("The store keeps these items on hand:")
    items = ["Rope of braided nylon", "Galvanised shackles", "Spare fenders"]
    for item in items:
        document.add_paragraph(item, style="List Bullet")
    steps = ["Open the valve", "Check the gauge", "Close the valve"]
    for step in steps:
        document.add_paragraph(step, style="List Number")
    document.add_heading("Stock table", level=1)
    rows = [["Item", "Count", "Shelf"], ["Rope", "12", "A1"], ["Shackles", "40", "B3"]]
    table = document.add_table(rows=3, cols=3)
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_paragraph("Merged cells follow.")
    merged = document.add_table(rows=2, cols=3)
    merged.cell(0, 0).merge(merged.cell(0, 1)).text = "Quarter total"
    merged.cell(0, 2).text = "Notes"
    for c, value in enumerate(["310", "295", "steady"]):
        merged.cell(1, c).text = value
    document.add_paragraph("The end of the inventory.")
    blocks = [
        heading("Inventory", 1),
        para("The store keeps these items on hand:"),
        *[para(item, kind="list_item") for item in items + steps],
        heading("Stock table", 1),
        para("Merged cells follow."),
        para("The end of the inventory."),
    ]
    tables = [
        {"rows": rows, "header_rows": 1, "after_block": 9},
        {
            "rows": [["Quarter total", "", "Notes"], ["310", "295", "steady"]],
            "header_rows": 1,
            "after_block": 10,
        },
    ]
    return saved(document), gold(blocks, tables=tables)


MARKUP = f'{nsdecls("w")} xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006"'
DATED = 'w:author="Editor" w:date="2026-01-01T00:00:00Z"'
REVISED = f"""<w:p {MARKUP}>
<w:r><w:t xml:space="preserve">The survey found </w:t></w:r>
<w:ins w:id="1" {DATED}><w:r><w:t xml:space="preserve">three new </w:t></w:r></w:ins>
<w:del w:id="2" {DATED}><w:r><w:delText xml:space="preserve">obsolete withdrawn </w:delText></w:r></w:del>
<w:r><w:t xml:space="preserve">cracks</w:t></w:r>
<w:moveFrom w:id="3" {DATED}><w:r><w:t xml:space="preserve"> relocated sentence</w:t></w:r></w:moveFrom>
<w:r><w:t>.</w:t></w:r></w:p>"""
MOVED_TO = f"""<w:p {MARKUP}><w:moveTo w:id="4" {DATED}>
<w:r><w:t>The relocated sentence now sits here.</w:t></w:r></w:moveTo></w:p>"""
CONTENT_CONTROL = f"""<w:sdt {MARKUP}><w:sdtPr><w:alias w:val="Inspector"/></w:sdtPr><w:sdtContent>
<w:p><w:r><w:t>Inspector on duty was Mara Quill.</w:t></w:r></w:p></w:sdtContent></w:sdt>"""
CUSTOM_XML = f"""<w:customXml {MARKUP} w:element="finding">
<w:p><w:r><w:t>Custom markup wraps this finding.</w:t></w:r></w:p></w:customXml>"""
ALTERNATE = f"""<w:p {MARKUP}><w:r><mc:AlternateContent>
<mc:Choice Requires="w14"><w:t>Chosen wording appears once.</w:t></mc:Choice>
<mc:Fallback><w:t>Fallback wording never appears.</w:t></mc:Fallback></mc:AlternateContent></w:r></w:p>"""
ROW_IN_CONTROL = f"""<w:sdt {MARKUP}><w:sdtContent><w:tr>
<w:tc><w:p><w:r><w:t>J3</w:t></w:r></w:p></w:tc>
<w:tc><w:p><w:r><w:t>patched</w:t></w:r></w:p></w:tc></w:tr></w:sdtContent></w:sdt>"""


def add_body_xml(document: Any, xml: str) -> None:
    """Append an element python-docx cannot write to the body (before its section properties)."""
    placeholder = document.add_paragraph()._p
    placeholder.addprevious(parse_xml(xml))
    placeholder.getparent().remove(placeholder)


def docx_revisions_and_controls() -> tuple[bytes, Gold]:
    """Tracked changes, moved text, content controls, custom XML, alternate content, a deleted row."""
    document = docx.Document()
    document.add_heading("Inspection notes", level=1)
    for xml in (REVISED, MOVED_TO, CONTENT_CONTROL, CUSTOM_XML, ALTERNATE):
        add_body_xml(document, xml)
    table = document.add_table(rows=3, cols=2)
    for r, row in enumerate([["Joint", "State"], ["J1", "sound"], ["J2", "withdrawn row"]]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    table.rows[2]._tr.get_or_add_trPr().append(parse_xml(f'<w:del {MARKUP} w:id="7" {DATED}/>'))
    table._tbl.append(parse_xml(ROW_IN_CONTROL))
    document.add_paragraph("Closing remark after the table.")
    blocks = [
        heading("Inspection notes", 1),
        para("The survey found three new cracks."),
        para("The relocated sentence now sits here."),
        para("Inspector on duty was Mara Quill."),
        para("Custom markup wraps this finding."),
        para("Chosen wording appears once."),
        para("Closing remark after the table."),
    ]
    tables = [{"rows": [["Joint", "State"], ["J1", "sound"], ["J3", "patched"]], "header_rows": 1}]
    return saved(document), gold(blocks, tables=tables)


FOOTNOTES = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:footnotes xmlns:w="{W_NS}">
<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>
<w:footnote w:type="continuationSeparator" w:id="0"><w:p><w:r><w:continuationSeparator/></w:r></w:p></w:footnote>
<w:footnote w:id="1"><w:p><w:r><w:t>Measured at low tide on the first of March.</w:t></w:r></w:p></w:footnote>
</w:footnotes>"""
HEADER = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:hdr xmlns:w="{W_NS}"><w:p><w:r><w:t>Running header never read</w:t></w:r></w:p></w:hdr>"""


ENDNOTES = f"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:endnotes xmlns:w="{W_NS}">
<w:endnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:endnote>
<w:endnote w:id="1"><w:p><w:r><w:t>Tide data courtesy of the harbour office.</w:t></w:r></w:p></w:endnote>
</w:endnotes>"""
WORDART = f"""<w:p {MARKUP} xmlns:v="urn:schemas-microsoft-com:vml"><w:r><w:pict>
<v:shape style="width:200pt;height:50pt"><v:textpath string="HIGH WATER"/></v:shape></w:pict></w:r></w:p>"""
CHART = f"""<w:p {MARKUP}
 xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"
 xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"
 xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/chart"
 xmlns:r="{REL}"><w:r><w:drawing><wp:inline><wp:extent cx="3000000" cy="2000000"/>
<wp:docPr id="50" name="Chart"/><a:graphic><a:graphicData
 uri="http://schemas.openxmlformats.org/drawingml/2006/chart"><c:chart r:id="rIdChart"/>
</a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"""
ALT_CHUNK = f'<w:altChunk {MARKUP} xmlns:r="{REL}" r:id="rIdChunk"/>'
CHUNK = "<html><body><p>Embedded chunk text is never read.</p></body></html>"


def docx_notes_and_pictures() -> tuple[bytes, Gold]:
    """A footnote and an endnote after the body, a header not read, an altChunk (a failed unit),
    a picture, a WordArt and a chart that warn."""
    document = docx.Document()
    document.add_heading("Tide table", level=1)
    noted = document.add_paragraph("The lowest water came in March.")
    noted._p.append(parse_xml(f'<w:r {nsdecls("w")}><w:footnoteReference w:id="1"/></w:r>'))
    document.add_paragraph().add_run().add_picture(io.BytesIO(png()), width=Inches(1))
    document.add_paragraph("A figure of the tide gauge sits above.")
    for xml in (WORDART, CHART, ALT_CHUNK):
        add_body_xml(document, xml)
    document.add_paragraph("The chart shows the monthly low water.")
    data = saved(document)
    kinds = "application/vnd.openxmlformats-officedocument.wordprocessingml"
    new_parts = {
        "word/footnotes.xml": ("rIdNotes", "footnotes", FOOTNOTES, f"{kinds}.footnotes+xml"),
        "word/endnotes.xml": ("rIdEnd", "endnotes", ENDNOTES, f"{kinds}.endnotes+xml"),
        "word/header9.xml": ("rIdHeader", "header", HEADER, f"{kinds}.header+xml"),
        "word/chunk.html": ("rIdChunk", "aFChunk", CHUNK, "text/html"),
    }

    def relationships(rels: str | None) -> str:
        for part, (rid, kind, _, _) in new_parts.items():
            rels = add_relationship(rels, rid, kind, part.removeprefix("word/"))
        assert rels is not None
        return rels

    def content_types(types: str | None) -> str:
        for part, (_, _, _, content_type) in new_parts.items():
            types = add_content_type(types, part, content_type)
        assert types is not None
        return types

    def replaced_by(body: str) -> Callable[[str | None], str]:
        return lambda _: body

    edits = {part: replaced_by(body) for part, (_, _, body, _) in new_parts.items()}
    edits["word/_rels/document.xml.rels"] = relationships
    edits["[Content_Types].xml"] = content_types
    blocks = [
        heading("Tide table", 1),
        para("The lowest water came in March."),
        para("A figure of the tide gauge sits above."),
        para("The chart shows the monthly low water."),
        para("Measured at low tide on the first of March."),
        para("Tide data courtesy of the harbour office."),
    ]
    images = [{"text": ""}, {"text": "HIGH WATER"}, {"text": ""}]
    return rewrite(data, edits), gold(blocks, images=images)


def docx_pictures_only() -> tuple[bytes, Gold]:
    """A document of a picture and no text: a failed unit that announces the picture."""
    document = docx.Document()
    document.add_paragraph().add_run().add_picture(io.BytesIO(png()), width=Inches(2))
    return saved(document), gold([], images=[{"text": ""}])


# PPTX decks


def _text_box(slide: Any, text: str, top: float) -> Any:
    box = slide.shapes.add_textbox(Inches(0.5), Inches(top), Inches(6), Inches(0.8))
    box.text_frame.text = text
    return box


def _notes(slide: Any, text: str) -> None:
    slide.notes_slide.notes_text_frame.text = text


def pptx_deck() -> tuple[bytes, Gold]:
    """Titles, bodies, text boxes, a group, a table, notes, a hidden slide, a reordered slide list."""
    deck = pptx.Presentation()
    title_only, title_and_body = deck.slide_layouts[5], deck.slide_layouts[1]

    first = deck.slides.add_slide(title_and_body)
    first.shapes.title.text = "Quarterly harbour briefing"
    first.placeholders[1].text = "Cargo volumes rose\nBerth three reopened"
    _notes(first, "Open with the cargo figures.")

    second = deck.slides.add_slide(title_only)
    second.shapes.title.text = "Crane availability"
    group = second.shapes.add_group_shape()
    for n, text in enumerate(["Crane A ready", "Crane B in repair"]):
        inner = group.shapes.add_textbox(Inches(0.5), Inches(2 + n), Inches(4), Inches(0.6))
        inner.text_frame.text = text
    _text_box(second, "Availability improves next month.", 5)

    third = deck.slides.add_slide(title_only)
    third.shapes.title.text = "Berth schedule"
    rows = [["Berth", "Ship", "Day"], ["B1", "Aurora", "Monday"], ["B2", "Meridian", "Thursday"]]
    shape = third.shapes.add_table(3, 3, Inches(0.5), Inches(1.5), Inches(6), Inches(1.5))
    for r, row in enumerate(rows):
        for c, value in enumerate(row):
            shape.table.cell(r, c).text = value
    _notes(third, "Confirm the Thursday slot with the pilot.")

    hidden = deck.slides.add_slide(title_only)
    hidden.shapes.title.text = "Reserve slide on dredging"
    _text_box(hidden, "Only shown when asked about dredging.", 2)
    hidden._element.set("show", "0")

    data = saved(deck)
    # The slide list shows the table slide before the group slide: slides 1, 3, 2, 4 by part name.
    data = rewrite(data, {"ppt/presentation.xml": _swap_slide_ids(1, 2)})
    blocks = [
        heading("Quarterly harbour briefing", 1, 1),
        para("Cargo volumes rose\nBerth three reopened", 1),
        heading("Berth schedule", 1, 2),
        heading("Crane availability", 1, 3),
        para("Crane A ready", 3),
        para("Crane B in repair", 3),
        para("Availability improves next month.", 3),
        heading("Reserve slide on dredging", 1, 4),
        para("Only shown when asked about dredging.", 4),
    ]
    tables = [{"rows": rows, "header_rows": 1, "page": 2}]
    notes = [
        {"text": "Open with the cargo figures.", "page": 1},
        {"text": "Confirm the Thursday slot with the pilot.", "page": 2},
    ]
    return data, gold(blocks, tables=tables, notes=notes, page_count=4)


def _swap_slide_ids(a: int, b: int) -> Callable[[str | None], str]:
    """An edit of presentation.xml that swaps the a-th and b-th entries of its slide list."""

    def edit(xml: str | None) -> str:
        assert xml is not None
        start = xml.index("<p:sldIdLst>") + len("<p:sldIdLst>")
        end = xml.index("</p:sldIdLst>")
        entries = [e + "/>" for e in xml[start:end].split("/>") if e.strip()]
        entries[a], entries[b] = entries[b], entries[a]
        return xml[:start] + "".join(entries) + xml[end:]

    return edit


ALTERNATE_SHAPE = """<mc:AlternateContent xmlns:mc="http://schemas.openxmlformats.org/markup-compatibility/2006">
<mc:Choice xmlns:p14="http://schemas.microsoft.com/office/powerpoint/2010/main" Requires="p14">{choice}</mc:Choice>
<mc:Fallback>{fallback}</mc:Fallback></mc:AlternateContent>"""


def pptx_pictures() -> tuple[bytes, Gold]:
    """A slide a large picture covers (needs OCR), a small picture and a chart (named), alternate
    content read through its first choice."""
    deck = pptx.Presentation()
    title_only = deck.slide_layouts[5]
    width, height = int(deck.slide_width or 9_144_000), int(deck.slide_height or 6_858_000)

    large = deck.slides.add_slide(title_only)
    large.shapes.title.text = "Site photograph"
    large.shapes.add_picture(io.BytesIO(png()), 0, 0, Emu(width // 2), Emu(height // 2))

    small = deck.slides.add_slide(title_only)
    small.shapes.title.text = "Logo and figures"
    small.shapes.add_picture(io.BytesIO(png()), 0, 0, Emu(width // 10), Emu(height // 10))
    _text_box(small, "Figures come from the port authority.", 5)
    chart_data = CategoryChartData()
    chart_data.categories = ["Q1", "Q2"]
    chart_data.add_series("Tonnes", (10.0, 12.0))
    small.shapes.add_chart(
        XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(5), Inches(2), Inches(3), Inches(2), chart_data
    )

    alternate = deck.slides.add_slide(title_only)
    alternate.shapes.title.text = "Alternate content"
    chosen = _text_box(alternate, "Chosen shape text.", 2)
    fallback = _text_box(alternate, "Fallback shape text.", 3)
    wrapper = parse_xml(ALTERNATE_SHAPE.format(choice="", fallback="").replace("\n", ""))
    chosen._element.addprevious(wrapper)
    wrapper[0].append(chosen._element)
    wrapper[1].append(fallback._element)

    blocks = [
        heading("Site photograph", 1, 1),
        heading("Logo and figures", 1, 2),
        para("Figures come from the port authority.", 2),
        heading("Alternate content", 1, 3),
        para("Chosen shape text.", 3),
    ]
    images = [{"text": "", "page": 1}, {"text": "", "page": 2}, {"text": "Q1 Q2 Tonnes", "page": 2}]
    return saved(deck), gold(blocks, images=images, page_count=3)


DOCUMENTS: dict[str, Callable[[], tuple[bytes, Gold]]] = {
    "docx/headings_and_styles.docx": docx_headings,
    "docx/lists_and_tables.docx": docx_lists_and_tables,
    "docx/revisions_and_controls.docx": docx_revisions_and_controls,
    "docx/notes_and_pictures.docx": docx_notes_and_pictures,
    "docx/pictures_only.docx": docx_pictures_only,
    "pptx/harbour_briefing.pptx": pptx_deck,
    "pptx/pictures_and_charts.pptx": pptx_pictures,
}


def main() -> None:
    for name, build in DOCUMENTS.items():
        data, labels = build()
        data = rewrite(data, {})  # a fixed date on every member
        path = HERE / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        labels = {**labels, "format": path.suffix.lstrip("."), "source": "generate_office.py"}
        path.with_name(path.name + ".gold.json").write_text(
            json.dumps(labels, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(f"wrote {path.relative_to(HERE)} ({len(data):,} bytes)")


if __name__ == "__main__":
    main()
