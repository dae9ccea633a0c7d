"""What the reference extractor's parsers share: lines, blocks, coverage, contract and output bounds.

The artifact is built as plain JSON-ready dicts (contract v1); the service serializes it.
Nothing here imports the server's package: the extractor is a separate program that only speaks
the contract.

Lines. A line ends at "\\r\\n", "\\r" or "\\n" (CommonMark's line endings). Line numbers are
1-based and char offsets are code points into the decoded text, char_end exclusive, so a CRLF
file counts its "\\r"s. A block's char span runs from the start of its first line to the end of
its last line's content, the last line's ending left out.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, NamedTuple, TypeVar, cast

from extractor_sandbox.contract import (
    BLOCKS_BASE,
    BYTES_PER_BLOCK,
    MAX_BLOCKS,
    MAX_FAILED_UNITS,
    MAX_KEY_CHARS,
    MAX_KEYS,
    MAX_LABEL_CHARS,
    MAX_LOST,
    MAX_MESSAGE_CHARS,
    MAX_SECTION_CHARS,
    MAX_SECTION_ENTRIES,
    MAX_WARNINGS,
    SCHEMA_VERSION,
    Artifact,
    Coverage,
    FailedUnit,
    block_bound,
)

MERGED = "block_boundaries"  # coverage.lost when blocks were merged to fit MAX_BLOCKS
ELLIPSIS = "\u2026"

_LINE_END = re.compile(r"\r\n|\r|\n")

T = TypeVar("T")


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
    """The one place blocks are made: in reading order, with the ids b0, b1, ... (from
    `first_id`), and section paths and parents from the headings still open.

    A heading closes the open headings at its depth or deeper; its own section path holds the
    headings above it, not itself, and its parent is the innermost of those. Every other block
    sits under the innermost open heading, unless it is given its section_path and parent.
    A section path or parent given to `add` or `place` is used instead of the open headings' (TOML
    tables, SQL bodies). `leave_sections` starts a part of the document under no heading (a DOCX's
    notes, a new slide).
    The section path is kept whole here; build_artifact fits it to the contract's bounds.
    """

    def __init__(self, first_id: int = 0) -> None:
        self.blocks: list[dict[str, Any]] = []
        self._first_id = first_id
        self._open: list[tuple[int, str, str]] = []  # (depth, title, id) of the open headings

    def add(
        self,
        block_type: str,
        text: str,
        first: Line,
        last: Line,
        *,
        section_path: Sequence[str] | None = None,
        parent: str | None = None,
        depth: int | None = None,
        attrs: dict[str, Any] | None = None,
        keys: Sequence[str] = (),
    ) -> str:
        """A block spanning the lines `first` to `last` (its locator their lines and chars)."""
        return self.place(
            block_type,
            text,
            locator(first, last),
            attrs,
            section_path=section_path,
            parent=parent,
            depth=depth,
            keys=keys,
        )

    def place(
        self,
        block_type: str,
        text: str,
        where: Mapping[str, Any],
        attrs: Mapping[str, Any] | None = None,
        *,
        section_path: Sequence[str] | None = None,
        parent: str | None = None,
        depth: int | None = None,
        keys: Sequence[str] = (),
    ) -> str:
        """A block at `where`, any locator (pages, rows, a sheet, a key path, or none)."""
        block_id = f"b{self._first_id + len(self.blocks)}"
        if section_path is None:
            section_path = [title for _, title, _ in self._open]
        if parent is None and self._open:
            parent = self._open[-1][2]
        block: dict[str, Any] = {
            "id": block_id,
            "type": block_type,
            "text": text,
            "section_path": list(section_path),
            "keys": list(keys),
            "locator": dict(where),
        }
        if parent is not None:
            block["parent"] = parent
        if depth is not None:
            block["depth"] = depth
        if attrs:
            block["attrs"] = dict(attrs)
        self.blocks.append(block)
        return block_id

    def heading(
        self,
        text: str,
        depth: int,
        where: Mapping[str, Any],
        attrs: Mapping[str, Any] | None = None,
    ) -> str:
        """A heading: it closes the open headings at its depth or deeper, then opens its own."""
        self.close(depth)
        block_id = self.place("heading", text, where, attrs, depth=depth)
        self._open.append((depth, text, block_id))
        return block_id

    def close(self, depth: int) -> None:
        """Close the open headings at `depth` or deeper (as a heading that makes no block does)."""
        while self._open and self._open[-1][0] >= depth:
            self._open.pop()

    def leave_sections(self) -> None:
        self._open.clear()

    @property
    def section(self) -> tuple[list[str], str | None]:
        """The section path and parent a block placed now would get."""
        return [title for _, title, _ in self._open], self._open[-1][2] if self._open else None


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """No cyclic garbage collection inside: a parse makes many small containers (a table's
    million cells, a document's blocks) and the collector would walk each of them again and
    again (half the CSV reader's time). A cycle a parse makes is collected after it, when the
    collector runs again; the collector's state before is restored after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def coverage(
    unit: str,
    total: int,
    extracted: int,
    failed: Iterable[Mapping[str, object]] = (),
    lost: Iterable[str] = (),
) -> Coverage:
    # Each failed unit is {"unit", "reason"} as the readers write it; kept as given.
    failed_units = cast(list[FailedUnit], list(failed))
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
) -> Coverage:
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
    failed: list[dict[str, str]] = [
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
    artifact_coverage: Coverage,
    *,
    options: dict[str, Any] | None = None,
    attrs: dict[str, Any] | None = None,
    warnings: Sequence[str] = (),
) -> Artifact:
    """A complete artifact, fitted to the contract's bounds."""
    built: Artifact = {
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


def fit_contract_bounds(built: Artifact) -> Artifact:
    """Fit each block's keys and section path to the contract's bounds, in place; return it.

    A key over 1,024 characters is left out and the first 10,000 kept (a locator's key_path over
    1,024 characters too, as it is the same name); the section path keeps its
    first 64 entries, each cut to 500 characters. A cut block is marked (attrs.keys_truncated,
    attrs.section_truncated) and coverage.lost names what was lost, so the artifact does not report
    itself complete. The block's text and locator are left whole.
    """
    lost: list[str] = list(built["coverage"].get("lost", []))
    for block in built["blocks"]:
        keys = block.get("keys", [])
        if (
            not keys
            and not block.get("section_path")
            and "key_path" not in block.get("locator", ())
        ):
            continue  # nothing to fit (most blocks of a plain text or a table)
        fitted_keys = [key for key in keys if len(key) <= MAX_KEY_CHARS][:MAX_KEYS]
        key_path = block.get("locator", {}).get("key_path")
        if fitted_keys != keys or (key_path is not None and len(key_path) > MAX_KEY_CHARS):
            block["keys"] = fitted_keys
            if key_path is not None and len(key_path) > MAX_KEY_CHARS:
                del block["locator"]["key_path"]  # the same name as the key it locates
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


# Output bounds


def fit_output_bounds(artifact: Artifact, source_bytes: int) -> Artifact:
    """Fit a finished artifact (its tables included) to the output bounds, in place; return it.

    Blocks past block_bound(source_bytes) are merged, never dropped (merge_blocks): every word
    stays in a block's text, the artifact gets a warning saying how many blocks became how many
    and coverage.lost names block_boundaries, so it does not report itself complete. A free string
    past its bound is cut, the cut ending in an ellipsis; warnings and failed units past their
    count keep their first entries and one more that counts the rest (coverage's counts stay as
    the parser made them).
    """
    cov = artifact["coverage"]
    warnings = list(artifact.get("warnings", []))
    bound = block_bound(source_bytes)
    count = len(artifact["blocks"])
    if count > bound:
        artifact["blocks"] = merge_blocks(artifact["blocks"], bound)
        _add_once(cov.setdefault("lost", []), MERGED)
        warnings.insert(
            0,
            f"{count} blocks merged into {len(artifact['blocks'])}: an artifact holds at most"
            f" {BLOCKS_BASE:,} blocks plus one per {BYTES_PER_BLOCK} bytes of the original"
            f" ({source_bytes:,} bytes), and never more than {MAX_BLOCKS:,}; their text is whole,"
            " their own spans and differing attrs are not kept",
        )
    artifact["warnings"] = _fit_list(
        [_cut(warning, MAX_MESSAGE_CHARS) for warning in warnings],
        MAX_WARNINGS,
        lambda rest: f"{rest} more warnings left out: an artifact lists at most {MAX_WARNINGS:,}",
    )
    for field in ("parser", "parser_version"):
        artifact[field] = _cut(artifact[field], MAX_LABEL_CHARS)
    artifact["options"] = {
        name: _cut(value, MAX_LABEL_CHARS) if isinstance(value, str) else value
        for name, value in artifact.get("options", {}).items()
    }
    cov["unit"] = _cut(cov["unit"], MAX_LABEL_CHARS)
    cov["failed"] = _fit_list(
        [
            {
                "unit": _cut(failed["unit"], MAX_MESSAGE_CHARS),
                "reason": _cut(failed["reason"], MAX_MESSAGE_CHARS),
            }
            for failed in cov.get("failed", [])
        ],
        MAX_FAILED_UNITS,
        lambda rest: {
            "unit": f"{rest} more units",
            "reason": f"left out of this list: an artifact names at most {MAX_FAILED_UNITS:,}",
        },
    )
    cov["lost"] = _fit_list(
        [_cut(name, MAX_LABEL_CHARS) for name in cov.get("lost", [])],
        MAX_LOST,
        lambda rest: f"{rest} more capabilities",
    )
    for table in artifact.get("tables", []):  # ids are the readers' own short ones ("t0")
        table["name"] = _cut(table["name"], MAX_MESSAGE_CHARS)
    return fit_contract_bounds(artifact)


def merge_blocks(blocks: list[dict[str, Any]], bound: int) -> list[dict[str, Any]]:
    """At most `bound` blocks holding all of `blocks`' text, consecutive blocks merged.

    First, runs of alike blocks (same type, parent, section path, depth, attrs and locator fields;
    no heading, no block another names as its parent, no TOML key) merge, as few at a time as
    reaches the bound. If that is not enough (a file of headings), consecutive blocks merge
    whatever they are. A merged block takes the first one's id, parent and section path; its text
    is theirs joined by a blank line (as chunks join blocks), its keys their union, its locator
    each span they all have, from the earliest start to the latest end; it keeps their type, depth
    and attrs when they all share them (else it is a paragraph) and counts them in
    attrs.merged_blocks. A parent that was merged names the block it went into.
    """
    if len(blocks) <= bound:
        return blocks
    parents = {block["parent"] for block in blocks if "parent" in block}
    size = -(-len(blocks) // bound)
    fitted = _merge_runs(
        blocks,
        lambda run, block: (
            len(run) < size
            and run[0]["id"] not in parents
            and block["id"] not in parents
            and _alike(run[0], block)
        ),
    )
    if len(fitted) > bound:
        size = -(-len(fitted) // bound)
        fitted = _merge_runs(fitted, lambda run, block: len(run) < size)
    return fitted


_SPANS = (("line", 0), ("char", -1), ("page", 0), ("row", 0))  # each range and its "unset" value
_MERGED_JOIN = "\n\n"


def _alike(first: dict[str, Any], block: dict[str, Any]) -> bool:
    where, there = first.get("locator", {}), block.get("locator", {})
    return (
        block["type"] == first["type"] != "heading"
        and block.get("parent") == first.get("parent")
        and block.get("section_path") == first.get("section_path")
        and block.get("depth") == first.get("depth")
        and block.get("attrs") == first.get("attrs")
        and there.keys() == where.keys()
        and there.get("sheet") == where.get("sheet")
        and "key_path" not in where
    )


def _merge_runs(
    blocks: list[dict[str, Any]], joins: Callable[[list[dict[str, Any]], dict[str, Any]], bool]
) -> list[dict[str, Any]]:
    runs: list[list[dict[str, Any]]] = []
    for block in blocks:
        if runs and joins(runs[-1], block):
            runs[-1].append(block)
        else:
            runs.append([block])
    into: dict[str, str] = {}
    merged: list[dict[str, Any]] = []
    for run in runs:
        block = run[0] if len(run) == 1 else _merged(run)
        for member in run:
            into[member["id"]] = block["id"]
        merged.append(block)
    for block in merged:
        if "parent" in block:
            block["parent"] = into.get(block["parent"], block["parent"])
    return merged


def _merged(run: list[dict[str, Any]]) -> dict[str, Any]:
    first = run[0]
    types = {block["type"] for block in run}
    block: dict[str, Any] = {
        "id": first["id"],
        "type": first["type"] if len(types) == 1 else "paragraph",
        "text": _MERGED_JOIN.join(block["text"] for block in run),
        "section_path": list(first.get("section_path", [])),
        "keys": list(dict.fromkeys(key for block in run for key in block.get("keys", []))),
        "locator": _merged_locator([block.get("locator", {}) for block in run]),
    }
    if "parent" in first:
        block["parent"] = first["parent"]
    depths = {block.get("depth") for block in run}
    if len(types) == 1 and len(depths) == 1 and first.get("depth") is not None:
        block["depth"] = first["depth"]
    own = [
        {name: value for name, value in block.get("attrs", {}).items() if name != "merged_blocks"}
        for block in run
    ]
    attrs = dict(own[0]) if all(item == own[0] for item in own) else {}
    attrs["merged_blocks"] = sum(block.get("attrs", {}).get("merged_blocks", 1) for block in run)
    block["attrs"] = attrs
    return block


def _merged_locator(locators: list[dict[str, Any]]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for name, unset in _SPANS:
        start, end = f"{name}_start", f"{name}_end"
        if all(start in loc and end in loc and loc[start] != unset for loc in locators):
            merged[start] = min(loc[start] for loc in locators)
            merged[end] = max(loc[end] for loc in locators)
    for name in ("sheet", "key_path"):
        values = {loc.get(name) for loc in locators}
        if len(values) == 1 and None not in values:
            merged[name] = values.pop()
    return merged


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + ELLIPSIS


def _fit_list(items: list[T], limit: int, rest: Callable[[int], T]) -> list[T]:
    """The first `limit - 1` items and one that counts the rest, when there are over `limit`."""
    if len(items) <= limit:
        return items
    return [*items[: limit - 1], rest(len(items) - limit + 1)]
