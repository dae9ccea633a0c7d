"""Hostile text inputs end as an artifact whose coverage says what was read, never a hang."""

from __future__ import annotations

import json

import pytest

from extractor_sandbox.artifact import MAX_BLOCKS, MERGED
from extractor_sandbox.formats.markdown import extract_markdown
from extractor_sandbox.formats.text import extract_text
from extractor_sandbox.source import extract
from tests.extractor.server_check import validated

FIFTY_MB = 50 * 1024 * 1024


@pytest.mark.slow
@pytest.mark.parametrize("extract", [extract_markdown, extract_text])
def test_a_fifty_megabyte_line_is_one_block_read_whole(extract) -> None:  # type: ignore[no-untyped-def]
    artifact = extract("x" * FIFTY_MB)
    [block] = artifact["blocks"]
    assert len(block["text"]) == FIFTY_MB
    assert block["locator"]["char_end"] == FIFTY_MB
    assert artifact["coverage"]["complete"] is True


@pytest.mark.parametrize(
    "text",
    [
        "> " * 10_000 + "deep\n",  # 10,000 nested block quotes
        "- " * 10_000 + "deep\n",  # 10,000 nested lists
        "".join(" " * i + "- item\n" for i in range(10_000)),  # a list indented 10,000 deep
    ],
    ids=["quotes", "lists", "indented-lists"],
)
def test_ten_thousand_levels_of_nesting_are_read_without_recursion(text: str) -> None:
    artifact = extract_markdown(text)
    coverage = artifact["coverage"]
    assert coverage["extracted"] == coverage["total"] == text.count("\n")
    assert "deep" in artifact["blocks"][-1]["text"] or "item" in artifact["blocks"][-1]["text"]


@pytest.mark.slow
@pytest.mark.parametrize("fmt", ["markdown", "text"])
def test_a_million_tiny_paragraphs_make_a_bounded_artifact_that_keeps_every_word(fmt: str) -> None:
    # Issue 12.12: 3 MB of "a\n\n" was a million blocks, a 184 MB artifact, 65 s and 2.5 GB.
    data = b"a\n\n" * 1_000_000

    artifact = validated(extract(data, fmt, "tiny", {}), data)

    blocks = artifact["blocks"]
    assert len(blocks) == MAX_BLOCKS
    # Each block's JSON is about 250 bytes and the text, its newlines escaped, twice its size.
    size = len(json.dumps(artifact, ensure_ascii=False).encode("utf-8"))
    assert size < 2 * len(data) + MAX_BLOCKS * 256
    assert sum(block["text"].count("a") for block in blocks) == 1_000_000
    assert artifact["coverage"]["lost"] == [MERGED]
    assert artifact["coverage"]["complete"] is False
    assert artifact["warnings"][0].startswith("1000000 blocks merged into 50000:")
