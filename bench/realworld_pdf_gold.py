"""Builds bench/realworld/pdf/: public PDFs and their gold made by others, converted to the
docparse-gold/1 form both scorers read (tests/support/docparse_score.py and
../shared/tools/docparse_score.py). The source gold is copied as it is (the ICDAR structure XML
gzipped) and never edited; the gold JSON is written from it by this script alone.

    .venv/bin/python bench/realworld_pdf_gold.py \
        --icdar DIR     # a copy of icdar2013-dataset/ (competition-dataset-eu/, -us/)
        --paper PDF ... # LaTeX papers whose hyperref outline is the authors' heading list

ICDAR 2013 table competition: each `<name>-str.xml` lists tables, each table one region per page
it is on, each region cells with start-row/start-col (end-row/end-col when they span) and their
content. A region is one gold table with that page (a table across two pages is two gold
tables, both matched to the one table a reader joins). `ruled` says whether the page draws a
grid over the region (three or more vertical and horizontal rules inside it, found with
pdfplumber, the bench's baseline, never with the reader being scored).

Papers: the gold headings are the outline's entries, level by nesting and page by destination;
bench/realworld_pdf.py strips the outline from the PDF before any reader sees it.
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import shutil
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pypdf

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "realworld" / "pdf"


def icdar_tables(xml: bytes) -> list[dict[str, Any]]:
    """Each region of each table as a grid of its cells' content, with its page."""
    root = ET.fromstring(xml)
    tables: list[dict[str, Any]] = []
    for table in root.iter("table"):
        for region in table.iter("region"):
            cells = []
            for cell in region.iter("cell"):
                row = int(cell.get("start-row", "0"))
                col = int(cell.get("start-col", "0"))
                end_row = int(cell.get("end-row", row))
                end_col = int(cell.get("end-col", col))
                content = cell.findtext("content") or ""
                box = cell.find("bounding-box")
                cells.append((row, col, end_row, end_col, " ".join(content.split()), box))
            if not cells:
                continue
            rows = max(c[2] for c in cells) + 1
            cols = max(c[3] for c in cells) + 1
            grid = [["" for _ in range(cols)] for _ in range(rows)]
            for row, col, _, _, content, _ in cells:
                grid[row][col] = content
            boxes = [c[5] for c in cells if c[5] is not None]
            bbox = (
                [
                    min(_number(b.get("x1")) for b in boxes),
                    min(_number(b.get("y1")) for b in boxes),
                    max(_number(b.get("x2")) for b in boxes),
                    max(_number(b.get("y2")) for b in boxes),
                ]
                if boxes
                else None
            )
            tables.append(
                {
                    "rows": grid,
                    "header_rows": 0,
                    "page": int(region.get("page", "1")),
                    "bbox": bbox,
                }
            )
    return tables


def _number(value: str | None) -> float:
    """A coordinate as the gold writes it; one file has a stray letter after a number."""
    kept = "".join(c for c in (value or "0") if c.isdigit() or c in ".-")
    return float(kept or 0)


def ruled(pdf: Path, page_number: int, bbox: list[float] | None) -> bool:
    """Whether the page draws a grid over the region (bbox in PDF units, origin bottom left)."""
    import pdfplumber

    if bbox is None:
        return False
    with pdfplumber.open(pdf) as doc:
        page = doc.pages[page_number - 1]
        height = float(page.height)
        x0, y0, x1, y1 = bbox
        top, bottom = height - y1, height - y0
        vertical: set[int] = set()
        horizontal: set[int] = set()
        for edge in page.edges:
            ex0, ex1, etop, ebottom = edge["x0"], edge["x1"], edge["top"], edge["bottom"]
            if ex1 < x0 - 5 or ex0 > x1 + 5 or ebottom < top - 5 or etop > bottom + 5:
                continue
            if abs(ex1 - ex0) < 1 and ebottom - etop > 5:
                vertical.add(round(ex0 / 3))
            elif abs(ebottom - etop) < 1 and ex1 - ex0 > 5:
                horizontal.add(round(etop / 3))
        return len(vertical) >= 3 and len(horizontal) >= 3


def icdar(source: Path) -> None:
    out = OUT / "icdar2013"
    out.mkdir(parents=True, exist_ok=True)
    for xml in sorted(source.glob("competition-dataset-*/*-str.xml")):
        name = xml.name[: -len("-str.xml")]
        pdf = xml.with_name(f"{name}.pdf")
        if not pdf.exists():
            print(f"skipped {name}: no PDF beside its gold", file=sys.stderr)
            continue
        raw = xml.read_bytes()
        tables = icdar_tables(raw)
        for table in tables:
            table["ruled"] = ruled(pdf, table["page"], table.pop("bbox"))
        shutil.copyfile(pdf, out / pdf.name)
        (out / f"{xml.name}.gz").write_bytes(gzip.compress(raw, mtime=0))
        gold = {
            "gold_schema": "docparse-gold/1",
            "format": "pdf",
            "source": f"ICDAR 2013 table competition, {xml.parent.name}/{xml.name}",
            "scope": ["tables", "page_locator"],
            "page_count": len(pypdf.PdfReader(pdf).pages),
            "tables": tables,
        }
        write(out / f"{pdf.name}.gold.json", gold)


def outline_headings(data: bytes) -> list[dict[str, Any]]:
    reader = pypdf.PdfReader(io.BytesIO(data))
    blocks: list[dict[str, Any]] = []

    def walk(items: Any, level: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            title = " ".join(str(item.title or "").split())
            page = reader.get_destination_page_number(item)
            if title:
                block = {"type": "heading", "text": title, "level": level}
                if page is not None:
                    block["page"] = page + 1
                blocks.append(block)

    walk(reader.outline, 1)
    return blocks


def papers(pdfs: list[Path]) -> None:
    out = OUT / "papers"
    out.mkdir(parents=True, exist_ok=True)
    for pdf in pdfs:
        data = pdf.read_bytes()
        headings = outline_headings(data)
        if len(headings) < 2:
            print(f"skipped {pdf.name}: no outline to score against", file=sys.stderr)
            continue
        shutil.copyfile(pdf, out / pdf.name)
        gold = {
            "gold_schema": "docparse-gold/1",
            "format": "pdf",
            "source": f"{pdf.name}: its hyperref outline (the authors' own heading list)",
            "scope": ["headings"],
            "page_count": len(pypdf.PdfReader(io.BytesIO(data)).pages),
            "blocks": headings,
        }
        write(out / f"{pdf.name}.gold.json", gold)


def write(path: Path, gold: dict[str, Any]) -> None:
    path.write_text(json.dumps(gold, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser()
    args.add_argument("--icdar", type=Path)
    args.add_argument("--paper", type=Path, nargs="*", default=[])
    parsed = args.parse_args(argv)
    if parsed.icdar:
        icdar(parsed.icdar)
    if parsed.paper:
        papers(parsed.paper)
    return 0


if __name__ == "__main__":
    sys.exit(main())
