"""The vector leg through the real pipeline: a real extractor service, a real DuckDB catalog, a
real object-store folder. Vectors follow publishes and retirements; an unchanged document's
next revision embeds nothing; an embedder that fails after the lexical commit is repaired by
the next reconcile; `loom ingest` leaves the vectors matching the catalog."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import duckdb
import numpy as np
import pytest
from usearch.index import Index

from loom_dagster import api, catalog, pipeline
from loom_dagster.cli import main
from loom_dagster.extractor.client import ExtractorClient
from loom_dagster.extractor.local import RunningExtractor
from loom_dagster.extractor.settings import ExtractorSettings
from loom_dagster.objectstore import ObjectStore
from loom_dagster.search.embedding import EmbedderError, Matrix, NgramEmbedder
from loom_dagster.search.legs import SearchFilter
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.search.vector import VectorIndex, open_vectors
from loom_dagster.settings import LoomSettings
from loom_dagster.sources import Source
from tests.integration.test_pipeline_end_to_end import write


class CountingEmbedder(NgramEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []
        self.down = False

    def embed(self, texts: Sequence[str]) -> Matrix:
        if self.down:
            raise EmbedderError("the embedder is down")
        self.embedded.extend(texts)
        return super().embed(texts)


def served_revisions(vectors: VectorIndex) -> set[str]:
    """The revisions the one generation on disk serves; its HNSW graph holds each row once."""
    (generation,) = (vectors.directory / "generations").iterdir()
    chunk_ids = [str(c) for c in np.load(generation / "chunk_ids.npy")]
    graph = Index.restore(str(generation / "graph.usearch"), view=True)
    assert graph is not None and len(graph) == len(chunk_ids)
    return {c.split("#")[0] for c in chunk_ids}


def ingest(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    vectors: VectorIndex,
    store: ObjectStore,
    client: ExtractorClient,
    source: Source,
) -> None:
    scan = pipeline.sync_source(con, index, source, vectors=vectors)
    for revision in scan.new:
        pipeline.store_original(store, source.root, revision)
        extraction = pipeline.extract(store, client, revision)
        pipeline.make_chunks(store, extraction, revision)
    pipeline.publish(con, index, store, list(scan.new), vectors=vectors)


def test_vectors_follow_publish_retire_and_are_reused_across_revisions(
    tmp_path: Path, reference_service: RunningExtractor
) -> None:
    folder = tmp_path / "docs"
    write(
        folder,
        "replication.md",
        "# Replication\n\nRestarting the replication daemon clears stuck transactions.\n",
    )
    write(folder, "revenue.md", "# Revenue\n\nQuarterly revenue grew in the northern region.\n")
    source = Source("docs", str(folder))
    store = ObjectStore((tmp_path / "store").as_uri())
    index = LexicalIndex(tmp_path / "search")
    embedder = CountingEmbedder()
    # Threshold 0: the writer keeps an HNSW graph in every generation, which must follow too.
    vectors = VectorIndex(tmp_path / "vectors", embedder, hnsw_threshold=0)
    client = ExtractorClient(
        ExtractorSettings(default_url=reference_service.url, token=reference_service.token)
    )
    with duckdb.connect(str(tmp_path / "catalog.duckdb")) as con:
        catalog.ensure_schema(con)
        catalog.upsert_source(con, source)
        ingest(con, index, vectors, store, client, source)
        [hit] = vectors.rank("restart replicator", SearchFilter(), 1)
        assert hit.chunk_id.startswith(catalog.live_documents(con)[0][3])
        assert {doc for doc, *_ in catalog.live_documents(con)} == set(vectors.live_revisions())

        # A new revision whose passage is unchanged (only a line appended elsewhere) embeds
        # only the new passage.
        embedder.embedded.clear()
        write(
            folder,
            "revenue.md",
            "# Revenue\n\nQuarterly revenue grew in the northern region.\n\n# Costs\n\nFlat.\n",
        )
        ingest(con, index, vectors, store, client, source)
        assert [t.rsplit("\n", 1)[-1] for t in embedder.embedded] == ["Flat."]

        # The embedder fails after the lexical commit: the publish fails, nothing is marked, and
        # the next reconcile repairs the vectors once the embedder is back.
        write(folder, "costs.md", "# Costs\n\nHosting costs doubled after the migration.\n")
        embedder.down = True
        with pytest.raises(EmbedderError):
            ingest(con, index, vectors, store, client, source)
        assert len(vectors.live_revisions()) == 2
        embedder.down = False
        pipeline.reconcile(con, index, store, vectors=vectors)
        assert {doc for doc, *_ in catalog.live_documents(con)} == set(vectors.live_revisions())
        assert len(vectors.live_revisions()) == 3
        assert served_revisions(vectors) == set(vectors.live_revisions().values())

        os.remove(folder / "replication.md")
        ingest(con, index, vectors, store, client, source)
        live = {doc: key for doc, _, _, key in catalog.live_documents(con)}
        assert vectors.live_revisions() == live and len(live) == 2
        assert served_revisions(vectors) == set(live.values())
        hits = vectors.rank("restart replicator", SearchFilter(), 5)
        assert hits and all(h.chunk_id.split("#")[0] in live.values() for h in hits)
    client.close()


def test_loom_ingest_and_sources_remove_leave_the_vectors_matching_the_catalog(
    loom_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOOM_EMBEDDER", "ngram")
    folder = write(
        tmp_path / "docs",
        "replication.md",
        "# Replication\n\nRestarting the replication daemon clears stuck transactions.\n",
    ).parent
    report = api.ingest_folder(folder)
    assert report.count("published") == 1
    settings = LoomSettings.from_env()
    [hit] = open_vectors(settings).rank("restart replicator", SearchFilter(), 1)
    with duckdb.connect(str(settings.catalog_path), read_only=True) as con:
        [(_, _, _, live)] = catalog.live_documents(con)
    assert hit.chunk_id.startswith(live)

    assert main(["sources", "remove", "docs", "--yes"]) == 0
    assert open_vectors(settings).rank("restart replicator", SearchFilter(), 5) == []
    assert open_vectors(settings).live_revisions() == {}
