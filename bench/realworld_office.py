"""The DOCX and PPTX readers on documents and gold made by others (bench/realworld/office/).

    .venv/bin/python bench/realworld_office.py [--baseline-checkout ../base] [--markdown]
        [--per-file]

Every document of bench/realworld/office/data (pandoc's DOCX reader tests and PPTX writer tests,
their gold converted from pandoc's own AST by bench/realworld/office/pandoc_gold.py) is read by
this checkout's extractor, by the baseline checkout's (its own .venv, when given), and by an
established tool in the same run (python-docx / python-pptx, their headings from style names
and title placeholders, as their users write it; openpyxl, a table a sheet). The shared corpus's
workbooks are scored too, as the XLSX development slice: no workbook with gold made by others was
found outside it. Each artifact is scored by the project's scorer
(tests/support/docparse_score.py) and by the reference scorer (../shared/tools/docparse_score.py),
which must agree; the table prints each format's mean per reader and every file whose score
changed, and bench/results/realworld_office.json keeps them all.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import mean
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import docparse_score as score  # noqa: E402

DATA = ROOT / "bench" / "realworld" / "office" / "data"
CORPUS_XLSX = ROOT.parent / "shared" / "corpus" / "inputs" / "xlsx"
CORPUS_GOLD = ROOT.parent / "shared" / "corpus" / "gold" / "xlsx"
REFERENCE = ROOT.parent / "shared" / "tools" / "docparse_score.py"
RESULTS = ROOT / "bench" / "results" / "realworld_office.json"
METRICS = ("heading_f1", "heading_level", "table_cell_f1", "text_recall")
EXTRACT = """
import json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from extractor_sandbox.errors import ExtractError
from extractor_sandbox.source import extract
out = Path(sys.argv[2])
for line in sys.stdin:
    path = Path(line.strip())
    fmt = {"xlsm": "xlsx"}.get(path.suffix[1:], path.suffix[1:])
    try:
        artifact = extract(path.read_bytes(), fmt, path.name, {})
    except ExtractError as error:
        artifact = {"blocks": [], "coverage": {"failed": [{"unit": "file", "reason": str(error)}]}}
    target = out / path.parent.name / (path.name + ".json")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(artifact, ensure_ascii=False), encoding="utf-8")
"""


def documents() -> list[Path]:
    """The bench's documents, and the shared corpus's workbooks (no XLSX with gold made by others
    was found outside it: they are the development slice, scored here beside openpyxl)."""
    found = sorted(p for fmt in ("docx", "pptx") for p in (DATA / fmt).glob(f"*.{fmt}"))
    if CORPUS_XLSX.is_dir():
        found += sorted(CORPUS_XLSX.glob("*.xls*"))
    return found


def gold_of(path: Path) -> Path:
    if path.parent == CORPUS_XLSX:
        return CORPUS_GOLD / f"{path.name}.json"
    return path.with_name(path.name + ".gold.json")


def run_checkout(checkout: Path, paths: list[Path], out: Path) -> None:
    python = checkout / ".venv" / "bin" / "python"
    subprocess.run(
        [str(python), "-c", EXTRACT, str(checkout), str(out)],
        input="\n".join(str(p) for p in paths),
        text=True,
        check=True,
        cwd=checkout,
    )


def established(path: Path) -> dict[str, Any]:
    """An artifact as python-docx / python-pptx users read a document: style-named headings,
    title placeholders, paragraphs, tables."""
    blocks: list[dict[str, Any]] = []
    tables: list[dict[str, Any]] = []
    if path.suffix == ".docx":
        import docx

        document = docx.Document(str(path))
        for paragraph in document.paragraphs:
            style = paragraph.style.name if paragraph.style is not None else ""
            if not paragraph.text.strip():
                continue
            if style.startswith("Heading ") and style[8:].isdigit():
                blocks.append({"type": "heading", "text": paragraph.text, "depth": int(style[8:])})
            elif style == "Title":
                blocks.append({"type": "heading", "text": paragraph.text, "depth": 0})
            else:
                blocks.append({"type": "paragraph", "text": paragraph.text})
        for table in document.tables:
            tables.append({"rows": [[cell.text for cell in row.cells] for row in table.rows]})
    elif path.suffix in (".xlsx", ".xlsm"):
        import openpyxl

        book = openpyxl.load_workbook(str(path), read_only=True, data_only=True)
        for sheet in book.worksheets:
            rows = [
                ["" if value is None else str(value) for value in row]
                for row in sheet.iter_rows(values_only=True)
                if any(value is not None for value in row)
            ]
            if rows:
                tables.append({"rows": rows})
        book.close()
    else:
        import pptx

        deck = pptx.Presentation(str(path))
        for number, slide in enumerate(deck.slides, start=1):
            where = {"page_start": number, "page_end": number}
            for shape in slide.shapes:
                if shape.is_placeholder and shape.placeholder_format.type in (1, 3):  # title
                    if shape.text_frame.text.strip():
                        blocks.append(
                            {
                                "type": "heading",
                                "text": shape.text_frame.text,
                                "depth": 1,
                                "locator": where,
                            }
                        )
                elif shape.has_text_frame and shape.text_frame.text.strip():
                    blocks.append(
                        {"type": "paragraph", "text": shape.text_frame.text, "locator": where}
                    )
                elif shape.has_table:
                    rows = [[cell.text for cell in row.cells] for row in shape.table.rows]
                    tables.append({"rows": rows, "locator": where})
    for index, block in enumerate(blocks):
        block["id"] = f"b{index}"
    return {"blocks": blocks, "tables": tables}


def reference_scores(artifacts: Path) -> dict[str, dict[str, Any]]:
    spec = importlib.util.spec_from_file_location("reference_scorer", REFERENCE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = {}
    for path in documents():
        artifact = artifacts / path.parent.name / f"{path.name}.json"
        found[f"{path.parent.name}/{path.name}"] = module.score_files(
            str(artifact), str(gold_of(path))
        )
    return found


def project_scores(artifacts: Path) -> dict[str, dict[str, float]]:
    found = {}
    for path in documents():
        artifact = json.loads(
            (artifacts / path.parent.name / f"{path.name}.json").read_text(encoding="utf-8")
        )
        gold = score.load_gold(gold_of(path))
        found[f"{path.parent.name}/{path.name}"] = {
            m: hits / total for m, (hits, total) in score.score_document(gold, artifact).items()
        }
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline-checkout", type=Path)
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--per-file", action="store_true", help="every file's scores")
    args = parser.parse_args()
    paths = documents()
    sides = {"this": ROOT}
    if args.baseline_checkout:
        sides["baseline"] = args.baseline_checkout.resolve()
    scored: dict[str, dict[str, dict[str, Any]]] = {}
    disagreements = []
    with tempfile.TemporaryDirectory() as temporary:
        for side, checkout in sides.items():
            out = Path(temporary) / side
            run_checkout(checkout, paths, out)
            reference = reference_scores(out)
            project = project_scores(out)
            for key, values in reference.items():
                for metric in METRICS:
                    mine = project[key].get(metric)
                    theirs = values.get(metric)
                    if theirs is not None and mine is not None and abs(mine - theirs) > 0.01:
                        disagreements.append((side, key, metric, mine, theirs))
            scored[side] = reference
        out = Path(temporary) / "established"
        for path in paths:
            target = out / path.parent.name / f"{path.name}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(established(path)), encoding="utf-8")
        scored["python-docx/pptx, openpyxl"] = reference_scores(out)
    report(scored, args.markdown, args.per_file)
    for side, key, metric, mine, theirs in disagreements:
        print(
            f"scorers disagree ({side}) {key} {metric}: project {mine:.3f}, reference {theirs:.3f}"
        )
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(scored, indent=1) + "\n", encoding="utf-8")
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")


def report(
    scored: dict[str, dict[str, dict[str, Any]]], markdown: bool, per_file: bool = False
) -> None:
    sides = list(scored)
    for fmt in ("docx", "pptx", "xlsx"):
        keys = [k for k in scored["this"] if k.startswith(fmt + "/")]
        if not keys:
            continue
        print(f"\n{fmt}: {len(keys)} documents (mean over the documents a metric is defined for)")
        header = ["reader", *METRICS]
        print_rows(header, [[side, *means(scored[side], keys)] for side in sides], markdown)
        for name, members in slices(fmt, keys).items():
            print(f"\n{fmt}, {name}: {len(members)} documents")
            rows = [[side, *means(scored[side], members)] for side in sides]
            print_rows(header, rows, markdown)
        if "baseline" in scored:
            changed = []
            for k in keys:
                for metric in METRICS:
                    before, after = scored["baseline"][k][metric], scored["this"][k][metric]
                    if before != after:
                        changed.append([k, metric, fmt_value(before), fmt_value(after)])
            if changed:
                print(f"\n{fmt}: files whose score changed")
                print_rows(["document", "metric", "before", "after"], changed, markdown)
        if per_file:
            print(f"\n{fmt}: every file, " + " / ".join(METRICS) + " (before -> after)")
            rows = []
            for k in keys:
                cells = []
                for metric in METRICS:
                    after = fmt_value(scored["this"][k][metric])
                    before = fmt_value(scored.get("baseline", scored["this"])[k][metric])
                    cells.append(after if before == after else f"{before} -> {after}")
                rows.append([k, *cells])
            print_rows(["document", *METRICS], rows, markdown)


def means(scores: dict[str, dict[str, Any]], keys: list[str]) -> list[str]:
    """Each metric's mean over the documents it is defined for, with their count."""
    cells = []
    for metric in METRICS:
        values = [scores[k][metric] for k in keys if scores[k][metric] is not None]
        cells.append(f"{mean(values):.3f} ({len(values)})" if values else "-")
    return cells


def slices(fmt: str, keys: list[str]) -> dict[str, list[str]]:
    """The DOCX documents by who wrote them: pandoc's writer (a document converter, the issue's
    row) or the Word-written and other documents of pandoc's reader tests."""
    if fmt != "docx":
        return {}
    written = [k for k in keys if k.startswith("docx/written__")]
    return {
        "written by a document converter (pandoc's writer tests)": written,
        "pandoc's reader tests (Word and other writers)": [k for k in keys if k not in written],
    }


def fmt_value(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def print_rows(header: list[str], rows: list[list[str]], markdown: bool) -> None:
    if markdown:
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))


if __name__ == "__main__":
    main()
