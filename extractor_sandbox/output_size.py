"""The artifact's size bound per byte of the original: a small file that inflates (a 25 KB DOCX
whose one text run is 25 MB) is cut, and says so, rather than sent whole.

An artifact may hold ARTIFACT_BYTES_FLOOR bytes plus `per_input_byte` bytes per byte of the
original (LOOM_EXTRACTOR_MAX_OUTPUT_PER_INPUT_BYTE), and never more than the service's output
bound (LOOM_EXTRACTOR_MAX_OUTPUT_BYTES, which kills a child past it). Past the bound, blocks are
cut in reading order: the blocks that fit are kept whole, the one that crosses the bound keeps
its text up to it, the rest are left out; a table keeps its first rows the same way. The cut is
never silent: coverage.failed names where the text stops, with the reason `resource_limit`, and
a warning says which bound, so the artifact does not report itself complete.

Readers that gather text from a part that inflates (the Office readers) stop once the text they
gathered passes the bound (`TextBudget`, the bound the child was given, shared through
`reading_within`): what they kept is then cut here as above, and the part they stopped in is one
more failed unit, so a 250 MiB text run is never held whole to be cut after.

Sizes are counted as the child serializes them (compact JSON, UTF-8), a block's text without
allocating a copy of it when it is ASCII; the escapes of the one block that is cut are not
counted, so an artifact may pass its bound by a few bytes per escaped character of that block.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from extractor_sandbox.contract import Artifact, FailedUnit

# Every original may make this much artifact, whatever its size (a 200-byte TOML file of many
# keys makes a few KiB); the ratio bounds the rest.
ARTIFACT_BYTES_FLOOR = 1024 * 1024
# Artifact bytes per byte of the original. The largest ratio of a real document of 1 KiB or more
# measured here (bench/artifact_ratio.py, 1,392 files of tests/ and the development corpus) is
# 7.1 (a SQL file), and every artifact of theirs is under the floor; a file of the most tiny
# blocks contract.block_bound allows reaches about 35; a 25 KB DOCX bomb is 987.
DEFAULT_PER_INPUT_BYTE = 100
DEFAULT_MAX_OUTPUT_BYTES = 256 * 1024 * 1024  # LOOM_EXTRACTOR_MAX_OUTPUT_BYTES's default
REASON = "resource_limit"
SETTING = "LOOM_EXTRACTOR_MAX_OUTPUT_PER_INPUT_BYTE"


def artifact_byte_bound(source_bytes: int, per_input_byte: int, max_output_bytes: int) -> int:
    """The most bytes an artifact of an original of `source_bytes` bytes may hold."""
    return min(max_output_bytes, ARTIFACT_BYTES_FLOOR + per_input_byte * source_bytes)


class TextBudget:
    """The text one extraction's reader may gather, in artifact bytes (`bound`, None for no
    bound): the reader `take`s each piece as it keeps it and stops reading once `spent`,
    saying where (`stop`)."""

    def __init__(self, bound: int | None) -> None:
        self.bound = bound
        self.used = 0
        self.stopped_in: str | None = None  # the part the reader stopped in
        self.stopped_at = 0  # the bytes of text gathered then
        self.cuts: list[FailedUnit] = []  # what else a reader left unread for want of budget

    def take(self, text: str) -> None:
        self.used += _text_bytes(text)

    def charge(self, size: int) -> None:
        """`size` bytes of text gathered, counted by the reader (cells' characters)."""
        self.used += size

    @property
    def spent(self) -> bool:
        return self.bound is not None and self.used > self.bound

    def stop(self, part: str) -> None:
        """The reader stopped reading `part` (and reads no part after it) for want of budget."""
        if self.stopped_in is None:
            self.stopped_in, self.stopped_at = part, self.used

    def cut(self, unit: str) -> None:
        """The reader left `unit` unread, or part of it, for want of budget."""
        self.cuts.append({"unit": unit, "reason": REASON})

    def unread(self) -> list[FailedUnit]:
        """The failed units of the text left unread, if the reader stopped early (none else)."""
        units = list(self.cuts)
        if self.stopped_in is not None:
            units.append(
                {
                    "unit": f"the text past {self.stopped_at:,} bytes, from {self.stopped_in} on",
                    "reason": REASON,
                }
            )
        return units


_BUDGET: ContextVar[TextBudget | None] = ContextVar("loom_text_budget", default=None)


@contextmanager
def reading_within(budget: TextBudget) -> Iterator[TextBudget]:
    """Readers called inside this block gather text within `budget` (`current_budget`)."""
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def current_budget() -> TextBudget:
    """The budget of the extraction under way (reading_within), else one with no bound: a reader
    called on its own reads all."""
    return _BUDGET.get() or TextBudget(None)


def fit_artifact_bytes(
    artifact: Artifact, bound: int, source_bytes: int, *, unread: Sequence[FailedUnit] = ()
) -> bool:
    """Cut `artifact` to about `bound` bytes of JSON, in place, announcing the cut; whether it
    was cut.

    What is not blocks or tables counts first; then the tables (a table keeps the rows that fit
    in half of what is left, so its rows, which the blocks also hold, cannot take it all), then
    the blocks in reading order. Nothing is done to an artifact within its bound, unless its
    reader stopped early (`unread`, TextBudget.unread): that is announced as a cut too.
    """
    blocks = artifact["blocks"]
    tables = artifact.get("tables", [])
    block_sizes = [_block_bytes(block) for block in blocks]
    table_sizes = [_compact_bytes(table) for table in tables]
    envelope = _compact_bytes({**artifact, "blocks": [], "tables": []})
    total = envelope + sum(block_sizes) + sum(table_sizes) + len(blocks) + len(tables)
    if total <= bound and not unread:
        return False
    failed: list[FailedUnit] = []
    room = bound - envelope - 4 * 1024  # the failed units and the warning added below
    if sum(table_sizes) > room // 2:
        room -= _cut_tables(tables, room // 2, failed)
    else:
        room -= sum(table_sizes)
    kept = 0
    for block, size in zip(blocks, block_sizes, strict=True):
        if size + 1 <= room:
            room -= size + 1
            kept += 1
            continue
        text = block.get("text", "")
        overhead = size - _text_bytes(text)
        if room - overhead > 0 and text:
            cut = _prefix_within(text, room - overhead)
            failed.append(
                {"unit": f"block {block['id']} past character {len(cut):,}", "reason": REASON}
            )
            block["text"] = cut
            kept += 1
        break
    if kept < len(blocks):
        left = len(blocks) - kept
        first = blocks[kept]["id"]
        failed.append({"unit": f"{left:,} blocks from block {first} on", "reason": REASON})
        del blocks[kept:]
    failed += unread
    cov = artifact["coverage"]
    cov["failed"] = [*failed, *cov.get("failed", [])]
    cov["complete"] = False
    artifact["warnings"] = [
        f"the artifact was cut to {bound:,} bytes: {ARTIFACT_BYTES_FLOOR:,} plus"
        f" {(bound - ARTIFACT_BYTES_FLOOR) // max(source_bytes, 1):,} per byte of the"
        f" original ({source_bytes:,} bytes; {SETTING}), or the service's output bound",
        *artifact.get("warnings", []),
    ]
    return True


def _cut_tables(tables: list[dict[str, Any]], room: int, failed: list[FailedUnit]) -> int:
    """Keep each table's first rows within `room` bytes in all; returns the bytes kept."""
    used = 0
    for table in tables:
        rows = table.get("rows", [])
        shell = _compact_bytes({**table, "rows": []})
        used += shell
        kept = 0
        for row in rows:
            size = _compact_bytes(row) + 1
            if used + size > room:
                break
            used += size
            kept += 1
        if kept < len(rows):
            failed.append(
                {
                    "unit": f"table {table.get('id', '')} rows past {kept:,} of its values",
                    "reason": REASON,
                }
            )
            del rows[kept:]
    return used


def _block_bytes(block: dict[str, Any]) -> int:
    text = block.get("text", "")
    if len(text) < 4096:
        return _compact_bytes(block)
    return _compact_bytes({**block, "text": ""}) + _text_bytes(text)


def _text_bytes(text: str) -> int:
    """The bytes of `text` as a JSON string, escapes of quotes, backslashes and line ends
    counted (other control characters are rare in text and left out)."""
    raw = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    return raw + text.count('"') + text.count("\\") + text.count("\n") + text.count("\r")


def _compact_bytes(value: Any) -> int:
    return len(
        json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode(
            "utf-8", "surrogatepass"
        )
    )


def _prefix_within(text: str, budget: int) -> str:
    """The longest prefix of `text` whose UTF-8 takes at most `budget` bytes."""
    prefix = text[:budget]
    if prefix.isascii():
        return prefix
    return prefix.encode("utf-8", "surrogatepass")[:budget].decode("utf-8", "ignore")
