"""Plain text extraction, and the artifact helpers every text parser shares (coverage, bounds)."""

from __future__ import annotations

import platform
import random
from typing import Any

from extractor_sandbox.artifact import (
    BlockBuilder,
    build_artifact,
    fit_contract_bounds,
    line_coverage,
    split_lines,
)
from extractor_sandbox.formats.text import PARSER_VERSION, extract_text


def lines_of(block: dict[str, Any]) -> tuple[int, int]:
    return block["locator"]["line_start"], block["locator"]["line_end"]


def chars_of(block: dict[str, Any]) -> tuple[int, int]:
    return block["locator"]["char_start"], block["locator"]["char_end"]


def source_of(text: str, block: dict[str, Any]) -> str:
    start, end = chars_of(block)
    return text[start:end]


# The envelope


def test_artifact_envelope_is_contract_v1():
    artifact = extract_text("hello\n")

    assert artifact["schema_version"] == 1
    assert artifact["format"] == "text"
    assert artifact["parser"] == "loom-text"
    assert artifact["parser_version"] == f"1+python{platform.python_version()}"
    assert PARSER_VERSION == artifact["parser_version"]
    assert artifact["options"] == {}
    assert artifact["attrs"] == {}
    assert artifact["warnings"] == []
    assert set(artifact) == {
        "schema_version",
        "format",
        "parser",
        "parser_version",
        "options",
        "attrs",
        "warnings",
        "coverage",
        "blocks",
    }


def test_block_shape_ids_in_order_keys_empty_no_section():
    artifact = extract_text("one\n\ntwo\n\nthree\n")

    assert [block["id"] for block in artifact["blocks"]] == ["b0", "b1", "b2"]
    for block in artifact["blocks"]:
        assert block["type"] == "paragraph"
        assert block["keys"] == []
        assert block["section_path"] == []
        assert "parent" not in block
        assert "depth" not in block
        assert set(block["locator"]) == {"line_start", "line_end", "char_start", "char_end"}


# Paragraphs


def test_one_paragraph_per_run_of_non_blank_lines():
    text = "first line\nsecond line\n\n\nthird\n"
    artifact = extract_text(text)

    blocks = artifact["blocks"]
    assert [block["text"] for block in blocks] == ["first line\nsecond line", "third"]
    assert [lines_of(block) for block in blocks] == [(1, 2), (5, 5)]
    assert [chars_of(block) for block in blocks] == [(0, 22), (25, 30)]
    for block in blocks:
        assert source_of(text, block) == block["text"]


def test_hash_line_is_text_not_a_heading():
    text = "# Not a heading\nstill the same paragraph\n"
    blocks = extract_text(text)["blocks"]

    assert len(blocks) == 1
    assert blocks[0]["type"] == "paragraph"
    assert blocks[0]["text"] == "# Not a heading\nstill the same paragraph"
    assert lines_of(blocks[0]) == (1, 2)


def test_whitespace_only_line_separates_paragraphs():
    text = "alpha\n  \t \nbeta"
    blocks = extract_text(text)["blocks"]

    assert [block["text"] for block in blocks] == ["alpha", "beta"]
    assert [lines_of(block) for block in blocks] == [(1, 1), (3, 3)]
    assert chars_of(blocks[1]) == (text.index("beta"), len(text))


def test_paragraph_keeps_its_indentation_and_trailing_spaces_as_written():
    text = "    indented line  \n\tand a tab\n"
    blocks = extract_text(text)["blocks"]

    assert blocks[0]["text"] == "    indented line  \n\tand a tab"
    assert source_of(text, blocks[0]) == blocks[0]["text"]


def test_last_line_without_newline():
    text = "a\nb"
    blocks = extract_text(text)["blocks"]

    assert blocks[0]["text"] == "a\nb"
    assert chars_of(blocks[0]) == (0, 3)
    assert lines_of(blocks[0]) == (1, 2)


def test_empty_and_blank_texts_have_no_blocks_and_are_complete():
    for text in ("", "\n\n", "   \n\t\n"):
        artifact = extract_text(text)
        assert artifact["blocks"] == []
        assert artifact["coverage"] == {
            "unit": "lines",
            "total": 0,
            "extracted": 0,
            "failed": [],
            "lost": [],
            "complete": True,
        }


def test_char_offsets_are_code_points():
    text = "héllo 🎉\n\nnext"
    blocks = extract_text(text)["blocks"]

    assert chars_of(blocks[0]) == (0, 7)
    assert chars_of(blocks[1]) == (9, 13)
    assert source_of(text, blocks[1]) == "next"


# Line endings


def test_crlf_lines_and_chars_count_the_carriage_returns():
    text = "one\r\ntwo\r\n\r\nthree\r\n"
    blocks = extract_text(text)["blocks"]

    assert [lines_of(block) for block in blocks] == [(1, 2), (4, 4)]
    # "one\r\ntwo" is 8 code points; "three" starts after "\r\n\r\n" at 12.
    assert [chars_of(block) for block in blocks] == [(0, 8), (12, 17)]
    assert blocks[0]["text"] == "one\r\ntwo"
    assert blocks[1]["text"] == "three"
    for block in blocks:
        assert source_of(text, block) == block["text"]


def test_lone_carriage_return_ends_a_line():
    text = "one\rtwo\r\rthree"
    blocks = extract_text(text)["blocks"]

    assert [lines_of(block) for block in blocks] == [(1, 2), (4, 4)]
    assert [block["text"] for block in blocks] == ["one\rtwo", "three"]


def line_by_line(text: str) -> dict[str, Any]:
    """The reader as it was before issue 15: split into lines, a block per run of non-blank
    lines, coverage from the blocks' spans. The fast reader must give the same artifact."""
    lines = split_lines(text)
    builder = BlockBuilder()
    run: list[Any] = []
    for line in [*lines, None]:
        if line is not None and not line.is_blank:
            run.append(line)
        elif run:
            builder.add("paragraph", text[run[0].start : run[-1].end], run[0], run[-1])
            run = []
    return build_artifact(
        "text", "loom-text", PARSER_VERSION, builder.blocks, line_coverage(lines, builder.blocks)
    )


def test_the_same_artifact_as_reading_line_by_line_on_random_texts():
    rng = random.Random(15)
    pieces = ["a", "#", " ", "\t", "\r", "\n", "\r\n", "\f", "\v", "\u2028", "\x85", "é"]
    texts = ["", " ", "\t", "\r\n", "\n\r", " \r\n \r \n", "a\r", "a\r\r\n\nb  "]
    texts += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 40))) for _ in range(3000)]
    for text in texts:
        assert extract_text(text) == line_by_line(text), repr(text)


def test_long_runs_of_spaces_and_tabs_around_one_line():
    # The separator pattern starts at a line ending, so a long line is not tried at each space.
    text = " " * 2_000_000 + "x\n" + "\t" * 2_000_000
    artifact = extract_text(text)

    assert [(b["locator"]["line_start"], b["locator"]["line_end"]) for b in artifact["blocks"]] == [
        (1, 1)
    ]
    assert artifact["coverage"]["total"] == 1


def test_split_lines_numbers_and_offsets():
    lines = split_lines("a\r\nbb\n\rc")

    assert [(line.number, line.content, line.start, line.end, line.ending) for line in lines] == [
        (1, "a", 0, 1, "\r\n"),
        (2, "bb", 3, 5, "\n"),
        (3, "", 6, 6, "\r"),
        (4, "c", 7, 8, ""),
    ]


# Coverage


def test_coverage_counts_non_blank_lines():
    artifact = extract_text("a\nb\n\n\nc\n   \nd\n")

    assert artifact["coverage"] == {
        "unit": "lines",
        "total": 4,
        "extracted": 4,
        "failed": [],
        "lost": [],
        "complete": True,
    }


def test_coverage_is_counted_from_block_spans_so_a_dropped_line_is_a_failed_unit():
    text = "a\n\nb\nc\n\nd\n\ne\n"
    blocks = extract_text(text)["blocks"]
    kept = [blocks[0], blocks[3]]  # as if a parser change lost "b\nc" and "d"

    coverage = line_coverage(split_lines(text), kept)

    assert coverage["total"] == 5
    assert coverage["extracted"] == 2
    assert coverage["failed"] == [
        {"unit": "lines 3-4", "reason": "not read into any block"},
        {"unit": "line 6", "reason": "not read into any block"},
    ]
    assert coverage["complete"] is False


def test_markup_lines_count_as_extracted():
    text = "a\n---\nb\n"
    first_line_only = [_block()]

    coverage = line_coverage(split_lines(text), first_line_only, markup_lines=[2])

    assert (coverage["total"], coverage["extracted"]) == (3, 2)
    assert coverage["failed"] == [{"unit": "line 3", "reason": "not read into any block"}]


# Contract bounds


def _artifact_with(block: dict[str, Any]) -> dict[str, Any]:
    return {
        "coverage": {
            "unit": "lines",
            "total": 1,
            "extracted": 1,
            "failed": [],
            "lost": [],
            "complete": True,
        },
        "blocks": [block],
    }


def _block(**fields: Any) -> dict[str, Any]:
    block = {
        "id": "b0",
        "type": "paragraph",
        "text": "t",
        "section_path": [],
        "keys": [],
        "locator": {"line_start": 1, "line_end": 1, "char_start": 0, "char_end": 1},
    }
    block.update(fields)
    return block


def test_bounds_leave_a_fitting_block_untouched():
    fitted = fit_contract_bounds(
        _artifact_with(_block(keys=["k" * 1024], section_path=["s" * 500] * 64))
    )

    block = fitted["blocks"][0]
    assert block["keys"] == ["k" * 1024]
    assert block["section_path"] == ["s" * 500] * 64
    assert "attrs" not in block
    assert fitted["coverage"]["lost"] == []
    assert fitted["coverage"]["complete"] is True


def test_bounds_leave_out_long_keys_keep_first_10000_and_mark_the_loss():
    keys = ["x" * 1025] + [f"k{i}" for i in range(10_005)]
    fitted = fit_contract_bounds(_artifact_with(_block(keys=keys)))

    block = fitted["blocks"][0]
    assert block["keys"] == [f"k{i}" for i in range(10_000)]
    assert block["attrs"] == {"keys_truncated": True}
    assert fitted["coverage"]["lost"] == ["exact_keys"]
    assert fitted["coverage"]["complete"] is False


def test_bounds_cut_section_path_to_64_entries_of_500_chars_and_mark_the_loss():
    path = ["a" * 501] + [f"s{i}" for i in range(70)]
    fitted = fit_contract_bounds(_artifact_with(_block(section_path=path, text="whole")))

    block = fitted["blocks"][0]
    assert block["section_path"] == ["a" * 500] + [f"s{i}" for i in range(63)]
    assert block["attrs"] == {"section_truncated": True}
    assert block["text"] == "whole"
    assert block["locator"] == {"line_start": 1, "line_end": 1, "char_start": 0, "char_end": 1}
    assert fitted["coverage"]["lost"] == ["section_path"]
    assert fitted["coverage"]["complete"] is False


def test_bounds_name_each_loss_once_and_keep_existing_attrs():
    artifact = _artifact_with(_block(keys=["x" * 2000], attrs={"language": "sql"}))
    artifact["blocks"].append(_block(id="b1", keys=["y" * 2000], section_path=["z" * 600]))

    fitted = fit_contract_bounds(artifact)

    assert fitted["blocks"][0]["attrs"] == {"language": "sql", "keys_truncated": True}
    assert fitted["blocks"][1]["attrs"] == {"keys_truncated": True, "section_truncated": True}
    assert fitted["coverage"]["lost"] == ["exact_keys", "section_path"]
