"""Reading speed of the DOCX and PPTX readers: documents per second and MB/s.

    .venv/bin/python bench/office_speed.py [--rounds 5] [--size-mb 20]

For each format: the shared corpus's documents (../shared/corpus/inputs/docx, inputs/pptx), read
`--rounds` times each, and one large generated document (a DOCX of headings, paragraphs and a
table per section; a PPTX of titled slides with a body and notes) of about `--size-mb` of XML,
each read in this process by the extractor's own code path (detection, then the reader), so the
figure is the reader's, not the child process's start-up. Beside it, in the same run, the
baseline: python-docx / python-pptx (lxml) opening the same bytes and reading every paragraph's,
table cell's, shape's and note's text, what a script built on the usual libraries would do. MB
are the files' sizes as stored (zipped), inflated MB the sizes of all their parts inflated (media
included). The generated documents are minimal packages that python-docx and python-pptx cannot
open (their content types hold only what the readers need), so those rows have no baseline.
Writes bench/results/office.json.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import sys
import time
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extractor_sandbox.source import extract  # noqa: E402
from tests.extractor.office_packages import (  # noqa: E402
    docx,
    paragraph,
    pptx,
    slide_xml,
    style,
    text_shape,
)

CORPUS = ROOT.parent / "shared" / "corpus" / "inputs"
RESULTS = ROOT / "bench" / "results" / "office.json"
WORDS = "ledger invoice account retention schema partition revision chunk citation".split()


def prose(n: int, seed: int) -> str:
    return " ".join(WORDS[(seed * 7 + i * 3) % len(WORDS)] for i in range(n))


def big_docx(size: int) -> bytes:
    sections, length, n = [], 0, 0
    while length < size:
        n += 1
        cells = "".join(
            f"<w:tr><w:tc>{paragraph(prose(2, n + r))}</w:tc><w:tc>{paragraph(str(r))}</w:tc></w:tr>"
            for r in range(5)
        )
        section = (
            paragraph(f"Section {n}", "Heading1")
            + "".join(paragraph(prose(60, n + k)) for k in range(5))
            + f"<w:tbl>{cells}</w:tbl>"
        )
        sections.append(section)
        length += len(section)
    return docx("".join(sections), styles=style("Heading1", "heading 1", outline=0))


def big_pptx(size: int) -> bytes:
    slides: list[str] = []
    notes: dict[int, str] = {}
    length = 0
    while length < size:
        n = len(slides)
        body = "\n".join(prose(12, n + k) for k in range(8))
        slide = slide_xml(text_shape(f"Slide {n + 1}", "title") + text_shape(body))
        slides.append(slide)
        notes[n] = prose(30, n)
        length += len(slide) + 200
    return pptx(slides, notes=notes)


def inflated_size(data: bytes) -> int:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return sum(info.file_size for info in archive.infolist())


def ours(fmt: str) -> Callable[[str, bytes], object]:
    return lambda name, data: extract(data, fmt, name, {})


def baseline(fmt: str) -> Callable[[str, bytes], object]:
    """python-docx or python-pptx reading all the text of the same bytes."""
    if fmt == "docx":
        from docx import Document

        def read_docx(_: str, data: bytes) -> object:
            document = Document(io.BytesIO(data))
            texts = [p.text for p in document.paragraphs]
            for table in document.tables:
                texts.extend(cell.text for row in table.rows for cell in row.cells)
            return texts

        return read_docx
    from pptx import Presentation

    def read_pptx(_: str, data: bytes) -> object:
        texts = []
        for slide in Presentation(io.BytesIO(data)).slides:
            texts.extend(shape.text_frame.text for shape in slide.shapes if shape.has_text_frame)
            if slide.has_notes_slide:
                texts.append(slide.notes_slide.notes_text_frame.text)
        return texts

    return read_pptx


def read_rate(
    files: list[tuple[str, bytes]], read: Callable[[str, bytes], object], rounds: int
) -> dict[str, Any]:
    size = sum(len(data) for _, data in files)
    inflated = sum(inflated_size(data) for _, data in files)
    refused = 0
    for name, data in files[:1]:  # imports are not its speed
        try:
            read(name, data)
        except Exception:  # noqa: BLE001 - a baseline may fail where ours refuses
            pass
    started = time.perf_counter()
    for _ in range(rounds):
        for name, data in files:
            try:
                read(name, data)
            except Exception:  # noqa: BLE001 - counted: ours refuses, a baseline may raise
                refused += 1
    elapsed = time.perf_counter() - started
    documents = len(files) * rounds
    return {
        "documents": len(files),
        "rounds": rounds,
        "mb": round(size / 1e6, 3),
        "seconds": round(elapsed, 3),
        "documents_per_s": round(documents / elapsed, 1),
        "mb_per_s": round(size * rounds / 1e6 / elapsed, 2),
        "inflated_mb": round(inflated / 1e6, 3),
        "inflated_mb_per_s": round(inflated * rounds / 1e6 / elapsed, 2),
        "refused": refused // rounds,
        # A reader that fails every document has no speed to report.
        "read_none": refused == documents,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--size-mb", type=float, default=20.0)
    args = parser.parse_args()
    machine = f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"
    print(f"machine: {machine}")
    print(
        f"{'format':<8}{'input (reader)':<21}{'docs':>6}{'MB':>8}{'docs/s':>9}{'MB/s':>8}"
        f"{'infl. MB':>9}{'infl. MB/s':>11}  refused"
    )
    results: dict[str, Any] = {"machine": machine}
    for fmt, build in (("docx", big_docx), ("pptx", big_pptx)):
        corpus = [(p.name, p.read_bytes()) for p in sorted((CORPUS / fmt).glob(f"*.{fmt}"))]
        big = build(int(args.size_mb * 1e6))
        results[fmt] = {
            "corpus": read_rate(corpus, ours(fmt), args.rounds),
            "corpus, baseline": read_rate(corpus, baseline(fmt), args.rounds),
            "generated": read_rate([(f"big.{fmt}", big)], ours(fmt), 1),
            "generated, baseline": read_rate([(f"big.{fmt}", big)], baseline(fmt), 1),
        }
        for kind, rate in results[fmt].items():
            if rate["read_none"]:
                print(f"{fmt:<8}{kind:<21}{rate['documents']:>6}{rate['mb']:>8.2f}  cannot read it")
                continue
            print(
                f"{fmt:<8}{kind:<21}{rate['documents']:>6}{rate['mb']:>8.2f}"
                f"{rate['documents_per_s']:>9.1f}{rate['mb_per_s']:>8.2f}"
                f"{rate['inflated_mb']:>9.2f}{rate['inflated_mb_per_s']:>11.2f}  {rate['refused']}"
            )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
