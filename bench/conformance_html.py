"""Conformance of the HTML parser on the shared corpus (docling's HTML test set).

Decodes every input under shared/corpus/inputs/html as the service does (source.decode), runs
extract_html on it, checks each artifact with the server's parse_artifact, and scores the
artifacts with the reference scorer, shared/tools/docparse_score.py, against the corpus's gold
(docling's DoclingDocument JSON), as given. Prints text recall and precision, heading F1 and
level, and table cell F1 (the means over the files, as the scorer computes them), then one line
per file.

The scorer reads an HTML table block, whose attrs.table holds the contract's counts
({"rows": n, "columns": m}), from the block's text (a row per line, cells joined by " | "), which
is the table's whole content; so it scores the artifacts exactly as the extractor made them.

    .venv/bin/python bench/conformance_html.py [--shared ../shared] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from extractor_sandbox.formats.html import extract_html
from extractor_sandbox.source import decode
from loom_dagster.contract.validate import parse_artifact

SHARED = Path(__file__).resolve().parents[2] / "shared"
METRICS = (
    "text_recall",
    "text_precision",
    "heading_f1",
    "heading_level",
    "table_cell_f1",
)


def extract_corpus(corpus: Path, out: Path) -> list[str]:
    names = []
    for path in sorted((corpus / "inputs" / "html").glob("*.html")):
        data = path.read_bytes()
        artifact = extract_html(decode(data, None, fmt="html"), {})
        raw = json.dumps(artifact, ensure_ascii=False, allow_nan=False).encode("utf-8")
        parse_artifact(raw, expected_format="html", original_size=len(data))
        target = out / "html" / f"{path.name}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(artifact, ensure_ascii=False))
        names.append(path.name)
    return names


def score(shared: Path, out: Path, results: Path) -> dict[str, Any]:
    subprocess.run(
        [
            sys.executable,
            str(shared / "tools" / "docparse_score.py"),
            "--dir",
            str(out),
            "--gold-dir",
            str(shared / "corpus" / "gold"),
            "--json-out",
            str(results),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    loaded: dict[str, Any] = json.loads(results.read_text())
    return loaded


def _show(value: Any) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--keep", type=Path, help="write the scored artifacts here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = args.keep or Path(scratch) / "artifacts"
        names = extract_corpus(args.shared / "corpus", out)
        scores = score(args.shared, out, Path(scratch) / "scores.json")
    per_file = {Path(r["doc"]).name: r for r in scores.get("results", [])}
    means = {}
    for metric in METRICS:
        values = [r[metric] for r in per_file.values() if r.get(metric) is not None]
        means[metric] = (sum(values) / len(values), len(values)) if values else (None, 0)
    print(f"html: {len(names)} inputs, every artifact accepted by parse_artifact")
    missing = scores.get("missing_gold") or []
    if missing:
        print(f"  no gold for {len(missing)}: {missing}")
    for metric, (mean, count) in means.items():
        print(f"  {metric:<16} {_show(mean)}  ({count} files)")
    print()
    print(f"  {'file':<42}" + "".join(f"{m[:12]:>14}" for m in METRICS))
    for name in names:
        metrics = per_file.get(name, {})
        print(f"  {name:<42}" + "".join(f"{_show(metrics.get(m)):>14}" for m in METRICS))


if __name__ == "__main__":
    main()
