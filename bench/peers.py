"""Loom's readers beside the parsers people pick instead, on the shared corpus, in one run.

    bench/peers_setup.sh    # once: the peers' venvs under .peers/
    .venv/bin/python bench/peers.py [--peers DIR] [--suites md,pdf,...] [--markdown]

Each suite is a folder of `../shared/corpus/inputs/` (Markdown's CommonMark examples apart from
its documents). Loom reads every file in this process with the extractor's own dispatch
(detection, decoding, the reader, the output bounds), as the service's child does; each peer reads
the same files in its own virtual environment (`DIR/<venv>/bin/python`, default .peers/, which
bench/peers_setup.sh builds; never a dependency of the project) through bench/peers_runner.py. Every output is
scored by the reference scorer (`../shared/tools/docparse_score.py`) against the corpus's gold:
Loom's artifact as it is, a peer's Markdown read by the scorer's own Markdown reader (per page
where the peer gives pages), docling's DoclingDocument by the scorer's docling reader. The table
gives, per suite and metric, each tool's mean over the documents where the metric is defined,
and each tool's seconds (the conversions alone: no interpreter start or import, for any tool).

The peers and how they are installed (each in its own venv, from the package registry):
markitdown 0.1.9 with its docx/pptx/xlsx/pdf extras (lxml 6.1.0: 6.2 breaks its DOCX path),
pymupdf 2.0 (pymupdf4llm), pdfplumber 0.11, docling 2.143 (its formats other than PDF: its PDF
models come from a model hub, which this machine cannot reach). A peer that is not installed is
left out and named. The corpus's gold is docling's own regression output for the docling files
(see its README), so docling scores near 1.00 there by construction.

Writes bench/results/peers.json; --markdown prints the README's table.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any
from xml.etree import ElementTree

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extractor_sandbox.errors import ExtractError  # noqa: E402
from extractor_sandbox.source import extract  # noqa: E402

SHARED = ROOT.parent / "shared"
CORPUS = SHARED / "corpus"
SCORER_PATH = SHARED / "tools" / "docparse_score.py"
RUNNER = ROOT / "bench" / "peers_runner.py"
RESULTS = ROOT / "bench" / "results" / "peers.json"
METRICS = [
    "text_recall",
    "text_precision",
    "reading_order",
    "heading_f1",
    "heading_level",
    "table_cell_f1",
    "page_locator",
    "statement_f1",
    "toml_key_f1",
]
SLIDE_MARK = re.compile(r"<!-- Slide number: \d+ -->")
PEER_PACKAGES = {
    "markitdown": "markitdown",
    "docling": "docling",
    "pymupdf4llm": "pymupdf",
    "pdfplumber": "pdfplumber",
}


@dataclass(frozen=True)
class Suite:
    """A folder of the corpus read as one format, and the peers that read that format."""

    name: str
    folder: str
    loom_format: str
    pattern: str
    peers: tuple[str, ...]
    gold_by: str = ""  # a peer whose own output the gold is, so it is no yardstick here


SUITES = [
    Suite("md", "md", "markdown", "*.md", ("markitdown", "docling"), "docling"),
    Suite("md-commonmark", "md/commonmark-spec", "markdown", "*.md", ("markitdown", "docling")),
    Suite("html", "html", "html", "*.html", ("markitdown", "docling"), "docling"),
    Suite("csv", "csv", "csv", "*.csv", ("markitdown", "docling"), "docling"),
    Suite("docx", "docx", "docx", "*.docx", ("markitdown", "docling"), "docling"),
    Suite("pptx", "pptx", "pptx", "*.pptx", ("markitdown", "docling"), "docling"),
    Suite("xlsx", "xlsx", "xlsx", "*.xlsx", ("markitdown", "docling"), "docling"),
    Suite("pdf", "pdf", "pdf", "*.pdf", ("markitdown", "pymupdf4llm", "pdfplumber"), "docling"),
    Suite("sql", "sql", "sql", "**/*.sql", ("markitdown",)),
    Suite("toml", "toml", "toml", "**/*.toml", ("markitdown",)),
]


def load_scorer() -> ModuleType:
    """The reference scorer, loaded from the shared tools folder."""
    spec = importlib.util.spec_from_file_location("docparse_score", SCORER_PATH)
    if spec is None or spec.loader is None:
        raise SystemExit(f"no scorer at {SCORER_PATH}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def suite_files(suite: Suite, scorer: ModuleType) -> list[tuple[Path, str]]:
    """(input, gold) pairs of a suite: inputs without gold are left out, as the scorer does."""
    index = scorer._index_golds(str(CORPUS / "gold"))
    pairs = []
    for path in sorted((CORPUS / "inputs" / suite.folder).glob(suite.pattern)):
        key = str(path.relative_to(CORPUS / "inputs"))
        gold = scorer.find_gold(key, str(CORPUS / "gold"), index)
        if gold and not gold.endswith(".html"):
            pairs.append((path, gold))
    return pairs


def sheet_positions(path: Path) -> dict[str, int]:
    """A workbook's sheet names and their 1-based places, from its workbook part."""
    with zipfile.ZipFile(path) as package:
        root = ElementTree.fromstring(package.read("xl/workbook.xml"))
    names = [element.get("name", "") for element in root.iter() if element.tag.endswith("}sheet")]
    return {name: place for place, name in enumerate(names, start=1)}


def with_sheet_places(artifact: dict[str, Any], places: dict[str, int]) -> dict[str, Any]:
    """Loom cites a sheet by name (the contract's locator); the scorer counts sheets by place."""
    for item in [*artifact.get("blocks", []), *artifact.get("tables", [])]:
        locator = item.get("locator") or {}
        if locator.get("sheet") in places:
            item["locator"] = {**locator, "sheet_index": places[locator["sheet"]]}
    return artifact


def loom_outputs(suite: Suite, paths: list[Path]) -> tuple[list[dict[str, Any]], float]:
    """Loom's artifact of each file, and the seconds its reads took."""
    artifacts, seconds = [], 0.0
    for path in paths:
        data = path.read_bytes()
        started = time.perf_counter()
        try:
            artifact: dict[str, Any] = dict(extract(data, suite.loom_format, path.name, {}))
        except ExtractError as error:
            artifact = {"blocks": [], "coverage": {"failed": [{"reason": str(error)}]}}
        seconds += time.perf_counter() - started
        if suite.loom_format == "xlsx":
            artifact = with_sheet_places(artifact, sheet_positions(path))
        artifacts.append(artifact)
    return artifacts, seconds


def peer_outputs(peer: str, python: Path, paths: list[Path]) -> tuple[list[dict[str, Any]], float]:
    """The peer's raw outputs (bench/peers_runner.py's records), and the seconds they took."""
    with tempfile.TemporaryDirectory(prefix="loom-peers-") as scratch:
        listing = Path(scratch) / "files.txt"
        listing.write_text("\n".join(str(path) for path in paths) + "\n", encoding="utf-8")
        out = Path(scratch) / "out"
        env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
        subprocess.run(
            [str(python), str(RUNNER), peer, str(out), str(listing)],
            check=True,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        records = [
            json.loads((out / f"{index}.json").read_text(encoding="utf-8"))
            for index in range(len(paths))
        ]
    return records, sum(record["seconds"] for record in records)


def artifact_of_pages(scorer: ModuleType, pages: list[str]) -> dict[str, Any]:
    """A peer's per-page Markdown as one artifact whose blocks and tables cite their page."""
    whole = scorer.Gold()
    for number, markdown in enumerate(pages, start=1):
        page = scorer.parse_markdown_gold(markdown)
        offset = len(whole.blocks)
        for block in page.blocks:
            whole.blocks.append({**block, "page": number})
        for table in page.tables:
            whole.tables.append(
                {**table, "page": number, "after_block": offset + table["after_block"]}
            )
    whole.page_count = len(pages)
    return dict(scorer.synthesize_artifact(whole))


def artifact_of_peer(scorer: ModuleType, record: dict[str, Any]) -> dict[str, Any]:
    """What the scorer reads of a peer's output: the scorer's own readers of its Markdown or JSON."""
    kind, output = record["kind"], record["output"]
    if kind == "markdown" and SLIDE_MARK.search(output):
        # markitdown marks each slide with a comment: its slides are its pages.
        return artifact_of_pages(scorer, SLIDE_MARK.split(output)[1:])
    if kind == "markdown":
        return dict(scorer.synthesize_artifact(scorer.parse_markdown_gold(output)))
    if kind == "pages":
        return artifact_of_pages(scorer, output)
    if kind == "docling":
        return dict(scorer.synthesize_artifact(scorer.parse_docling_json(output)))
    return {"blocks": [], "coverage": {}}


def mean_scores(
    scorer: ModuleType, golds: list[str], artifacts: list[dict[str, Any]], fmt: str
) -> dict[str, dict[str, float]]:
    """Each metric's mean over the documents it is defined for, and that count."""
    values: dict[str, list[float]] = {metric: [] for metric in METRICS}
    for gold_path, artifact in zip(golds, artifacts, strict=True):
        gold = scorer.load_gold(gold_path, fmt if fmt in ("toml", "csv") else None)
        result = scorer.score(gold, scorer.load_artifact(artifact))
        for metric in METRICS:
            if isinstance(result.get(metric), (int, float)):
                values[metric].append(float(result[metric]))
    return {
        metric: {"mean": sum(found) / len(found), "n": len(found)}
        for metric, found in values.items()
        if found
    }


def peer_pythons(folder: Path) -> dict[str, Path]:
    """The installed peers: each one's interpreter, where its venv holds it."""
    found = {}
    for peer, package in PEER_PACKAGES.items():
        python = folder / package / "bin" / "python"
        if python.exists():
            found[peer] = python
    return found


def peer_versions(pythons: dict[str, Path]) -> dict[str, str]:
    """Each installed peer's version, from its own environment."""
    versions = {}
    for peer, python in pythons.items():
        asked = f"import importlib.metadata as m; print(m.version({PEER_PACKAGES[peer]!r}))"
        done = subprocess.run([str(python), "-c", asked], capture_output=True, text=True)
        versions[peer] = done.stdout.strip() or "?"
    return versions


def run_suite(
    suite: Suite, scorer: ModuleType, pythons: dict[str, Path], say: Callable[[str], None]
) -> dict[str, Any]:
    pairs = suite_files(suite, scorer)
    paths, golds = [path for path, _ in pairs], [gold for _, gold in pairs]
    fmt = suite.folder.split("/")[0]
    tools: dict[str, Any] = {}
    artifacts, seconds = loom_outputs(suite, paths)
    tools["loom"] = {"scores": mean_scores(scorer, golds, artifacts, fmt), "seconds": seconds}
    say(f"{suite.name}: loom {seconds:.2f} s over {len(paths)} files")
    for peer in suite.peers:
        if peer not in pythons:
            continue
        records, seconds = peer_outputs(peer, pythons[peer], paths)
        peer_artifacts = [artifact_of_peer(scorer, record) for record in records]
        failed = sum(record["kind"] == "error" for record in records)
        tools[peer] = {
            "scores": mean_scores(scorer, golds, peer_artifacts, fmt),
            "seconds": seconds,
            "failed": failed,
        }
        say(f"{suite.name}: {peer} {seconds:.2f} s, {failed} failed")
    return {"files": len(paths), "gold_by": suite.gold_by, "tools": tools}


def best_peer(tools: dict[str, Any], metric: str, gold_by: str) -> tuple[str, float] | None:
    """The best score of a peer whose output is not the gold itself."""
    scored = [
        (peer, found["scores"][metric]["mean"])
        for peer, found in tools.items()
        if peer not in ("loom", gold_by) and metric in found["scores"]
    ]
    return max(scored, key=lambda pair: pair[1]) if scored else None


def print_markdown(results: dict[str, Any]) -> None:
    """The table: ▼ marks a Loom score below the best peer's that is not the gold's own maker."""
    print("| Suite | Files | Metric | Loom | " + " | ".join(PEER_PACKAGES) + " |")
    print("|---|---|---|---|" + "---|" * len(PEER_PACKAGES))
    for name, suite in results["suites"].items():
        tools = suite["tools"]
        rows = [m for m in METRICS if m in tools["loom"]["scores"]] + ["seconds"]
        for metric in rows:
            cells = []
            for tool in ["loom", *PEER_PACKAGES]:
                found = tools.get(tool)
                if found is None:
                    cells.append("")
                elif metric == "seconds":
                    cells.append(f"{found['seconds']:.2f}")
                elif metric in found["scores"]:
                    cells.append(f"{found['scores'][metric]['mean']:.3f}")
                else:
                    cells.append("-")
            best = best_peer(tools, metric, suite["gold_by"]) if metric != "seconds" else None
            loom = tools["loom"]["scores"].get(metric, {}).get("mean")
            if best is not None and loom is not None and round(loom, 3) < round(best[1], 3):
                cells[0] += " ▼"
            print(f"| {name} | {suite['files']} | {metric} | " + " | ".join(cells) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--peers", type=Path, default=ROOT / ".peers")
    parser.add_argument("--suites", default=",".join(suite.name for suite in SUITES))
    parser.add_argument("--markdown", action="store_true")
    args = parser.parse_args()
    if not SCORER_PATH.exists():
        raise SystemExit(f"no shared corpus scorer at {SCORER_PATH}")
    scorer = load_scorer()
    pythons = peer_pythons(args.peers)
    missing = sorted(set(PEER_PACKAGES) - set(pythons))
    wanted = set(args.suites.split(","))

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    if missing:
        say(f"not installed under {args.peers}, left out: {', '.join(missing)}")
    results: dict[str, Any] = {
        "machine": {
            "cores": os.cpu_count(),
            "load_before": os.getloadavg()[0],
            "date": time.strftime("%Y-%m-%d"),
        },
        "peers": peer_versions(pythons),
        "suites": {},
    }
    for suite in SUITES:
        if suite.name in wanted:
            results["suites"][suite.name] = run_suite(suite, scorer, pythons, say)
    results["machine"]["load_after"] = os.getloadavg()[0]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=1), encoding="utf-8")
    if args.markdown:
        print_markdown(results)
    else:
        print(json.dumps(results["machine"]), json.dumps(results["peers"]))
        print_markdown(results)


if __name__ == "__main__":
    main()
