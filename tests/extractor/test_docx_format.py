"""DOCX extraction: one test per rule of the reference extractor's DOCX reader."""

from __future__ import annotations

import io
import struct
import zipfile
from pathlib import Path
from typing import Any

import docx as python_docx
import pytest

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.docx import extract_docx
from extractor_sandbox.source import extract
from tests.extractor import zips
from tests.extractor.office_packages import W_NS as W
from tests.extractor.office_packages import docx, paragraph, style
from tests.extractor.server_check import validated

HEADINGS = (
    style("Title", "Title")
    + style("Heading1", "heading 1", outline=0)
    + style("Heading2", "heading 2", outline=1)
    + style("MyHeading", "My Heading", based_on="Heading2")
    + style("Quiet", "Quiet", based_on="Heading1", outline=9)
    + style("Chapter", "Chapter", outline=0)
    + style("SubChapter", "Sub Chapter", based_on="Chapter")
    + style("ListBullet", "List Bullet")
)


def read(data: bytes) -> dict[str, Any]:
    return validated(extract_docx(data, {}, name="doc.docx"), data)


def blocks(data: bytes) -> list[tuple[str, str]]:
    return [(b["type"], b["text"]) for b in read(data)["blocks"]]


def headings(data: bytes) -> list[tuple[str, int]]:
    return [(b["text"], b["depth"]) for b in read(data)["blocks"] if b["type"] == "heading"]


def test_heading_styles_give_their_level() -> None:
    body = paragraph("One", "Heading1") + paragraph("Two", "Heading2") + paragraph("Body")
    assert headings(docx(body, styles=HEADINGS)) == [("One", 1), ("Two", 2)]


def test_an_outline_level_along_the_based_on_chain_makes_a_heading() -> None:
    body = paragraph("Inherited", "MyHeading") + paragraph("Deeper", "SubChapter")
    assert headings(docx(body, styles=HEADINGS)) == [("Inherited", 2), ("Deeper", 1)]


def test_headings_all_at_the_top_level_come_out_at_one_depth() -> None:
    # As a Word user's guide has them: front-matter headings in a custom "Heading 0" style based
    # on Heading 1 (its own outline level 7, numbering off), then the sections' Heading 1, a
    # style set to outline level 0 along a basedOn chain, and a paragraph set to it directly.
    styles = (
        HEADINGS
        + style("Heading0", "Heading 0", based_on="Heading1", outline=7)
        + style("Front", "Front matter", based_on="Chapter")
    )
    own = '<w:p><w:pPr><w:outlineLvl w:val="0"/></w:pPr><w:r><w:t>Appendix</w:t></w:r></w:p>'
    body = (
        paragraph("FIGURES", "Heading0")
        + paragraph("TABLES", "Heading0")
        + paragraph("Introduction", "Heading1")
        + paragraph("Scope", "Front")
        + own
    )
    assert headings(docx(body, styles=styles)) == [
        ("FIGURES", 1),
        ("TABLES", 1),
        ("Introduction", 1),
        ("Scope", 1),
        ("Appendix", 1),
    ]


def test_a_heading_n_style_takes_its_level_from_its_name_over_its_outline_level() -> None:
    styles = HEADINGS + style("Heading3", "heading 3", outline=0)
    body = paragraph("One", "Heading1") + paragraph("Three", "Heading3")
    assert headings(docx(body, styles=styles)) == [("One", 1), ("Three", 3)]


def test_outline_level_nine_is_body_text_even_in_a_heading_n_style() -> None:
    styles = HEADINGS + style("Heading4", "heading 4", outline=9)
    assert blocks(docx(paragraph("Words", "Heading4"), styles=styles)) == [("paragraph", "Words")]


def test_outline_level_nine_is_body_text_whatever_the_style() -> None:
    body = paragraph("Quiet words", "Quiet")
    assert blocks(docx(body, styles=HEADINGS)) == [("paragraph", "Quiet words")]


def test_a_paragraphs_own_outline_level_decides_first() -> None:
    own = '<w:p><w:pPr><w:outlineLvl w:val="2"/></w:pPr><w:r><w:t>Own level</w:t></w:r></w:p>'
    assert headings(docx(own, styles=HEADINGS)) == [("Own level", 3)]


def test_a_style_id_the_styles_part_does_not_define_is_body_text() -> None:
    # pandoc's test/docx/headers.docx: "Heading7" named, no such style; Word reads it as Normal.
    body = paragraph("Sixth", "Heading6") + paragraph("Seventh level", "Heading7")
    styles = HEADINGS + style("Heading6", "heading 6")
    assert blocks(docx(body, styles=styles)) == [
        ("heading", "Sixth"),
        ("paragraph", "Seventh level"),
    ]


def test_a_custom_style_based_on_an_undefined_id_ends_its_chain_there() -> None:
    body = paragraph("Custom", "Custom")
    styles = HEADINGS + style("Custom", "Custom", based_on="Heading8")
    assert blocks(docx(body, styles=styles)) == [("paragraph", "Custom")]


def test_styles_based_on_title_are_no_titles() -> None:
    # pandoc's reference document bases Subtitle, Author and Date on Title.
    body = (
        paragraph("The Title", "Title")
        + paragraph("A subtitle", "Subtitle")
        + paragraph("A. Author", "Author")
        + paragraph("Chapter", "Heading1")
    )
    styles = (
        HEADINGS
        + style("Subtitle", "Subtitle", based_on="Title")
        + style("Author", "Author", based_on="Title")
    )
    assert blocks(docx(body, styles=styles)) == [
        ("heading", "The Title"),
        ("paragraph", "A subtitle"),
        ("paragraph", "A. Author"),
        ("heading", "Chapter"),
    ]
    assert headings(docx(body, styles=styles)) == [("The Title", 1), ("Chapter", 2)]


def test_with_no_styles_part_a_style_id_still_names_its_heading() -> None:
    assert headings(docx(paragraph("By id", "Heading3"))) == [("By id", 3)]


def test_after_a_title_every_heading_sits_one_level_under_its_own() -> None:
    body = (
        paragraph("Before", "Heading1")
        + paragraph("The Title", "Title")
        + paragraph("Chapter", "Heading1")
        + paragraph("Section", "Heading2")
        + paragraph("Second Title", "Title")
    )
    assert headings(docx(body, styles=HEADINGS)) == [
        ("Before", 1),
        ("The Title", 1),
        ("Chapter", 2),
        ("Section", 3),
        ("Second Title", 1),
    ]


def test_section_paths_and_parents_follow_the_headings() -> None:
    body = paragraph("Top", "Heading1") + paragraph("Sub", "Heading2") + paragraph("Text")
    artifact = read(docx(body, styles=HEADINGS))
    top, sub, text = artifact["blocks"]
    assert text["section_path"] == ["Top", "Sub"] and text["parent"] == sub["id"]
    assert sub["section_path"] == ["Top"] and sub["parent"] == top["id"]


def test_numbered_paragraphs_and_list_styles_make_one_list_block() -> None:
    body = (
        paragraph("Intro")
        + paragraph("first", numbered=True)
        + paragraph("")
        + paragraph("second", "ListBullet")
        + paragraph("After")
    )
    assert blocks(docx(body, styles=HEADINGS)) == [
        ("paragraph", "Intro"),
        ("list", "first\nsecond"),
        ("paragraph", "After"),
    ]


def test_inserted_text_is_read_and_deleted_and_moved_from_text_is_not() -> None:
    body = (
        '<w:p><w:r><w:t xml:space="preserve">kept </w:t></w:r>'
        '<w:ins w:id="1" w:author="a"><w:r><w:t xml:space="preserve">inserted </w:t></w:r></w:ins>'
        '<w:del w:id="2" w:author="a"><w:r><w:delText>deleted</w:delText></w:r></w:del>'
        '<w:moveFrom w:id="3" w:author="a"><w:r><w:t>movedaway</w:t></w:r></w:moveFrom>'
        '<w:moveTo w:id="4" w:author="a"><w:r><w:t>movedhere</w:t></w:r></w:moveTo></w:p>'
    )
    assert blocks(docx(body)) == [("paragraph", "kept inserted movedhere")]


def test_a_deleted_row_and_a_deleted_cell_are_left_out() -> None:
    def cell(text: str, deleted: bool = False) -> str:
        props = '<w:tcPr><w:cellDel w:id="9" w:author="a"/></w:tcPr>' if deleted else ""
        return f"<w:tc>{props}{paragraph(text)}</w:tc>"

    table = (
        "<w:tbl>"
        f"<w:tr>{cell('a')}{cell('b')}{cell('gone', True)}</w:tr>"
        f'<w:tr><w:trPr><w:del w:id="5" w:author="a"/></w:trPr>{cell("x")}{cell("y")}</w:tr>'
        f"<w:tr>{cell('c')}{cell('d')}</w:tr>"
        "</w:tbl>"
    )
    assert blocks(docx(table)) == [("table", "a | b\nc | d")]


def test_content_controls_and_custom_xml_are_read_in_place() -> None:
    body = (
        paragraph("one")
        + f'<w:sdt><w:sdtPr><w:alias w:val="x"/></w:sdtPr><w:sdtContent>{paragraph("two")}'
        "</w:sdtContent></w:sdt>"
        + f'<w:customXml w:element="c">{paragraph("three")}</w:customXml>'
        + "<w:tbl><w:sdt><w:sdtContent><w:tr><w:tc>"
        + paragraph("r1")
        + "</w:tc><w:sdt><w:sdtContent><w:tc>"
        + paragraph("c2")
        + "</w:tc></w:sdtContent></w:sdt></w:tr></w:sdtContent></w:sdt></w:tbl>"
    )
    assert blocks(docx(body)) == [
        ("paragraph", "one"),
        ("paragraph", "two"),
        ("paragraph", "three"),
        ("table", "r1 | c2"),
    ]


def test_alternate_content_is_read_once_through_its_first_choice() -> None:
    body = (
        '<w:p><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:t>chosen</w:t></mc:Choice>'
        "<mc:Fallback><w:t>fallback</w:t></mc:Fallback></mc:AlternateContent></w:r></w:p>"
    )
    assert blocks(docx(body)) == [("paragraph", "chosen")]


def test_footnotes_follow_the_body_marked_as_notes() -> None:
    notes = (
        '<w:footnote w:type="separator" w:id="-1"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>'
        f'<w:footnote w:id="1">{paragraph("The note.")}</w:footnote>'
    )
    artifact = read(
        docx(paragraph("Body.") + paragraph("H", "Heading1"), styles=HEADINGS, footnotes=notes)
    )
    last = artifact["blocks"][-1]
    assert (last["text"], last["attrs"]["note"], last["section_path"]) == (
        "The note.",
        "footnote 1",
        [],
    )


def test_headers_footers_and_comments_are_not_read() -> None:
    extra = {
        "word/header1.xml": f'<w:hdr xmlns:w="{"http://schemas.openxmlformats.org/wordprocessingml/2006/main"}">'
        + paragraph("HEADERTEXT")
        + "</w:hdr>",
    }
    body = (
        '<w:p><w:commentRangeStart w:id="0"/><w:r><w:t>Body</w:t></w:r>'
        '<w:commentRangeEnd w:id="0"/><w:r><w:commentReference w:id="0"/></w:r></w:p>'
    )
    assert blocks(docx(body, extra=extra)) == [("paragraph", "Body")]


def test_an_alt_chunk_is_a_failed_unit() -> None:
    artifact = read(docx(paragraph("Text") + '<w:altChunk r:id="rId7"/>'))
    assert artifact["coverage"]["failed"] == [
        {"unit": "altChunk rId7", "reason": "an embedded document is not read"}
    ]
    assert artifact["coverage"]["extracted"] == artifact["coverage"]["total"] - 1


PICTURE = (
    '<w:p><w:r><w:drawing><wp:inline><a:graphic><a:graphicData uri="http://schemas.openxmlformats'
    '.org/drawingml/2006/picture"><pic:pic><pic:blipFill><a:blip r:embed="rId5"/></pic:blipFill>'
    "</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>"
)
CHART = (
    '<w:p><w:r><w:drawing><wp:inline><a:graphic><a:graphicData uri="http://schemas.openxmlformats'
    '.org/drawingml/2006/chart"><c:chart xmlns:c="http://schemas.openxmlformats.org/drawingml/2006/'
    'chart" r:id="rId6"/></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>'
)
WORDART = (
    '<w:p><w:r><w:pict><v:shape><v:textpath string="Big words"/></v:shape></w:pict></w:r></w:p>'
)
OBJECT = '<w:p><w:r><w:object><o:OLEObject r:id="rId3"/></w:object></w:r></w:p>'


def test_a_document_of_pictures_only_is_a_failed_unit() -> None:
    artifact = read(docx(PICTURE + CHART))
    assert artifact["blocks"] == []
    [failed] = artifact["coverage"]["failed"]
    assert failed["unit"] == "document" and "1 chart, 1 image" in failed["reason"]


def test_a_text_document_with_drawings_warns_once_naming_them() -> None:
    artifact = read(docx(paragraph("Text") + PICTURE + CHART + WORDART + OBJECT))
    assert artifact["warnings"] == [
        "the document holds what drawings show, which is not read: 1 chart, 1 drawn text, "
        "1 embedded object, 1 image"
    ]
    assert artifact["attrs"]["images_unread"] == 4
    assert artifact["coverage"]["failed"] == []


def test_a_text_box_is_read_and_does_not_warn() -> None:
    text_box = (
        '<w:p><w:r><w:t>Anchor</w:t></w:r><w:r><w:drawing><wp:anchor><a:graphic><a:graphicData uri="'
        'http://schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:wsp xmlns:wps="http:'
        '//schemas.microsoft.com/office/word/2010/wordprocessingShape"><wps:txbx><w:txbxContent>'
        + paragraph("Boxed")
        + "</w:txbxContent></wps:txbx></wps:wsp></a:graphicData></a:graphic></wp:anchor></w:drawing>"
        "</w:r></w:p>"
    )
    artifact = read(docx(text_box))
    assert [b["text"] for b in artifact["blocks"]] == ["Anchor", "Boxed"]
    assert artifact["warnings"] == []


def test_a_fallback_picture_of_a_drawing_not_known_is_named() -> None:
    model = (
        '<w:p><w:r><w:t>Model</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="am3d">'
        '<w:drawing><am3d:model3d xmlns:am3d="urn:x"/></w:drawing></mc:Choice><mc:Fallback>'
        '<w:drawing><a:blip r:embed="rId4"/></w:drawing></mc:Fallback></mc:AlternateContent>'
        "</w:r></w:p>"
    )
    assert read(docx(model))["attrs"]["images_unread"] == 1


def test_a_table_is_one_block_with_its_rows_and_columns() -> None:
    table = (
        "<w:tbl><w:tr><w:tc>"
        + paragraph("Name")
        + "</w:tc><w:tc>"
        + paragraph("Qty")
        + '</w:tc></w:tr><w:tr><w:tc><w:tcPr><w:gridSpan w:val="2"/></w:tcPr>'
        + paragraph("Both")
        + "</w:tc></w:tr></w:tbl>"
    )
    [block] = read(docx(table))["blocks"]
    assert block["text"] == "Name | Qty\nBoth | "
    assert block["attrs"]["table"] == {"rows": 2, "columns": 2}


def test_a_row_that_starts_past_the_grids_first_column_is_shifted_under_it() -> None:
    # w:gridBefore: the row leaves the grid's first column empty (pandoc's
    # table_gridbefore.docx); before, its cells were read from the first column, one to the
    # left of the cells above or below them that a row spanning the grid places.
    def tr(cells: str, properties: str = "") -> str:
        return f"<w:tr>{properties}{cells}</w:tr>"

    def tc(text: str, span: int = 1) -> str:
        spanned = f'<w:tcPr><w:gridSpan w:val="{span}"/></w:tcPr>' if span > 1 else ""
        return f"<w:tc>{spanned}{paragraph(text)}</w:tc>"

    before = '<w:trPr><w:gridBefore w:val="1"/></w:trPr>'
    former = (  # a tracked change's former properties are not the row's
        '<w:trPr><w:trPrChange w:id="1" w:author="a"><w:trPr><w:gridBefore w:val="2"/>'
        "</w:trPr></w:trPrChange></w:trPr>"
    )
    table = (
        "<w:tbl>"
        + tr(tc("Bits") + tc("Name"), before)
        + tr(tc("0 1", span=2) + tc("TEXT"))
        + tr(tc("1") + tc("BINARY"), before)
        + tr(tc("x") + tc("y") + tc("z"), former)
        + "</w:tbl>"
    )
    [block] = read(docx(table))["blocks"]
    assert block["text"] == " | Bits | Name\n0 1 |  | TEXT\n | 1 | BINARY\nx | y | z"
    assert block["attrs"]["table"] == {"rows": 4, "columns": 3}


def test_a_deleted_row_is_still_left_out_beside_its_grid_before() -> None:
    table = (
        '<w:tbl><w:tr><w:trPr><w:gridBefore w:val="1"/><w:del w:id="1" w:author="a"/></w:trPr>'
        + f"<w:tc>{paragraph('gone')}</w:tc></w:tr>"
        + f"<w:tr><w:tc>{paragraph('a')}</w:tc><w:tc>{paragraph('b')}</w:tc></w:tr></w:tbl>"
    )
    [block] = read(docx(table))["blocks"]
    assert block["text"] == "a | b"


def test_docx_blocks_carry_no_page_locator() -> None:
    artifact = read(docx(paragraph("One") + paragraph("Two")))
    assert all(b["locator"] == {} for b in artifact["blocks"])


def test_unreadable_styles_fail_their_unit_and_style_ids_still_name_headings() -> None:
    data = docx(paragraph("Head", "Heading1"), styles="<w:style>")  # not well-formed
    artifact = read(data)
    assert artifact["coverage"]["failed"][0]["unit"] == "styles"
    assert headings(data) == [("Head", 1)]


def test_unreadable_footnotes_fail_their_unit_only() -> None:
    artifact = read(docx(paragraph("Body"), footnotes="<w:footnote>"))
    assert [b["text"] for b in artifact["blocks"]] == ["Body"]
    assert [f["unit"] for f in artifact["coverage"]["failed"]] == ["footnotes"]


def test_a_document_part_that_is_not_xml_fails_the_file_as_corrupt() -> None:
    data = zips.package(
        {"word/document.xml": b"\x00\x01 not xml", "[Content_Types].xml": "<Types/>"}
    )
    with pytest.raises(ExtractError) as error:
        extract_docx(data, {}, name="bad.docx")
    assert error.value.code == "corrupt"


def test_strict_open_xml_is_read_by_its_transitional_names() -> None:
    strict = "http://purl.oclc.org/ooxml/wordprocessingml/main"
    data = zips.package(
        {
            "word/document.xml": f'<w:document xmlns:w="{strict}"><w:body>'
            "<w:p><w:r><w:t>Strict text</w:t></w:r></w:p></w:body></w:document>"
        }
    )
    assert blocks(data) == [("paragraph", "Strict text")]


def test_a_python_docx_document_reads_through_the_service_dispatch() -> None:
    document = python_docx.Document()
    document.add_heading("Report", level=1)
    document.add_paragraph("Made with python-docx.")
    buffer = io.BytesIO()
    document.save(buffer)
    artifact = extract(buffer.getvalue(), "docx", "report.docx", {})
    assert [(b["type"], b["text"]) for b in artifact["blocks"]] == [
        ("heading", "Report"),
        ("paragraph", "Made with python-docx."),
    ]
    assert artifact["format"] == "docx" and artifact["coverage"]["unit"] == "parts"


def test_endnotes_follow_the_footnotes_marked_as_notes() -> None:
    endnotes = f'<w:endnotes xmlns:w="{W}"><w:endnote w:id="2">{paragraph("Late note.")}</w:endnote></w:endnotes>'
    data = docx(
        paragraph("Body"), footnotes=f'<w:footnote w:id="1">{paragraph("Foot.")}</w:footnote>'
    )
    parts = {**zips_parts(data), "word/endnotes.xml": endnotes}
    parts["word/_rels/document.xml.rels"] = parts["word/_rels/document.xml.rels"].replace(
        "</Relationships>",
        '<Relationship Id="rId3" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        'relationships/endnotes" Target="endnotes.xml"/></Relationships>',
    )
    artifact = read(zips.package(parts))
    assert [(b["text"], (b.get("attrs") or {}).get("note")) for b in artifact["blocks"]] == [
        ("Body", None),
        ("Foot.", "footnote 1"),
        ("Late note.", "endnote 2"),
    ]


def test_unreadable_document_relationships_fail_their_unit_and_the_body_is_read() -> None:
    data = docx(paragraph("Body"), styles=HEADINGS)
    parts = {**zips_parts(data), "word/_rels/document.xml.rels": "<Relationships"}
    artifact = read(zips.package(parts))
    assert [b["text"] for b in artifact["blocks"]] == ["Body"]
    assert [f["unit"] for f in artifact["coverage"]["failed"]] == ["relationships"]


def test_a_diagram_in_a_table_and_a_picture_in_a_footnote_warn() -> None:
    diagram = (
        "<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Cell</w:t></w:r><w:r><w:drawing><wp:inline><a:graphic>"
        '<a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/diagram"/></a:graphic>'
        "</wp:inline></w:drawing></w:r></w:p></w:tc><w:tc>"
        + paragraph("Other")
        + "</w:tc></w:tr></w:tbl>"
    )
    note = f'<w:footnote w:id="1">{PICTURE}{paragraph("Noted")}</w:footnote>'
    artifact = read(docx(diagram, footnotes=note))
    assert artifact["attrs"]["images_unread"] == 2
    assert "1 diagram, 1 image" in artifact["warnings"][0]


CORPUS_DOCX = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "inputs" / "docx"


@pytest.mark.skipif(not CORPUS_DOCX.is_dir(), reason="no shared corpus")
def test_the_corpus_strict_document_reads_as_its_transitional_twin() -> None:
    strict = read((CORPUS_DOCX / "Strict.docx").read_bytes())
    transitional = read((CORPUS_DOCX / "Transitional.docx").read_bytes())
    assert strict["blocks"] and strict["blocks"] == transitional["blocks"]


def zips_parts(data: bytes) -> dict[str, str]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {name: archive.read(name).decode("utf-8") for name in archive.namelist()}


def with_damaged_stream(data: bytes, part: str) -> bytes:
    """`data` with `part`'s deflate stream overwritten by bytes no inflater reads (block type 3)."""
    patched = bytearray(data)
    header = patched.find(b"PK\x03\x04")
    while header >= 0:
        name_length, extra_length = struct.unpack_from("<HH", patched, header + 26)
        if patched[header + 30 : header + 30 + name_length] == part.encode():
            break
        header = patched.find(b"PK\x03\x04", header + 4)
    compressed = struct.unpack_from("<I", patched, header + 18)[0]
    start = header + 30 + name_length + extra_length
    patched[start : start + compressed] = b"\xff" * compressed
    return bytes(patched)


def test_a_styles_part_whose_deflate_stream_is_damaged_fails_the_styles_unit() -> None:
    data = with_damaged_stream(docx(paragraph("Body"), styles=HEADINGS), "word/styles.xml")
    artifact = read(data)
    assert [b["text"] for b in artifact["blocks"]] == ["Body"]
    [failed] = artifact["coverage"]["failed"]
    assert failed["unit"] == "styles" and "cannot be read" in failed["reason"]
