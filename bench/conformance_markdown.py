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
import re
import subprocess
import sys
import tempfile
from html.parser import HTMLParser
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


class _ExpectedHtml(HTMLParser):
    """Headings and code blocks of the spec's expected HTML for one example."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[tuple[int, str]] = []
        self.code: list[tuple[str | None, str]] = []
        self._heading: int | None = None
        self._code_language: str | None = None
        self._in_code = False
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if re.fullmatch(r"h[1-6]", tag):
            self._heading, self._text = int(tag[1]), []
        elif tag == "code" and self.lasttag == "code" and self.getpos() and self._pre_open:
            classes = dict(attrs).get("class") or ""
            self._code_language = classes.removeprefix("language-") or None
            self._in_code, self._text = True, []
        if tag == "pre":
            self._pre_open = True

    _pre_open = False

    def handle_endtag(self, tag: str) -> None:
        if self._heading and tag == f"h{self._heading}":
            self.headings.append((self._heading, "".join(self._text)))
            self._heading = None
        elif tag == "code" and self._in_code:
            self.code.append((self._code_language, "".join(self._text)))
            self._in_code = False
        elif tag == "pre":
            self._pre_open = False

    def handle_data(self, data: str) -> None:
        if self._heading or self._in_code:
            self._text.append(data)


def _words(text: str) -> tuple[str, ...]:
    return tuple(re.findall(r"\w+", text.lower()))


def commonmark_scores(corpus: Path) -> dict[str, tuple[int, int]]:
    """Headings with their levels, fenced code with its language, HTML blocks as written."""
    counts = {
        "headings": [0, 0],
        "code blocks": [0, 0],
        "code languages": [0, 0],
        "html blocks": [0, 0],
    }
    for source in sorted((corpus / "inputs" / "md" / "commonmark-spec").glob("*.md")):
        expected_html = (
            corpus / "gold" / "md" / "commonmark-spec" / f"{source.stem}.expected.html"
        ).read_text()
        expected = _ExpectedHtml()
        expected.feed(expected_html)
        try:
            blocks = extract(source.read_bytes(), "markdown", source.name, {})["blocks"]
        except ExtractError:
            blocks = []
        ours_headings = [
            (b.get("depth"), _words(b["text"])) for b in blocks if b["type"] == "heading"
        ]
        for level, text in expected.headings:
            counts["headings"][1] += 1
            counts["headings"][0] += (level, _words(text)) in ours_headings
        ours_code = [
            (b.get("attrs", {}).get("language"), b["text"]) for b in blocks if b["type"] == "code"
        ]
        for language, body in expected.code:
            counts["code blocks"][1] += 1
            found = [lang for lang, text in ours_code if text.rstrip("\n") == body.rstrip("\n")]
            counts["code blocks"][0] += bool(found)
            if language:
                counts["code languages"][1] += 1
                counts["code languages"][0] += language in found
        for block in blocks:
            if block.get("attrs", {}).get("html"):
                counts["html blocks"][1] += 1
                counts["html blocks"][0] += block["text"].strip() in expected_html
    return {name: (hits, total) for name, (hits, total) in counts.items()}


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
        for name, (hits, total) in commonmark_scores(corpus).items():
            print(f"commonmark {name}: {hits}/{total} = {hits / max(total, 1):.3f}")
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
