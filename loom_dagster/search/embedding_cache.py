"""The vector index's `embeddings.duckdb`: vectors by (model, hash of the embedded text), so a
chunk whose text and context did not change is never embedded again, whichever revision or
document it is in."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from loom_dagster.search.embedding import Embedder
from loom_dagster.search.lexical import IndexBusy

EMBED_BATCH = 512


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


def cached_vectors(
    path: Path, embedder: Embedder, texts: Sequence[str], hashes: Sequence[str]
) -> tuple[dict[str, npt.NDArray[np.float32]], int]:
    """The vector of each text by its hash: stored ones reused, the rest embedded (each
    distinct text once) and stored; and how many were embedded."""
    if not texts:
        return {}, 0
    cache = EmbeddingCache(path)
    with cache.session() as session:
        known = session.get(embedder.model, hashes)
        missing = dict.fromkeys(h for h in hashes if h not in known)
        text_of = dict(zip(hashes, texts, strict=True))
        order = list(missing)
        for start in range(0, len(order), EMBED_BATCH):
            batch = order[start : start + EMBED_BATCH]
            rows = embedder.embed([text_of[h] for h in batch])
            fresh = dict(zip(batch, rows, strict=True))
            session.put(embedder.model, fresh)
            known.update(fresh)
    return known, len(order)
