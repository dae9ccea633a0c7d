"""The PDF parsing bench: our layout reader beside two pypdf baselines, on the same files.

For each real PDF in the shared corpus (inputs/pdf with its docling gold) and each generated
fixture (bench/docparse/pdf, docparse-gold), the artifact of `extract_pdf` is scored with the
bench's scorer (tests/support/docparse_score.py, which agrees with the reference scorer in
../shared/tools/docparse_score.py: tests/extractor/test_docparse_scorer.py), and so are two
baselines built from pypdf's `extract_text()` the simplest honest way: plain, and with
extraction_mode="layout", each page's text split at blank lines into paragraphs cited by page.

    .venv/bin/python bench/docparse_pdf.py [--corpus DIR] [--json-out bench/results/pdf.json]

Prints one row per document and reader, and each slice summed over its documents (hits over
totals, not a mean of means).
"""

from __future__ import annotations

import argparse
import io
import json
import logging
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pypdf  # noqa: E402

from extractor_sandbox.formats.pdf.reader import extract_pdf  # noqa: E402
from tests.support import docparse_score as score  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
GENERATED = ROOT / "bench" / "docparse" / "pdf"
METRICS = [
    "text recall",
    "reading order",
    "heading F1",
    "heading level",
    "table cell F1",
    "locator",
]


def baseline(data: bytes, layout: bool) -> dict[str, Any]:
    """pypdf's extract_text, each page split at blank lines into paragraphs cited by page."""
    reader = pypdf.PdfReader(io.BytesIO(data))
    blocks = []
    for number, page in enumerate(reader.pages, start=1):
        try:
            text = page.extract_text(extraction_mode="layout") if layout else page.extract_text()
        except Exception:
            text = ""
        for part in re.split(r"\n\s*\n", text):
            if part.strip():
                blocks.append(
                    {
                        "type": "paragraph",
                        "text": " ".join(part.split()),
                        "locator": {"page_start": number, "page_end": number},
                    }
                )
    pages = len(reader.pages)
    return {
        "format": "pdf",
        "blocks": blocks,
        "coverage": {"unit": "pages", "total": pages, "extracted": pages, "failed": []},
    }


READERS = {
    "ours": lambda data, name: extract_pdf(data, {}, name=name),
    "pypdf": lambda data, name: baseline(data, layout=False),
    "pypdf-layout": lambda data, name: baseline(data, layout=True),
}


def documents(corpus: Path) -> list[tuple[str, str, Path, Path]]:
    """(slice, name, pdf, gold) for the real corpus and the generated fixtures."""
    found = []
    for pdf in sorted((corpus / "inputs" / "pdf").glob("*.pdf")):
        gold = corpus / "gold" / "pdf" / f"{pdf.name}.json"
        if gold.exists():
            found.append(("corpus", pdf.name, pdf, gold))
    for pdf in sorted(GENERATED.glob("*.pdf")):
        gold = GENERATED / f"{pdf.name}.gold.json"
        if gold.exists():
            found.append(("generated", pdf.name, pdf, gold))
    return found


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser()
    args.add_argument("--corpus", type=Path, default=CORPUS)
    args.add_argument("--json-out", type=Path, default=ROOT / "bench" / "results" / "pdf.json")
    parsed = args.parse_args(argv)
    logging.disable(logging.WARNING)  # pypdf's warnings about the corpus's fonts
    results: list[dict[str, Any]] = []
    for slice_name, name, pdf, gold_path in documents(parsed.corpus):
        data = pdf.read_bytes()
        gold = score.load_gold(gold_path)
        for reader, read in READERS.items():
            start = time.perf_counter()
            artifact = read(data, name)
            seconds = time.perf_counter() - start
            counts = score.score_document(gold, artifact)
            results.append(
                {
                    "slice": slice_name,
                    "document": name,
                    "reader": reader,
                    "seconds": round(seconds, 3),
                    "counts": {k: counts.get(k) for k in METRICS},
                    "metrics": {k: share(counts.get(k)) for k in METRICS},
                }
            )
    show(results)
    parsed.json_out.parent.mkdir(parents=True, exist_ok=True)
    parsed.json_out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    return 0


def share(count: tuple[float, float] | None) -> float | None:
    return None if not count or not count[1] else count[0] / count[1]


def fmt(value: Any) -> str:
    return "   -  " if value is None else f"{value:6.3f}"


def show(results: list[dict[str, Any]]) -> None:
    head = f"{'slice':9} {'document':32} {'reader':12} " + " ".join(
        f"{m.split()[0][:6]:>6}" for m in METRICS
    )
    print(head)
    for row in results:
        cells = " ".join(fmt(row["metrics"][m]) for m in METRICS)
        print(f"{row['slice']:9} {row['document'][:32]:32} {row['reader']:12} {cells}")
    print()
    print("per slice and reader, hits over totals summed over the slice's documents:")
    for slice_name in ("corpus", "generated"):
        for reader in READERS:
            rows = [r for r in results if r["slice"] == slice_name and r["reader"] == reader]
            if not rows:
                continue
            summed = []
            for m in METRICS:
                counted = [r["counts"][m] for r in rows if r["counts"][m]]
                hits, total = sum(c[0] for c in counted), sum(c[1] for c in counted)
                summed.append(hits / total if total else None)
            cells = " ".join(fmt(v) for v in summed)
            print(f"{slice_name:9} {'(slice)':32} {reader:12} {cells}")


if __name__ == "__main__":
    sys.exit(main())
