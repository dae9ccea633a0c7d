"""What `loom ingest` reports per file, and the conservation identity over them."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import NamedTuple


class FileOutcome(NamedTuple):
    """One file's end in a report. A named tuple: a million-file folder's report holds a
    million of them, made at a tuple's cost."""

    status: str  # published, refused, unchanged, skipped, failed
    path: str
    revision: str | None = None
    detail: str = ""
    incomplete: bool = False  # published, but its artifact missed part of the file


@dataclass
class IngestReport:
    source: str
    outcomes: list[FileOutcome] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)
    # Deleted paths whose retirement the guard held (lifecycle.RetireGuard), and the line why.
    held: list[str] = field(default_factory=list)
    held_line: str = ""

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    def tally(self) -> Counter[str]:
        """How many outcomes of each status, counted in one pass (a million-file report is
        counted once, not once per status)."""
        return Counter(o.status for o in self.outcomes)

    @property
    def incomplete(self) -> int:
        return sum(1 for o in self.outcomes if o.incomplete)

    @property
    def files(self) -> int:
        return len(self.outcomes)

    @property
    def conserved(self) -> bool:
        """files = published + refused + unchanged + skipped: every file ends in exactly one
        of them (a skipped thing, a symlink, a FIFO, a folder that cannot be read, with its
        reason)."""
        return self.conserved_in(self.tally())

    def conserved_in(self, tally: Counter[str]) -> bool:
        """`conserved`, from this report's `tally()`."""
        return self.files == sum(
            tally[status] for status in ("published", "refused", "unchanged", "skipped")
        )
