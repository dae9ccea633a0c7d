"""PDF: each page read as it is laid out, from where pypdf places each run of text and the lines
the page draws, never by rasterising (the parts are this package's other modules).

Per page: the runs (content.py) turned upright, made lines (lines.py), ruled and borderless
tables (grids.py), two columns split at their gutter (page.py), then paragraphs, list items, code
and headings (blocks.py). Per document: page furniture (running headers and
footers, page numbers) left out, the borderless tables read once it is known; the outline's
entries as the headings when it has two or more; a table that goes on at the top of the next page
in the same columns joined into one, the repeat of its header dropped (structure.py); each
table typed as a CSV's is (tables[], its rows as `column: value` blocks), a title set in its frame
the paragraph before them (its caption), a header of several rows naming each column by its cells
top to bottom (header_rows counts them; the entry's rows are the data, as a workbook's).

Text layer. Two runs the geometry sets together are parted by pypdf's extract_text() of the page
(read only for a page that has such a pair). The 99.8% check counts the letters and digits of the
runs the page's content shows, in the order it shows them: the same text the layout starts from,
so the check catches a layout step that drops text, and costs no second parse.

Safety nets: a page whose laid-out reading holds less than 99.8% of those letters and digits,
more than 5,000 lines, or whose layout cannot be read, is read as its text layer (its runs in
content order, split at blank lines), with a warning naming it and why. A page pypdf cannot read
is a failed unit, not the file.

OCR (scanned.py, formats/ocr.py). A page with no text that draws an image object is read with
OCR: its words placed on the page as runs, its painted-out strokes as its rules, then read as any
page is (headings at a step of 8%), its blocks marked attrs.ocr. A page with text that draws a
picture covering a fifth of it or more (its own text not filling a tenth of it) has the picture
read with OCR, each of its lines a paragraph block after the page's text (attrs.ocr). The pages
read with OCR are attrs.ocr_pages, and parser_version names Tesseract's version. Without OCR
(LOOM_EXTRACTOR_OCR=off, or no Tesseract), or for an image OCR cannot read (named why: its size,
JBIG2, the budgets of images a file and a page, its time), such a page is a failed unit, or
partial when it has text of its own.
"""

from __future__ import annotations

import io
import platform
import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

import pypdf

from extractor_sandbox.artifact import BlockBuilder, build_artifact, coverage
from extractor_sandbox.contract import Artifact
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.formats.ocr import MAX_IMAGES_A_PAGE, FileOcr, ImageUnread, version_suffix
from extractor_sandbox.formats.pdf.blocks import Block, assign_levels, measures, page_blocks
from extractor_sandbox.formats.pdf.content import Drawing, FontCache, Picture, read_drawing
from extractor_sandbox.formats.pdf.lines import Line, Segment, TextLayer
from extractor_sandbox.formats.pdf.page import (
    LayoutUnreadable,
    PageReading,
    read_page,
    with_tables,
)
from extractor_sandbox.formats.pdf.scanned import line_texts, placed_runs, read_picture
from extractor_sandbox.formats.pdf.structure import apply_outline, join_tables
from extractor_sandbox.formats.tables import (
    Budget,
    Cell,
    fit_names,
    layout_rows,
    string_cell,
    table_entry,
    typed_cell,
    unique_names,
)

PARSER = "loom-pdf"
PARSER_VERSION = f"5+pypdf{pypdf.__version__}+python{platform.python_version()}"

LETTER_FLOOR = 0.998
FURNITURE_BAND = 0.1
PICTURE_SHARE = 0.2  # a picture covering a fifth of the page needs OCR
MAX_FURNITURE_KINDS = 200
PAGE_NUMBER = re.compile(
    r"^(?:page\s*)?[-–—]?\s*(?:\d{1,4}|[ivxlc]{1,6})\s*[-–—]?(?:\s*(?:of|/)\s*\d{1,4})?$", re.I
)


def extract_pdf(
    data: bytes, options: Mapping[str, str] | None = None, *, name: str = ""
) -> Artifact:
    reader = _open(data)
    try:
        count = len(reader.pages)
    except Exception as error:
        raise ExtractError("corrupt", f"the page tree cannot be read: {error}") from None
    doc = _Document(reader, count, name)
    doc.read_pages()
    return doc.artifact()


def _open(data: bytes) -> pypdf.PdfReader:
    try:
        reader = pypdf.PdfReader(io.BytesIO(data), strict=False)
    except Exception as error:
        raise ExtractError("corrupt", f"the PDF cannot be opened: {error}") from None
    if reader.is_encrypted:
        try:
            opened = bool(reader.decrypt(""))
        except Exception:
            opened = False
        if not opened:
            raise ExtractError("unsupported_format", "the PDF opens only with a password")
    return reader


class _Document:
    def __init__(self, reader: pypdf.PdfReader, count: int, name: str) -> None:
        self.reader = reader
        self.count = count
        self.name = name
        self.readings: dict[int, PageReading] = {}
        self.layer_pages: dict[int, str] = {}  # pages read as their text layer
        self.failed: list[dict[str, str]] = []
        self.failed_pages: set[int] = set()
        self.warnings: list[str] = []
        self.images_unread: list[int] = []
        self.unmapped_pages: list[int] = []
        self.furniture: list[dict[str, Any]] = []
        self.fonts = FontCache()
        self.ocr = FileOcr()
        self.scanned_pages: set[int] = set()  # pages with no text, read with OCR
        self.ocr_lines: dict[int, list[str]] = {}  # a large picture's lines on a page of text

    # Pages

    def read_pages(self) -> None:
        for number in range(1, self.count + 1):
            try:
                page = self.reader.pages[number - 1]
                drawing = read_drawing(page, self.reader, self.fonts)
            except Exception as error:
                self._fail(number, f"pypdf cannot read the page: {_short(error)}")
                continue
            if drawing.unmapped:
                self.unmapped_pages.append(number)
            if not self._pictures(number, drawing):
                continue
            try:
                if drawing.runs_cut:
                    raise LayoutUnreadable("it shows more text runs than the reader collects")
                layer = None if number in self.scanned_pages else TextLayer(page.extract_text)
                reading = read_page(number, drawing, layer)
                why = _short_of_layer(reading)
                if why:
                    raise LayoutUnreadable(why)
            except LayoutUnreadable as error:
                self._as_layer(number, drawing, str(error), page)
                continue
            except Exception as error:  # a layout the reader gets wrong never drops text
                self._as_layer(
                    number, drawing, f"its layout cannot be read ({_short(error)})", page
                )
                continue
            self.readings[number] = reading

    def _fail(self, number: int, reason: str) -> None:
        self.failed.append({"unit": f"page {number}", "reason": reason})
        self.failed_pages.add(number)

    def _pictures(self, number: int, drawing: Drawing) -> bool:
        """Whether the page has text to read; a picture's text it cannot read is reported."""
        has_text = any(r.text.strip() for r in drawing.runs)
        pictures = [p for p in drawing.pictures if p.x1 - p.x0 >= 1 and p.y1 - p.y0 >= 1]
        if not has_text:
            drawn = [p for p in pictures if not p.inline]
            if drawn and self.ocr.enabled and drawing.problems:
                # what it draws is not all known: a page with no text in that state fails
                self._fail(number, f"the page {drawing.problems[0]}, and has no text of its own")
                return False
            if drawn and self.ocr.enabled:
                return self._read_scanned(number, drawing, drawn, len(drawn) < len(pictures))
            if pictures:
                inline = all(p.inline for p in pictures)
                self._fail(
                    number,
                    "the page draws an inline image, which is not read"
                    if inline
                    else "the page has no text and draws an image: its text needs OCR",
                )
            elif drawing.problems:
                self._fail(number, f"the page {drawing.problems[0]}")
            return False
        page_area = max(drawing.width * drawing.height, 1.0)
        large = [
            p for p in pictures if p.area >= PICTURE_SHARE * page_area and not _filled(p, drawing)
        ]
        if large and self.ocr.enabled:
            self._read_large(number, [p for p in large if not p.inline])
            if any(p.inline for p in large):
                self._fail(number, "the page draws an inline image, which is not read")
        elif large:
            self._fail(number, "a picture covering a fifth of the page or more: its text needs OCR")
        elif pictures:
            self.images_unread.append(number)
        if drawing.problems and number not in self.failed_pages:
            self._fail(number, f"the page {drawing.problems[0]}, and may draw a picture")
        return True

    def _read_scanned(
        self, number: int, drawing: Drawing, drawn: list[Picture], inline: bool
    ) -> bool:
        """A page with no text read with OCR: its words become its runs; False when it fails."""
        if len(drawn) > MAX_IMAGES_A_PAGE:
            self._fail(
                number, f"the page draws more than {MAX_IMAGES_A_PAGE} images to read with OCR"
            )
            return False
        runs: list[Any] = []
        rules: list[Any] = []
        order = 1  # each word's place in the page's text layer, across its images
        for picture in drawn:
            assert picture.matrix is not None
            try:
                reading = read_picture(self.ocr, picture)
            except ImageUnread as error:
                self._fail(
                    number, f"the page has no text and its image is not read with OCR: {error}"
                )
                return False
            words, strokes = placed_runs(reading, picture.matrix, order)
            order += len(reading.words)
            runs.extend(words)
            rules.extend(strokes)
        if not runs:
            # never read as empty: a page that shows only a picture OCR finds no words in
            self._fail(
                number,
                "the page has no text and OCR read no words in its image: its text needs OCR",
            )
            return False
        drawing.runs = runs
        drawing.rules = drawing.rules + rules
        self.scanned_pages.add(number)
        if inline:
            self._fail(number, "the page draws an inline image beside the ones OCR read, not read")
        return True

    def _read_large(self, number: int, large: list[Picture]) -> None:
        """A page of text's large pictures read with OCR: their lines follow the page's text."""
        for picture in large[:MAX_IMAGES_A_PAGE]:
            try:
                reading = read_picture(self.ocr, picture)
            except ImageUnread as error:
                self._fail(
                    number,
                    f"a picture covering a fifth of the page or more is not read with OCR: {error}",
                )
                continue
            self.ocr_lines.setdefault(number, []).extend(line_texts(reading))
        if len(large) > MAX_IMAGES_A_PAGE:
            self._fail(
                number, f"the page draws more than {MAX_IMAGES_A_PAGE} images to read with OCR"
            )

    def _as_layer(self, number: int, drawing: Drawing, why: str, page: Any) -> None:
        self.warnings.append(f"page {number} is read as its text layer: {why}")
        if not drawing.runs_cut:
            self.layer_pages[number] = _layer_text(drawing)
            return
        # the runs collected stop at the bound: the whole text layer is pypdf's
        try:
            self.layer_pages[number] = page.extract_text()
        except Exception as error:
            self.layer_pages[number] = _layer_text(drawing)
            self._fail(number, f"its text past the first runs cannot be read: {_short(error)}")

    # The document

    def artifact(self) -> Artifact:
        self._drop_furniture()
        pages = [self.readings[n].items for n in sorted(self.readings)]
        m = measures(pages, [n in self.scanned_pages for n in sorted(self.readings)])
        blocks: list[Block] = []
        for number in range(1, self.count + 1):
            scanned = number in self.scanned_pages
            if number in self.readings:
                read = page_blocks(number, self.readings[number].items, m, ocr=scanned)
                blocks.extend(_marked_ocr(read) if scanned else read)
            elif number in self.layer_pages:
                read = layer_blocks(number, self.layer_pages[number])
                blocks.extend(_marked_ocr(read) if scanned else read)
            for text in self.ocr_lines.get(number, []):
                blocks.extend(_marked_ocr(layer_blocks(number, text)))
        outline = self._outline()
        # An outline of one entry names the document, not its sections (an excerpt keeps its
        # title's bookmark): the headings then come from the page's styles.
        if len(outline) >= 2:
            blocks = apply_outline(blocks, outline)
        else:
            assign_levels(blocks)
        blocks = join_tables(blocks)
        return self._emit(blocks)

    def _outline(self) -> list[tuple[str, int, int]]:
        """(title, level, page) of each outline entry, in order."""
        entries: list[tuple[str, int, int]] = []

        def walk(items: Any, level: int, depth: int) -> None:
            if depth > 32 or len(entries) > 10_000:
                return
            for item in items:
                if isinstance(item, list):
                    walk(item, level + 1, depth + 1)
                    continue
                title = str(getattr(item, "title", "") or "").strip()
                try:
                    page = self.reader.get_destination_page_number(item)
                except Exception:
                    page = None
                if title:
                    entries.append((title, level, (page + 1) if page is not None else 0))

        try:
            walk(self.reader.outline, 1, 0)
        except Exception:
            return []
        return entries

    def _drop_furniture(self) -> None:
        """Running headers and footers and page numbers are left out of the blocks; the
        borderless tables are read then, so a table keeps a candidate only as its own row."""
        candidates: dict[tuple[str, str], list[tuple[int, str]]] = {}
        numbers: list[tuple[int, str]] = []
        for number, reading in self.readings.items():
            for item in reading.items:
                line = item.line
                if line is None or item.orientation:
                    continue
                zone = _zone(line, reading)
                if not zone:
                    continue
                text = line.text.strip()
                if PAGE_NUMBER.match(text):
                    numbers.append((number, text))
                elif any(c.isalpha() for c in text):
                    candidates.setdefault((zone, _furniture_key(text)), []).append((number, text))
        pages_read = max(len(self.readings), 1)
        furniture: set[tuple[str, str]] = set()
        for kind, found in candidates.items():
            on = {n for n, _ in found}
            if len(on) >= 2 and len(on) * 5 >= 2 * pages_read:
                furniture.add(kind)
        # each kind left out: its first text and the pages it is left out on
        left_out: dict[tuple[str, str], tuple[str, set[int]]] = {}
        for number, reading in sorted(self.readings.items()):

            def line_kind(line: Line, reading: PageReading = reading) -> str | None:
                zone = _zone(line, reading)
                if not zone:
                    return None
                text = line.text.strip()
                if PAGE_NUMBER.match(text):
                    return "number"
                return "furniture" if (zone, _furniture_key(text)) in furniture else None

            dropped: list[Line] = []
            reading.items = with_tables(reading.items, line_kind, dropped, reading.charts)
            for line in dropped:
                what = line_kind(line)
                if what:
                    text = line.text.strip()
                    key = (
                        ("number", "")
                        if what == "number"
                        else (_zone(line, reading), _furniture_key(text))
                    )
                    left_out.setdefault(key, (text, set()))[1].add(number)
        for text, pages in list(left_out.values())[:MAX_FURNITURE_KINDS]:
            self.furniture.append({"text": text, "pages": len(pages)})
        if self.furniture:
            self.warnings.append(
                f"page furniture left out: {len(left_out)} kinds (attrs.furniture)"
            )

    def _emit(self, blocks: list[Block]) -> Artifact:
        builder = BlockBuilder()
        out = builder.blocks
        tables: list[dict[str, Any]] = []
        budget = Budget()
        lost: list[str] = []
        for block in blocks:
            if block.kind == "heading":
                builder.close(block.depth)
            if block.kind == "table":
                assert block.table is not None
                if block.table.title:  # the table's caption, the paragraph its rows follow
                    where = {"page_start": block.page, "page_end": block.page}
                    builder.place("paragraph", block.table.title, where, {})
                path, parent = builder.section
                failed = self._emit_table(block, len(tables), budget, out, tables, path, parent)
                if failed:
                    self.failed.extend(failed)
                    if "tables" not in lost:
                        lost.append("tables")
                continue
            if not block.text.strip():
                continue
            where = {"page_start": block.page, "page_end": block.last_page}
            if block.kind == "heading":
                builder.heading(block.text, block.depth, where, block.attrs)
            else:
                builder.place(block.kind, block.text, where, block.attrs)
        attrs: dict[str, Any] = {"pages": self.count}
        ocr_pages = sorted(self.scanned_pages | set(self.ocr_lines))
        if ocr_pages:
            attrs["ocr_pages"] = ocr_pages
        if self.furniture:
            attrs["furniture"] = self.furniture
        if self.images_unread:
            attrs["images_unread"] = self.images_unread
            self.warnings.append(
                "pages "
                + ", ".join(map(str, self.images_unread[:50]))
                + " draw pictures that are not read: text drawn only inside them is not extracted"
            )
        if self.layer_pages:
            attrs["text_layer_pages"] = sorted(self.layer_pages)
        if self.unmapped_pages:
            self.warnings.append(
                "characters with no Unicode mapping read as U+FFFD on pages "
                + ", ".join(map(str, self.unmapped_pages[:50]))
            )
        whole_failures = {
            n for n in self.failed_pages if n not in self.readings and n not in self.layer_pages
        }
        artifact = build_artifact(
            "pdf",
            PARSER,
            PARSER_VERSION + version_suffix(self.ocr),
            out,
            coverage("pages", self.count, self.count - len(whole_failures), self.failed, lost),
            attrs=attrs,
            warnings=self.warnings,
        )
        artifact["tables"] = tables
        return artifact

    def _emit_table(
        self,
        block: Block,
        index: int,
        budget: Budget,
        out: list[dict[str, Any]],
        tables: list[dict[str, Any]],
        path: list[str],
        parent: str | None,
    ) -> list[dict[str, str]]:
        table = block.table
        assert table is not None
        table_id = f"t{index}"
        # a header of several rows (a group's label over its columns' own names) names each
        # column by its cells top to bottom; the entry's rows are its data, as a workbook's are
        # (header_rows counts the header's rows, which the locator's rows include)
        heading = table.header_rows
        header = table.names if table.names is not None else table.rows[0]
        body = table.rows[heading:]
        width = len(header)
        names, failed = fit_names(header, f"{table_id} header")
        names = unique_names(names)
        pages = table.row_pages or [block.page] * len(table.rows)
        kept: list[list[Cell | None]] = []
        for row in body:
            cells = [page_cell(text) for text in row] + [None] * (width - len(row))
            reason = budget.admit_row(cells[:width], len(kept))
            if reason is not None:
                first = len(kept) + heading + 1
                failed.append({"unit": f"{table_id} rows {first}-", "reason": reason})
                break
            kept.append(cells[:width])
        numbers = list(range(heading + 1, len(kept) + heading + 1))
        layout = layout_rows(
            table_id,
            names,
            kept,
            numbers,
            budget,
            header_rows=heading,
            first_block=len(out),
            section_path=path,
            parent=parent,
        )
        failed += layout.failed
        kept = kept[: layout.rows_laid]
        last = heading + len(kept)
        for row_block in layout.blocks:
            loc = row_block["locator"]
            first_page = pages[min(loc["row_start"], len(pages)) - 1]
            last_page = pages[min(loc["row_end"], len(pages)) - 1]
            loc["page_start"], loc["page_end"] = first_page, last_page
            if block.attrs.get("ocr"):
                row_block.setdefault("attrs", {})["ocr"] = True
            out.append(row_block)
        tables.append(
            table_entry(
                table_id,
                f"{self.name or 'document'} page {block.page} table {index + 1}",
                names,
                kept,
                header_rows=heading,
                locator={
                    "page_start": pages[0],
                    "page_end": pages[min(last, len(pages)) - 1],
                    "row_start": 1,
                    "row_end": last,
                },
                attrs={"ruled": table.ruled},
            )
        )
        return failed


def _marked_ocr(blocks: list[Block]) -> list[Block]:
    for block in blocks:
        block.attrs["ocr"] = True
    return blocks


def _zone(line: Line, reading: PageReading) -> str:
    """The band of the page a line is in: its top or bottom tenth, or neither."""
    band = FURNITURE_BAND * reading.height
    if line.y >= reading.height - band:
        return "top"
    return "bottom" if line.y <= band else ""


def _furniture_key(text: str) -> str:
    """A running header's text, digits aside (one kind for a footer whose number changes)."""
    return " ".join(re.sub(r"\d+", "", text).lower().split())


def page_cell(text: str) -> Cell | None:
    """A cell typed as a CSV field is only when its value reads back as the page shows it."""
    text = text.strip()
    if not text:
        return None
    cell = typed_cell(text)
    if cell is None:
        return None
    if cell.text != text:
        return string_cell(text)
    return cell


def _short(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}"
    return text if len(text) <= 200 else text[:197] + "..."


def _alnum(text: str) -> Counter[str]:
    return Counter(c for c in text.casefold() if c.isalnum())


def _short_of_layer(reading: PageReading) -> str:
    """Why the laid-out reading cannot stand for the page: it drops its text layer's letters."""
    layer = _alnum("".join(text for text, _ in reading.layer_lines))
    total = sum(layer.values())
    if not total:
        return ""
    parts: list[str] = []
    for item in reading.items:
        if item.line is not None:
            parts.append(item.line.text)
        elif item.table is not None:
            parts.append(item.table.title)
            parts.extend(cell for row in item.table.rows for cell in row)
    held = sum((layer & _alnum("".join(parts))).values())
    if held < LETTER_FLOOR * total:
        return (
            f"its laid-out reading holds {held / total:.1%} of the letters and digits of its "
            "text layer"
        )
    return ""


def layer_blocks(number: int, text: str) -> list[Block]:
    """A page read as its text layer: its text split at blank lines, each paragraph keeping its
    lines so that an outline's heading can still take the line that holds its title."""
    blocks = []
    for part in re.split(r"\n\s*\n", text):
        rows = [" ".join(row.split()) for row in part.splitlines() if row.strip()]
        if rows:
            lines = [
                Line([Segment(row, 0.0, 0.0, 0.0, 0.0, False, False)], 0.0, 0.0) for row in rows
            ]
            blocks.append(Block("paragraph", number, lines, text=" ".join(rows)))
    return blocks


def _layer_text(drawing: Drawing) -> str:
    """The page's text as its content shows it: a new line where the baseline moves, a blank line
    where it moves by more than two lines."""
    out: list[str] = []
    prev = None
    for run in sorted(drawing.runs, key=lambda r: r.order):
        if prev is not None:
            moved = abs(run.y0 - prev.y0)
            if moved > 2.5 * max(prev.size, run.size):
                out.append("\n\n")
            elif moved > 0.3 * max(prev.size, run.size):
                out.append("\n")
            elif run.x0 - prev.x1 > 0.15 * run.size:
                out.append(" ")
        out.append(run.text)
        prev = run
    return "".join(out)


def _filled(picture: Any, drawing: Drawing) -> bool:
    """The page's own text fills a tenth of the picture (a scan's text layer over its image)."""
    area = 0.0
    for run in drawing.runs:
        x0, x1 = sorted((run.x0, run.x1))
        if picture.x0 <= x0 and x1 <= picture.x1 and picture.y0 <= run.y0 <= picture.y1:
            area += (x1 - x0) * run.size
    return area >= 0.1 * picture.area
