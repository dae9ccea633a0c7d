"""Generated PDFs with exact gold, for the PDF layout reader's bench and its gate.

Each fixture is drawn with reportlab's canvas, which places every line where this script says, so
the gold (docparse-gold/1: blocks with type, text, level and page; tables with rows and page) is
written from the same calls that draw the page. Run it to rewrite bench/docparse/pdf/:

    .venv/bin/python bench/docparse/generate_pdf.py
"""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

from reportlab.lib.pagesizes import A4
from reportlab.pdfgen import canvas

OUT = Path(__file__).resolve().parent / "pdf"
WIDTH, HEIGHT = A4
MARGIN = 72.0
BODY = 10.0
LEADING = 13.0

WORDS = (
    "the reader places every run of text where the page draws it and joins the runs on one "
    "baseline into a line before it looks for columns tables and paragraphs so that the order "
    "of the blocks follows the order a person reads the page in"
).split()


def sentence(seed: int, count: int) -> str:
    words = [WORDS[(seed * 7 + k * 3) % len(WORDS)] for k in range(count)]
    return (" ".join(words)).capitalize() + "."


class Doc:
    """A canvas that records the gold of what it draws."""

    def __init__(self, name: str, *, header: str | None = None, numbers: bool = False) -> None:
        self.name = name
        self.buffer = io.BytesIO()
        self.c = canvas.Canvas(self.buffer, pagesize=A4, invariant=1)
        self.c.setTitle(name)
        self.page = 1
        self.scanned_pages: list[int] = []
        self.y = HEIGHT - MARGIN
        self.header = header
        self.numbers = numbers
        self.blocks: list[dict[str, Any]] = []
        self.tables: list[dict[str, Any]] = []
        self.left = MARGIN
        self.right = WIDTH - MARGIN
        self._furniture()

    def _furniture(self) -> None:
        if self.header:
            self.c.setFont("Helvetica", 8)
            self.c.drawString(MARGIN, HEIGHT - 36, f"{self.header} - revision 4")
        if self.numbers:
            self.c.setFont("Helvetica", 8)
            self.c.drawCentredString(WIDTH / 2, 30, str(self.page))

    def new_page(self) -> None:
        self.c.showPage()
        self.page += 1
        self.y = HEIGHT - MARGIN
        self._furniture()

    def need(self, height: float) -> None:
        if self.y - height < MARGIN:
            self.new_page()

    def heading(self, text: str, level: int, size: float, *, outline: bool = False) -> None:
        self.need(size * 3)
        self.y -= size * 0.8
        self.c.setFont("Helvetica-Bold", size)
        self.c.drawString(self.left, self.y, text)
        if outline:
            key = f"h{len(self.blocks)}"
            self.c.bookmarkPage(key)
            self.c.addOutlineEntry(text, key, level=level - 1)
        self.blocks.append({"type": "heading", "text": text, "level": level, "page": self.page})
        self.y -= size * 1.2

    def paragraph(self, text: str, *, width: float | None = None, font: str = "Helvetica") -> None:
        width = width or (self.right - self.left)
        lines = wrap(text, font, BODY, width)
        self.need(LEADING * min(len(lines), 3))
        self.c.setFont(font, BODY)
        for line in lines:
            if self.y < MARGIN:
                self.new_page()
                self.c.setFont(font, BODY)
            self.c.drawString(self.left, self.y, line)
            self.y -= LEADING
        self.blocks.append({"type": "paragraph", "text": text, "page": self.page})
        self.y -= LEADING * 0.8

    def item(self, marker: str, text: str) -> None:
        self.need(LEADING * 2)
        self.c.setFont("Helvetica", BODY)
        self.c.drawString(self.left + 6, self.y, marker)
        lines = wrap(text, "Helvetica", BODY, self.right - self.left - 24)
        for line in lines:
            self.c.drawString(self.left + 24, self.y, line)
            self.y -= LEADING
        self.blocks.append({"type": "list_item", "text": f"{text}", "page": self.page})
        self.y -= 2

    def code(self, lines: list[str]) -> None:
        self.need(LEADING * len(lines))
        self.c.setFont("Courier", 9)
        for line in lines:
            self.c.drawString(self.left + 12, self.y, line)
            self.y -= 11
        self.blocks.append({"type": "code", "text": "\n".join(lines), "page": self.page})
        self.y -= LEADING

    def table(
        self, rows: list[list[str]], widths: list[float], *, ruled: bool, repeat_header: bool = True
    ) -> None:
        """A table, continued on the next page (its header repeated) when it does not fit."""
        row_height = 16.0
        pages: list[tuple[int, list[list[str]]]] = []
        header, body = rows[0], rows[1:]
        chunk = [header]
        self.need(row_height * 3)
        top = self.y
        for row in body:
            if self.y - row_height * (len(chunk) + 1) < MARGIN:
                self._draw_table(chunk, widths, top, ruled)
                pages.append((self.page, chunk))
                self.new_page()
                top = self.y
                chunk = [header] if repeat_header else []
            chunk.append(row)
        self._draw_table(chunk, widths, top, ruled)
        pages.append((self.page, chunk))
        self.y = top - row_height * len(chunk) - LEADING
        self.tables.append(
            {"rows": rows, "header_rows": 1, "page": pages[0][0], "after_block": len(self.blocks)}
        )

    def _draw_table(
        self, rows: list[list[str]], widths: list[float], top: float, ruled: bool
    ) -> None:
        row_height = 16.0
        xs = [self.left]
        for w in widths:
            xs.append(xs[-1] + w)
        c = self.c
        for r, row in enumerate(rows):
            baseline = top - row_height * r - 11.5
            c.setFont("Helvetica-Bold" if r == 0 else "Helvetica", 9)
            for k, cell in enumerate(row):
                c.drawString(xs[k] + 4, baseline, cell)
        if ruled:
            c.setLineWidth(0.6)
            bottom = top - row_height * len(rows)
            for r in range(len(rows) + 1):
                y = top - row_height * r
                c.line(xs[0], y, xs[-1], y)
            for x in xs:
                c.line(x, top, x, bottom)

    def save(self) -> tuple[bytes, dict[str, Any]]:
        self.c.save()
        gold = {
            "gold_schema": "docparse-gold/1",
            "format": "pdf",
            "source": f"bench/docparse/generate_pdf.py: {self.name}",
            "page_count": self.page,
            "blocks": self.blocks,
            "tables": self.tables,
        }
        if self.scanned_pages:
            # A page that is only a picture: its text needs OCR, so the reader must say so
            # (a failed unit naming the page); the bench's "failed units" and "announced loss".
            gold["scanned_pages"] = list(self.scanned_pages)
            gold["images"] = [{"page": page, "text": ""} for page in self.scanned_pages]
        return self.buffer.getvalue(), gold


def wrap(text: str, font: str, size: float, width: float) -> list[str]:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    lines: list[str] = []
    current = ""
    for word in text.split():
        trial = f"{current} {word}".strip()
        if stringWidth(trial, font, size) > width and current:
            lines.append(current)
            current = word
        else:
            current = trial
    if current:
        lines.append(current)
    return lines


# The fixtures


def one_column() -> Doc:
    doc = Doc("one_column", header="Loom field guide", numbers=True)
    doc.heading("Reading documents as they are laid out", 1, 18)
    doc.paragraph(sentence(1, 60))
    doc.heading("1 Introduction", 2, 14)
    doc.paragraph(sentence(2, 45))
    doc.paragraph(sentence(3, 30))
    doc.heading("1.1 Scope of the reader", 3, 12)
    doc.paragraph(sentence(4, 50))
    for k in range(3):
        doc.item("•", sentence(10 + k, 12 + 4 * k))
    doc.heading("2 Configuration", 2, 14)
    doc.paragraph("The service reads its settings from the environment when it starts:")
    doc.code(
        [
            "def settings(env):",
            "    timeout = float(env.get('TIMEOUT', '30'))",
            "    if timeout <= 0:",
            "        raise ValueError('timeout')",
            "    return timeout",
        ]
    )
    for k in range(6):
        doc.paragraph(sentence(20 + k, 55))
    doc.heading("2.1 Limits", 3, 12)
    for k in range(4):
        doc.paragraph(sentence(30 + k, 50))
    return doc


def two_columns() -> Doc:
    doc = Doc("two_columns")
    doc.heading("Two columns of text on one page", 1, 18)
    gutter = 20.0
    column = (WIDTH - 2 * MARGIN - gutter) / 2
    top = doc.y
    doc.right = MARGIN + column
    doc.heading("1 Left column", 2, 13)
    for k in range(4):
        doc.paragraph(sentence(40 + k, 40))
    doc.y = top
    doc.left = MARGIN + column + gutter
    doc.right = WIDTH - MARGIN
    doc.heading("2 Right column", 2, 13)
    for k in range(4):
        doc.paragraph(sentence(50 + k, 40))
    return doc


def ruled_table() -> Doc:
    doc = Doc("ruled_table")
    doc.heading("Quarterly figures", 1, 16)
    doc.paragraph(sentence(60, 30))
    rows = [["Region", "Units", "Price", "Version", "Shipped"]]
    for k in range(8):
        rows.append(
            [
                ["North", "South", "East", "West"][k % 4] + f" {k + 1}",
                str(100 + 17 * k),
                f"{1 + k % 3}.50",
                f"1.{10 + k}",
                f"2024-0{1 + k % 9}-1{k % 9}",
            ]
        )
    doc.table(rows, [110, 70, 70, 70, 100], ruled=True)
    doc.paragraph(sentence(61, 35))
    return doc


def borderless_table() -> Doc:
    doc = Doc("borderless_table")
    doc.heading("Service levels", 1, 16)
    doc.paragraph(sentence(70, 30))
    rows = [["Tier", "Response", "Hours", "Contact"]]
    for k in range(6):
        rows.append(
            [
                f"Tier {k + 1}",
                f"{(k + 1) * 4} hours",
                ["weekdays", "always"][k % 2],
                f"desk {k + 10}",
            ]
        )
    doc.table(rows, [110, 110, 110, 110], ruled=False)
    doc.paragraph(sentence(71, 35))
    return doc


def table_across_pages() -> Doc:
    doc = Doc("table_across_pages")
    doc.heading("Inventory", 1, 16)
    for k in range(3):
        doc.paragraph(sentence(80 + k, 60))
    rows = [["Item", "Count", "Bin"]]
    for k in range(45):
        rows.append([f"Part {k + 1:03d}", str(3 * k + 1), f"B{k % 7}"])
    doc.table(rows, [150, 100, 100], ruled=True)
    doc.paragraph(sentence(85, 30))
    return doc


def outlined() -> Doc:
    doc = Doc("outlined")
    doc.heading("Operations handbook", 1, 18, outline=True)
    doc.paragraph(sentence(90, 40))
    doc.heading("Starting the service", 2, 12, outline=True)
    doc.paragraph(sentence(91, 50))
    doc.heading("Stopping the service", 2, 12, outline=True)
    doc.paragraph(sentence(92, 50))
    doc.heading("Recovering from a crash", 3, 11, outline=True)
    doc.paragraph(sentence(93, 50))
    doc.new_page()
    doc.heading("Upgrades", 2, 12, outline=True)
    doc.paragraph(sentence(94, 60))
    return doc


def rotated() -> Doc:
    doc = Doc("rotated")
    doc.heading("A page shown sideways", 1, 16)
    doc.paragraph(sentence(100, 50))
    doc.paragraph(sentence(101, 40))
    doc.c.setPageRotation(90)
    doc.new_page()
    doc.c.setPageRotation(0)
    # content drawn turned a quarter on an upright page
    doc.c.saveState()
    doc.c.translate(WIDTH - MARGIN, MARGIN)
    doc.c.rotate(90)
    doc.c.setFont("Helvetica-Bold", 16)
    doc.c.drawString(0, 0, "Landscape results")
    doc.c.setFont("Helvetica", BODY)
    text = sentence(102, 60)
    y = -30.0
    for line in wrap(text, "Helvetica", BODY, HEIGHT - 2 * MARGIN):
        doc.c.drawString(0, y, line)
        y -= LEADING
    doc.c.restoreState()
    doc.blocks.append(
        {"type": "heading", "text": "Landscape results", "level": 1, "page": doc.page}
    )
    doc.blocks.append({"type": "paragraph", "text": text, "page": doc.page})
    return doc


def image_page() -> Doc:
    from reportlab.lib.utils import ImageReader

    doc = Doc("image_page")
    doc.heading("A report with a scanned page", 1, 16)
    doc.paragraph(sentence(110, 40))
    doc.new_page()
    picture = io.BytesIO()
    from PIL import Image

    Image.new("L", (40, 40), 200).save(picture, format="PNG")
    picture.seek(0)
    doc.c.drawImage(ImageReader(picture), MARGIN, MARGIN, WIDTH - 2 * MARGIN, HEIGHT - 2 * MARGIN)
    doc.scanned_pages.append(doc.page)
    return doc


FIXTURES = [
    one_column,
    two_columns,
    ruled_table,
    borderless_table,
    table_across_pages,
    outlined,
    rotated,
    image_page,
]


def main() -> int:
    OUT.mkdir(parents=True, exist_ok=True)
    for make in FIXTURES:
        doc = make()
        data, gold = doc.save()
        (OUT / f"{doc.name}.pdf").write_bytes(data)
        (OUT / f"{doc.name}.pdf.gold.json").write_text(
            json.dumps(gold, indent=1) + "\n", encoding="utf-8"
        )
        print(f"{doc.name}.pdf: {len(data):,} bytes, {doc.page} pages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
