"""Conformance of the HTML parser on the shared corpus (docling's HTML test set).

Decodes every input under shared/corpus/inputs/html as the service does (source.decode), runs
extract_html on it, checks each artifact with the server's parse_artifact, and scores the
artifacts with the reference scorer, shared/tools/docparse_score.py, against the corpus's gold
(docling's DoclingDocument JSON), as given. Prints text recall and precision, heading F1 and
level, and table cell F1 (the means over the files, as the scorer computes them), then one line
per file.

Page furniture (navigation, share and comment boxes, ...) is left out of the blocks and kept in
attrs.furniture; the same artifacts with that furniture put back as paragraphs, in line order,
are scored beside them as the baseline ("kept"; a heading among it counts as missed there), so
text precision shows what leaving it out gains and recall what it costs. With --readability DIR
(mozilla/readability's test/test-pages: a folder per page with source.html and expected.html, the
article readability extracts), the blocks' words are also scored against each page's expected
article, furniture kept and left out.

The scorer reads an HTML table block, whose attrs.table holds the contract's counts
({"rows": n, "columns": m}), from the block's text (a row per line, cells joined by " | "), which
is the table's whole content; so it scores the artifacts exactly as the extractor made them.

    .venv/bin/python bench/conformance_html.py [--shared ../shared] [--keep DIR] [--readability DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import unicodedata
from collections import Counter
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

from extractor_sandbox.formats.html import extract_html
from extractor_sandbox.source import decode
from loom_dagster.contract.validate import parse_artifact

SHARED = Path(__file__).resolve().parents[2] / "shared"
_WORD = re.compile(r"\w+")
METRICS = (
    "text_recall",
    "text_precision",
    "heading_f1",
    "heading_level",
    "table_cell_f1",
)


def extract_corpus(corpus: Path, out: Path, kept: Path) -> list[str]:
    names = []
    for path in sorted((corpus / "inputs" / "html").glob("*.html")):
        data = path.read_bytes()
        artifact = extract_html(decode(data, None, fmt="html"), {})
        raw = json.dumps(artifact, ensure_ascii=False, allow_nan=False).encode("utf-8")
        parse_artifact(raw, expected_format="html", original_size=len(data))
        for folder, written in ((out, artifact), (kept, furniture_kept(artifact))):
            target = folder / "html" / f"{path.name}.json"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(json.dumps(written, ensure_ascii=False))
        names.append(path.name)
    return names


def furniture_kept(artifact: dict[str, Any]) -> dict[str, Any]:
    """The artifact with its furniture put back among the blocks as paragraphs, in line order."""
    parts = artifact["attrs"].get("furniture", [])
    put_back = [
        {
            "type": "paragraph",
            "text": part["text"],
            "locator": {"line_start": part["line_start"], "line_end": part["line_end"]},
        }
        for part in parts
    ]
    blocks = sorted(artifact["blocks"] + put_back, key=lambda b: b["locator"]["line_start"])
    return {**artifact, "blocks": blocks}


def _words(text: str) -> Counter[str]:
    return Counter(_WORD.findall(unicodedata.normalize("NFKC", text).casefold()))


class _Text(HTMLParser):
    """The text of an expected.html (readability's output: an article's markup, no script)."""

    def __init__(self) -> None:
        super().__init__()
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def readability_scores(pages: Path) -> tuple[int, dict[str, tuple[float, float]]]:
    """Mean word precision and recall of the blocks against readability's expected article,
    furniture left out and kept."""
    sums = {"left out": [0.0, 0.0], "kept": [0.0, 0.0]}
    count = 0
    for page in sorted(p for p in pages.iterdir() if (p / "expected.html").is_file()):
        artifact = extract_html(decode((page / "source.html").read_bytes(), None, fmt="html"), {})
        reader = _Text()
        reader.feed((page / "expected.html").read_text(encoding="utf-8"))
        gold = _words(" ".join(reader.parts))
        for variant, written in (("left out", artifact), ("kept", furniture_kept(artifact))):
            found = _words(" ".join(block["text"] for block in written["blocks"]))
            common = sum((gold & found).values())
            sums[variant][0] += common / max(1, sum(found.values()))
            sums[variant][1] += common / max(1, sum(gold.values()))
        count += 1
    return count, {k: (v[0] / max(1, count), v[1] / max(1, count)) for k, v in sums.items()}


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


def _means(per_file: dict[str, Any]) -> dict[str, tuple[float | None, int]]:
    means: dict[str, tuple[float | None, int]] = {}
    for metric in METRICS:
        values = [r[metric] for r in per_file.values() if r.get(metric) is not None]
        means[metric] = (sum(values) / len(values), len(values)) if values else (None, 0)
    return means


def _show(value: Any) -> str:
    return "  -  " if value is None else f"{value:.3f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--shared", type=Path, default=SHARED)
    parser.add_argument("--keep", type=Path, help="write the scored artifacts here")
    parser.add_argument(
        "--readability", type=Path, help="mozilla/readability's test/test-pages folder"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = args.keep or Path(scratch) / "artifacts"
        kept = Path(scratch) / "furniture-kept"
        names = extract_corpus(args.shared / "corpus", out, kept)
        scores = score(args.shared, out, Path(scratch) / "scores.json")
        baseline = score(args.shared, kept, Path(scratch) / "kept.json")
    per_file = {Path(r["doc"]).name: r for r in scores.get("results", [])}
    means = _means(per_file)
    kept_means = _means({Path(r["doc"]).name: r for r in baseline.get("results", [])})
    print(f"html: {len(names)} inputs, every artifact accepted by parse_artifact")
    missing = scores.get("missing_gold") or []
    if missing:
        print(f"  no gold for {len(missing)}: {missing}")
    print(f"  {'':<16} {'furniture left out':>20} {'kept (baseline)':>18}")
    for metric, (mean, count) in means.items():
        print(
            f"  {metric:<16} {_show(mean):>20} {_show(kept_means[metric][0]):>18}  ({count} files)"
        )
    if args.readability:
        count, page_scores = readability_scores(args.readability)
        print(f"\n  readability's {count} test pages, the blocks' words against expected.html:")
        for variant, (precision, recall) in page_scores.items():
            print(f"  furniture {variant:<9} word precision {precision:.3f}  recall {recall:.3f}")
    print()
    print(f"  {'file':<42}" + "".join(f"{m[:12]:>14}" for m in METRICS))
    for name in names:
        metrics = per_file.get(name, {})
        print(f"  {name:<42}" + "".join(f"{_show(metrics.get(m)):>14}" for m in METRICS))


if __name__ == "__main__":
    main()
