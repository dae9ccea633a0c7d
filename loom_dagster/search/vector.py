"""The vector leg: cosine similarity between a query's embedding and the live chunks' embeddings.

On disk (a folder beside the lexical index):

- `docs/<document>-<revision>.npz`: one file per published revision of a document: its chunks'
  vectors, ids, block types and text hashes, written whole before anything names it;
- `manifest.json`: the model, and for each live document its file, revision, source, path and
  format. A publish or retire writes a new manifest and swaps it in with one `os.replace`, so a
  reader sees the manifest before a batch or after it: never half a revision, never half a batch.
  Files no manifest names any more are removed after the swap; a reader that read the old
  manifest and finds its file gone reads the manifest again.
- `embeddings.duckdb`: vectors by (model, hash of the embedded text), so a chunk whose text and
  context did not change is never embedded again, whichever revision or document it is in.

One writer at a time (a lock file, waited on for a bounded time, then `index_busy`); readers never
wait. A reader keeps the live vectors in memory and reloads only the documents whose file
changed. Search is exact cosine (numpy) up to `HNSW_THRESHOLD` live chunks, and an in-memory
usearch HNSW index beyond it; a filter is applied inside the search (a mask over the rows
before the top-k, or, on HNSW, an over-fetch that falls back to exact search over the kept
rows), so every hit is in the filter and a filter never empties a result that has in-filter
matches.
"""

from __future__ import annotations

import fcntl
import functools
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from loom_dagster.errors import LoomError
from loom_dagster.search.embedder_spec import EmbedderSpec
from loom_dagster.search.embedding import (
    Embedder,
    Matrix,
    embedded_text,
    normalized,
    text_hash,
)
from loom_dagster.search.legs import LegHit, SearchFilter
from loom_dagster.search.lexical import IndexBusy, IndexedChunk
from loom_dagster.search.service import VECTOR_MANIFEST as MANIFEST

if TYPE_CHECKING:
    from loom_dagster.settings import LoomSettings

DOCS = "docs"
CACHE = "embeddings.duckdb"
LOCK = ".writer.lock"
DEFAULT_LOCK_TIMEOUT = 30.0
# Live chunks above which the reader searches an HNSW graph instead of every vector.
# bench/search_latency.py on two busy cores, 128 dimensions: exact 3.4 ms p50 / 4.3 ms p95 at
# 100k and 47 / 73 ms at 1M (linear in the chunks), HNSW 1.7 / 2.3 ms at 100k; but the graph is
# built in memory by each reading process on its first search after a change (49 s at 100k
# there), so until it is persisted beside the manifest, exact search is kept while it stays
# within the latency budget.
HNSW_THRESHOLD = 200_000
# usearch's graph. Its default search width (64) gave recall@10 of 0.62 on the latency bench's
# first synthetic chunks; 256 gave 0.997 at 2k and 0.73 at 100k (50 hits asked, 10 compared).
HNSW_CONNECTIVITY = 16
HNSW_EXPANSION_ADD = 128
HNSW_EXPANSION_SEARCH = 256
# On HNSW with a filter: kept rows under this are searched exactly (a few ms), and an over-fetch
# that yields fewer than the limit falls back to the same exact search over the kept rows.
EXACT_FILTERED_MAX = 100_000
_RELOAD_ATTEMPTS = 5
EMBED_BATCH = 512
# With a size, a chunk is embedded as passages of about this many characters, each with the
# chunk's context, and scores as its best passage. Measured on bench/retrieval.py's 54
# questions with the default embedder, fused found-first was 0.78 whole, 0.67 at 400 and 0.63
# at 200: with a static word-vector model, short passages match stray words. 0 embeds each
# chunk whole.
PASSAGE_CHARS = 0
CENTER = False

SourcesTagged = Callable[[Sequence[str]], Collection[str]]


@dataclass(frozen=True)
class _Entry:
    file: str
    revision: str
    source: str
    path: str
    format: str
    count: int
    rows: int


@dataclass
class _Loaded:
    entry: _Entry
    vectors: Matrix
    row_chunk: npt.NDArray[np.int32]
    chunk_ids: npt.NDArray[np.str_]
    block_types: npt.NDArray[np.str_]


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
    ) -> None:
        self.directory = Path(directory)
        self.embedder = embedder
        self.sources_tagged = sources_tagged
        self.lock_timeout = lock_timeout
        self.hnsw_threshold = hnsw_threshold
        self.passage_chars = passage_chars
        self.center = center
        self.context = context
        # What the manifest's vectors are: the model, and how chunks were cut into passages.
        self.layout = f"{embedder.model}/passages-{passage_chars}" + ("" if context else "/bare")
        (self.directory / DOCS).mkdir(parents=True, exist_ok=True)
        self._read_lock = threading.Lock()
        self._loaded: dict[str, _Loaded] = {}
        self._seen: tuple[int, int, int] | None = None  # the manifest's (inode, size, mtime)
        self._table: _Table | None = None

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
        with self._writing():
            manifest = self._read_manifest()
            entries = manifest["documents"] if manifest.get("model") == self.layout else {}
            texts = {
                doc: [
                    [_embedded(c, p, self.context) for p in passages(c.text, self.passage_chars)]
                    for c in chunks
                ]
                for doc, chunks in documents.items()
            }
            hashes = {
                doc: [[text_hash(t) for t in rows] for rows in doc_texts]
                for doc, doc_texts in texts.items()
            }
            vectors, embedded = self._vectors(
                [t for doc_texts in texts.values() for rows in doc_texts for t in rows],
                [h for doc_hashes in hashes.values() for rows in doc_hashes for h in rows],
            )
            for document_id, chunks in documents.items():
                entries[document_id] = self._write_document(
                    document_id, chunks, hashes[document_id], vectors
                )
            for document_id in retire:
                entries.pop(document_id, None)
            self._write_manifest(entries)
            self._remove_unnamed({entry["file"] for entry in entries.values()})
        return embedded

    def retire(self, document_id: str) -> None:
        self.publish_many({}, retire=[document_id])

    def live_revisions(self) -> dict[str, str]:
        """The revision each document's vectors were published as (under this embedder)."""
        manifest = self._read_manifest()
        if manifest.get("model") != self.layout:
            return {}
        return {doc: entry["revision"] for doc, entry in manifest["documents"].items()}

    def _write_document(
        self,
        document_id: str,
        chunks: Sequence[IndexedChunk],
        hashes: Sequence[Sequence[str]],
        vectors: Mapping[str, npt.NDArray[np.float32]],
    ) -> dict[str, Any]:
        flat = [h for rows in hashes for h in rows]
        first = chunks[0] if chunks else None
        revision = first.revision if first else ""
        digest = hashlib.sha256(f"{document_id}\0{revision}".encode()).hexdigest()[:32]
        name = f"{digest}-{self.embedder.model.replace('/', '_')}.npz"
        target = self.directory / DOCS / name
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        with open(temporary, "wb") as out:
            np.savez(
                out,
                vectors=_stack([vectors[h] for h in flat], self.embedder.dimension),
                row_chunk=np.repeat(
                    np.arange(len(chunks), dtype=np.int32), [len(rows) for rows in hashes]
                ),
                chunk_ids=np.array([c.chunk_id for c in chunks], dtype=np.str_),
                block_types=np.array([c.block_type for c in chunks], dtype=np.str_),
                hashes=np.array(flat, dtype=np.str_),
            )
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)
        entry = {
            "file": name,
            "revision": revision,
            "source": first.source if first else "",
            "path": first.path if first else "",
            "format": first.format if first else "",
            "count": len(chunks),
            "rows": len(flat),
        }
        return entry

    def _vectors(
        self, texts: Sequence[str], hashes: Sequence[str]
    ) -> tuple[dict[str, npt.NDArray[np.float32]], int]:
        """The vector of each text by its hash: stored ones reused, the rest embedded (each
        distinct text once) and stored; and how many were embedded."""
        if not texts:
            return {}, 0
        cache = EmbeddingCache(self.directory / CACHE)
        with cache.session() as session:
            known = session.get(self.embedder.model, hashes)
            missing = dict.fromkeys(h for h in hashes if h not in known)
            text_of = dict(zip(hashes, texts, strict=True))
            order = list(missing)
            for start in range(0, len(order), EMBED_BATCH):
                batch = order[start : start + EMBED_BATCH]
                rows = self.embedder.embed([text_of[h] for h in batch])
                fresh = dict(zip(batch, rows, strict=True))
                session.put(self.embedder.model, fresh)
                known.update(fresh)
        return known, len(order)

    def _write_manifest(self, entries: Mapping[str, Any]) -> None:
        manifest = {"model": self.layout, "documents": dict(sorted(entries.items()))}
        target = self.directory / MANIFEST
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            json.dump(manifest, out, ensure_ascii=False)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)  # the one step a reader sees
        directory = os.open(self.directory, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)

    def _remove_unnamed(self, named: set[str]) -> None:
        for path in (self.directory / DOCS).iterdir():
            if path.name not in named:
                path.unlink(missing_ok=True)

    @contextmanager
    def _writing(self) -> Iterator[None]:
        with open(self.directory / LOCK, "a+b") as lock:
            deadline = time.monotonic() + self.lock_timeout
            delay = 0.02
            while True:
                try:
                    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise IndexBusy(
                            f"another writer held {self.directory} for {self.lock_timeout:g}s"
                        ) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.5)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _read_manifest(self) -> dict[str, Any]:
        try:
            with open(self.directory / MANIFEST, encoding="utf-8") as manifest:
                data: dict[str, Any] = json.load(manifest)
        except FileNotFoundError:
            return {"model": self.layout, "documents": {}}
        except (OSError, ValueError) as error:
            raise LoomError(
                f"{self.directory / MANIFEST} cannot be read: {error}", code="index_unreadable"
            ) from error
        return data

    # -- reading ---------------------------------------------------------------------------

    def rank(self, query: str, search_filter: SearchFilter, limit: int) -> list[LegHit]:
        """The `limit` chunks nearest `query` among those the filter keeps, nearest first."""
        if limit < 1 or not query.strip():
            return []
        table = self._current()
        if table is None or not len(table.chunk_ids):
            return []
        vector = self.embedder.embed([query])[0]
        if not vector.any():
            return []
        mask = self._mask(table, search_filter)
        if mask is not None and not mask.any():
            return []
        rows, scores = table.nearest(
            table.query_vector(vector), mask, limit, hnsw=len(table.chunk_ids) > self.hnsw_threshold
        )
        return [
            LegHit(str(table.chunk_ids[r]), float(s)) for r, s in zip(rows, scores, strict=True)
        ]

    def count(self) -> int:
        table = self._current()
        return 0 if table is None else len(table.chunk_ids)

    def _mask(self, table: _Table, search_filter: SearchFilter) -> npt.NDArray[np.bool_] | None:
        if search_filter.empty:
            return None
        keep = np.ones(len(table.entries), dtype=bool)
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
        mask = keep[table.doc_of_chunk]
        if search_filter.block_types:
            mask &= np.isin(table.block_types, list(search_filter.block_types))
        return mask

    def _current(self) -> _Table | None:
        with self._read_lock:
            for attempt in range(_RELOAD_ATTEMPTS):
                try:
                    return self._refresh()
                except FileNotFoundError:
                    # A writer removed a file of the manifest just read: its successor is in.
                    self._seen = None
                    time.sleep(0.01 * (attempt + 1))
            raise LoomError(f"{self.directory} could not be read", code="index_unreadable")

    def _refresh(self) -> _Table | None:
        path = self.directory / MANIFEST
        try:
            status = path.stat()
        except FileNotFoundError:
            self._loaded, self._table, self._seen = {}, None, None
            return None
        seen = (status.st_ino, status.st_size, status.st_mtime_ns)
        if seen == self._seen:
            return self._table
        manifest = self._read_manifest()
        if manifest.get("model") != self.layout:
            # Vectors of another model cannot be compared with this one's queries; the next
            # publish under this model re-embeds every live document.
            self._loaded, self._table, self._seen = {}, None, seen
            return None
        entries = {doc: _Entry(**entry) for doc, entry in manifest["documents"].items()}
        loaded: dict[str, _Loaded] = {}
        for doc, entry in entries.items():
            old = self._loaded.get(doc)
            loaded[doc] = old if old is not None and old.entry == entry else self._load(entry)
        self._loaded = loaded
        self._table = _Table(loaded, center=self.center)
        self._seen = seen
        return self._table

    def _load(self, entry: _Entry) -> _Loaded:
        with np.load(self.directory / DOCS / entry.file, allow_pickle=False) as data:
            return _Loaded(
                entry=entry,
                vectors=np.ascontiguousarray(data["vectors"], dtype=np.float32),
                row_chunk=data["row_chunk"],
                chunk_ids=data["chunk_ids"],
                block_types=data["block_types"],
            )


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


def _stack(rows: Sequence[npt.NDArray[np.float32]], dimension: int) -> Matrix:
    if not rows:
        return np.zeros((0, max(dimension, 1)), dtype=np.float32)
    return np.ascontiguousarray(np.stack(rows), dtype=np.float32)


class _Table:
    """Every live passage vector in one matrix (a chunk's passages on consecutive rows), with
    what a filter reads per chunk and per document."""

    def __init__(self, loaded: Mapping[str, _Loaded], *, center: bool = False) -> None:
        parts = [part for part in loaded.values() if part.entry.count]
        self.entries = [part.entry for part in parts]
        dimension = parts[0].vectors.shape[1] if parts else 1
        self.vectors: Matrix = (
            np.concatenate([p.vectors for p in parts])
            if parts
            else np.zeros((0, dimension), np.float32)
        )
        self.chunk_ids = (
            np.concatenate([p.chunk_ids for p in parts]) if parts else np.array([], np.str_)
        )
        self.block_types = (
            np.concatenate([p.block_types for p in parts]) if parts else np.array([], np.str_)
        )
        counts = np.array([p.entry.count for p in parts], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]) if parts else counts
        self.row_chunk = (
            np.concatenate([p.row_chunk + o for p, o in zip(parts, offsets, strict=True)])
            if parts
            else np.zeros(0, np.int64)
        )
        self.chunk_first_row = np.searchsorted(self.row_chunk, np.arange(len(self.chunk_ids)))
        self.doc_of_chunk = np.repeat(np.arange(len(parts), dtype=np.int32), counts)
        self.doc_formats = np.array([e.format for e in self.entries], dtype=np.str_)
        self.doc_sources = np.array([e.source for e in self.entries], dtype=np.str_)
        self.doc_paths = np.array([e.path for e in self.entries], dtype=np.str_)
        self._hnsw: Any = None
        # With `center`, the live vectors' mean is removed from them and from each query (an
        # average of word vectors shares a common part). Measured on bench/retrieval.py it did
        # not pay (vector found-first 0.67 centred, 0.69 not), so it is off by default.
        self.mean: Matrix | None = None
        if center and len(self.vectors) > 1:
            self.mean = self.vectors.mean(axis=0, dtype=np.float32)
            self.vectors = normalized(self.vectors - self.mean)

    def query_vector(self, vector: Matrix) -> Matrix:
        if self.mean is None:
            return vector
        return normalized((vector - self.mean)[None, :])[0]

    def nearest(
        self,
        vector: Matrix,
        mask: npt.NDArray[np.bool_] | None,
        limit: int,
        *,
        hnsw: bool,
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
        """The best `limit` chunks the mask keeps (a chunk scores as its best passage)."""
        if hnsw:
            kept = len(self.chunk_ids) if mask is None else int(mask.sum())
            if mask is None or kept > EXACT_FILTERED_MAX:
                found = self._approximate(vector, mask, limit, kept)
                if found is not None:
                    return found
        return self._exact(vector, mask, limit)

    def _exact(
        self, vector: Matrix, mask: npt.NDArray[np.bool_] | None, limit: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
        # einsum, not `@`: one thread. A multi-threaded BLAS call waits for every thread, and on
        # a small busy machine one descheduled thread made a 100k scan 2-4x slower (measured).
        # Every row is scored and the filter applied to the scores: gathering the kept rows
        # first copies them, which costs more than scoring them all.
        rows = np.einsum("ij,j->i", self.vectors, vector)
        scores = (
            rows
            if len(rows) == len(self.chunk_ids)
            else np.maximum.reduceat(rows, self.chunk_first_row)
        )
        candidates = np.arange(len(self.chunk_ids))
        if mask is not None:
            candidates = np.flatnonzero(mask)
            scores = scores[candidates]
        if len(scores) > limit:
            top = np.argpartition(-scores, limit - 1)[:limit]
        else:
            top = np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return candidates[top], scores[top]

    def _approximate(
        self, vector: Matrix, mask: npt.NDArray[np.bool_] | None, limit: int, kept: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]] | None:
        graph = self._graph()
        share = kept / max(len(self.chunk_ids), 1)
        per_chunk = len(self.vectors) / max(len(self.chunk_ids), 1)
        wanted = int(limit * per_chunk / max(share, 1e-9) * 2) + limit
        matches = graph.search(vector, min(len(self.vectors), wanted))
        rows = np.asarray(matches.keys, dtype=np.intp)
        scores = (1.0 - np.asarray(matches.distances, dtype=np.float32)).astype(np.float32)
        chunks = self.row_chunk[rows]
        if mask is not None:
            inside = mask[chunks]
            chunks, scores = chunks[inside], scores[inside]
        # Best first already: a chunk's first row here is its best passage.
        chunks, first = np.unique(chunks, return_index=True)
        order = np.argsort(first, kind="stable")
        chunks, scores = chunks[order], scores[first[order]]
        if len(chunks) < min(limit, kept):
            return None  # too few of the graph's nearest were kept: search them all
        return chunks[:limit], scores[:limit]

    def _graph(self) -> Any:
        if self._hnsw is None:
            from usearch.index import Index

            graph = Index(
                ndim=self.vectors.shape[1],
                metric="cos",
                dtype="f32",
                connectivity=HNSW_CONNECTIVITY,
                expansion_add=HNSW_EXPANSION_ADD,
                expansion_search=HNSW_EXPANSION_SEARCH,
            )
            graph.add(np.arange(len(self.vectors), dtype=np.uint64), self.vectors)
            self._hnsw = graph
        return self._hnsw


class EmbeddingCache:
    """Vectors by (model, text hash) in a DuckDB file, so an unchanged chunk is embedded once.

    Opened only by the vector index's writer, under its lock: DuckDB takes one process per file.
    """

    def __init__(self, path: Path) -> None:
        self.path = path

    @contextmanager
    def session(self) -> Iterator[_CacheSession]:
        import duckdb

        try:
            con = duckdb.connect(str(self.path))
        except duckdb.IOException as error:
            raise IndexBusy(f"{self.path} is in use by another process: {error}") from error
        try:
            con.execute(
                "CREATE TABLE IF NOT EXISTS embeddings (model VARCHAR, text_hash VARCHAR, "
                "vector FLOAT[], PRIMARY KEY (model, text_hash))"
            )
            yield _CacheSession(con)
        finally:
            con.close()


class _CacheSession:
    def __init__(self, con: Any) -> None:
        self.con = con

    def get(self, model: str, hashes: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        if not hashes:
            return {}
        import pyarrow as pa

        wanted = pa.table({"text_hash": pa.array(sorted(set(hashes)), pa.string())})
        self.con.register("wanted", wanted)
        try:
            found = self.con.sql(
                "SELECT e.text_hash, e.vector FROM embeddings e JOIN wanted w USING (text_hash) "
                "WHERE e.model = $model",
                params={"model": model},
            ).to_arrow_table()
        finally:
            self.con.unregister("wanted")
        if not found.num_rows:
            return {}
        keys = found.column("text_hash").to_pylist()
        flat = found.column("vector").combine_chunks()
        matrix = np.asarray(flat.values.to_numpy(zero_copy_only=False), dtype=np.float32)
        return dict(zip(keys, matrix.reshape(len(keys), -1), strict=True))

    def put(self, model: str, vectors: Mapping[str, npt.NDArray[np.float32]]) -> None:
        if not vectors:
            return
        import pyarrow as pa

        keys = list(vectors)
        matrix = np.stack([vectors[k] for k in keys]).astype(np.float32)
        rows = pa.table(
            {
                "model": pa.array([model] * len(keys), pa.string()),
                "text_hash": pa.array(keys, pa.string()),
                "vector": pa.FixedSizeListArray.from_arrays(
                    pa.array(matrix.reshape(-1)), matrix.shape[1]
                ).cast(pa.list_(pa.float32())),
            }
        )
        self.con.register("fresh", rows)
        try:
            self.con.execute(
                "INSERT OR IGNORE INTO embeddings SELECT model, text_hash, vector FROM fresh"
            )
        finally:
            self.con.unregister("fresh")


@functools.cache
def shared_embedder(spec: EmbedderSpec) -> Embedder:
    """One embedder per setting in a process: a model loads once, not once per batch."""
    return spec.build()


def open_vectors(
    settings: LoomSettings, *, sources_tagged: SourcesTagged | None = None
) -> VectorIndex:
    """The vector index of a Loom home, under the embedder LOOM_EMBEDDER names."""
    return VectorIndex(
        settings.vectors_dir, shared_embedder(settings.embedder), sources_tagged=sources_tagged
    )
