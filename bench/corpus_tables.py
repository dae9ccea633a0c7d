"""The tabular readers against the shared corpus's spreadsheets and CSV files.

For each input under ../shared/corpus/inputs/{xlsx,csv}: the artifact, made in this process by
the extractor's own path (detection, decoding, the parser), written to a scratch folder as
<fmt>/<input name>.json, then scored by the reference scorer (../shared/tools/docparse_score.py:
table cell F1, a multiset overlap of non-empty cell texts over all tables, and text recall),
beside a header score of our own: the gold's column-header cells (DoclingDocument's
column_header) found among the names of our columns, as recall, precision and F1.

The gold is docling's: it splits a sheet into a table per data region and names no types, so
these numbers measure agreement with another reader's layout, not the seed's rules (those are
the fixtures', tests/extractor/gold/xlsx).

    .venv/bin/python bench/corpus_tables.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.source import extract

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS = SHARED / "corpus"
SCORER = SHARED / "tools" / "docparse_score.py"
FORMATS = {"xlsx": ("xlsx", (".xlsx", ".xlsm")), "csv": ("csv", (".csv",))}


def normalised(text: str) -> str:
    return " ".join(str(text).split()).lower()


def gold_headers(gold_path: Path) -> Counter[str]:
    """The texts of the gold's column-header cells, over all its tables."""
    document = json.loads(gold_path.read_text(encoding="utf-8"))
    found: Counter[str] = Counter()
    for entry in document.get("tables", []):
        for cell in entry.get("data", {}).get("table_cells", []):
            if cell.get("column_header") and normalised(cell.get("text", "")):
                found[normalised(cell["text"])] += 1
    return found


def our_headers(artifact: dict[str, Any]) -> Counter[str]:
    found: Counter[str] = Counter()
    for entry in artifact.get("tables", []):
        for column in entry["columns"]:
            name = normalised(column["name"])
            if name and not name.startswith("column "):
                found[name] += 1
    return found


def f1(gold: Counter[str], ours: Counter[str]) -> tuple[float, float, float]:
    shared = sum((gold & ours).values())
    recall = shared / sum(gold.values()) if gold else 1.0
    precision = shared / sum(ours.values()) if ours else (1.0 if not gold else 0.0)
    score = 2 * recall * precision / (recall + precision) if recall + precision else 0.0
    return recall, precision, score


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="write the artifacts here (kept) rather than a temp folder")
    args = parser.parse_args()
    scratch = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="corpus-tables-"))
    headers: dict[str, tuple[float, float, float]] = {}
    refused: dict[str, str] = {}
    for folder, (fmt, suffixes) in FORMATS.items():
        (scratch / folder).mkdir(parents=True, exist_ok=True)
        for source in sorted((CORPUS / "inputs" / folder).iterdir()):
            if source.suffix.lower() not in suffixes:
                continue
            key = f"{folder}/{source.name}"
            try:
                artifact = extract(source.read_bytes(), fmt, source.name, {})
            except ExtractError as error:
                refused[key] = str(error)
                continue
            (scratch / folder / f"{source.name}.json").write_text(
                json.dumps(artifact, ensure_ascii=False), encoding="utf-8"
            )
            gold = CORPUS / "gold" / folder / f"{source.name}.json"
            if gold.exists():
                headers[key] = f1(gold_headers(gold), our_headers(artifact))
    scored = subprocess.run(
        [
            sys.executable,
            str(SCORER),
            "--dir",
            str(scratch),
            "--gold-dir",
            str(CORPUS / "gold"),
            "--jsonl",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    per_doc: dict[str, dict[str, Any]] = {}
    summary = []
    for line in scored.stdout.splitlines():
        if line.startswith("{"):
            record = json.loads(line)
            name = str(record.get("doc") or record.get("artifact") or record.get("name") or "")
            per_doc[name] = record
        else:
            summary.append(line)
    print(f"{'file':48} {'cell F1':>8} {'cell R':>7} {'cell P':>7} {'text R':>7} {'head F1':>8}")
    for key in sorted(headers):
        record = next((r for name, r in per_doc.items() if name.endswith(key) or key in name), {})
        metrics = record.get("metrics", record)

        def show(metric: str, metrics: dict[str, Any] = metrics) -> str:
            value = metrics.get(metric)
            return f"{value:.3f}" if isinstance(value, (int, float)) else "-"

        print(
            f"{key:48} {show('table_cell_f1'):>8} {show('table_cell_recall'):>7} "
            f"{show('table_cell_precision'):>7} {show('text_recall'):>7} {headers[key][2]:8.3f}"
        )
    for key, reason in refused.items():
        print(f"{key:48} refused: {reason}")
    print("\nreference scorer summary:")
    print("\n".join(summary))
    if scored.returncode:
        print(scored.stderr, file=sys.stderr)


if __name__ == "__main__":
    main()
