"""PDF reading speed: pages a second for the layout reader beside pypdf's extract_text().

Both read the same pages in the same run: the shared corpus's real PDFs, and a generated
500-page document (reportlab: headings, paragraphs and a ruled table on every page). The ratio is
ours over extract_text's time, so 2.0 means the layout reader takes twice as long.

    .venv/bin/python bench/pdf_speed.py [--pages 500]
"""

from __future__ import annotations

import argparse
import io
import logging
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pypdf  # noqa: E402
from reportlab.lib.pagesizes import A4  # noqa: E402
from reportlab.pdfgen import canvas  # noqa: E402

from extractor_sandbox.formats.pdf.reader import extract_pdf  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "inputs" / "pdf"


def generated(pages: int) -> bytes:
    buffer = io.BytesIO()
    c = canvas.Canvas(buffer, pagesize=A4, invariant=1)
    words = "reading order tables columns headings paragraphs furniture outline".split()
    for page in range(pages):
        c.setFont("Helvetica-Bold", 14)
        c.drawString(72, 780, f"{page + 1} Section on page {page + 1}")
        c.setFont("Helvetica", 10)
        y = 750.0
        for line in range(40):
            c.drawString(72, y, " ".join(words[(line + k) % len(words)] for k in range(12)))
            y -= 13
        for row in range(6):
            for col in range(3):
                c.drawString(80 + 120 * col, 200 - 16 * row, f"r{row} c{col}")
        for row in range(7):
            c.line(72, 212 - 16 * row, 432, 212 - 16 * row)
        for col in range(4):
            c.line(72 + 120 * col, 212, 72 + 120 * col, 116)
        c.drawCentredString(300, 30, str(page + 1))
        c.showPage()
    c.save()
    return buffer.getvalue()


def pypdf_text(data: bytes) -> int:
    reader = pypdf.PdfReader(io.BytesIO(data))
    for page in reader.pages:
        page.extract_text()
    return len(reader.pages)


def timed(run, data: bytes) -> float:
    start = time.perf_counter()
    run(data)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser()
    args.add_argument("--pages", type=int, default=500)
    parsed = args.parse_args(argv)
    logging.disable(logging.WARNING)
    print(
        f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    )
    sets = [("corpus", [p.read_bytes() for p in sorted(CORPUS.glob("*.pdf"))])]
    sets.append((f"generated {parsed.pages} pages", [generated(parsed.pages)]))
    for label, files in sets:
        pages = sum(len(pypdf.PdfReader(io.BytesIO(d)).pages) for d in files)
        ours = sum(timed(lambda d: extract_pdf(d, {}, name="x.pdf"), d) for d in files)
        theirs = sum(timed(pypdf_text, d) for d in files)
        print(
            f"{label}: {pages} pages; ours {pages / ours:.1f} pages/s ({ours:.2f} s), "
            f"extract_text {pages / theirs:.1f} pages/s ({theirs:.2f} s), ratio {ours / theirs:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
