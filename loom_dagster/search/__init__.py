"""Search legs over published chunks."""

from __future__ import annotations

from typing import Any

__all__ = ["Hit", "IndexBusy", "IndexedChunk", "LexicalIndex"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: `loom search` answered by the resident searcher imports
    # loom_dagster.search.resident and must not load tantivy on the way (README, "Search
    # start-up").
    if name in __all__:
        from loom_dagster.search import lexical

        return getattr(lexical, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
