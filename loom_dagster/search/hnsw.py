"""The vector index's HNSW graph (usearch): when a generation keeps one, how it is built and
searched, the graph a writer saves in a generation (the old one updated, or built whole when
there was none), and the graph a reader maps (or builds once in memory)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from loom_dagster.search.vector_files import GRAPH

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


def write_graph(
    folder: Path,
    kept_rows: npt.NDArray[np.bool_],
    new_keys: npt.NDArray[np.uint64],
    keys: npt.NDArray[np.uint64],
    *,
    old_graph: Path | None,
    old_keys: npt.NDArray[np.uint64] | None,
) -> None:
    """The generation's HNSW graph: the old one's, less the dropped rows, plus the new
    rows; built whole only when there was none (the index just crossed the threshold)."""
    vectors = np.load(folder / "vectors.npy", mmap_mode="r")
    graph = None
    if old_graph is not None:
        graph = _restore_graph(old_graph, view=False)
    if graph is None or graph.ndim != vectors.shape[1]:
        graph = _new_graph(vectors.shape[1])
        to_add = np.ones(len(keys), dtype=bool)
    else:
        assert old_keys is not None
        gone = np.asarray(old_keys, dtype=np.uint64)[~kept_rows]
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


def reader_graph(
    folder: Path,
    has_graph: bool,
    keys: npt.NDArray[np.uint64],
    vectors: npt.NDArray[np.float32],
    expansion: int,
) -> Any:
    """A generation's graph as a reader searches it: its file mapped, or built from its rows."""
    graph = _restore_graph(folder / GRAPH, view=True) if has_graph else None
    if graph is None:
        # A generation written under a higher threshold than this reader's: built here,
        # in memory, once per process.
        graph = _new_graph(vectors.shape[1])
        graph.add(
            np.asarray(keys, dtype=np.uint64),
            np.ascontiguousarray(vectors, dtype=np.float32),
        )
    graph.expansion_search = expansion
    return graph


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
