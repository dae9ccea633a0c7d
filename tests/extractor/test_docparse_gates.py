"""The qualification gate for DOCX, PPTX and PDF: the parsing bench's generated documents
(bench/docparse/{docx,pptx,pdf}, exact gold written by bench/docparse/generate_office.py and
generate_pdf.py), scored with tests/support/docparse_score.py against the floors in
docs/qualification.md.

The real documents of the shared corpus are scored by bench/docparse_office.py and
bench/docparse_pdf.py and reported beside the floors, shortfalls and their reasons included; they
are not gated, as their gold (docling's) counts what the seed says is not read (a chart's data,
numbering labels, LaTeX for equations) and flattens every PDF heading to one level.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from extractor_sandbox.source import extract
from tests.extractor import gates
from tests.support import docparse_score as score

BENCH = Path(__file__).resolve().parents[2] / "bench" / "docparse"
# Each format's slices in the qualification table; a PDF's generated documents are every slice at
# once (the scanned one counts only the pages its gold names as scanned).
SLICES = {
    "docx": ("documents",),
    "pptx": ("decks",),
    "pdf": ("text layer, every slice", "scanned", "every slice"),
}


Extract = Callable[[bytes, str, str], dict[str, Any]]


def read(data: bytes, fmt: str, name: str) -> dict[str, Any]:
    return extract(data, fmt, name, {})


def documents(fmt: str) -> list[Path]:
    return sorted(BENCH.joinpath(fmt).glob(f"*.{fmt}"))


def slice_scores(fmt: str, reader: Extract = read) -> dict[str, float]:
    pairs = []
    for source in documents(fmt):
        gold = score.load_gold(source.with_name(source.name + ".gold.json"))
        pairs.append((gold, reader(source.read_bytes(), fmt, source.name)))
    return score.score_slice(pairs)


def under_floors(fmt: str, scores: dict[str, float]) -> dict[str, tuple[float, float]]:
    """Each floor of the format's slice the scores fall under: metric -> (score, floor)."""
    return {
        row.metric: (round(scores.get(row.metric, 0.0), 4), row.floor)
        for row in gates.floors()
        if row.format == fmt
        and row.slice in SLICES[fmt]
        and scores.get(row.metric, 0.0) < row.floor
    }


@pytest.mark.parametrize("fmt", sorted(SLICES))
def test_each_slice_passes_its_floors(fmt: str) -> None:
    assert len(documents(fmt)) >= 2, f"no generated {fmt} documents under {BENCH}"
    assert under_floors(fmt, slice_scores(fmt)) == {}


@pytest.mark.parametrize("fmt", sorted(SLICES))
def test_every_floor_of_the_slice_is_measured(fmt: str) -> None:
    measured = slice_scores(fmt)
    floors = {
        row.metric for row in gates.floors() if row.format == fmt and row.slice in SLICES[fmt]
    }
    assert floors and floors <= set(measured)


@pytest.mark.parametrize("fmt", sorted(SLICES))
def test_the_gate_fails_a_parser_that_drops_a_block(fmt: str) -> None:
    def lossy(data: bytes, fmt: str, name: str) -> dict[str, Any]:
        artifact = read(data, fmt, name)
        body = [
            b
            for b in artifact["blocks"]
            if not (b.get("attrs") or {}).get("notes") and b["type"] != "heading"
        ]
        if body:
            artifact["blocks"].remove(body[-1])
        return artifact

    assert "text recall" in under_floors(fmt, slice_scores(fmt, lossy))


def test_the_gate_fails_a_deck_reader_that_loses_its_notes_and_slides() -> None:
    def no_notes_no_pages(data: bytes, fmt: str, name: str) -> dict[str, Any]:
        artifact = read(data, fmt, name)
        for block in artifact["blocks"]:
            block.get("attrs", {}).pop("notes", None)
            block["locator"] = {}
        return artifact

    assert {"notes", "locator"} <= set(
        under_floors("pptx", slice_scores("pptx", no_notes_no_pages))
    )


def test_the_gate_fails_a_pdf_reader_that_reads_a_scanned_page_as_empty() -> None:
    def silent(data: bytes, fmt: str, name: str) -> dict[str, Any]:
        artifact = read(data, fmt, name)
        artifact["coverage"]["failed"] = []
        artifact["warnings"] = []
        return artifact

    assert {"failed units", "announced loss"} <= set(
        under_floors("pdf", slice_scores("pdf", silent))
    )
