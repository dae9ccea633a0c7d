"""PPTX: a PresentationML deck read into blocks, slide by slide, as the seed's "DOCX and PPTX." says.
Over 500 lines: one reader of a deck (slides, layouts, shapes and notes share its state).

The package is read through `package.Package` (parts within their bounds, XML streamed, no
DOCTYPE). The deck is read in the presentation's slide order (its slide id list), not by the
parts' names; slide n is page n, and every block carries page_start = page_end = n.

What a slide becomes:

- Its title (the first title or centred-title placeholder with text, wherever it stands in the
  shape tree) is a heading, the first block of the slide, and the slide's other blocks sit under
  it. Every slide title is at one level, but for what the slide's layout says, never the font: a
  title slide's title (its layout of type title, or one whose title placeholder is a centred
  title; a slide with no layout to read, its own centred title) is depth 1 and what follows sits
  under it, one level down, until the next title slide; a title on a section header slide (layout
  type secHead) heads a section, and the titles of the slides after it sit one level under it,
  until the next section or title slide. A deck with neither has every slide title at depth 1.
- Each shape with text is a block, a paragraph a line, but for its bullets: every paragraph of a
  body placeholder (type body, or an object placeholder), and a paragraph of any other shape with
  a bullet of its own (a:buChar, a:buAutoNum, a:buBlip), is a block of its own. Shapes in a group
  are read in place, and a shape in alternate content through its first choice only. The shapes
  are read in the slide's shape order, but a shape standing wholly above another one it overlaps
  across is read before it (formats/slide_order.py: a text box written after the one below it);
  shapes side by side, or placed by their layout, keep their order. A paragraph a converter set
  apart as a heading inside the text (bullet off, first outline level, all its text bold, at most
  12 words, not ending in a colon or a full stop) is a heading one level under the slide's title,
  and the shape's other paragraphs blocks around it.
- A table (a graphic frame holding one) is one table block, a row a line, its cells joined by
  " | ", attrs.table {"rows", "columns"}; a merged cell's other places are empty cells.
- The speaker notes (the notes slide's body placeholder) are a paragraph block after the slide's
  shapes, marked attrs.notes.
- A hidden slide (show="0") is read, and its blocks are marked attrs.hidden.

Pictures and what drawings show. A picture that covers a fifth of its slide or more is read with
OCR (formats/ocr.py) into a paragraph block marked attrs.ocr after the slide's shapes, its lines
one a line; a picture several slides show is read once, and a picture part inflates within a
bound of its own (64 MiB), apart from the package's parts. The slides read with OCR are
attrs.ocr_slides, and parser_version names Tesseract's version. Without OCR
(LOOM_EXTRACTOR_OCR=off, or no Tesseract), for a picture linked rather than held in the file, or
one OCR cannot read (named why), the slide is a failed unit; its text is still read. A slide whose
only text is what OCR read is a failed unit too when it holds a chart, a diagram or an embedded
object. A picture's size is its own, scaled by each group it sits in, or
else its placeholder's in the slide's layout (by index, then by type) and then in its master; one
stated nowhere is taken as the slide's; a deck that names no slide size is 10 by 7.5 inches. A
smaller picture, a picture-filled shape or table cell, a picture as the slide's own background,
the fallback picture of alternate content whose choice shows nothing the reader knows (ink, an
equation), a chart, a diagram or an embedded object is counted in attrs.images_unread on the
slide's blocks, with one warning for the deck. A slide of such things and no text is a failed unit.

Text budget. The slides' and their notes' text is gathered within the extraction's TextBudget
(output_size.py: the artifact's bound): once past it, the slide being read stops there (its
shapes read so far kept, cut later to the bound) and no slide after it is read; the cut and the
stop are announced in coverage (resource_limit).

Coverage counts slides (unit "slides"). A failed unit names its slide ("slide 3"), or its notes
("slide 3 notes"): a slide id whose relationship names no slide part, a slide whose part or
relationships cannot be read (its blocks are dropped), a slide whose picture takes its size from
a layout or master that cannot be read (its text is still read), notes that cannot be read. Only
the presentation part itself fails the file (corrupt).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from extractor_sandbox.artifact import BlockBuilder, build_artifact, coverage
from extractor_sandbox.contract import Artifact
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.ocr import (
    MAX_IMAGES_A_PAGE,
    EncodedImage,
    FileOcr,
    ImageUnread,
    version_suffix,
)
from extractor_sandbox.formats.office import (
    CHART,
    DIAGRAM,
    DRAWING,
    IMAGE,
    MC,
    OBJECT,
    PARSER_VERSION,
    P,
    R,
    UnreadKinds,
    alternate_content,
    graphic_kind,
    holds,
    one_line,
    table_text,
    transitional_events,
)
from extractor_sandbox.formats.package import (
    END,
    START,
    Event,
    Package,
    PartError,
    Relationship,
    skip,
    text_of,
)
from extractor_sandbox.formats.slide_order import Box, Place, reading_order
from extractor_sandbox.output_size import TextBudget, current_budget

PARSER = "loom-pptx"
MAIN_PART = "ppt/presentation.xml"
DEFAULT_SLIDE_SIZE = (9_144_000.0, 6_858_000.0)  # 10 x 7.5 inches, in EMU
OCR_SHARE = 0.2  # a picture covering this share of its slide or more needs OCR
TITLE_TYPES = frozenset({"title", "ctrTitle"})
# What a slide's layout makes it: its title heads the deck, heads the slides after it, or neither.
TITLE_SLIDE, SECTION_SLIDE, ORDINARY_SLIDE = "title", "secHead", ""
# A body placeholder (its type body, or none: an object placeholder): its paragraphs are bullets.
BODY_TYPES = frozenset({None, "body", "obj"})
TABLE_URI_END = "/table"
MAX_PICTURE_BYTES = 64 * 1024 * 1024
# A layout is read up to its type or title placeholder, and the presentation part up to its slide
# size: in chunks this small, not the rest of it (its default text style is most of it).
FIRST_ELEMENTS_CHUNK = 1024  # a picture part read for OCR
EMU_PER_INCH = 914_400


def extract_pptx(data: bytes, options: Mapping[str, str], *, name: str) -> Artifact:
    """The artifact of a PPTX deck (contract v1); `options` are the caller's to record."""
    try:
        package = Package(data)
    except PartError as error:
        raise ExtractError("corrupt", str(error)) from None
    return _Deck(package).read()


# What a slide holds, as read


@dataclass
class _Placeholder:
    type: str | None = None
    idx: str | None = None


@dataclass
class _Picture:
    placeholder: _Placeholder | None
    size: tuple[float, float] | None  # its own, scaled by its groups
    linked: bool
    embed: str | None = None  # the relationship of the picture part it holds


@dataclass
class _Slide:
    number: int
    title: str | None = None
    items: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)  # type, text, attrs
    shapes: list[tuple[int, int, Box | None]] = field(default_factory=list)  # items, box a shape
    pictures: list[_Picture] = field(default_factory=list)
    unread: UnreadKinds = field(default_factory=UnreadKinds)
    hidden: bool = False
    title_type: str | None = None
    ocr_texts: list[str] = field(default_factory=list)  # each large picture's lines, read

    def add(self, items: list[tuple[str, str, dict[str, Any]]], box: Box | None) -> None:
        """A shape's blocks, in its box."""
        self.shapes.append((len(self.items), len(self.items) + len(items), box))
        self.items += items

    def in_reading_order(self) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """The items, a shape's together, the shapes in the order formats/slide_order.py reads."""
        for index in reading_order([box for _, _, box in self.shapes]):
            start, end, _ = self.shapes[index]
            yield from self.items[start:end]


class _Deck:
    def __init__(self, package: Package) -> None:
        self.package = package
        self.blocks = BlockBuilder()
        self.failed: list[dict[str, str]] = []
        self.failed_slides: set[int] = set()
        self.slide_size = DEFAULT_SLIDE_SIZE
        self.unread_slides: dict[int, UnreadKinds] = {}
        self.placeholder_sizes: dict[str, dict[str, tuple[float, float]]] = {}
        self.layout_roles: dict[str, str | None] = {}
        self.under_title = False  # a title slide came before: its slides sit under it
        self.in_section = False  # a section header slide came before
        self.ocr = FileOcr()
        self.ocr_slides: list[int] = []
        self.budget = current_budget()  # the text the slides and their notes may keep

    def read(self) -> Artifact:
        presentation = self.package.main_part(MAIN_PART)
        try:
            slide_ids = self._slide_list(presentation)
            relationships = {r.id: r for r in self.package.relationships(presentation)}
        except PartError as error:
            raise ExtractError("corrupt", f"the presentation part {error}") from None
        for number, relationship_id in enumerate(slide_ids, start=1):
            if self.budget.spent:
                break  # the slides after the one the text passed its bound in are not read
            self._read_slide(number, relationships.get(relationship_id))
        return self._artifact(len(slide_ids))

    def _slide_list(self, presentation: str) -> list[str]:
        """The relationship ids of the slide list, in order; the slide size on the way. The part
        is read up to the notes size, which the schema puts after both."""
        ids = []
        events = self.package.events(presentation, chunk=FIRST_ELEMENTS_CHUNK)
        for kind, name, attrs in transitional_events(events):
            if kind != START:
                continue
            if name == P + "sldId":
                ids.append(attrs.get(R + "id", ""))
            elif name == P + "sldSz":
                size = _size(attrs, "cx", "cy")
                self.slide_size = size if size and size[0] * size[1] > 0 else DEFAULT_SLIDE_SIZE
            elif name == P + "notesSz":
                break
        return ids

    def _fail(self, unit: str, reason: str) -> None:
        self.failed.append({"unit": unit, "reason": reason})

    # A slide

    def _read_slide(self, number: int, relationship: Relationship | None) -> None:
        unit = f"slide {number}"
        if (
            relationship is None
            or not relationship.target
            or not self.package.has(relationship.target)
        ):
            self._fail_slide(number, "its relationship names no slide part")
            return
        part = relationship.target
        try:
            slide_relationships = self.package.relationships(part)
            slide = _Slide(number)
            self._shapes_of(part, slide)
            failure = self._picture_failure(slide, slide_relationships)
        except PartError as error:
            self._fail_slide(number, f"cannot be read: {error}")
            return
        only_ocr = slide.ocr_texts and not slide.title and not slide.items
        if failure:
            self._fail_slide(number, failure)
        elif only_ocr and any(kind in (CHART, DIAGRAM, OBJECT) for kind in slide.unread.counts):
            self._fail_slide(
                number,
                "its only text is what OCR read, and it holds what drawings show"
                f" ({slide.unread.describe()})",
            )
        elif slide.unread and not slide.title and not slide.items and not slide.ocr_texts:
            self._fail_slide(
                number, f"holds only what drawings show ({slide.unread.describe()}); it needs OCR"
            )
        elif slide.unread:
            self.unread_slides[number] = slide.unread
        notes = self._notes(slide_relationships, unit)
        self._emit(slide, notes, self._title_depth(slide, slide_relationships))

    def _title_depth(self, slide: _Slide, relationships: list[Relationship]) -> int:
        """The depth of the slide's title (or the one an untitled slide's blocks sit at): every
        slide title at one depth, but for what the slide's layout says."""
        role: str | None = ORDINARY_SLIDE
        if slide.title is not None:
            role = self._layout_role(relationships)
            if role is None:  # no layout to read: the slide's own title placeholder says
                role = TITLE_SLIDE if slide.title_type == "ctrTitle" else ORDINARY_SLIDE
        if role == TITLE_SLIDE:
            self.under_title, self.in_section = True, False
            return 1
        base = 2 if self.under_title else 1
        if role == SECTION_SLIDE:
            self.in_section = True
            return base
        return base + 1 if self.in_section else base

    def _layout_role(self, relationships: list[Relationship]) -> str | None:
        """What the slide's layout makes it (read once a layout), or None when it names none or
        it cannot be read."""
        layout = next((r.target for r in relationships if r.type == "slideLayout"), "")
        if not layout or not self.package.has(layout):
            return None
        if layout not in self.layout_roles:
            try:
                chunked = self.package.events(layout, chunk=FIRST_ELEMENTS_CHUNK)
                events = transitional_events(chunked)
                self.layout_roles[layout] = _layout_role(events)
            except PartError:
                self.layout_roles[layout] = None
        return self.layout_roles[layout]

    def _fail_slide(self, number: int, reason: str) -> None:
        self.failed_slides.add(number)
        self._fail(f"slide {number}", reason)

    def _shapes_of(self, part: str, slide: _Slide) -> None:
        events = transitional_events(self.package.events(part, budget=self.budget))
        for kind, name, attrs in events:
            if kind != START:
                continue
            if name == P + "sld":
                slide.hidden = attrs.get("show") in ("0", "false")
            elif name == P + "bg":
                if holds(events, DRAWING + "blip"):
                    slide.unread.add(IMAGE)  # a picture as the slide's own background
            elif name == P + "spTree":
                _ShapeTree(slide, self.budget).children(events, Place())

    def _picture_failure(self, slide: _Slide, relationships: list[Relationship]) -> str | None:
        """Why the slide's pictures make it a failed unit (OCR), if they do; the large pictures
        read with OCR on the way."""
        slide_area = self.slide_size[0] * self.slide_size[1]
        read = 0
        for picture in slide.pictures:
            size = picture.size
            if size is None and picture.placeholder is not None:
                try:
                    size = self._placeholder_size(picture.placeholder, relationships)
                except PartError as error:
                    return (
                        f"a picture takes its size from a placeholder that cannot be read: {error}"
                    )
            width, height = size or self.slide_size
            if width * height < OCR_SHARE * slide_area:
                slide.unread.add(IMAGE)
            elif picture.linked:
                return (
                    "a picture covering a fifth of the slide or more is linked rather than held"
                    " in the file; it needs OCR"
                )
            elif not self.ocr.enabled:
                return "a picture covers a fifth of the slide or more; it needs OCR (not run)"
            else:
                read += 1
                if read > MAX_IMAGES_A_PAGE:
                    return (
                        f"the slide shows more than {MAX_IMAGES_A_PAGE} pictures to read with OCR"
                    )
                why = self._read_picture(slide, picture, (width, height), relationships)
                if why:
                    return f"a picture covering a fifth of the slide or more is not read with OCR: {why}"
        return None

    def _read_picture(
        self,
        slide: _Slide,
        picture: _Picture,
        size: tuple[float, float],
        relationships: list[Relationship],
    ) -> str | None:
        """Read a large picture with OCR into the slide; why not, when it is not read."""
        part = next((r.target for r in relationships if r.id == picture.embed), "")
        if not part:
            return "the picture names no part the file holds"
        try:
            self.ocr.admit(part)
            if part in self.ocr.read_images:
                data = b""  # read before, on another slide: the reading is kept
            else:
                data = self.package.read_picture(part, MAX_PICTURE_BYTES)
            reading = self.ocr.read(
                part, EncodedImage(data, 0, 0), size[0] / EMU_PER_INCH, size[1] / EMU_PER_INCH
            )
        except (ImageUnread, PartError) as error:
            return str(error)
        lines: dict[int, list[str]] = {}
        for word in reading.words:
            if word.text.strip("|").strip():
                lines.setdefault(word.line, []).append(word.text)
        text = "\n".join(" ".join(words) for _, words in sorted(lines.items()))
        if text:
            slide.ocr_texts.append(text)
        if not self.ocr_slides or self.ocr_slides[-1] != slide.number:
            self.ocr_slides.append(slide.number)
        return None

    def _placeholder_size(
        self, placeholder: _Placeholder, relationships: list[Relationship]
    ) -> tuple[float, float] | None:
        """The size of the placeholder a picture fills: its layout's, then its master's."""
        layout = next((r.target for r in relationships if r.type == "slideLayout"), "")
        for part in (layout, self._master_of(layout)):
            if not part:
                continue
            sizes = self._sizes_in(part)
            for key in (f"idx {placeholder.idx}", f"type {placeholder.type}"):
                if key in sizes:
                    return sizes[key]
        return None

    def _master_of(self, layout: str) -> str:
        if not layout:
            return ""
        relationships = self.package.relationships(layout)
        return next((r.target for r in relationships if r.type == "slideMaster"), "")

    def _sizes_in(self, part: str) -> dict[str, tuple[float, float]]:
        """A layout's or master's placeholder sizes by "idx N" and "type T" (read once)."""
        if part not in self.placeholder_sizes:
            events = transitional_events(self.package.events(part))
            self.placeholder_sizes[part] = _placeholder_sizes(events)
        return self.placeholder_sizes[part]

    def _notes(self, relationships: list[Relationship], unit: str) -> str:
        part = next((r.target for r in relationships if r.type == "notesSlide"), "")
        if not part:
            return ""
        try:
            notes = _Slide(0)
            events = transitional_events(self.package.events(part, budget=self.budget))
            for kind, name, _ in events:
                if kind == START and name == P + "spTree":
                    _ShapeTree(notes, self.budget, body_only=True).children(events, Place())
        except PartError as error:
            self._fail(f"{unit} notes", f"cannot be read: {error}")
            return ""
        return "\n".join(text for _, text, _ in notes.items if text)

    def _emit(self, slide: _Slide, notes: str, depth: int) -> None:
        page = {"page_start": slide.number, "page_end": slide.number}
        attrs: dict[str, Any] = {}
        if slide.hidden:
            attrs["hidden"] = True
        if slide.number in self.unread_slides:
            attrs["images_unread"] = len(self.unread_slides[slide.number])
        if slide.title:
            self.blocks.heading(slide.title, depth, page, attrs)
        else:
            self.blocks.close(depth)
        for block_type, text, extra in slide.in_reading_order():
            if block_type == "heading":  # set apart in the slide's text: under its title
                self.blocks.heading(text, depth + 1, page, {**attrs, **extra})
            else:
                self.blocks.place(block_type, text, page, {**attrs, **extra})
        for text in slide.ocr_texts:
            self.blocks.place("paragraph", text, page, {**attrs, "ocr": True})
        if notes:
            self.blocks.close(depth + 1)  # the notes are the slide's, not its last heading's
            self.blocks.place("paragraph", notes, page, {**attrs, "notes": True})

    def _artifact(self, slides: int) -> Artifact:
        warnings = []
        attrs: dict[str, Any] = {}
        if self.unread_slides:
            total = UnreadKinds()
            for kinds in self.unread_slides.values():
                total.update(kinds)
            named = ", ".join(str(n) for n in sorted(self.unread_slides))
            slides_word = "slides" if len(self.unread_slides) > 1 else "slide"
            warnings.append(
                f"what drawings show is not read ({total.describe()}) on {slides_word} {named}"
            )
            attrs["images_unread"] = len(total)
        if self.ocr_slides:
            attrs["ocr_slides"] = self.ocr_slides
        artifact_coverage = coverage(
            "slides", slides, slides - len(self.failed_slides), self.failed
        )
        return build_artifact(
            "pptx",
            PARSER,
            PARSER_VERSION + version_suffix(self.ocr),
            self.blocks.blocks,
            artifact_coverage,
            attrs=attrs,
            warnings=warnings,
        )


# The shape tree


class _ShapeTree:
    """Reads a slide's shapes in order into the slide: text, tables, pictures, what is unread."""

    def __init__(self, slide: _Slide, budget: TextBudget, *, body_only: bool = False) -> None:
        self.slide = slide
        self.budget = budget
        self.body_only = body_only  # a notes slide: only its body placeholder's text

    def children(self, events: Iterator[Event], place: Place) -> None:
        for kind, name, _ in events:
            if kind == END:
                return
            if kind == START:
                self._one(name, events, place)

    def alternate_content(self, events: Iterator[Event], place: Place) -> None:
        """The first choice is read; when it shows nothing the reader knows (ink, an equation,
        a 3D model), the fallback's pictures are counted as what it shows, unread."""
        before = self._read_so_far()

        def fallback(chosen: bool) -> bool:
            if chosen and self._read_so_far() == before:
                pictures = _count(events, DRAWING + "blip")
                for _ in range(0 if self.body_only else pictures):
                    self.slide.unread.add(IMAGE)
            else:
                skip(events)
            return False

        alternate_content(events, lambda: self.children(events, place), fallback)

    def _read_so_far(self) -> tuple[int, int, int, str | None]:
        slide = self.slide
        return len(slide.items), len(slide.pictures), len(slide.unread), slide.title

    def group(self, events: Iterator[Event], place: Place) -> None:
        """A group's shapes in place; its transform places them, and scales the pictures."""
        inner = place
        for kind, name, _ in events:
            if kind == END:
                return
            if kind != START:
                continue
            if name == P + "grpSpPr":
                inner = _group_place(events, place)
            elif name == P + "nvGrpSpPr":
                skip(events)
            else:
                self._one(name, events, inner)

    def _one(self, name: str, events: Iterator[Event], place: Place) -> None:
        """One shape, its start just read."""
        if name == P + "sp":
            self.shape(events, place)
        elif name == P + "grpSp":
            self.group(events, place)
        elif name == P + "pic":
            self.picture(events, place.scale)
        elif name == P + "graphicFrame":
            self.frame(events, place)
        elif name == MC + "AlternateContent":
            self.alternate_content(events, place)
        else:
            skip(events)

    def shape(self, events: Iterator[Event], place: Place) -> None:
        placeholder: _Placeholder | None = None
        offset: tuple[float, float] | None = None
        extent: tuple[float, float] | None = None
        paragraphs: list[str] = []
        heads: list[bool] = []  # each paragraph: set apart as a heading (_Marks)
        bullets: list[bool] = []  # each paragraph: a bullet of its own (a:buChar, a:buAutoNum)
        marks = _Marks()
        parts: list[str] = []
        picture_fill = False
        depth = 1
        for kind, name, attrs in events:
            if kind == END:
                depth -= 1
                if name == DRAWING + "p":
                    paragraphs.append("".join(parts).strip())
                    heads.append(marks.heading())
                    bullets.append(marks.bulleted and not marks.no_bullet)
                    parts = []
                if depth == 0:
                    break
            elif kind == START:
                if name == DRAWING + "t":
                    text_run = text_of(events, self.budget)
                    parts.append(text_run)
                    marks.text(text_run)
                    continue
                depth += 1
                marks.start(name, attrs)
                if name == P + "ph":
                    placeholder = _Placeholder(attrs.get("type"), attrs.get("idx"))
                elif name == DRAWING + "br":
                    parts.append("\n")
                    self.budget.take("\n")
                elif name == DRAWING + "blipFill":
                    picture_fill = True
                elif name == DRAWING + "off" and depth == 4:  # p:sp/p:spPr/a:xfrm/a:off
                    offset = offset or _size(attrs, "x", "y")
                elif name == DRAWING + "ext" and depth == 4:  # (not an a:extLst's a:ext)
                    extent = extent or _size(attrs, "cx", "cy")
        text = "\n".join(p for p in paragraphs if p)
        box = place.box(offset, extent)
        kind_of = placeholder.type if placeholder else None
        if self.body_only:
            if kind_of == "body" and text:
                self.slide.add([("paragraph", text, {})], None)
            return
        if picture_fill:
            self.slide.unread.add(IMAGE)
        if not text:
            return
        if kind_of in TITLE_TYPES and self.slide.title is None:
            self.slide.title = one_line(text)
            self.slide.title_type = kind_of
        elif placeholder is not None and kind_of in BODY_TYPES:
            self.slide.add(_with_headings(paragraphs, heads, [True] * len(paragraphs)), box)
        elif kind_of not in TITLE_TYPES and (any(heads) or any(bullets)):
            self.slide.add(_with_headings(paragraphs, heads, bullets), box)
        else:
            self.slide.add([("paragraph", text, {})], box)

    def picture(self, events: Iterator[Event], scale: tuple[float, float]) -> None:
        placeholder: _Placeholder | None = None
        size: tuple[float, float] | None = None
        linked = False
        embed: str | None = None
        depth = 1
        for kind, name, attrs in events:
            if kind == END:
                depth -= 1
                if depth == 0:
                    break
            elif kind == START:
                depth += 1
                if name == P + "ph":
                    placeholder = _Placeholder(attrs.get("type"), attrs.get("idx"))
                elif name == DRAWING + "blip":
                    linked = bool(attrs.get(R + "link")) and not attrs.get(R + "embed")
                    embed = attrs.get(R + "embed") or None
                elif name == DRAWING + "ext" and size is None:
                    own = _size(attrs, "cx", "cy")
                    size = (own[0] * scale[0], own[1] * scale[1]) if own else None
        if not self.body_only:
            self.slide.pictures.append(_Picture(placeholder, size, linked, embed))

    def frame(self, events: Iterator[Event], place: Place) -> None:
        """A graphic frame: a table is read; a chart, a diagram or an object is counted."""
        depth = 1
        box: Box | None = None
        for kind, name, attrs in events:
            if kind == END:
                depth -= 1
                if depth == 0:
                    return
            elif kind == START and name == P + "xfrm":
                box = place.box(*_transform(events)[:2])
            elif kind == START and name == DRAWING + "graphicData":
                uri = attrs.get("uri", "")
                if uri.endswith(TABLE_URI_END):
                    self.table(events, box)
                else:
                    found = graphic_kind(uri)
                    if found and not self.body_only:
                        self.slide.unread.add(found)
                    skip(events)
            elif kind == START and name == DRAWING + "graphic":
                depth += 1
            elif kind == START:
                skip(events)

    def table(self, events: Iterator[Event], box: Box | None) -> None:
        rows: list[list[str]] = []
        cell_parts: list[str] = []
        depth = 1
        for kind, name, _ in events:
            if kind == END:
                depth -= 1
                if name == DRAWING + "tc":
                    rows[-1].append(one_line(" ".join(cell_parts)))
                elif name == DRAWING + "p":
                    cell_parts.append(" ")
                if depth == 0:
                    break
            elif kind == START:
                if name == DRAWING + "t":
                    cell_parts.append(text_of(events, self.budget))
                    continue
                depth += 1
                if name == DRAWING + "tr":
                    rows.append([])
                elif name == DRAWING + "tc":
                    cell_parts = []
                elif name == DRAWING + "blipFill" and not self.body_only:
                    self.slide.unread.add(IMAGE)  # a picture-filled table cell
        grid = [row for row in rows if any(row)]
        width = max((len(row) for row in grid), default=0)
        grid = [row + [""] * (width - len(row)) for row in grid]
        if grid and not self.body_only:
            table = {"table": {"rows": len(grid), "columns": width}}
            self.slide.add([("table", table_text(grid), table)], box)


class _Marks:
    """What sets a shape's paragraph apart as a heading inside the slide's text, as converters
    write one (pandoc a heading under the slide's level): its bullet turned off (a:buNone), at
    the outline's first level (a:pPr lvl 0), every run of its text bold. Bold alone, or a size,
    is no heading."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.no_bullet = False
        self.bulleted = False  # a bullet of its own: a character, a number or a picture
        self.nested = False
        self.bold_text = False
        self.plain_text = False
        self.run_bold = False

    def start(self, name: str, attrs: dict[str, str]) -> None:
        if name == DRAWING + "p":
            self.reset()
        elif name == DRAWING + "pPr":
            self.nested = attrs.get("lvl", "0") not in ("0", "")
        elif name == DRAWING + "buNone":
            self.no_bullet = True
        elif name in BULLETS:
            self.bulleted = True
        elif name in (DRAWING + "r", DRAWING + "fld"):
            self.run_bold = False
        elif name == DRAWING + "rPr":
            self.run_bold = attrs.get("b") in ("1", "true")

    def text(self, text: str) -> None:
        if text.strip():
            if self.run_bold:
                self.bold_text = True
            else:
                self.plain_text = True

    def heading(self) -> bool:
        return self.no_bullet and not self.nested and self.bold_text and not self.plain_text


MAX_HEADING_WORDS = 12
BULLETS = frozenset(DRAWING + name for name in ("buChar", "buAutoNum", "buBlip"))


def _with_headings(
    paragraphs: list[str], heads: list[bool], alone: list[bool]
) -> list[tuple[str, str, dict[str, Any]]]:
    """A shape's paragraphs as blocks: each heading alone, each paragraph `alone` says (a bullet)
    a block of its own, and the other paragraphs between them one block."""
    items: list[tuple[str, str, dict[str, Any]]] = []
    run: list[str] = []
    for text, head, single in zip(paragraphs, heads, alone, strict=True):
        if not text:
            continue
        # A bold line ending in a colon introduces what follows (Key benefits:), and one ending
        # in a full stop is a sentence: neither is a heading.
        if head and len(text.split()) <= MAX_HEADING_WORDS and not text.endswith((":", ".")):
            if run:
                items.append(("paragraph", "\n".join(run), {}))
                run = []
            items.append(("heading", one_line(text), {}))
        elif single:
            if run:
                items.append(("paragraph", "\n".join(run), {}))
                run = []
            items.append(("paragraph", text, {}))
        else:
            run.append(text)
    if run:
        items.append(("paragraph", "\n".join(run), {}))
    return items


def _layout_role(events: Iterator[Event]) -> str:
    """A layout's role: a title slide's when its type is title, a section header's when it is
    secHead; a layout of no type (or a custom one) is a title slide's when its title placeholder is
    a centred title. Read up to its title placeholder at most."""
    for kind, name, attrs in events:
        if kind != START:
            continue
        if name == P + "sldLayout":
            layout_type = attrs.get("type", "cust")
            if layout_type != "cust":
                return (
                    layout_type if layout_type in (TITLE_SLIDE, SECTION_SLIDE) else ORDINARY_SLIDE
                )
        elif name == P + "ph" and attrs.get("type") in TITLE_TYPES:
            return TITLE_SLIDE if attrs.get("type") == "ctrTitle" else ORDINARY_SLIDE
    return ORDINARY_SLIDE


def _count(events: Iterator[Event], wanted: str) -> int:
    """How many `wanted` elements the element just started holds (consumed to its end)."""
    found = 0
    depth = 1
    for kind, name, _ in events:
        if kind == START:
            depth += 1
            found += name == wanted
        elif kind == END:
            depth -= 1
            if depth == 0:
                break
    return found


def _size(attrs: dict[str, str], x: str, y: str) -> tuple[float, float] | None:
    try:
        return float(int(attrs[x])), float(int(attrs[y]))
    except (KeyError, ValueError):
        return None


Point = tuple[float, float]


def _transform(
    events: Iterator[Event],
) -> tuple[Point | None, Point | None, Point | None, Point | None]:
    """An a:xfrm's (or p:xfrm's) offset, extent, child offset and child extent, those it states
    (consumed to its end)."""
    offset = extent = child_offset = child_extent = None
    depth = 1
    for kind, name, attrs in events:
        if kind == START:
            depth += 1
            if name == DRAWING + "off":
                offset = _size(attrs, "x", "y")
            elif name == DRAWING + "ext":
                extent = _size(attrs, "cx", "cy")
            elif name == DRAWING + "chOff":
                child_offset = _size(attrs, "x", "y")
            elif name == DRAWING + "chExt":
                child_extent = _size(attrs, "cx", "cy")
        elif kind == END:
            depth -= 1
            if depth == 0:
                break
    return offset, extent, child_offset, child_extent


def _group_place(events: Iterator[Event], place: Place) -> Place:
    """The frame a group's shapes are in: its children's extent and offset mapped onto its own,
    within the frame it sits in (its group properties, consumed to their end)."""
    found: tuple[Point | None, Point | None, Point | None, Point | None] = (None,) * 4
    depth = 1
    for kind, name, _ in events:
        if kind == START:
            if name == DRAWING + "xfrm" and depth == 1:
                found = _transform(events)
                continue
            depth += 1
        elif kind == END:
            depth -= 1
            if depth == 0:
                break
    return place.inner(*found)


def _placeholder_sizes(events: Iterator[Event]) -> dict[str, tuple[float, float]]:
    """Each placeholder's size in a layout or master, by "idx N" and by "type T"."""
    sizes: dict[str, tuple[float, float]] = {}
    placeholder: _Placeholder | None = None
    size: tuple[float, float] | None = None
    for kind, name, attrs in events:
        if kind == START:
            if name in (P + "sp", P + "pic"):
                placeholder, size = None, None
            elif name == P + "ph":
                placeholder = _Placeholder(attrs.get("type"), attrs.get("idx"))
            elif name == DRAWING + "ext" and size is None:
                size = _size(attrs, "cx", "cy")
        elif kind == END and name in (P + "sp", P + "pic") and placeholder and size:
            if placeholder.idx is not None:
                sizes.setdefault(f"idx {placeholder.idx}", size)
            sizes.setdefault(f"type {placeholder.type or 'obj'}", size)
    return sizes
