"""Hostile text inputs end as an artifact whose coverage says what was read, never a hang."""

from __future__ import annotations

import pytest

from extractor_sandbox.formats.markdown import extract_markdown
from extractor_sandbox.formats.text import extract_text

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
