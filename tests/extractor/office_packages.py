"""Minimal DOCX and PPTX packages written as XML, for rules python-docx and python-pptx cannot
write (tracked changes, content controls, alternate content, altChunk, hidden slides, ...)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tests.extractor import zips

W_NS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
R_NS = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
A_NS = "http://schemas.openxmlformats.org/drawingml/2006/main"
P_NS = "http://schemas.openxmlformats.org/presentationml/2006/main"
MC_NS = "http://schemas.openxmlformats.org/markup-compatibility/2006"
REL_TYPE = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/"
PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
NAMESPACES = (
    f'xmlns:w="{W_NS}" xmlns:r="{R_NS}" xmlns:a="{A_NS}" xmlns:p="{P_NS}" xmlns:mc="{MC_NS}"'
    ' xmlns:v="urn:schemas-microsoft-com:vml" xmlns:o="urn:schemas-microsoft-com:office:office"'
    ' xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing"'
    ' xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"'
)


def rels(*relationships: tuple[str, str, str]) -> str:
    """A relationships part of (id, type, target)."""
    items = "".join(
        f'<Relationship Id="{rid}" Type="{REL_TYPE}{kind}" Target="{target}"/>'
        for rid, kind, target in relationships
    )
    return f'<?xml version="1.0"?><Relationships xmlns="{PKG_RELS}">{items}</Relationships>'


def paragraph(text: str, style: str | None = None, *, numbered: bool = False) -> str:
    props = f'<w:pStyle w:val="{style}"/>' if style else ""
    if numbered:
        props += '<w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr>'
    return f'<w:p><w:pPr>{props}</w:pPr><w:r><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'


def style(
    style_id: str, name: str, *, based_on: str | None = None, outline: int | None = None
) -> str:
    parts = f'<w:name w:val="{name}"/>'
    if based_on:
        parts += f'<w:basedOn w:val="{based_on}"/>'
    if outline is not None:
        parts += f'<w:pPr><w:outlineLvl w:val="{outline}"/></w:pPr>'
    return f'<w:style w:type="paragraph" w:styleId="{style_id}">{parts}</w:style>'


def docx(
    body: str,
    *,
    styles: str | None = None,
    footnotes: str | None = None,
    extra: Mapping[str, bytes | str] | None = None,
) -> bytes:
    """A DOCX whose body is `body`, with a styles part of `styles` (w:style elements) and a
    footnotes part of `footnotes` (w:footnote elements) when given."""
    document_rels = []
    parts: dict[str, bytes | str] = {
        "[Content_Types].xml": "<Types/>",
        "_rels/.rels": rels(("rId1", "officeDocument", "word/document.xml")),
        "word/document.xml": f"<w:document {NAMESPACES}><w:body>{body}</w:body></w:document>",
    }
    if styles is not None:
        document_rels.append(("rId1", "styles", "styles.xml"))
        parts["word/styles.xml"] = f"<w:styles {NAMESPACES}>{styles}</w:styles>"
    if footnotes is not None:
        document_rels.append(("rId2", "footnotes", "footnotes.xml"))
        parts["word/footnotes.xml"] = f"<w:footnotes {NAMESPACES}>{footnotes}</w:footnotes>"
    parts["word/_rels/document.xml.rels"] = rels(*document_rels)
    parts.update(extra or {})
    return zips.package(parts)


def text_shape(text: str, placeholder: str | None = None) -> str:
    ph = f'<p:nvPr><p:ph type="{placeholder}"/></p:nvPr>' if placeholder else "<p:nvPr/>"
    paragraphs = "".join(f"<a:p><a:r><a:t>{line}</a:t></a:r></a:p>" for line in text.split("\n"))
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/>{ph}</p:nvSpPr><p:spPr/>'
        f"<p:txBody><a:bodyPr/>{paragraphs}</p:txBody></p:sp>"
    )


def picture(cx: int, cy: int, *, link: bool = False) -> str:
    blip = '<a:blip r:link="rId9"/>' if link else '<a:blip r:embed="rId9"/>'
    return (
        '<p:pic><p:nvPicPr><p:cNvPr id="3" name="p"/><p:cNvPicPr/><p:nvPr/></p:nvPicPr>'
        f"<p:blipFill>{blip}</p:blipFill>"
        f'<p:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="{cx}" cy="{cy}"/></a:xfrm></p:spPr></p:pic>'
    )


def slide_xml(shapes: str, *, hidden: bool = False) -> str:
    show = ' show="0"' if hidden else ""
    return f"<p:sld {NAMESPACES}{show}><p:cSld><p:spTree>{shapes}</p:spTree></p:cSld></p:sld>"


def pptx(
    slides: Sequence[str],
    *,
    notes: Mapping[int, str] | None = None,
    order: Sequence[int] | None = None,
    extra: Mapping[str, bytes | str] | None = None,
    missing: Sequence[int] = (),
) -> bytes:
    """A deck of `slides` (slide XML each), listed in `order` (indexes into slides), with speaker
    notes by slide index; a slide index in `missing` is listed but its part left out."""
    order = list(order if order is not None else range(len(slides)))
    parts: dict[str, bytes | str] = {
        "[Content_Types].xml": "<Types/>",
        "_rels/.rels": rels(("rId1", "officeDocument", "ppt/presentation.xml")),
    }
    ids = "".join(f'<p:sldId id="{256 + i}" r:id="rId{100 + i}"/>' for i in order)
    parts["ppt/presentation.xml"] = (
        f"<p:presentation {NAMESPACES}><p:sldIdLst>{ids}</p:sldIdLst>"
        '<p:sldSz cx="9144000" cy="6858000"/></p:presentation>'
    )
    parts["ppt/_rels/presentation.xml.rels"] = rels(
        *[(f"rId{100 + i}", "slide", f"slides/slide{i + 1}.xml") for i in range(len(slides))]
    )
    for i, xml in enumerate(slides):
        if i in missing:
            continue
        parts[f"ppt/slides/slide{i + 1}.xml"] = xml
        slide_rels = [("rId9", "image", "../media/image1.png")]
        if notes and i in notes:
            slide_rels.append(("rId8", "notesSlide", f"../notesSlides/notesSlide{i + 1}.xml"))
            parts[f"ppt/notesSlides/notesSlide{i + 1}.xml"] = (
                f"<p:notes {NAMESPACES}><p:cSld><p:spTree>{text_shape(notes[i], 'body')}"
                "</p:spTree></p:cSld></p:notes>"
            )
        parts[f"ppt/slides/_rels/slide{i + 1}.xml.rels"] = rels(*slide_rels)
    parts.update(extra or {})
    return zips.package(parts)
