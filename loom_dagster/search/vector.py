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
"""

from __future__ import annotations

import fcntl
import functools
import json
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from loom_dagster.display import printable
from loom_dagster.errors import LoomError
from loom_dagster.search.embedder_spec import EmbedderSpec
from loom_dagster.search.embedding import (
    STOP_WORDS,
    Embedder,
    Matrix,
    embedded_text,
    normalized,
    text_hash,
    weighted_embedding,
)
from loom_dagster.search.legs import LegHit, SearchFilter
from loom_dagster.search.lexical import IndexBusy, IndexedChunk
from loom_dagster.search.service import VECTOR_MANIFEST as MANIFEST

if TYPE_CHECKING:
    from loom_dagster.settings import LoomSettings

GENERATIONS = "generations"
_GENERATION_NAME = re.compile(r"[0-9]{20}-[0-9a-f]{8}")
LEGACY_DOCS = "docs"  # one file per revision, before generations: removed by the next writer
GRAPH = "graph.usearch"
DOCUMENTS = "documents.json"
# In the manifest's model: vectors of the per-revision layout are not read as a generation.
LAYOUT_VERSION = "gen2"
CACHE = "embeddings.duckdb"
LOCK = ".writer.lock"
DEFAULT_LOCK_TIMEOUT = 30.0
# Live rows above which the writer keeps an HNSW graph in the generation and the reader
# searches it instead of every vector. bench/search_latency.py on two busy cores, 128
# dimensions: exact 3.4 ms p50 / 4.3 ms p95 at 100k and 47 / 73 ms at 1M (linear in the
# chunks), HNSW 1.7 / 2.3 ms at 100k.
HNSW_THRESHOLD = 200_000
# usearch's graph. Its default search width (64) gave recall@10 of 0.62 on the latency bench's
# first synthetic chunks; 256 gave 0.997 at 2k and 0.73 at 100k (50 hits asked, 10 compared).
# Measured again at 100k (2026-12-02, recall@10 against the exact scan, random / topical
# queries): width 256 0.79 / 0.80, 1,024 0.92 / 0.92, 2,048 0.965 / 0.971; connectivity 32
# reached 0.976 at 1,024 but took 4.8x as long to build. The search width is the smallest
# measured at 0.95 or more: a fast wrong leg is not a win (README, "Search: the vector leg").
HNSW_CONNECTIVITY = 16
HNSW_EXPANSION_ADD = 128
HNSW_EXPANSION_SEARCH = 2048
# With `prefix_dimensions` (off by default; bench/search_latency.py measures it), the exact scan
# is done in two stages: every row scored on the first dimensions of its vector (the default
# model is trained so that a prefix of its dimensions also works alone), and the best
# PREFIX_CANDIDATES rows scored again on all of them. On the latency bench's 100,000 random
# queries' chunks, 64 of 128 dimensions and 1,000 candidates kept recall@10 at 0.96 against
# the full scan.
PREFIX_CANDIDATES = 1000
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
# A query's words to their weights in its embedding (the lexical index's inverse document
# frequency over the live chunks: `LexicalIndex.term_weights`).
TermWeights = Callable[[Sequence[str]], Sequence[float]]
_QUERY_WORDS = re.compile(r"\w+")


@dataclass(frozen=True)
class _Entry:
    document: str
    revision: str
    source: str
    path: str
    format: str
    count: int
    rows: int


class _Generation:
    """One generation's files, memory-mapped read-only: opening it reads no vector."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.vectors: Matrix = _load(folder, "vectors")
        self.keys: npt.NDArray[np.uint64] = _load(folder, "keys")
        self.row_chunk: npt.NDArray[np.int64] = _load(folder, "row_chunk")
        self.chunk_ids: npt.NDArray[np.str_] = _load(folder, "chunk_ids")
        self.block_types: npt.NDArray[np.str_] = _load(folder, "block_types")
        self.doc_formats: npt.NDArray[np.str_] = _load(folder, "doc_formats")
        self.doc_sources: npt.NDArray[np.str_] = _load(folder, "doc_sources")
        self.doc_paths: npt.NDArray[np.str_] = _load(folder, "doc_paths")
        self.doc_chunks: npt.NDArray[np.int64] = _load(folder, "doc_chunks")
        self.has_graph = (folder / GRAPH).is_file()
        rows, chunks = len(self.vectors), len(self.chunk_ids)
        if (
            self.vectors.ndim != 2
            or len(self.keys) != rows
            or len(self.row_chunk) != rows
            or len(self.block_types) != chunks
            or int(np.asarray(self.doc_chunks).sum()) != chunks
            or not len(self.doc_formats) == len(self.doc_sources) == len(self.doc_paths)
            or len(self.doc_formats) != len(self.doc_chunks)
        ):
            raise ValueError("its files do not agree on the number of rows, chunks or documents")

    def documents(self) -> tuple[list[_Entry], int]:
        """Each document in row order, and the next free graph key (the writer's view)."""
        with open(self.folder / DOCUMENTS, encoding="utf-8") as listing:
            data = json.load(listing)
        return [_Entry(**entry) for entry in data["documents"]], int(data["next_key"])


def _load(folder: Path, name: str) -> Any:
    return np.load(folder / f"{name}.npy", mmap_mode="r", allow_pickle=False)


def _save(folder: Path, name: str, array: npt.ArrayLike) -> None:
    with open(folder / f"{name}.npy", "wb") as out:
        np.save(out, np.asarray(array), allow_pickle=False)
        out.flush()
        os.fsync(out.fileno())


def _fsync_directory(path: Path) -> None:
    directory = os.open(path, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)


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
            old = self._readable_generation()
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
            name = self._write_generation(old, documents, hashes, vectors, set(retire))
            self._write_manifest(name)
            self._remove_unnamed(name)
        return embedded

    def retire(self, document_id: str) -> None:
        self.publish_many({}, retire=[document_id])

    def live_revisions(self) -> dict[str, str]:
        """The revision each document's vectors were published as (under this embedder)."""
        for attempt in range(_RELOAD_ATTEMPTS):
            try:
                generation = self._readable_generation()
                if generation is None:
                    return {}
                entries, _ = generation.documents()
                return {entry.document: entry.revision for entry in entries}
            except FileNotFoundError:
                time.sleep(0.01 * (attempt + 1))  # a writer swapped it: read the manifest again
        raise LoomError(f"{self.directory} could not be read", code="index_unreadable")

    def _readable_generation(self) -> _Generation | None:
        """The writer's view: a damaged generation holds nothing, so the next publish starts a
        new one and `pipeline.sync_vectors` embeds every live document into it again (from the
        embedding cache: nothing unchanged is embedded twice). A reader reports the damage."""
        try:
            generation = self._generation(self._read_manifest())
            if generation is not None:
                generation.documents()  # the listing a writer reads: damaged is unreadable too
            return generation
        except FileNotFoundError:
            raise
        except (OSError, ValueError, KeyError, TypeError):
            return None
        except LoomError as error:
            if error.code != "index_unreadable":
                raise
            return None

    def _generation(self, manifest: Mapping[str, Any]) -> _Generation | None:
        name = manifest.get("generation")
        if manifest.get("model") != self.layout or not isinstance(name, str):
            # Vectors of another model (or layout) cannot be compared with this one's queries;
            # the next sync under this model embeds every live document again.
            return None
        if not _GENERATION_NAME.fullmatch(name):
            raise LoomError(
                f"{self.directory / MANIFEST} names {printable(name)!r}, not a generation",
                code="index_unreadable",
            )
        try:
            return _Generation(self.directory / GENERATIONS / name)
        except FileNotFoundError:
            raise  # replaced by a writer since the manifest was read: read it again
        except (OSError, ValueError, KeyError) as error:
            raise LoomError(
                f"generation {name} in {self.directory} cannot be read: {error}",
                code="index_unreadable",
            ) from error

    def _write_generation(
        self,
        old: _Generation | None,
        documents: Mapping[str, Sequence[IndexedChunk]],
        hashes: Mapping[str, Sequence[Sequence[str]]],
        vectors: Mapping[str, npt.NDArray[np.float32]],
        retire: set[str],
    ) -> str:
        """The new generation: the old one's rows of every document not replaced or retired
        (copied in runs, keys kept), then the batch's documents (new keys); returns its name."""
        old_entries, next_key = old.documents() if old is not None else ([], 0)
        dropped = set(documents) | retire
        entries: list[_Entry] = []
        runs: list[tuple[int, int, int, int]] = []  # (first chunk, end chunk, first row, end row)
        kept_rows = np.zeros(len(old.vectors) if old is not None else 0, dtype=bool)
        chunk_at = row_at = 0
        for entry in old_entries:
            if entry.document not in dropped:
                entries.append(entry)
                kept_rows[row_at : row_at + entry.rows] = True
                span = (chunk_at, chunk_at + entry.count, row_at, row_at + entry.rows)
                if runs and runs[-1][1] == span[0] and runs[-1][3] == span[2]:
                    runs[-1] = (runs[-1][0], span[1], runs[-1][2], span[3])
                else:
                    runs.append(span)
            chunk_at += entry.count
            row_at += entry.rows
        fresh: list[tuple[str, Sequence[IndexedChunk], list[str]]] = []
        for document_id, chunks in documents.items():
            flat = [h for rows in hashes[document_id] for h in rows]
            first = chunks[0] if chunks else None
            entries.append(
                _Entry(
                    document=document_id,
                    revision=first.revision if first else "",
                    source=first.source if first else "",
                    path=first.path if first else "",
                    format=first.format if first else "",
                    count=len(chunks),
                    rows=len(flat),
                )
            )
            fresh.append((document_id, chunks, flat))

        name = f"{time.time_ns():020d}-{uuid.uuid4().hex[:8]}"
        folder = self.directory / GENERATIONS / name
        folder.mkdir(parents=True)
        dimension = next(
            (len(v) for v in vectors.values()),
            old.vectors.shape[1] if old is not None else max(self.embedder.dimension, 1),
        )
        total = sum(entry.rows for entry in entries)
        new_rows = sum(len(flat) for _, _, flat in fresh)
        # Written in place (a memory map over the new file), so a big index is never held twice.
        matrix = np.lib.format.open_memmap(
            folder / "vectors.npy", mode="w+", dtype=np.float32, shape=(total, dimension)
        )
        keys: list[npt.NDArray[np.uint64]] = []
        row_chunk: list[npt.NDArray[np.int64]] = []
        chunk_ids: list[npt.NDArray[np.str_]] = []
        block_types: list[npt.NDArray[np.str_]] = []
        at = chunks_at = 0
        for first_chunk, end_chunk, first_row, end_row in runs:
            assert old is not None
            matrix[at : at + end_row - first_row] = old.vectors[first_row:end_row]
            keys.append(np.asarray(old.keys[first_row:end_row], dtype=np.uint64))
            row_chunk.append(
                np.asarray(old.row_chunk[first_row:end_row], dtype=np.int64)
                - first_chunk
                + chunks_at
            )
            chunk_ids.append(np.asarray(old.chunk_ids[first_chunk:end_chunk]))
            block_types.append(np.asarray(old.block_types[first_chunk:end_chunk]))
            at += end_row - first_row
            chunks_at += end_chunk - first_chunk
        new_keys = np.arange(next_key, next_key + new_rows, dtype=np.uint64)
        for document_id, chunks, flat in fresh:
            if flat:
                matrix[at : at + len(flat)] = _stack([vectors[h] for h in flat], dimension)
            per_chunk = np.array([len(rows) for rows in hashes[document_id]], dtype=np.int64)
            row_chunk.append(
                np.repeat(np.arange(len(chunks), dtype=np.int64), per_chunk) + chunks_at
            )
            chunk_ids.append(np.array([c.chunk_id for c in chunks], dtype=np.str_))
            block_types.append(np.array([c.block_type for c in chunks], dtype=np.str_))
            at += len(flat)
            chunks_at += len(chunks)
        keys.append(new_keys)
        matrix.flush()
        del matrix
        with open(folder / "vectors.npy", "rb+") as written:
            os.fsync(written.fileno())
        all_keys = np.concatenate(keys)
        _save(folder, "keys", all_keys)
        _save(folder, "row_chunk", _joined(row_chunk, np.int64))
        _save(folder, "chunk_ids", _joined(chunk_ids, np.str_))
        _save(folder, "block_types", _joined(block_types, np.str_))
        _save(folder, "doc_formats", np.array([e.format for e in entries if e.count], np.str_))
        _save(folder, "doc_sources", np.array([e.source for e in entries if e.count], np.str_))
        _save(folder, "doc_paths", np.array([e.path for e in entries if e.count], np.str_))
        _save(folder, "doc_chunks", np.array([e.count for e in entries if e.count], np.int64))
        if total > self.hnsw_threshold:
            self._write_graph(old, folder, kept_rows, new_keys, all_keys)
        with open(folder / DOCUMENTS, "w", encoding="utf-8") as listing:
            json.dump(
                {"documents": [asdict(e) for e in entries], "next_key": next_key + new_rows},
                listing,
                ensure_ascii=False,
            )
            listing.flush()
            os.fsync(listing.fileno())
        _fsync_directory(folder)
        _fsync_directory(folder.parent)
        return name

    def _write_graph(
        self,
        old: _Generation | None,
        folder: Path,
        kept_rows: npt.NDArray[np.bool_],
        new_keys: npt.NDArray[np.uint64],
        keys: npt.NDArray[np.uint64],
    ) -> None:
        """The generation's HNSW graph: the old one's, less the dropped rows, plus the new
        rows; built whole only when there was none (the index just crossed the threshold)."""
        vectors = np.load(folder / "vectors.npy", mmap_mode="r")
        graph = None
        if old is not None and old.has_graph:
            graph = _restore_graph(old.folder / GRAPH, view=False)
        if graph is None or graph.ndim != vectors.shape[1]:
            graph = _new_graph(vectors.shape[1])
            to_add = np.ones(len(keys), dtype=bool)
        else:
            assert old is not None
            gone = np.asarray(old.keys, dtype=np.uint64)[~kept_rows]
            if len(gone):
                graph.remove(gone)
            to_add = np.zeros(len(keys), dtype=bool)
            to_add[len(keys) - len(new_keys) :] = True
        if to_add.any():
            rows = np.flatnonzero(to_add)
            graph.add(keys[rows], np.ascontiguousarray(vectors[rows], dtype=np.float32))
        graph.save(str(folder / GRAPH))
        with open(folder / GRAPH, "rb+") as written:
            os.fsync(written.fileno())

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

    def _write_manifest(self, generation: str) -> None:
        manifest = {"model": self.layout, "generation": generation}
        target = self.directory / MANIFEST
        temporary = target.with_suffix(f".{os.getpid()}.tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            json.dump(manifest, out, ensure_ascii=False)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, target)  # the one step a reader sees
        _fsync_directory(self.directory)

    def _remove_unnamed(self, named: str) -> None:
        """Every generation but the named one (older ones, and any a crashed writer left before
        its swap), the per-revision files of the layout before generations, stray manifests."""
        for path in (self.directory / GENERATIONS).iterdir():
            if path.name != named:
                shutil.rmtree(path, ignore_errors=True)
        shutil.rmtree(self.directory / LEGACY_DOCS, ignore_errors=True)
        for path in self.directory.glob(f"{Path(MANIFEST).stem}.*.tmp"):
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
            return {}
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

    def _mask(self, table: _Table, search_filter: SearchFilter) -> npt.NDArray[np.bool_] | None:
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

    def _current(self) -> _Table | None:
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

    def _refresh(self) -> _Table | None:
        path = self.directory / MANIFEST
        try:
            status = path.stat()
        except FileNotFoundError:
            self._table, self._seen = None, None
            return None
        seen = (status.st_ino, status.st_size, status.st_mtime_ns)
        if seen == self._seen:
            return self._table
        generation = self._generation(self._read_manifest())
        self._table = (
            None
            if generation is None
            else _Table(
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


def _stack(rows: Sequence[npt.NDArray[np.float32]], dimension: int) -> Matrix:
    if not rows:
        return np.zeros((0, max(dimension, 1)), dtype=np.float32)
    return np.ascontiguousarray(np.stack(rows), dtype=np.float32)


class _Table:
    """A generation as the reader searches it: every live passage vector in one mapped matrix (a
    chunk's passages on consecutive rows), with what a filter reads per chunk and per document."""

    def __init__(
        self,
        generation: _Generation,
        *,
        center: bool = False,
        expansion: int = HNSW_EXPANSION_SEARCH,
        prefix: int = 0,
    ) -> None:
        self.generation = generation
        self.expansion = expansion
        self.prefix_dimensions = prefix
        self.vectors: Matrix = generation.vectors
        self.keys = generation.keys
        self.chunk_ids = generation.chunk_ids
        self.block_types = generation.block_types
        self.row_chunk = generation.row_chunk
        self.doc_formats = generation.doc_formats
        self.doc_sources = generation.doc_sources
        self.doc_paths = generation.doc_paths
        self._hnsw: Any = None
        # With `center`, the live vectors' mean is removed from them and from each query (an
        # average of word vectors shares a common part). Measured on bench/retrieval.py it did
        # not pay (vector found-first 0.67 centred, 0.69 not), so it is off by default.
        self.mean: Matrix | None = None
        if center and len(self.vectors) > 1:
            self.mean = np.asarray(self.vectors).mean(axis=0, dtype=np.float32)
            self.vectors = normalized(self.vectors - self.mean)

    @functools.cached_property
    def doc_of_chunk(self) -> npt.NDArray[np.int32]:
        counts = np.asarray(self.generation.doc_chunks)
        return np.repeat(np.arange(len(counts), dtype=np.int32), counts)

    @functools.cached_property
    def chunk_first_row(self) -> npt.NDArray[np.intp]:
        return np.searchsorted(self.row_chunk, np.arange(len(self.chunk_ids)))

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

    @functools.cached_property
    def prefix(self) -> Matrix:
        """The rows' first `prefix_dimensions`, normalised, in one contiguous matrix (built by
        the reader once per generation: a strided view would read every row whole)."""
        return normalized(np.array(self.vectors[:, : self.prefix_dimensions], dtype=np.float32))

    def _two_stage(
        self, vector: Matrix, mask: npt.NDArray[np.bool_] | None, limit: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]] | None:
        """Rows scored on the prefix, the best PREFIX_CANDIDATES scored again whole; None when
        that would not be fewer rows than a full scan."""
        wanted = max(PREFIX_CANDIDATES, limit * 4)
        if not 0 < self.prefix_dimensions < self.vectors.shape[1] or len(self.vectors) <= wanted:
            return None
        head = vector[: self.prefix_dimensions]
        norm = float(np.linalg.norm(head))
        if norm == 0.0:
            return None
        rough = np.einsum("ij,j->i", self.prefix, head / norm)
        if mask is not None:
            inside = mask[np.asarray(self.row_chunk)]
            if int(inside.sum()) <= wanted:
                return None
            rough[~inside] = -np.inf
        rows = np.argpartition(-rough, wanted - 1)[:wanted]
        scores = np.einsum("ij,j->i", self.vectors[np.sort(rows)], vector)
        rows = np.sort(rows)
        order = np.argsort(-scores, kind="stable")
        chunks = np.asarray(self.row_chunk)[rows[order]]
        chunks, first = np.unique(chunks, return_index=True)  # a chunk's best passage
        best = np.argsort(first, kind="stable")[:limit]
        return chunks[best].astype(np.intp), scores[order][first[best]].astype(np.float32)

    def _exact(
        self, vector: Matrix, mask: npt.NDArray[np.bool_] | None, limit: int
    ) -> tuple[npt.NDArray[np.intp], npt.NDArray[np.float32]]:
        found = self._two_stage(vector, mask, limit) if self.prefix_dimensions else None
        if found is not None:
            return found
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
        found = np.asarray(matches.keys, dtype=np.uint64)
        # The graph answers keys; a generation's keys increase with its rows.
        rows = np.searchsorted(self.keys, found)
        scores = (1.0 - np.asarray(matches.distances, dtype=np.float32)).astype(np.float32)
        chunks = np.asarray(self.row_chunk)[rows]
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
            path = self.generation.folder / GRAPH
            graph = _restore_graph(path, view=True) if self.generation.has_graph else None
            if graph is None:
                # A generation written under a higher threshold than this reader's: built here,
                # in memory, once per process.
                graph = _new_graph(self.vectors.shape[1])
                graph.add(
                    np.asarray(self.keys, dtype=np.uint64),
                    np.ascontiguousarray(self.vectors, dtype=np.float32),
                )
            graph.expansion_search = self.expansion
            self._hnsw = graph
        return self._hnsw


def _new_graph(dimension: int) -> Any:
    from usearch.index import Index

    return Index(
        ndim=dimension,
        metric="cos",
        dtype="f32",
        connectivity=HNSW_CONNECTIVITY,
        expansion_add=HNSW_EXPANSION_ADD,
        expansion_search=HNSW_EXPANSION_SEARCH,
    )


def _restore_graph(path: Path, *, view: bool) -> Any:
    """A saved graph, mapped (`view`) or loaded to be changed; None when it is not a graph."""
    from usearch.index import Index

    if not path.is_file():
        raise FileNotFoundError(path)
    graph: Any = Index.restore(str(path), view=view)
    if graph is not None:
        graph.expansion_add = HNSW_EXPANSION_ADD
        graph.expansion_search = HNSW_EXPANSION_SEARCH
    return graph


def _joined(parts: Sequence[npt.NDArray[Any]], dtype: Any) -> npt.NDArray[Any]:
    return np.concatenate(parts) if parts else np.array([], dtype=dtype)


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
        settings.vectors_dir,
        shared_embedder(settings.embedder),
        sources_tagged=sources_tagged,
        floor=settings.embedder.floor,
    )
