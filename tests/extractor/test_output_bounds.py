"""The output bounds the reference extractor fits every artifact to before it answers.

Blocks past the bound for the original's size are merged, never dropped, and the merge is
announced; free strings and lists past their bound are cut, and what was cut is counted.
"""

from __future__ import annotations

import copy
from typing import Any

from extractor_sandbox.artifact import (
    ELLIPSIS,
    MAX_BLOCKS,
    MAX_FAILED_UNITS,
    MAX_MESSAGE_CHARS,
    MAX_WARNINGS,
    MERGED,
    block_bound,
    build_artifact,
    coverage,
    fit_output_bounds,
    merge_blocks,
)
from extractor_sandbox.source import extract
from tests.extractor.server_check import validated


def block(number: int, **fields: Any) -> dict[str, Any]:
    made: dict[str, Any] = {
        "id": f"b{number}",
        "type": "paragraph",
        "text": f"p{number}",
        "section_path": [],
        "keys": [],
        "locator": {
            "line_start": number + 1,
            "line_end": number + 1,
            "char_start": 3 * number,
            "char_end": 3 * number + 2,
        },
    }
    made.update(fields)
    return made


def test_tiny_paragraphs_past_the_bound_for_the_files_size_are_merged_not_dropped() -> None:
    data = b"a\n\n" * 20_000  # 60,000 bytes: at most 10,000 + 60,000 // 16 = 13,750 blocks

    artifact = validated(extract(data, "markdown", "tiny.md", {}), data)

    blocks = artifact["blocks"]
    assert len(blocks) == 10_000  # two paragraphs each: the fewest merges that fit
    assert "".join(block["text"] for block in blocks).count("a") == 20_000
    assert blocks[0]["text"] == "a\n\na"
    assert blocks[0]["attrs"] == {"merged_blocks": 2}
    assert blocks[-1]["locator"] == {
        "line_start": 39_997,
        "line_end": 39_999,
        "char_start": 59_994,
        "char_end": 59_998,
    }
    cov = artifact["coverage"]
    assert (cov["total"], cov["extracted"], cov["failed"]) == (20_000, 20_000, [])
    assert (cov["lost"], cov["complete"]) == ([MERGED], False)
    assert artifact["warnings"] == [
        "20000 blocks merged into 10000: an artifact holds at most 10,000 blocks plus one per 16"
        " bytes of the original (60,000 bytes), and never more than 50,000; their text is whole,"
        " their own spans and differing attrs are not kept"
    ]


def test_an_artifact_within_the_bound_is_left_as_the_reader_made_it() -> None:
    data = b"a\n\n" * 10_000

    artifact = extract(data, "markdown", "tiny.md", {})

    assert len(artifact["blocks"]) == 10_000
    assert artifact["coverage"]["complete"] is True
    assert artifact["warnings"] == []
    assert "attrs" not in artifact["blocks"][0]


def test_alike_blocks_merge_while_parents_and_headings_stay_whole() -> None:
    heading = block(0, type="heading", depth=1, text="Title")
    under = [block(n, parent="b0", section_path=["Title"], keys=[f"k{n % 2}"]) for n in (1, 2)]
    blocks = [heading, *under, block(3, parent="b0", section_path=["Title"])]

    merged = merge_blocks(copy.deepcopy(blocks), 3)

    assert merged[0] == heading
    assert merged[1] == {
        "id": "b1",
        "type": "paragraph",
        "text": "p1\n\np2",
        "section_path": ["Title"],
        "keys": ["k1", "k0"],
        "locator": {"line_start": 2, "line_end": 3, "char_start": 3, "char_end": 8},
        "parent": "b0",
        "attrs": {"merged_blocks": 2},
    }
    assert merged[2]["id"] == "b3"


def test_blocks_that_are_not_alike_merge_when_nothing_else_fits() -> None:
    blocks = [
        block(0, type="heading", depth=1),
        block(1, parent="b0", attrs={"table_id": "t0"}),
        block(2, type="heading", depth=1, locator={"line_start": 3, "line_end": 3}),
        block(3, parent="b2", locator={"line_start": 4, "line_end": 4, "key_path": "k"}),
    ]

    merged = merge_blocks(copy.deepcopy(blocks), 2)

    assert [item["id"] for item in merged] == ["b0", "b2"]
    assert merged[0]["type"] == "paragraph"
    assert "depth" not in merged[0]
    assert merged[0]["attrs"] == {"merged_blocks": 2}
    assert merged[0]["text"] == "p0\n\np1"
    # b3's parent b2 went into the merged block b2; a span only some blocks had is left out.
    assert merged[1]["locator"] == {"line_start": 3, "line_end": 4}
    assert "parent" not in merged[1]


def test_a_parent_merged_into_an_earlier_block_is_named_by_that_block() -> None:
    blocks = [block(0), block(1), block(2, parent="b1"), block(3, parent="b1")]

    merged = merge_blocks(copy.deepcopy(blocks), 1)

    assert [item["id"] for item in merged] == ["b0"]
    merged = merge_blocks(copy.deepcopy(blocks), 3)  # b1 is a parent: it is not merged first
    assert [(item["id"], item.get("parent")) for item in merged] == [
        ("b0", None),
        ("b1", None),
        ("b2", "b1"),
    ]


def test_the_block_bound_never_passes_50000() -> None:
    assert block_bound(10**12) == MAX_BLOCKS


def _artifact(**fields: Any) -> dict[str, Any]:
    built = build_artifact("text", "loom-text", "1", [block(0)], coverage("lines", 1, 1))
    built.update(fields)
    return built


def test_warnings_past_the_bound_keep_the_first_and_count_the_rest() -> None:
    artifact = fit_output_bounds(_artifact(warnings=[f"w{n}" for n in range(1_500)]), 100)

    assert len(artifact["warnings"]) == MAX_WARNINGS
    assert artifact["warnings"][-2] == "w998"
    assert artifact["warnings"][-1] == "501 more warnings left out: an artifact lists at most 1,000"


def test_failed_units_past_the_bound_keep_the_first_and_count_the_rest() -> None:
    failed = [{"unit": f"page {n}", "reason": "needs OCR"} for n in range(1, 10_011)]
    artifact = fit_output_bounds(_artifact(coverage=coverage("pages", 10_010, 0, failed)), 100)

    cov = artifact["coverage"]
    assert len(cov["failed"]) == MAX_FAILED_UNITS
    assert cov["failed"][-1] == {
        "unit": "11 more units",
        "reason": "left out of this list: an artifact names at most 10,000",
    }
    assert (cov["total"], cov["extracted"], cov["complete"]) == (10_010, 0, False)


def test_long_free_strings_are_cut_with_an_ellipsis() -> None:
    long = "x" * 5_000
    artifact = _artifact(
        warnings=[long],
        parser="p" * 300,
        coverage=coverage("u" * 300, 1, 0, [{"unit": long, "reason": long}], ["l" * 300]),
        tables=[{"id": "t0", "name": long, "columns": [], "rows": []}],
    )

    fitted = validated(fit_output_bounds(artifact, 100), b"x" * 100)

    assert fitted["warnings"] == ["x" * (MAX_MESSAGE_CHARS - 1) + ELLIPSIS]
    assert fitted["parser"] == "p" * 199 + ELLIPSIS
    assert fitted["coverage"]["unit"] == "u" * 199 + ELLIPSIS
    assert fitted["coverage"]["failed"][0]["reason"] == "x" * 999 + ELLIPSIS
    assert fitted["coverage"]["lost"] == ["l" * 199 + ELLIPSIS]
    assert fitted["tables"][0]["name"] == "x" * 999 + ELLIPSIS


def test_a_key_path_past_1024_characters_is_left_out_and_the_loss_named() -> None:
    path = "k" * 1_025
    keyed = block(0, locator={"line_start": 1, "line_end": 1, "key_path": path}, keys=[path])
    artifact = build_artifact("toml", "loom-toml", "1", [keyed], coverage("keys", 1, 1))

    assert artifact["blocks"][0]["locator"] == {"line_start": 1, "line_end": 1}
    assert artifact["blocks"][0]["attrs"] == {"keys_truncated": True}
    assert artifact["coverage"]["lost"] == ["exact_keys"]
    validated(artifact, b"x" * 2_000)
