"""What the reference extractor's text parsers share: lines, blocks, coverage, contract bounds.

The artifact is built as plain JSON-ready dicts (contract v1); the service serializes it.
Nothing here imports the server's package: the extractor is a separate program that only speaks
the contract.

Lines. A line ends at "\\r\\n", "\\r" or "\\n" (CommonMark's line endings). Line numbers are
1-based and char offsets are code points into the decoded text, char_end exclusive, so a CRLF
file counts its "\\r"s. A block's char span runs from the start of its first line to the end of
its last line's content, the last line's ending left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

SCHEMA_VERSION = 1

MAX_KEYS = 10_000
MAX_KEY_CHARS = 1_024
MAX_SECTION_ENTRIES = 64
MAX_SECTION_CHARS = 500

_LINE_END = re.compile(r"\r\n|\r|\n")


class Line(NamedTuple):
    """One source line: its 1-based number, its content without the ending, and where it sits."""

    number: int
    content: str
    start: int  # offset of the line's first character
    end: int  # offset just past its content, before the line ending
    ending: str  # "\r\n", "\r", "\n", or "" for a last line with no ending

    @property
    def is_blank(self) -> bool:
        return not self.content.strip(" \t")


def split_lines(text: str) -> list[Line]:
    """The text's lines; a text that ends with a line ending has no empty line after it."""
    lines: list[Line] = []
    start = 0
    for match in _LINE_END.finditer(text):
        lines.append(
            Line(len(lines) + 1, text[start : match.start()], start, match.start(), match.group())
        )
        start = match.end()
    if start < len(text):
        lines.append(Line(len(lines) + 1, text[start:], start, len(text), ""))
    return lines


def source_slice(text: str, first: Line, last: Line) -> str:
    """The source of a run of lines as written, without the last line's ending."""
    return text[first.start : last.end]


def locator(first: Line, last: Line) -> dict[str, int]:
    return {
        "line_start": first.number,
        "line_end": last.number,
        "char_start": first.start,
        "char_end": last.end,
    }


class BlockBuilder:
    """Collects blocks in reading order and gives them the ids b0, b1, ..."""

    def __init__(self) -> None:
        self.blocks: list[dict[str, Any]] = []

    def add(
        self,
        block_type: str,
        text: str,
        first: Line,
        last: Line,
        *,
        section_path: Sequence[str] = (),
        parent: str | None = None,
        depth: int | None = None,
        attrs: dict[str, Any] | None = None,
        keys: Sequence[str] = (),
    ) -> str:
        block_id = f"b{len(self.blocks)}"
        block: dict[str, Any] = {
            "id": block_id,
            "type": block_type,
            "text": text,
            "section_path": list(section_path),
            "keys": list(keys),
            "locator": locator(first, last),
        }
        if parent is not None:
            block["parent"] = parent
        if depth is not None:
            block["depth"] = depth
        if attrs:
            block["attrs"] = dict(attrs)
        self.blocks.append(block)
        return block_id


def coverage(
    unit: str,
    total: int,
    extracted: int,
    failed: Iterable[dict[str, str]] = (),
    lost: Iterable[str] = (),
) -> dict[str, Any]:
    failed_units = list(failed)
    lost_capabilities = list(lost)
    return {
        "unit": unit,
        "total": total,
        "extracted": extracted,
        "failed": failed_units,
        "lost": lost_capabilities,
        "complete": extracted == total and not failed_units and not lost_capabilities,
    }


def line_coverage(
    lines: Sequence[Line], blocks: Sequence[dict[str, Any]], markup_lines: Iterable[int] = ()
) -> dict[str, Any]:
    """Coverage in non-blank lines, counted from the blocks' line spans and the markup-only lines.

    It is counted from the spans rather than trusted from the parser, so a parser change that drops
    a line shows up as extracted < total and a failed unit naming the lines.
    """
    covered = set(markup_lines)
    for block in blocks:
        span = block["locator"]
        covered.update(range(span["line_start"], span["line_end"] + 1))
    non_blank = [line.number for line in lines if not line.is_blank]
    missing = [number for number in non_blank if number not in covered]
    failed = [
        {"unit": _line_range_name(run), "reason": "not read into any block"}
        for run in _runs(missing)
    ]
    return coverage("lines", len(non_blank), len(non_blank) - len(missing), failed)


def _runs(numbers: Sequence[int]) -> list[tuple[int, int]]:
    runs: list[tuple[int, int]] = []
    for number in numbers:
        if runs and runs[-1][1] == number - 1:
            runs[-1] = (runs[-1][0], number)
        else:
            runs.append((number, number))
    return runs


def _line_range_name(run: tuple[int, int]) -> str:
    first, last = run
    return f"line {first}" if first == last else f"lines {first}-{last}"


def build_artifact(
    format_name: str,
    parser: str,
    parser_version: str,
    blocks: list[dict[str, Any]],
    artifact_coverage: dict[str, Any],
    *,
    options: dict[str, Any] | None = None,
    attrs: dict[str, Any] | None = None,
    warnings: Sequence[str] = (),
) -> dict[str, Any]:
    """A complete artifact, fitted to the contract's bounds."""
    built: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "format": format_name,
        "parser": parser,
        "parser_version": parser_version,
        "options": dict(options or {}),
        "attrs": dict(attrs or {}),
        "warnings": list(warnings),
        "coverage": artifact_coverage,
        "blocks": blocks,
    }
    return fit_contract_bounds(built)


def fit_contract_bounds(built: dict[str, Any]) -> dict[str, Any]:
    """Fit each block's keys and section path to the contract's bounds, in place; return it.

    A key over 1,024 characters is left out and the first 10,000 kept; the section path keeps its
    first 64 entries, each cut to 500 characters. A cut block is marked (attrs.keys_truncated,
    attrs.section_truncated) and coverage.lost names what was lost, so the artifact does not report
    itself complete. The block's text and locator are left whole.
    """
    lost: list[str] = list(built["coverage"].get("lost", []))
    for block in built["blocks"]:
        keys = block.get("keys", [])
        fitted_keys = [key for key in keys if len(key) <= MAX_KEY_CHARS][:MAX_KEYS]
        if fitted_keys != keys:
            block["keys"] = fitted_keys
            block.setdefault("attrs", {})["keys_truncated"] = True
            _add_once(lost, "exact_keys")
        path = block.get("section_path", [])
        fitted_path = [entry[:MAX_SECTION_CHARS] for entry in path[:MAX_SECTION_ENTRIES]]
        if fitted_path != path:
            block["section_path"] = fitted_path
            block.setdefault("attrs", {})["section_truncated"] = True
            _add_once(lost, "section_path")
    cov = built["coverage"]
    cov["lost"] = lost
    cov["complete"] = cov["extracted"] == cov["total"] and not cov.get("failed") and not lost
    return built


def _add_once(items: list[str], item: str) -> None:
    if item not in items:
        items.append(item)
