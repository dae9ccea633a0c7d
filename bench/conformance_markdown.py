"""Conformance of the Markdown parser on the shared corpus, scored by the reference scorer.

Extracts every Markdown input of the corpus (the CommonMark spec's examples and docling's
documents) with the reference extractor's own code path (detection, strict decoding, the
parser) and scores the artifacts with shared/tools/docparse_score.py against the corpus's gold,
as given. Prints the scorer's table. (TOML, SQL and HTML have their own conformance scripts.)

    .venv/bin/python bench/conformance_markdown.py
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from extractor_sandbox.errors import ExtractError
from extractor_sandbox.source import extract

SHARED = Path(__file__).resolve().parents[2] / "shared"
CORPUS_FOLDER = {"markdown": "md", "html": "html", "sql": "sql", "toml": "toml", "csv": "csv"}


def extract_corpus(fmt: str, corpus: Path, out: Path) -> tuple[int, dict[str, int]]:
    folder = corpus / "inputs" / CORPUS_FOLDER[fmt]
    refused: dict[str, int] = {}
    count = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        count += 1
        key = path.relative_to(corpus / "inputs")
        target = out / f"{key}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            artifact = extract(path.read_bytes(), fmt, path.name, {})
        except ExtractError as error:
            refused[error.code] = refused.get(error.code, 0) + 1
            continue
        target.write_text(json.dumps(artifact, ensure_ascii=False))
    return count, refused


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--format", action="append", dest="formats", default=["markdown"])
    parser.add_argument("--shared", type=Path, default=SHARED)
    args = parser.parse_args()
    corpus = args.shared / "corpus"
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        for fmt in args.formats:
            count, refused = extract_corpus(fmt, corpus, out)
            print(f"{fmt}: {count} inputs, refused {refused or 'none'}")
        subprocess.run(
            [
                sys.executable,
                str(args.shared / "tools" / "docparse_score.py"),
                "--dir",
                str(out),
                "--gold-dir",
                str(corpus / "gold"),
            ],
            check=True,
        )


if __name__ == "__main__":
    main()
