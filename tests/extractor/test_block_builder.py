"""One block builder (artifact.BlockBuilder) for every reader: ids, the heading stack, parents,
section paths and any locator are made in one place."""

from __future__ import annotations

import ast
from pathlib import Path

from extractor_sandbox.artifact import BlockBuilder, split_lines

PACKAGE = Path(__file__).resolve().parents[2] / "extractor_sandbox"


def test_a_heading_closes_the_headings_at_its_depth_or_deeper() -> None:
    builder = BlockBuilder()
    top = builder.heading("Top", 1, {"page_start": 1, "page_end": 1})
    sub = builder.heading("Sub", 2, {})
    builder.place("paragraph", "under sub", {})
    again = builder.heading("Again", 1, {})
    builder.place("paragraph", "under again", {}, {"note": "x"})

    assert [b["id"] for b in builder.blocks] == ["b0", "b1", "b2", "b3", "b4"]
    assert [b["section_path"] for b in builder.blocks] == [
        [],
        ["Top"],
        ["Top", "Sub"],
        [],
        ["Again"],
    ]
    assert [b.get("parent") for b in builder.blocks] == [None, top, sub, None, again]
    assert builder.blocks[0]["locator"] == {"page_start": 1, "page_end": 1}
    assert builder.blocks[4]["attrs"] == {"note": "x"}


def test_a_given_section_path_and_parent_win_and_ids_can_start_later() -> None:
    builder = BlockBuilder(first_id=7)
    builder.heading("Open", 1, {})
    lines = split_lines("a\nb")
    block_id = builder.add("toml_key", "a", lines[0], lines[1], section_path=["t"], parent="b3")

    assert block_id == "b8"
    assert builder.blocks[1]["section_path"] == ["t"]
    assert builder.blocks[1]["parent"] == "b3"
    assert builder.blocks[1]["locator"] == {
        "line_start": 1,
        "line_end": 2,
        "char_start": 0,
        "char_end": 3,
    }


def test_leaving_the_sections_puts_what_follows_under_no_heading() -> None:
    builder = BlockBuilder()
    builder.heading("Slide", 1, {})
    builder.leave_sections()
    builder.place("paragraph", "notes", {})
    assert builder.blocks[1]["section_path"] == [] and "parent" not in builder.blocks[1]


def test_no_reader_makes_a_block_but_through_the_builder() -> None:
    # A block dict written out, an id spelled "b<n>" or a Line made up to get a locator are what
    # the readers' own builders were; the builder is the one place for each.
    offenders = []
    for path in sorted((PACKAGE / "formats").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Dict) and any(
                isinstance(key, ast.Constant) and key.value == "section_path" for key in node.keys
            ):
                offenders.append(f"{path.name}:{node.lineno} block dict")
            if isinstance(node, ast.JoinedStr) and node.values:
                head = node.values[0]
                if isinstance(head, ast.Constant) and head.value == "b":
                    offenders.append(f"{path.name}:{node.lineno} block id")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Line"
                and len(node.args) == 5
            ):
                offenders.append(f"{path.name}:{node.lineno} made-up Line")
            # A section path or parent set on a block after the builder made it.
            if isinstance(node, ast.Assign) and any(
                isinstance(target, ast.Subscript)
                and isinstance(target.slice, ast.Constant)
                and target.slice.value in ("parent", "section_path")
                for target in node.targets
            ):
                offenders.append(f"{path.name}:{node.lineno} block placed by hand")
    assert offenders == []
