"""The real-world PDF bench: public PDFs with gold made by others (bench/realworld/pdf/README.md),
read by our layout reader, by the same reader at another checkout (the before), by pypdf's
extract_text and by pdfplumber (an established layout tool, its tables from find_tables), in the
same run.

    .venv/bin/python bench/realworld_pdf.py [--baseline-checkout ../base] [--markdown]
        [--json-out bench/results/realworld_pdf.json] [--only NAME ...]

Slices: `icdar2013` (the ICDAR 2013 table competition's EU and US government reports: table cell
F1 and the table's page), its tables split into `ruled` and `borderless` by whether the page draws
a grid over them (the gold's `ruled`, see realworld_pdf_gold.py), and `papers` (LaTeX papers,
heading F1 and level against their hyperref outline, the outline stripped from the PDF before any
reader sees it). Each document is scored with the bench's scorer (tests/support/docparse_score.py)
and with the reference scorer (../shared/tools/docparse_score.py); the run fails if the two differ
by more than 0.01 on a metric both compute. Slice figures are hits over totals summed over the
slice (not a mean of means).
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pypdf  # noqa: E402

from bench.docparse_pdf import baseline as pypdf_baseline  # noqa: E402
from extractor_sandbox.formats.pdf.reader import extract_pdf  # noqa: E402
from tests.support import docparse_score as score  # noqa: E402

DATA = ROOT / "bench" / "realworld" / "pdf"
REFERENCE = ROOT.parent / "shared" / "tools" / "docparse_score.py"
# bench metric name -> reference scorer metric name
METRICS = {
    "table cell F1": "table_cell_f1",
    "locator": "page_locator",
    "heading F1": "heading_f1",
    "heading level": "heading_level",
}
SLICE_METRICS = {
    "icdar2013": ["table cell F1", "locator"],
    "papers": ["heading F1", "heading level"],
}

# Runs in another checkout: its own extractor_sandbox reads each PDF of a folder.
BEFORE = """
import json, sys
from collections import Counter
from pathlib import Path
from extractor_sandbox.formats.pdf.reader import extract_pdf
src, dst = Path(sys.argv[1]), Path(sys.argv[2])
for pdf in sorted(src.glob('*.pdf')):
    artifact = extract_pdf(pdf.read_bytes(), {}, name=pdf.name)
    (dst / (pdf.name + '.json')).write_text(json.dumps(artifact))
"""


def without_outline(data: bytes) -> bytes:
    """The PDF with its outline (bookmarks) taken out, so no reader can read the headings there."""
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(data)))
    root = writer._root_object
    for key in ("/Outlines", "/PageMode"):
        if key in root:
            del root[key]
    out = io.BytesIO()
    writer.write(out)
    stripped = out.getvalue()
    if pypdf.PdfReader(io.BytesIO(stripped)).outline:
        raise SystemExit("the outline is still there after stripping it")
    return stripped


def pdfplumber_artifact(data: bytes) -> dict[str, Any]:
    """pdfplumber's reading: each page's tables (find_tables, its default settings) cited by page,
    and the page's text as one paragraph; it has no notion of a heading."""
    import pdfplumber

    blocks: list[dict[str, Any]] = []
    with pdfplumber.open(io.BytesIO(data)) as pdf:
        for number, page in enumerate(pdf.pages, start=1):
            where = {"page_start": number, "page_end": number}
            try:
                tables = page.extract_tables()
                text = page.extract_text() or ""
            except Exception:
                tables, text = [], ""
            if text.strip():
                blocks.append({"type": "paragraph", "text": text, "locator": where})
            for rows in tables:
                grid = [["" if c is None else str(c) for c in row] for row in rows]
                blocks.append(
                    {
                        "type": "table",
                        "text": "\n".join(" | ".join(r) for r in grid),
                        "locator": where,
                        "attrs": {"table": {"columns": [], "rows": grid, "header_rows": 0}},
                    }
                )
            page.close()
    return {"format": "pdf", "blocks": blocks, "coverage": {"unit": "pages"}}


def documents(only: list[str]) -> list[tuple[str, Path, Path]]:
    found = []
    for slice_name in SLICE_METRICS:
        for pdf in sorted((DATA / slice_name).glob("*.pdf")):
            gold = pdf.with_name(f"{pdf.name}.gold.json")
            if gold.exists() and (not only or pdf.name in only or pdf.stem in only):
                found.append((slice_name, pdf, gold))
    return found


def reference_scorer() -> Any:
    spec = importlib.util.spec_from_file_location("reference_docparse_score", REFERENCE)
    if spec is None or spec.loader is None:
        raise SystemExit(f"the reference scorer is not at {REFERENCE}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def before_artifacts(checkout: Path, inputs: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp, "in"), Path(tmp, "out")
        src.mkdir()
        dst.mkdir()
        for name, data in inputs.items():
            (src / name).write_bytes(data)
        env = {"PYTHONPATH": str(checkout), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        subprocess.run(
            [sys.executable, "-c", BEFORE, str(src), str(dst)], cwd=checkout, env=env, check=True
        )
        return {name: json.loads((dst / f"{name}.json").read_text()) for name in inputs}


def main(argv: list[str] | None = None) -> int:
    args = argparse.ArgumentParser()
    args.add_argument("--baseline-checkout", type=Path)
    args.add_argument("--markdown", action="store_true")
    args.add_argument("--only", nargs="*", default=[])
    args.add_argument(
        "--skip", nargs="*", default=[], help="baselines to leave out (pypdf, pdfplumber)"
    )
    args.add_argument(
        "--json-out", type=Path, default=ROOT / "bench" / "results" / "realworld_pdf.json"
    )
    parsed = args.parse_args(argv)
    logging.disable(logging.WARNING)  # pypdf's and pdfminer's complaints about the files' fonts
    reference = reference_scorer()
    docs = documents(parsed.only)
    inputs: dict[str, bytes] = {}
    for slice_name, pdf, _ in docs:
        data = pdf.read_bytes()
        inputs[pdf.name] = without_outline(data) if slice_name == "papers" else data
    readers: dict[str, Any] = {"ours": lambda data, name: extract_pdf(data, {}, name=name)}
    before: dict[str, dict[str, Any]] = {}
    seconds: dict[str, float] = {}
    if parsed.baseline_checkout:
        start = time.perf_counter()
        before = before_artifacts(parsed.baseline_checkout.resolve(), inputs)
        # the baseline reads every document in one process of its own, its start-up included
        seconds["before"] = time.perf_counter() - start
        readers = {"before": lambda data, name: before[name], **readers}
    if "pypdf" not in parsed.skip:
        readers["pypdf"] = lambda data, name: pypdf_baseline(data, layout=False)
    if "pdfplumber" not in parsed.skip:
        readers["pdfplumber"] = lambda data, name: pdfplumber_artifact(data)
    results: list[dict[str, Any]] = []
    disagreements: list[str] = []
    for slice_name, pdf, gold_path in docs:
        gold = score.load_gold(gold_path)
        gold_json = json.loads(gold_path.read_text(encoding="utf-8"))
        ref_gold = reference.load_gold(str(gold_path))
        for reader, read in readers.items():
            start = time.perf_counter()
            artifact = read(inputs[pdf.name], pdf.name)
            seconds[reader] = seconds.get(reader, 0.0) + time.perf_counter() - start
            counts = score.score_document(gold, artifact)
            ref = reference.score(ref_gold, reference.load_artifact(artifact))
            for metric in SLICE_METRICS[slice_name]:
                ours_value = share(counts.get(metric))
                ref_value = ref.get(METRICS[metric])
                if (ours_value is None) != (ref_value is None) or (
                    ours_value is not None and abs(ours_value - ref_value) > 0.01
                ):
                    disagreements.append(
                        f"{pdf.name} {reader} {metric}: bench {ours_value} reference {ref_value}"
                    )
            row_counts: dict[str, Any] = {m: counts.get(m) for m in SLICE_METRICS[slice_name]}
            row = {
                "slice": slice_name,
                "document": pdf.name,
                "reader": reader,
                "counts": row_counts,
                "metrics": {m: share(counts.get(m)) for m in SLICE_METRICS[slice_name]},
                "reference": {m: ref.get(METRICS[m]) for m in SLICE_METRICS[slice_name]},
            }
            if slice_name == "icdar2013":
                row_counts.update(kind_cells(artifact, gold_json))
                for kind in ("ruled", "borderless"):
                    part = {
                        **gold_json,
                        "tables": [
                            t for t in gold_json["tables"] if t.get("ruled") == (kind == "ruled")
                        ],
                    }
                    if part["tables"]:
                        sub = score.score_document(score.gold_from_docparse(part), artifact)
                        row_counts[f"{kind} locator"] = sub.get("locator")
            results.append(row)
    show(results, list(readers), parsed.markdown)
    print()
    print(
        "seconds per reader over the bench: "
        + ", ".join(f"{r} {s:.1f}" for r, s in seconds.items())
    )
    parsed.json_out.parent.mkdir(parents=True, exist_ok=True)
    parsed.json_out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    if disagreements:
        print("the two scorers disagree:", *disagreements, sep="\n  ", file=sys.stderr)
        return 1
    print("the bench's scorer and the reference scorer agree within 0.01 on every document")
    return 0


def kind_cells(artifact: dict[str, Any], gold_json: dict[str, Any]) -> dict[str, Any]:
    """Table cell F1 counts for the ruled and the borderless gold tables apart: each of the
    reader's tables is counted with the kind of the gold table it shares most cells with (one
    that shares none counts only in the whole figure), so neither part is charged the other's."""
    parsed = score.parse_artifact(artifact).tables
    gold_tables = [(t.get("ruled", False), score._cells(t["rows"])) for t in gold_json["tables"]]
    out: dict[str, Any] = {}
    kind_of: dict[int, bool] = {}
    for index, table in enumerate(parsed):
        cells = score._cells(table["rows"])
        best, kind = 0, None
        for ruled, gold_cells in gold_tables:
            overlap = sum((cells & gold_cells).values())
            if overlap > best:
                best, kind = overlap, ruled
        if kind is not None:
            kind_of[index] = kind
    for ruled, name in ((True, "ruled"), (False, "borderless")):
        gold_cells = sum((c for r, c in gold_tables if r == ruled), Counter())
        if not gold_cells:
            continue
        mine = sum(
            (score._cells(t["rows"]) for i, t in enumerate(parsed) if kind_of.get(i) == ruled),
            Counter(),
        )
        shared = sum((gold_cells & mine).values())
        out[f"{name} cell F1"] = (2 * shared, gold_cells.total() + mine.total())
    return out


def share(count: Any) -> float | None:
    return None if not count or not count[1] else count[0] / count[1]


def fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def summed(rows: list[dict[str, Any]], metric: str) -> float | None:
    counted = [r["counts"].get(metric) for r in rows if r["counts"].get(metric)]
    hits, total = sum(c[0] for c in counted), sum(c[1] for c in counted)
    return hits / total if total else None


def show(results: list[dict[str, Any]], readers: list[str], markdown: bool) -> None:
    for slice_name, metrics in SLICE_METRICS.items():
        rows = [r for r in results if r["slice"] == slice_name]
        if not rows:
            continue
        names = list(dict.fromkeys(r["document"] for r in rows))
        print(f"\n{slice_name}: each cell is " + " / ".join(readers))
        head = ["document", *metrics]
        print("| " + " | ".join(head) + " |" if markdown else "  ".join(f"{h:>24}" for h in head))
        if markdown:
            print("|" + "---|" * len(head))
        for name in names:
            by = {r["reader"]: r for r in rows if r["document"] == name}
            cells = [" / ".join(fmt(by[rd]["metrics"][m]) for rd in readers) for m in metrics]
            line(markdown, [name, *cells])
        extra = ["ruled cell F1", "borderless cell F1", "ruled locator", "borderless locator"]
        for metric in metrics + (extra if slice_name == "icdar2013" else []):
            cells = [fmt(summed([r for r in rows if r["reader"] == rd], metric)) for rd in readers]
            line(markdown, [f"**{slice_name} {metric}, summed**", " / ".join(cells)])


def line(markdown: bool, cells: list[str]) -> None:
    if markdown:
        print("| " + " | ".join(cells) + " |")
    else:
        print("  ".join(f"{c:>24}" for c in cells))


if __name__ == "__main__":
    sys.exit(main())
