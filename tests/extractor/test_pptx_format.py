"""PPTX extraction: one test per rule of the reference extractor's PPTX reader."""

from __future__ import annotations

import io
import re
import zipfile
from typing import Any

import pptx as python_pptx
import pytest
from pptx.util import Inches

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.pptx import extract_pptx
from extractor_sandbox.source import extract
from tests.extractor import zips
from tests.extractor.office_packages import picture, pptx, slide_xml, text_shape
from tests.extractor.server_check import validated

SLIDE_W, SLIDE_H = 9_144_000, 6_858_000


def read(data: bytes) -> dict[str, Any]:
    return validated(extract_pptx(data, {}, name="deck.pptx"), data)


def texts(artifact: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(b["type"], b["text"], b["locator"]["page_start"]) for b in artifact["blocks"]]


def test_slides_follow_the_slide_list_not_the_part_names() -> None:
    slides = [slide_xml(text_shape("first part")), slide_xml(text_shape("second part"))]
    artifact = read(pptx(slides, order=[1, 0]))
    assert texts(artifact) == [("paragraph", "second part", 1), ("paragraph", "first part", 2)]


def test_the_title_is_a_heading_the_slides_other_blocks_sit_under() -> None:
    shapes = text_shape("Body text") + text_shape("Slide Title", "title")
    artifact = read(pptx([slide_xml(shapes)]))
    title, body = artifact["blocks"]
    assert (title["type"], title["text"], title["depth"]) == ("heading", "Slide Title", 1)
    assert body["parent"] == title["id"] and body["section_path"] == ["Slide Title"]


def test_a_new_slide_leaves_the_last_slides_section() -> None:
    slides = [slide_xml(text_shape("One", "title")), slide_xml(text_shape("Untitled text"))]
    artifact = read(pptx(slides))
    assert artifact["blocks"][1]["section_path"] == [] and "parent" not in artifact["blocks"][1]


def test_grouped_shapes_are_read_in_place() -> None:
    group = "<p:grpSp><p:nvGrpSpPr/><p:grpSpPr/>" + text_shape("inside") + "</p:grpSp>"
    shapes = text_shape("before") + group + text_shape("after")
    assert [t for _, t, _ in texts(read(pptx([slide_xml(shapes)])))] == [
        "before",
        "inside",
        "after",
    ]


def test_alternate_content_is_read_through_its_first_choice() -> None:
    shapes = (
        '<mc:AlternateContent><mc:Choice Requires="x">' + text_shape("chosen") + "</mc:Choice>"
        "<mc:Fallback>" + text_shape("fallback") + "</mc:Fallback></mc:AlternateContent>"
    )
    assert [t for _, t, _ in texts(read(pptx([slide_xml(shapes)])))] == ["chosen"]


def test_speaker_notes_are_a_block_marked_notes_on_their_slide() -> None:
    artifact = read(pptx([slide_xml(text_shape("T", "title"))], notes={0: "Say hello."}))
    notes = artifact["blocks"][-1]
    assert (notes["text"], notes["attrs"], notes["locator"]["page_start"]) == (
        "Say hello.",
        {"notes": True},
        1,
    )


def test_a_hidden_slide_is_read_and_marked() -> None:
    artifact = read(pptx([slide_xml(text_shape("Secret"), hidden=True)]))
    assert artifact["blocks"][0]["attrs"] == {"hidden": True}


def test_every_block_has_its_slide_as_page_locator() -> None:
    slides = [slide_xml(text_shape(f"s{n}", "title") + text_shape(f"b{n}")) for n in (1, 2, 3)]
    artifact = read(pptx(slides))
    assert [(b["locator"]["page_start"], b["locator"]["page_end"]) for b in artifact["blocks"]] == [
        (1, 1),
        (1, 1),
        (2, 2),
        (2, 2),
        (3, 3),
        (3, 3),
    ]


def test_a_picture_of_a_fifth_of_the_slide_or_more_fails_the_slide_for_ocr() -> None:
    big = picture(SLIDE_W // 2, SLIDE_H // 2)  # a quarter of the slide
    artifact = read(pptx([slide_xml(text_shape("Caption") + big)]))
    assert artifact["coverage"]["failed"] == [
        {
            "unit": "slide 1",
            "reason": "a picture covers a fifth of the slide or more; it needs OCR (not run)",
        }
    ]
    assert [b["text"] for b in artifact["blocks"]] == ["Caption"]
    assert artifact["coverage"]["extracted"] == 0


def test_smaller_pictures_and_charts_are_named_with_one_warning() -> None:
    chart = (
        '<p:graphicFrame><p:nvGraphicFramePr/><a:graphic><a:graphicData uri="http://schemas.'
        'openxmlformats.org/drawingml/2006/chart"/></a:graphic></p:graphicFrame>'
    )
    small = picture(SLIDE_W // 10, SLIDE_H // 10)
    slides = [slide_xml(text_shape("One") + small), slide_xml(text_shape("Two") + chart)]
    artifact = read(pptx(slides))
    assert [b["attrs"]["images_unread"] for b in artifact["blocks"]] == [1, 1]
    assert artifact["warnings"] == [
        "what drawings show is not read (1 chart, 1 image) on slides 1, 2"
    ]
    assert artifact["coverage"]["failed"] == []


def test_a_picture_in_a_scaled_group_is_measured_at_its_shown_size() -> None:
    # A picture of the whole slide inside a group shrunk to a tenth each way: 1% of the slide.
    group = (
        '<p:grpSp><p:nvGrpSpPr/><p:grpSpPr><a:xfrm><a:off x="0" y="0"/>'
        f'<a:ext cx="{SLIDE_W // 10}" cy="{SLIDE_H // 10}"/><a:chOff x="0" y="0"/>'
        f'<a:chExt cx="{SLIDE_W}" cy="{SLIDE_H}"/></a:xfrm></p:grpSpPr>'
        + picture(SLIDE_W, SLIDE_H)
        + "</p:grpSp>"
    )
    artifact = read(pptx([slide_xml(text_shape("Text") + group)]))
    assert artifact["coverage"]["failed"] == []
    assert artifact["blocks"][0]["attrs"]["images_unread"] == 1


def test_a_slide_of_pictures_only_is_a_failed_unit() -> None:
    small = picture(SLIDE_W // 10, SLIDE_H // 10)
    artifact = read(pptx([slide_xml(small)]))
    assert artifact["coverage"]["failed"][0]["unit"] == "slide 1"
    assert "needs OCR" in artifact["coverage"]["failed"][0]["reason"]


def test_a_slide_id_naming_a_missing_part_is_a_failed_unit() -> None:
    slides = [slide_xml(text_shape("kept")), slide_xml(text_shape("lost"))]
    artifact = read(pptx(slides, missing=[1]))
    assert texts(artifact) == [("paragraph", "kept", 1)]
    assert artifact["coverage"]["failed"] == [
        {"unit": "slide 2", "reason": "its relationship names no slide part"}
    ]
    assert (artifact["coverage"]["total"], artifact["coverage"]["extracted"]) == (2, 1)


def test_a_slide_whose_relationships_cannot_be_read_is_a_failed_unit() -> None:
    slides = [slide_xml(text_shape("one")), slide_xml(text_shape("two"))]
    data = pptx(slides, extra={"ppt/slides/_rels/slide2.xml.rels": "<Relationships"})
    artifact = read(data)
    assert [f["unit"] for f in artifact["coverage"]["failed"]] == ["slide 2"]
    assert texts(artifact) == [("paragraph", "one", 1)]


def test_notes_that_cannot_be_read_fail_their_own_unit() -> None:
    data = pptx(
        [slide_xml(text_shape("Body"))],
        notes={0: "n"},
        extra={"ppt/notesSlides/notesSlide1.xml": "<p:notes"},
    )
    artifact = read(data)
    assert [f["unit"] for f in artifact["coverage"]["failed"]] == ["slide 1 notes"]
    assert texts(artifact) == [("paragraph", "Body", 1)]


def test_a_table_is_one_block_with_its_rows_and_columns() -> None:
    def cell(text: str, merged: bool = False) -> str:
        attr = ' hMerge="1"' if merged else ""
        return f"<a:tc{attr}><a:txBody><a:p><a:r><a:t>{text}</a:t></a:r></a:p></a:txBody></a:tc>"

    frame = (
        '<p:graphicFrame><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/'
        f'2006/table"><a:tbl><a:tr>{cell("A")}{cell("B")}</a:tr><a:tr>{cell("wide")}'
        f'<a:tc hMerge="1"><a:txBody><a:p/></a:txBody></a:tc></a:tr></a:tbl></a:graphicData>'
        "</a:graphic></p:graphicFrame>"
    )
    [block] = read(pptx([slide_xml(frame)]))["blocks"]
    assert block["text"] == "A | B\nwide | "
    assert block["attrs"]["table"] == {"rows": 2, "columns": 2}


def test_a_presentation_part_that_is_not_xml_fails_the_file_as_corrupt() -> None:
    data = zips.package({"ppt/presentation.xml": "not xml at all <"})
    with pytest.raises(ExtractError) as error:
        extract_pptx(data, {}, name="bad.pptx")
    assert error.value.code == "corrupt"


def test_a_python_pptx_deck_reads_through_the_service_dispatch() -> None:
    deck = python_pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Agenda"
    slide.placeholders[1].text = "Welcome"
    slide.shapes.add_textbox(Inches(1), Inches(5), Inches(2), Inches(1)).text_frame.text = "Box"
    buffer = io.BytesIO()
    deck.save(buffer)
    artifact = extract(buffer.getvalue(), "pptx", "deck.pptx", {})
    assert texts(artifact) == [
        ("heading", "Agenda", 1),
        ("paragraph", "Welcome", 1),
        ("paragraph", "Box", 1),
    ]
    assert artifact["coverage"]["unit"] == "slides"


def layout_with_picture_placeholder(cx: int, cy: int) -> str:
    return (
        slide_xml(
            '<p:pic><p:nvPicPr><p:cNvPr id="2" name="ph"/><p:cNvPicPr/><p:nvPr><p:ph type="pic" idx="1"/>'
            f'</p:nvPr></p:nvPicPr><p:blipFill/><p:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="{cx}" '
            f'cy="{cy}"/></a:xfrm></p:spPr></p:pic>'
        )
        .replace("p:sld ", "p:sldLayout ")
        .replace("</p:sld>", "</p:sldLayout>")
    )


PLACEHOLDER_PICTURE = (
    '<p:pic><p:nvPicPr><p:cNvPr id="4" name="p"/><p:cNvPicPr/><p:nvPr><p:ph type="pic" idx="1"/>'
    '</p:nvPr></p:nvPicPr><p:blipFill><a:blip r:embed="rId9"/></p:blipFill><p:spPr/></p:pic>'
)


def with_layout(layout: str | None) -> bytes:
    """A deck of one slide of text and a picture sized by its layout's placeholder."""
    rels = (
        '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
        'relationships"><Relationship Id="rId9" Type="http://schemas.openxmlformats.org/'
        'officeDocument/2006/relationships/image" Target="../media/image1.png"/><Relationship '
        'Id="rId7" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/'
        'slideLayout" Target="../slideLayouts/slideLayout1.xml"/></Relationships>'
    )
    extra = {"ppt/slides/_rels/slide1.xml.rels": rels}
    if layout is not None:
        extra["ppt/slideLayouts/slideLayout1.xml"] = layout
    return pptx([slide_xml(text_shape("Words") + PLACEHOLDER_PICTURE)], extra=extra)


def test_a_picture_without_a_size_takes_its_layout_placeholders() -> None:
    small = read(with_layout(layout_with_picture_placeholder(SLIDE_W // 10, SLIDE_H // 10)))
    assert small["coverage"]["failed"] == [] and small["attrs"]["images_unread"] == 1
    large = read(with_layout(layout_with_picture_placeholder(SLIDE_W, SLIDE_H // 2)))
    assert [f["unit"] for f in large["coverage"]["failed"]] == ["slide 1"]


def test_a_layout_that_cannot_be_read_fails_the_slide_and_keeps_its_text() -> None:
    artifact = read(with_layout("<p:sldLayout"))
    [failed] = artifact["coverage"]["failed"]
    assert failed["unit"] == "slide 1" and "placeholder that cannot be read" in failed["reason"]
    assert [b["text"] for b in artifact["blocks"]] == ["Words"]


def test_a_slide_nested_deeper_than_the_reader_walks_is_a_failed_unit() -> None:
    deep = "<p:grpSp>" * 80 + "</p:grpSp>" * 80
    artifact = read(pptx([slide_xml(text_shape("ok")), slide_xml(deep)]))
    [failed] = artifact["coverage"]["failed"]
    assert failed["unit"] == "slide 2" and "deeper" in failed["reason"]


def test_the_fallback_picture_of_a_choice_the_reader_does_not_know_is_named() -> None:
    ink = (
        '<mc:AlternateContent><mc:Choice Requires="p14"><p:contentPart r:id="rId5"/></mc:Choice>'
        f"<mc:Fallback>{picture(SLIDE_W // 10, SLIDE_H // 10)}</mc:Fallback></mc:AlternateContent>"
    )
    artifact = read(pptx([slide_xml(text_shape("Signed") + ink)]))
    assert artifact["blocks"][0]["attrs"]["images_unread"] == 1


def test_a_picture_filled_table_cell_is_named() -> None:
    frame = (
        '<p:graphicFrame><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/'
        '2006/table"><a:tbl><a:tr><a:tc><a:txBody><a:p><a:r><a:t>A</a:t></a:r></a:p></a:txBody>'
        '<a:tcPr><a:blipFill><a:blip r:embed="rId9"/></a:blipFill></a:tcPr></a:tc><a:tc><a:txBody>'
        "<a:p><a:r><a:t>B</a:t></a:r></a:p></a:txBody></a:tc></a:tr></a:tbl></a:graphicData>"
        "</a:graphic></p:graphicFrame>"
    )
    [block] = read(pptx([slide_xml(frame)]))["blocks"]
    assert block["attrs"]["images_unread"] == 1


def test_a_diagram_and_an_embedded_object_are_named() -> None:
    def frame(uri: str) -> str:
        return (
            f'<p:graphicFrame><a:graphic><a:graphicData uri="{uri}"/></a:graphic></p:graphicFrame>'
        )

    shapes = (
        text_shape("Org chart")
        + frame("http://schemas.openxmlformats.org/drawingml/2006/diagram")
        + frame("http://schemas.openxmlformats.org/presentationml/2006/ole")
    )
    artifact = read(pptx([slide_xml(shapes)]))
    assert artifact["warnings"] == [
        "what drawings show is not read (1 diagram, 1 embedded object) on slide 1"
    ]


def test_shapes_after_a_graphic_frame_are_read() -> None:
    chart = (
        '<p:graphicFrame><p:nvGraphicFramePr/><a:graphic><a:graphicData uri="http://schemas.'
        'openxmlformats.org/drawingml/2006/chart"/></a:graphic></p:graphicFrame>'
    )
    shapes = text_shape("Before") + chart + text_shape("After")
    assert [t for _, t, _ in texts(read(pptx([slide_xml(shapes)])))] == ["Before", "After"]


# Heading levels from the placeholder and the layout, not the font (issue 16)


def _deck_of(*slides: tuple[int, str, str | None]) -> bytes:
    """A python-pptx deck: (layout index, title, body text or None) a slide; the default
    template's layouts 0 (Title Slide: a centred title), 1 (Title and Content), 2 (Section
    Header)."""
    deck = python_pptx.Presentation()
    for layout, title, body in slides:
        slide = deck.slides.add_slide(deck.slide_layouts[layout])
        slide.shapes.title.text = title
        if body is not None:
            slide.placeholders[1].text = body
    buffer = io.BytesIO()
    deck.save(buffer)
    return buffer.getvalue()


def _headings(data: bytes) -> list[tuple[str, int, list[str]]]:
    artifact = extract_pptx(data, {}, name="deck.pptx")
    return [
        (b["text"], b["depth"], b["section_path"])
        for b in artifact["blocks"]
        if b["type"] == "heading"
    ]


def test_slides_after_a_section_header_sit_one_level_under_it() -> None:
    data = _deck_of(
        (2, "Part one", None),
        (1, "First slide", "a point"),
        (1, "Second slide", "another"),
        (2, "Part two", None),
        (1, "Third slide", "more"),
    )
    assert _headings(data) == [
        ("Part one", 1, []),
        ("First slide", 2, ["Part one"]),
        ("Second slide", 2, ["Part one"]),
        ("Part two", 1, []),
        ("Third slide", 2, ["Part two"]),
    ]


def test_a_title_slide_heads_the_deck_and_a_later_one_starts_again() -> None:
    data = _deck_of(
        (0, "The deck", "by someone"),
        (2, "A section", None),
        (1, "A slide", "text"),
        (0, "Another deck", None),
        (1, "Its slide", "text"),
    )
    assert [(text, depth) for text, depth, _ in _headings(data)] == [
        ("The deck", 1),
        ("A section", 2),
        ("A slide", 3),
        ("Another deck", 1),
        ("Its slide", 2),
    ]


def test_a_deck_of_ordinary_slides_keeps_every_title_at_depth_one() -> None:
    data = _deck_of((1, "One", "a"), (1, "Two", "b"))
    assert [(text, depth) for text, depth, _ in _headings(data)] == [("One", 1), ("Two", 1)]


def _retitled(data: bytes, slide_number: int, placeholder: str) -> bytes:
    """The deck with one slide's title placeholder typed `placeholder`, its layout unchanged."""
    buffer = io.BytesIO()
    part = f"ppt/slides/slide{slide_number}.xml"
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(buffer, "w") as target:
        for item in source.infolist():
            content = source.read(item)
            if item.filename == part:
                content = re.sub(
                    rb'<p:ph type="(ctrTitle|title)"',
                    f'<p:ph type="{placeholder}"'.encode(),
                    content,
                )
            target.writestr(item, content)
    return buffer.getvalue()


def test_a_deck_with_no_title_slide_keeps_every_title_at_one_depth() -> None:
    # Its first slide's title placeholder is a centred title, but its layout is an ordinary
    # one (Title and Content): the layout says what the slide is.
    data = _retitled(_deck_of((1, "One", "a"), (1, "Two", "b"), (1, "Three", "c")), 1, "ctrTitle")
    assert [(t, d) for t, d, _ in _headings(data)] == [("One", 1), ("Two", 1), ("Three", 1)]


def test_a_title_slide_layout_heads_the_deck_whatever_its_placeholder() -> None:
    # A title slide (layout type title) whose title placeholder is a plain title.
    data = _retitled(_deck_of((0, "The deck", "by someone"), (1, "A slide", "text")), 1, "title")
    assert [(t, d) for t, d, _ in _headings(data)] == [("The deck", 1), ("A slide", 2)]


def test_a_title_box_after_the_body_box_is_the_heading_and_each_bullet_a_block() -> None:
    deck = python_pptx.Presentation()
    slide = deck.slides.add_slide(deck.slide_layouts[1])
    slide.shapes.title.text = "Slide title"
    body = slide.placeholders[1].text_frame
    body.text = "First point"
    body.add_paragraph().text = "Second point"
    body.add_paragraph().text = ""
    body.add_paragraph().text = "Third point"
    title = slide.shapes.title._element
    title.getparent().remove(title)
    slide.shapes._spTree.append(title)  # the title box now comes after the body box
    buffer = io.BytesIO()
    deck.save(buffer)
    artifact = read(buffer.getvalue())
    assert [(b["type"], b["text"], b.get("section_path")) for b in artifact["blocks"]] == [
        ("heading", "Slide title", []),
        ("paragraph", "First point", ["Slide title"]),
        ("paragraph", "Second point", ["Slide title"]),
        ("paragraph", "Third point", ["Slide title"]),
    ]


def test_a_text_box_that_is_no_placeholder_stays_one_block() -> None:
    shapes = text_shape("Slide", "title") + text_shape("line one\nline two")
    artifact = read(pptx([slide_xml(shapes)]))
    assert [b["text"] for b in artifact["blocks"]] == ["Slide", "line one\nline two"]


def test_an_untitled_slide_under_a_section_keeps_the_section() -> None:
    deck = python_pptx.Presentation()
    deck.slides.add_slide(deck.slide_layouts[2]).shapes.title.text = "Section"
    blank = deck.slides.add_slide(deck.slide_layouts[6])
    box = blank.shapes.add_textbox(Inches(1), Inches(1), Inches(3), Inches(1))
    box.text_frame.text = "loose text"
    buffer = io.BytesIO()
    deck.save(buffer)
    artifact = extract_pptx(buffer.getvalue(), {}, name="deck.pptx")
    [loose] = [b for b in artifact["blocks"] if b["text"] == "loose text"]
    assert loose["section_path"] == ["Section"]


def test_a_layout_that_cannot_be_read_leaves_the_slide_an_ordinary_one() -> None:
    data = _deck_of((2, "Section", None), (1, "Slide", "text"))
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(buffer, "w") as target:
        for item in source.infolist():
            content = source.read(item)
            if item.filename == "ppt/slideLayouts/slideLayout3.xml":
                content = b"<not xml"
            target.writestr(item, content)
    assert [(t, d) for t, d, _ in _headings(buffer.getvalue())] == [("Section", 1), ("Slide", 1)]


def _body(*paragraphs: tuple[str, str]) -> str:
    """A body placeholder of paragraphs (kind, text): "head" a bold line with its bullet off at
    the first level (as pandoc writes a heading under the slide level), "bold" one bold run with
    its bullet on, "nested" the head's marks at level 1, "mixed" bold and plain runs, "text" a
    plain paragraph."""
    xml = []
    for kind, text in paragraphs:
        no_bullet = "<a:buNone/>" if kind in ("head", "nested", "mixed") else ""
        level = "1" if kind == "nested" else "0"
        bold = ' b="1"' if kind in ("head", "bold", "nested", "mixed") else ""
        runs = f"<a:r><a:rPr{bold}/><a:t>{text}</a:t></a:r>"
        if kind == "mixed":
            runs += "<a:r><a:rPr/><a:t> and plain</a:t></a:r>"
        xml.append(f'<a:p><a:pPr lvl="{level}">{no_bullet}</a:pPr>{runs}</a:p>')
    return (
        '<p:sp><p:nvSpPr><p:cNvPr id="3" name="b"/><p:cNvSpPr/><p:nvPr><p:ph idx="1"/></p:nvPr>'
        f"</p:nvSpPr><p:spPr/><p:txBody><a:bodyPr/>{''.join(xml)}</p:txBody></p:sp>"
    )


def test_a_bold_unbulleted_line_in_the_body_is_a_heading_under_the_slide_title() -> None:
    slide = slide_xml(
        text_shape("Slide", "title")
        + _body(("text", "intro"), ("head", "A part"), ("text", "its text"), ("text", "more"))
    )
    artifact = extract_pptx(pptx([slide], notes={0: "said aloud"}), {}, name="deck.pptx")
    assert [(b["type"], b["text"], b.get("depth")) for b in artifact["blocks"]] == [
        ("heading", "Slide", 1),
        ("paragraph", "intro", None),
        ("heading", "A part", 2),
        ("paragraph", "its text", None),
        ("paragraph", "more", None),
        ("paragraph", "said aloud", None),
    ]
    assert artifact["blocks"][4]["section_path"] == ["Slide", "A part"]
    assert artifact["blocks"][5]["section_path"] == ["Slide"]  # the notes are the slide's


@pytest.mark.parametrize(
    "paragraph",
    [
        ("bold", "Bold with its bullet"),
        ("nested", "At the second level"),
        ("mixed", "Bold"),
        ("head", "Key benefits:"),
        ("head", "A bold sentence."),
        ("head", "one two three four five six seven eight nine ten eleven twelve thirteen"),
    ],
    ids=["bulleted", "nested", "mixed", "colon", "sentence", "long"],
)
def test_bold_alone_makes_no_heading(paragraph: tuple[str, str]) -> None:
    slide = slide_xml(text_shape("Slide", "title") + _body(paragraph, ("text", "after")))
    artifact = extract_pptx(pptx([slide]), {}, name="deck.pptx")
    assert [b["type"] for b in artifact["blocks"]] == ["heading", "paragraph", "paragraph"]


def _box(
    text: str, y: int, *, x: int = 457_200, width: int = 8_229_600, bullets: bool = False
) -> str:
    """A text box (no placeholder) at (x, y), 0.4 inch high, a paragraph a line; `bullets` gives
    each line after the first a bullet character of its own."""
    paragraphs = []
    for number, line in enumerate(text.split("\n")):
        bullet = '<a:pPr><a:buChar char="•"/></a:pPr>' if bullets and number else ""
        paragraphs.append(f"<a:p>{bullet}<a:r><a:t>{line}</a:t></a:r></a:p>")
    return (
        '<p:sp><p:nvSpPr><p:cNvPr id="4" name="t"/><p:cNvSpPr txBox="1"/><p:nvPr/></p:nvSpPr>'
        f'<p:spPr><a:xfrm><a:off x="{x}" y="{y}"/><a:ext cx="{width}" cy="365760"/></a:xfrm>'
        '<a:extLst><a:ext uri="{0}"/></a:extLst></p:spPr>'
        f"<p:txBody><a:bodyPr/>{''.join(paragraphs)}</p:txBody></p:sp>"
    )


def _texts_of(*shapes: str) -> list[str]:
    return [b["text"] for b in read(pptx([slide_xml("".join(shapes))]))["blocks"]]


def test_a_text_box_wholly_above_another_is_read_before_it_whatever_the_file_order() -> None:
    assert _texts_of(
        _box("Considerations:", 3_566_160),
        _box("Key Benefits:", 1_005_840),
        _box("Open-Source Software", 182_880),
    ) == ["Open-Source Software", "Key Benefits:", "Considerations:"]


def test_shapes_side_by_side_keep_the_files_order() -> None:
    # The right-hand column starts higher, but the columns do not overlap across: not reordered.
    left = _box("Left column", 1_825_625, x=838_200, width=3_623_631)
    right = _box("Right column", 1_344_058, x=6_180_463, width=4_076_241)
    assert _texts_of(left, right) == ["Left column", "Right column"]


def test_a_groups_shapes_stand_where_its_transform_places_them() -> None:
    # In the group's own frame its box is at the top (y 0.1 inch), but the group maps that frame
    # 2 inches down: the box outside it, at 1 inch, stands above it and is read first.
    group = (
        "<p:grpSp><p:nvGrpSpPr/><p:grpSpPr><a:xfrm>"
        '<a:off x="457200" y="1828800"/><a:ext cx="8229600" cy="1000000"/>'
        '<a:chOff x="0" y="0"/><a:chExt cx="8229600" cy="1000000"/></a:xfrm></p:grpSpPr>'
        + _box("Lower grouped textbox", 91_440, x=0)
        + "</p:grpSp>"
    )
    assert _texts_of(group, _box("Upper textbox", 914_400)) == [
        "Upper textbox",
        "Lower grouped textbox",
    ]


def test_each_bullet_in_a_text_box_is_a_block_of_its_own() -> None:
    shape = _box("Key Benefits:\nCost effective\nTransparent community", 1_005_840, bullets=True)
    assert _texts_of(shape) == ["Key Benefits:", "Cost effective", "Transparent community"]


def test_a_shape_read_after_another_keeps_its_bullets_together() -> None:
    bullets = _box("Key Benefits:\nCost effective\nTransparent community", 1_005_840, bullets=True)
    assert _texts_of(bullets, _box("Open-Source Software", 182_880)) == [
        "Open-Source Software",
        "Key Benefits:",
        "Cost effective",
        "Transparent community",
    ]
