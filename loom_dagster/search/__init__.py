"""Search legs over published chunks."""

from loom_dagster.search.lexical import Hit, IndexBusy, IndexedChunk, LexicalIndex

__all__ = ["Hit", "IndexBusy", "IndexedChunk", "LexicalIndex"]
