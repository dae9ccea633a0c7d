"""The DOCX and PPTX readers on the parsing bench: per-document scores beside the floors.

    .venv/bin/python bench/docparse_office.py [--markdown] [--artifacts DIR]

Reads every document of the shared corpus (../shared/corpus/inputs/docx, inputs/pptx, scored
against their DoclingDocument gold as given) and of the bench's generated slice
(bench/docparse/docx, bench/docparse/pptx, exact gold), with the extractor's own dispatch
(detection, then the reader), scores each with tests/support/docparse_score.py, and prints each
document's gated metrics and each slice's (hits and totals summed over the slice) beside the
floors of docs/qualification.md. Writes bench/results/docparse_office.json; with --artifacts,
also each artifact as DIR/<format>/<name>.json, so `tests/support/docparse_score.py --dir DIR
--gold-dir ...` or the reference scorer can read them. --markdown prints the tables as the README shows them.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extractor_sandbox.errors import ExtractError  # noqa: E402
from extractor_sandbox.source import extract  # noqa: E402
from tests.support import docparse_score as score  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
GENERATED = ROOT / "bench" / "docparse"
QUALIFICATION = ROOT / "docs" / "qualification.md"
RESULTS = ROOT / "bench" / "results" / "docparse_office.json"
SLICE_NAMES = {"docx": "documents", "pptx": "decks"}


def floors(fmt: str) -> dict[str, float]:
    """The format's floors, read from the qualification table."""
    found = {}
    for line in QUALIFICATION.read_text(encoding="utf-8").splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 4 and cells[0] == fmt and re.fullmatch(r"\d\.\d\d", cells[3]):
            found[cells[2]] = float(cells[3])
    return found


def sources(fmt: str) -> dict[str, list[tuple[Path, Path]]]:
    """(document, gold) pairs of each slice: the corpus and the generated documents."""
    corpus = [
        (path, CORPUS / "gold" / fmt / f"{path.name}.json")
        for path in sorted((CORPUS / "inputs" / fmt).glob(f"*.{fmt}"))
    ]
    generated = [
        (path, path.with_name(path.name + ".gold.json"))
        for path in sorted((GENERATED / fmt).glob(f"*.{fmt}"))
    ]
    return {"corpus": corpus, "generated": generated}


def run_slice(
    fmt: str, pairs: list[tuple[Path, Path]], artifacts: Path | None
) -> tuple[list[dict[str, Any]], dict[str, float]]:
    documents, scored = [], []
    for path, gold_path in pairs:
        gold = score.load_gold(gold_path)
        try:
            artifact = extract(path.read_bytes(), fmt, path.name, {})
        except ExtractError as error:
            artifact = {
                "blocks": [],
                "coverage": {"failed": [{"unit": "file", "reason": str(error)}]},
            }
        if artifacts is not None:
            out = artifacts / fmt / f"{path.name}.json"
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(json.dumps(artifact, ensure_ascii=False), encoding="utf-8")
        shares = {
            m: hits / total for m, (hits, total) in score.score_document(gold, artifact).items()
        }
        failed = [unit["unit"] for unit in artifact.get("coverage", {}).get("failed", [])]
        documents.append({"document": path.name, "scores": shares, "failed_units": failed})
        scored.append((gold, artifact))
    return documents, score.score_slice(scored)


def cell(value: float | None, floor: float | None = None) -> str:
    if value is None:
        return "-"
    mark = " ✗" if floor is not None and round(value, 4) < floor else ""
    return f"{value:.2f}{mark}"


def print_table(
    fmt: str,
    slice_name: str,
    documents: list[dict[str, Any]],
    totals: dict[str, float],
    markdown: bool,
) -> None:
    gated = floors(fmt)
    metrics = list(gated)
    header = ["document", *metrics]
    rows = [
        [d["document"], *[cell(d["scores"].get(m), gated[m]) for m in metrics]] for d in documents
    ]
    rows.append([f"**{slice_name} slice**", *[cell(totals.get(m), gated[m]) for m in metrics]])
    rows.append(["floor", *[f"{gated[m]:.2f}" for m in metrics]])
    if markdown:
        print(f"\n{fmt} ({slice_name})\n")
        print("| " + " | ".join(header) + " |")
        print("|" + "---|" * len(header))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        return
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    print(f"\n{fmt} ({slice_name})")
    for row in [header, *rows]:
        print("  ".join(str(c).ljust(w) for c, w in zip(row, widths, strict=True)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--markdown", action="store_true")
    parser.add_argument("--artifacts", type=Path)
    args = parser.parse_args()
    results: dict[str, Any] = {}
    for fmt in ("docx", "pptx"):
        results[fmt] = {"floors": floors(fmt)}
        for slice_name, pairs in sources(fmt).items():
            documents, totals = run_slice(fmt, pairs, args.artifacts)
            results[fmt][slice_name] = {"slice": totals, "documents": documents}
            print_table(fmt, slice_name, documents, totals, args.markdown)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"\nwrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
