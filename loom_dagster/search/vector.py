"""The vector leg: cosine similarity between a query's embedding and the live chunks' embeddings.

On disk (a folder beside the lexical index):

- `generations/<name>/`: every live chunk's vectors in one generation, written whole before
  anything names it and never changed after: `vectors.npy` (one float32 row per passage),
  `keys.npy` (a row's key in the HNSW graph, increasing), `row_chunk.npy`, `chunk_ids.npy`,
  `block_types.npy`, the documents' formats, sources, paths and chunk counts (`doc_*.npy`, in
  row order), `documents.json` (each document's revision, for the writer), and, above
  `HNSW_THRESHOLD` rows, `graph.usearch`, the HNSW graph over the rows. A reader maps the
  arrays and the graph (nothing is copied or built), so opening 100,000 chunks costs a few
  milliseconds instead of one file per revision.
- `manifest.json`: the model and the generation's name. A publish or retire writes a new
  generation and swaps the manifest in with one `os.replace`, so a reader sees the generation
  before a batch or after it: never half a revision, never half a batch. A crash before the swap
  leaves the old generation serving; a generation no manifest names is removed by the next
  writer. A reader that read the old manifest and finds its files gone reads the manifest again.
- `embeddings.duckdb`: vectors by (model, hash of the embedded text), so a chunk whose text and
  context did not change is never embedded again, whichever revision or document it is in.

One writer at a time (a lock file, waited on for a bounded time, then `index_busy`); readers never
wait. The writer copies the rows of the documents a batch does not touch from the old
generation, and updates the old graph (keys of the dropped rows removed, the new rows added)
instead of building it again. Search is exact cosine (numpy) up to `HNSW_THRESHOLD` live rows,
and the generation's HNSW graph beyond it; a filter is applied inside the search (a mask over
the rows before the top-k, or, on HNSW, an over-fetch that falls back to exact search over the
kept rows), so every hit is in the filter and a filter never empties a result that has
in-filter matches.

This module is the index and its leg; its parts are beside it: `vector_files.py` (the files'
names), `generations.py` (the generations and the manifest), `embedding_cache.py`
(`embeddings.duckdb`), `hnsw.py` (the graph) and `vector_table.py` (the reader's search).
"""

from __future__ import annotations

import functools
import re
import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from loom_dagster.errors import LoomError
from loom_dagster.search import rows
from loom_dagster.search.embedding import (
    STOP_WORDS,
    Embedder,
    Matrix,
    build_embedder,
    embedded_text,
    text_hash,
    weighted_embedding,
)
from loom_dagster.search.embedding_cache import cached_vectors
from loom_dagster.search.generations import (
    open_generation,
    read_manifest,
    readable_generation,
    remove_unnamed,
    write_generation,
    write_manifest,
    writing,
)
from loom_dagster.search.hnsw import HNSW_EXPANSION_SEARCH, HNSW_THRESHOLD
from loom_dagster.search.legs import LegHit, SearchFilter
from loom_dagster.search.lexical import IndexedChunk
from loom_dagster.search.vector_files import CACHE, LAYOUT_VERSION, MANIFEST
from loom_dagster.search.vector_table import VectorTable
from loom_dagster.settings.embedder import EmbedderSpec

if TYPE_CHECKING:
    from loom_dagster.settings import LoomSettings

DEFAULT_LOCK_TIMEOUT = 30.0
_RELOAD_ATTEMPTS = 5
# With a size, a chunk is embedded as passages of about this many characters, each with the
# chunk's context, and scores as its best passage. Measured on bench/retrieval.py's 54
# questions with the default embedder, fused found-first was 0.78 whole, 0.67 at 400 and 0.63
# at 200: with a static word-vector model, short passages match stray words. 0 embeds each
# chunk whole.
PASSAGE_CHARS = 0
CENTER = False

SourcesTagged = Callable[[Sequence[str]], Collection[str]]
# A query's words to their weights in its embedding (the lexical index's inverse document
# frequency over the live chunks: `LexicalIndex.term_weights`).
TermWeights = Callable[[Sequence[str]], Sequence[float]]
_QUERY_WORDS = re.compile(r"\w+")


class VectorIndex:
    """The live chunks' vectors in a folder, replaced a batch of documents at a time."""

    name = "vector"

    def __init__(
        self,
        directory: str | Path,
        embedder: Embedder,
        *,
        sources_tagged: SourcesTagged | None = None,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        hnsw_threshold: int = HNSW_THRESHOLD,
        passage_chars: int = PASSAGE_CHARS,
        center: bool = CENTER,
        context: bool = True,
        floor: float = 0.0,
        hnsw_expansion: int = HNSW_EXPANSION_SEARCH,
        term_weights: TermWeights | None = None,
        stop_words: bool = False,
        prefix_dimensions: int = 0,
    ) -> None:
        self.directory = Path(directory)
        self.embedder = embedder
        self.sources_tagged = sources_tagged
        self.lock_timeout = lock_timeout
        self.hnsw_threshold = hnsw_threshold
        # The HNSW search width (usearch's expansion_search): a reader's choice, not the graph's.
        self.hnsw_expansion = hnsw_expansion
        self.prefix_dimensions = prefix_dimensions
        self.passage_chars = passage_chars
        # How a query is embedded (the chunks' vectors do not depend on it): its function words
        # dropped (`stop_words`), each word weighted by `term_weights`.
        self.term_weights = term_weights
        self.stop_words = stop_words
        self.center = center
        self.context = context
        # A hit only this leg finds is an answer only at this cosine or above (fusion.py).
        self.floor = floor
        # What the manifest's vectors are: the model, and how chunks were cut into passages.
        self.layout = (
            f"{embedder.model}/passages-{passage_chars}"
            + ("" if context else "/bare")
            + f"/{LAYOUT_VERSION}"
        )
        self.directory.mkdir(parents=True, exist_ok=True)
        self._read_lock = threading.Lock()
        self._seen: tuple[int, int, int] | None = None  # the manifest's (inode, size, mtime)
        self._table: VectorTable | None = None

    # -- writing ---------------------------------------------------------------------------

    def publish_many(
        self, documents: Mapping[str, Sequence[IndexedChunk]], *, retire: Sequence[str] = ()
    ) -> int:
        """Replace each document's vectors with its new chunks' and drop those of `retire`, in
        one manifest swap; returns how many texts were embedded (the rest were reused)."""
        for document_id, chunks in documents.items():
            strangers = sorted({c.document_id for c in chunks if c.document_id != document_id})
            if strangers:
                raise ValueError(f"chunks of {strangers} published as document {document_id!r}")
        if not documents and not retire:
            return 0
        with writing(self.directory, self.lock_timeout):
            old = readable_generation(self.directory, self.layout)
            texts = {
                doc: [[_embedded(c, p, self.context) for p in self._passages(c)] for c in chunks]
                for doc, chunks in documents.items()
            }
            hashes = {
                doc: [[text_hash(t) for t in rows] for rows in doc_texts]
                for doc, doc_texts in texts.items()
            }
            vectors, embedded = cached_vectors(
                self.directory / CACHE,
                self.embedder,
                [t for doc_texts in texts.values() for rows in doc_texts for t in rows],
                [h for doc_hashes in hashes.values() for rows in doc_hashes for h in rows],
            )
            name = write_generation(
                self.directory,
                old,
                documents,
                hashes,
                vectors,
                set(retire),
                embedder_dimension=self.embedder.dimension,
                hnsw_threshold=self.hnsw_threshold,
            )
            write_manifest(self.directory, self.layout, name)
            remove_unnamed(self.directory, name)
        return embedded

    def _passages(self, chunk: IndexedChunk) -> list[str]:
        """What a chunk is embedded as: its rows one by one when it is a passage of a table's
        rows (search/rows.py, `row_texts`), otherwise `passages` of it."""
        found = rows.row_texts(chunk.text, chunk.locator, chunk.format)
        return found if found is not None else passages(chunk.text, self.passage_chars)

    def retire(self, document_id: str) -> None:
        self.publish_many({}, retire=[document_id])

    def live_revisions(self) -> dict[str, str]:
        """The revision each document's vectors were published as (under this embedder)."""
        for attempt in range(_RELOAD_ATTEMPTS):
            try:
                generation = readable_generation(self.directory, self.layout)
                if generation is None:
                    return {}
                entries, _ = generation.documents()
                return {entry.document: entry.revision for entry in entries}
            except FileNotFoundError:
                time.sleep(0.01 * (attempt + 1))  # a writer swapped it: read the manifest again
        raise LoomError(f"{self.directory} could not be read", code="index_unreadable")

    # -- reading ---------------------------------------------------------------------------

    def rank(self, query: str, search_filter: SearchFilter, limit: int) -> list[LegHit]:
        """The `limit` chunks nearest `query` among those the filter keeps, nearest first."""
        if limit < 1 or not query.strip():
            return []
        vector: Matrix | None = None
        for attempt in range(_RELOAD_ATTEMPTS):
            table = self._current()
            if table is None or not len(table.chunk_ids):
                return []
            if vector is None:
                vector = self.query_vector(query)
            if not vector.any():
                return []
            mask = self._mask(table, search_filter)
            if mask is not None and not mask.any():
                return []
            try:
                rows, scores = table.nearest(
                    table.query_vector(vector),
                    mask,
                    limit,
                    hnsw=len(table.vectors) > self.hnsw_threshold,
                )
            except FileNotFoundError:
                # The graph's generation was replaced and removed before its graph was mapped.
                with self._read_lock:
                    self._seen = None
                time.sleep(0.01 * (attempt + 1))
                continue
            return [
                LegHit(str(table.chunk_ids[r]), float(s)) for r, s in zip(rows, scores, strict=True)
            ]
        raise LoomError(f"{self.directory} could not be read", code="index_unreadable")

    def query_vector(self, query: str) -> Matrix:
        """The query's embedding: the whole text, or its words weighted (and function words
        dropped) as this index is set to."""
        if self.term_weights is None and not self.stop_words:
            return self.embedder.embed([query])[0]
        words = _QUERY_WORDS.findall(query.casefold())
        if self.stop_words:
            # A query of function words only ("what is it") keeps them: they are all it says.
            words = [word for word in words if word not in STOP_WORDS] or words
        if not words:
            return self.embedder.embed([query])[0]
        weights = [1.0] * len(words) if self.term_weights is None else self.term_weights(words)
        return weighted_embedding(self.embedder, words, weights)[0]

    def count(self) -> int:
        table = self._current()
        return 0 if table is None else len(table.chunk_ids)

    def _mask(
        self, table: VectorTable, search_filter: SearchFilter
    ) -> npt.NDArray[np.bool_] | None:
        if search_filter.empty:
            return None
        keep = np.ones(len(table.doc_formats), dtype=bool)
        if search_filter.formats:
            keep &= np.isin(table.doc_formats, list(search_filter.formats))
        sources = list(search_filter.sources)
        if search_filter.tags:
            if self.sources_tagged is None:
                raise LoomError("this index cannot filter on tags", code="filter_unsupported")
            tagged = list(self.sources_tagged(search_filter.tags))
            keep &= np.isin(table.doc_sources, tagged)
        if sources:
            keep &= np.isin(table.doc_sources, sources)
        if search_filter.path_prefix:
            keep &= np.char.startswith(table.doc_paths, search_filter.path_prefix)
        mask: npt.NDArray[np.bool_] = keep[table.doc_of_chunk]
        if search_filter.block_types:
            mask &= np.isin(table.block_types, list(search_filter.block_types))
        return mask

    def _current(self) -> VectorTable | None:
        with self._read_lock:
            for attempt in range(_RELOAD_ATTEMPTS):
                try:
                    return self._refresh()
                except FileNotFoundError:
                    # A writer removed the generation of the manifest just read: its successor
                    # is in.
                    self._seen = None
                    time.sleep(0.01 * (attempt + 1))
            raise LoomError(f"{self.directory} could not be read", code="index_unreadable")

    def _refresh(self) -> VectorTable | None:
        path = self.directory / MANIFEST
        try:
            status = path.stat()
        except FileNotFoundError:
            self._table, self._seen = None, None
            return None
        seen = (status.st_ino, status.st_size, status.st_mtime_ns)
        if seen == self._seen:
            return self._table
        generation = open_generation(self.directory, self.layout, read_manifest(self.directory))
        self._table = (
            None
            if generation is None
            else VectorTable(
                generation,
                center=self.center,
                expansion=self.hnsw_expansion,
                prefix=self.prefix_dimensions,
            )
        )
        self._seen = seen
        return self._table


def _embedded(chunk: IndexedChunk, passage: str, context: bool) -> str:
    if not context:
        return passage
    # The file's name stands for its title until chunks carry the document's own.
    title = Path(chunk.path).stem.replace("_", " ")
    return embedded_text(passage, section_path=chunk.section_path, title=title)


_SENTENCE_END = re.compile(r"(?<=[.!?:;])\s+|\n+")


def passages(text: str, size: int) -> list[str]:
    """The text cut at sentence and line ends into passages of about `size` characters (the
    whole text when `size` is 0 or the text is short); never an empty list."""
    if size <= 0 or len(text) <= size:
        return [text]
    cut: list[str] = []
    current = ""
    for sentence in _SENTENCE_END.split(text):
        if current and len(current) + len(sentence) + 1 > size:
            cut.append(current)
            current = ""
        current = f"{current} {sentence}" if current else sentence
    if current:
        cut.append(current)
    return cut or [text]


@functools.cache
def shared_embedder(spec: EmbedderSpec) -> Embedder:
    """One embedder per setting in a process: a model loads once, not once per batch."""
    return build_embedder(spec)


def open_vectors(
    settings: LoomSettings, *, sources_tagged: SourcesTagged | None = None
) -> VectorIndex:
    """The vector index of a Loom home, under the embedder LOOM_EMBEDDER names."""
    return VectorIndex(
        settings.vectors_dir,
        shared_embedder(settings.embedder),
        sources_tagged=sources_tagged,
        floor=settings.embedder.floor,
    )
