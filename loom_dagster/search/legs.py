"""What every search leg (lexical, exact keys, vectors) answers, so fusion can combine them.

A leg ranks chunk ids for a query among the chunks a `SearchFilter` keeps, applying the filter
inside its own search (never after it), so a filter cannot empty a result that has in-filter
matches further down. Fusion reads only the order of each leg's hits and their ids.
"""

from __future__ import annotations

import hashlib
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


def chunk_key(chunk_id: str) -> int:
    """A chunk id as an unsigned 64-bit integer. The lexical index keeps it as a fast field, so
    a leg reads its hits' keys from a column instead of fetching each hit's stored document
    (most of a search's time at 100,000 chunks); fusion matches hits across legs by it. Two of
    a million ids share one with odds of about 3 in 100 million."""
    digest = hashlib.blake2b(chunk_id.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big")


@dataclass(frozen=True)
class LegHit:
    chunk_id: str  # "" when the leg read only the chunk's key
    score: float  # the leg's own score, reported by --explain; fusion uses the rank
    key: int | None = None  # chunk_key(chunk_id), when the leg read it instead of the id
    # The chunk defines what the query names (the exact leg's definitions: a created table, a
    # TOML table or key path, a heading's identifier), not merely mentions it.
    defines: bool = False
    # The query names what the leg found by a name (a definition, a code like E-DISK-042, a
    # citation), not by a word of a sentence that happens to be hyphenated ("the demo-video").
    named: bool = False

    @property
    def identity(self) -> int:
        return chunk_key(self.chunk_id) if self.key is None else self.key


class Leg(Protocol):
    name: str  # "lexical", "exact", "vector"
    # A leg may carry `floor: float`: a chunk only it finds, below that score, is dropped by
    # fusion (the vector leg's cosine floor, from its embedder's spec).

    def rank(self, query: str, search_filter: SearchFilter, limit: int) -> Sequence[LegHit]:
        """The leg's best `limit` chunks for `query` among those the filter keeps, best first."""
        ...
