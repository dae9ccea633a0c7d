"""One peer parser over a list of files, run inside that peer's own environment by bench/peers.py.

    <peer venv>/bin/python bench/peers_runner.py TOOL OUTDIR LISTFILE

TOOL is markitdown, docling, pymupdf4llm or pdfplumber; LISTFILE holds one input path a line. For
each input it writes OUTDIR/<index>.json: {"path", "seconds", "kind", "output"} where kind says
what `output` is ("markdown"; "pages", a list of per-page Markdown strings; "docling", a
DoclingDocument as a dict; or "error" with the message). Standard library and the peer only: this
file never imports the project, so no peer becomes one of its dependencies. The time counted is the
conversion of each file, not the interpreter's start or the peer's import, as for Loom's readers.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Converter = Callable[[str], tuple[str, Any]]


def markitdown_converter() -> Converter:
    from markitdown import MarkItDown

    converter = MarkItDown()

    def convert(path: str) -> tuple[str, Any]:
        return "markdown", converter.convert(path).text_content

    return convert


def docling_converter() -> Converter:
    from docling.document_converter import DocumentConverter

    converter = DocumentConverter()

    def convert(path: str) -> tuple[str, Any]:
        return "docling", converter.convert(path).document.export_to_dict()

    return convert


def pymupdf4llm_converter() -> Converter:
    import pymupdf4llm

    def convert(path: str) -> tuple[str, Any]:
        chunks = pymupdf4llm.to_markdown(path, page_chunks=True, show_progress=False)
        return "pages", [chunk["text"] for chunk in chunks]

    return convert


def pdfplumber_converter() -> Converter:
    import pdfplumber

    def page_markdown(page: Any) -> str:
        # Each text line a paragraph, then the page's tables as pipe tables: the plain use of
        # pdfplumber's two calls, with no layout of our own added.
        parts = [line for line in (page.extract_text() or "").splitlines() if line.strip()]
        for table in page.extract_tables():
            rows = [[" ".join((cell or "").split()) for cell in row] for row in table]
            if rows:
                width = max(len(row) for row in rows)
                parts.append("")
                parts.append("| " + " | ".join(rows[0]) + " |")
                parts.append("|" + " --- |" * width)
                parts.extend("| " + " | ".join(row) + " |" for row in rows[1:])
                parts.append("")
        return "\n\n".join(parts)

    def convert(path: str) -> tuple[str, Any]:
        with pdfplumber.open(path) as pdf:
            return "pages", [page_markdown(page) for page in pdf.pages]

    return convert


CONVERTERS: dict[str, Callable[[], Converter]] = {
    "markitdown": markitdown_converter,
    "docling": docling_converter,
    "pymupdf4llm": pymupdf4llm_converter,
    "pdfplumber": pdfplumber_converter,
}


def main() -> None:
    tool, outdir, listfile = sys.argv[1:4]
    convert = CONVERTERS[tool]()
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [line for line in Path(listfile).read_text(encoding="utf-8").splitlines() if line]
    for index, path in enumerate(paths):
        started = time.perf_counter()
        try:
            kind, output = convert(path)
        except Exception as error:  # a peer's failure on one file is its score, not the bench's end
            kind, output = "error", f"{type(error).__name__}: {error}"
        seconds = time.perf_counter() - started
        record = {"path": path, "seconds": seconds, "kind": kind, "output": output}
        (out / f"{index}.json").write_text(json.dumps(record, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
