"""The output bounds: the extractor fits its artifacts to the numbers the server refuses past.

The two packages may not import each other (the import contract in pyproject.toml), so each holds its own
copy of the numbers; this test, which may import both, holds them equal. And the helper the
Dagster side puts extractor or document strings into metadata with keeps them bounded.
"""

from __future__ import annotations

import pytest

from extractor_sandbox import contract as extractor
from loom_dagster.contract import validate as server
from loom_dagster.contract.metadata import METADATA_TEXT_CHARS, bounded_metadata, metadata_text
from loom_dagster.display import ELLIPSIS

SHARED = (
    "SCHEMA_VERSION",
    "MAX_KEYS",
    "MAX_KEY_CHARS",
    "MAX_SECTION_ENTRIES",
    "MAX_SECTION_CHARS",
    "MAX_BLOCKS",
    "BLOCKS_BASE",
    "BYTES_PER_BLOCK",
    "MAX_LABEL_CHARS",
    "MAX_MESSAGE_CHARS",
    "MAX_WARNINGS",
    "MAX_FAILED_UNITS",
    "MAX_LOST",
)


@pytest.mark.parametrize("name", SHARED)
def test_both_sides_hold_the_same_bound(name: str) -> None:
    assert getattr(extractor, name) == getattr(server, name)


@pytest.mark.parametrize("size", [0, 15, 16, 100, 3_000_000, 640_000, 639_999, 10**9])
def test_both_sides_compute_the_same_block_bound(size: int) -> None:
    assert extractor.block_bound(size) == server.block_bound(size)


def test_the_block_bound_is_a_base_plus_one_per_16_bytes_capped_at_50000() -> None:
    assert server.block_bound(0) == 10_000
    assert server.block_bound(3_000_000) == 50_000
    assert server.block_bound(160_000) == 20_000


# The metadata helper


def test_a_twenty_megabyte_string_becomes_one_bounded_line() -> None:
    text = metadata_text("parser\n" + "p" * 20 * 1024 * 1024)

    assert len(text) == METADATA_TEXT_CHARS
    assert text.startswith("parser ppp")
    assert text.endswith(ELLIPSIS)


def test_a_huge_value_of_spaces_still_shows_its_cut() -> None:
    text = metadata_text(" " * 10_000_000 + "tail", limit=20)

    assert text == ELLIPSIS


def test_control_characters_are_escaped_and_none_is_empty() -> None:
    assert metadata_text("a\x1b[2Jb\u202ec") == "a\\x1b[2Jb\\u202ec"
    assert metadata_text(None) == ""
    assert metadata_text("short") == "short"


def test_bounded_metadata_keeps_numbers_and_bounds_the_rest() -> None:
    assert bounded_metadata(
        {"chunks": 3, "ratio": 0.5, "ok": True, "parser": "x" * 600, "none": None}, limit=10
    ) == {"chunks": 3, "ratio": 0.5, "ok": True, "parser": "x" * 9 + ELLIPSIS, "none": ""}
