"""A generation as the vector leg's reader searches it: exact cosine over every row (in one stage,
or two with `prefix_dimensions`), or the generation's HNSW graph past the threshold, with a
filter's mask applied inside the search."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import numpy.typing as npt

from loom_dagster.search.embedding import Matrix, normalized
from loom_dagster.search.generations import Generation
from loom_dagster.search.hnsw import HNSW_EXPANSION_SEARCH, reader_graph

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


class VectorTable:
    """A generation as the reader searches it: every live passage vector in one mapped matrix (a
    chunk's passages on consecutive rows), with what a filter reads per chunk and per document."""

    def __init__(
        self,
        generation: Generation,
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
            self._hnsw = reader_graph(
                self.generation.folder,
                self.generation.has_graph,
                self.keys,
                self.vectors,
                self.expansion,
            )
        return self._hnsw
