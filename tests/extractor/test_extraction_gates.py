"""The qualification gate: a format is declared only while it passes its floors.

Reads docs/qualification.md, scores the reference extractor's parsers on the labelled fixtures
in tests/extractor/gold/, and fails a slice under its floor; fails too when the capabilities
declare a format with no row, or claim anything beyond formats and their options.
"""

from __future__ import annotations

from typing import Any

import pytest

from extractor_sandbox.source import DECLARED_FORMATS, extract
from tests.extractor import gates

# The formats scored on the fixtures under tests/extractor/gold/ (docx, pptx and pdf are scored
# by the parsing bench, bench/docparse/).
FIXTURE_FORMATS = ("markdown", "text", "html", "sql", "toml", "csv", "xlsx", "parquet")


def run_parser(fmt: str) -> Any:
    def parse(data: bytes, name: str) -> dict[str, Any]:
        return extract(data, fmt, name, {})

    return parse


GATED = sorted(
    {
        (row.format, row.slice)
        for row in gates.floors()
        if row.format in DECLARED_FORMATS and row.format in FIXTURE_FORMATS
    }
)


@pytest.mark.parametrize(("fmt", "slice_"), GATED)
def test_each_declared_format_passes_its_floors(fmt: str, slice_: str) -> None:
    assert gates.fixtures(fmt), f"{fmt} is declared but has no labelled fixtures"
    scores = gates.score(fmt, run_parser(fmt))
    below = {
        row.metric: (round(scores.get(row.metric, 0.0), 4), row.floor)
        for row in gates.floors()
        if (row.format, row.slice) == (fmt, slice_) and scores.get(row.metric, 0.0) < row.floor
    }
    assert below == {}, f"{fmt} under its floors (score, floor): {below}"


def test_every_declared_format_has_a_row_in_the_table() -> None:
    tabled = {row.format for row in gates.floors()}
    assert set(DECLARED_FORMATS) <= tabled


def test_the_table_is_read() -> None:
    rows = gates.floors()
    assert len(rows) == 41
    assert gates.Floor("sql", "fixtures", "names", 1.0) in rows


def test_the_gate_fails_a_parser_that_drops_a_block() -> None:
    # The gate must be able to fail: a parser that loses the last block of each file scores
    # under 1.00 on recall and locator.
    def lossy(data: bytes, name: str) -> dict[str, Any]:
        artifact = extract(data, "markdown", name, {})
        artifact["blocks"] = artifact["blocks"][:-1]
        return artifact

    scores = gates.score("markdown", lossy)
    assert scores["text recall"] < 1.0 and scores["locator"] < 1.0


def test_the_capabilities_claim_only_formats_and_their_options() -> None:
    from extractor_sandbox.service import capabilities
    from extractor_sandbox.settings import load_settings

    document = capabilities(load_settings({}))
    # `slots` extends the answer too: the extractions it runs at once, which a client respects.
    assert set(document) == {"contract_version", "extractor", "max_bytes", "slots", "formats"}
    # Each format's own parser and version: the extension of the answer parsers.py reads.
    assert all(
        set(entry) == {"format", "options", "parser", "parser_version"}
        for entry in document["formats"]
    )
    tabled = {row.format for row in gates.floors()}
    assert {entry["format"] for entry in document["formats"]} <= tabled
