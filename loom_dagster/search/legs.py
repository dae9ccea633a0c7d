"""What every search leg (lexical, exact keys, vectors) answers, so fusion can combine them.

A leg ranks chunk ids for a query among the chunks a `SearchFilter` keeps, applying the filter
inside its own search (never after it), so a filter cannot empty a result that has in-filter
matches further down. Fusion reads only the order of each leg's hits and their ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class SearchFilter:
    """Which chunks a search may return; an empty field keeps every chunk."""

    formats: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    block_types: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # a chunk is kept when its source carries any of these
    path_prefix: str = ""  # a chunk is kept when its path starts with this

    @property
    def empty(self) -> bool:
        return not (
            self.formats or self.sources or self.block_types or self.tags or self.path_prefix
        )


@dataclass(frozen=True)
class LegHit:
    chunk_id: str
    score: float  # the leg's own score, reported by --explain; fusion uses the rank


class Leg(Protocol):
    name: str  # "lexical", "exact", "vector"
    # A leg may carry `floor: float`: a chunk only it finds, below that score, is dropped by
    # fusion (the vector leg's cosine floor, from its embedder's spec).

    def rank(self, query: str, search_filter: SearchFilter, limit: int) -> Sequence[LegHit]:
        """The leg's best `limit` chunks for `query` among those the filter keeps, best first."""
        ...
