"""The catalog and the search index agree after any crash between their commits (issue 12.3):
a real DuckDB file, a real tantivy directory and a real object-store folder, no Dagster."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from loom_dagster import catalog, pipeline
from loom_dagster.objectstore import ObjectStore
from loom_dagster.search.lexical import LexicalIndex
from tests.unit.catalog_backends import BACKENDS, open_catalog
from tests.unit.test_catalog import chunk, revision


@pytest.fixture(params=BACKENDS)
def con(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = open_catalog(request.param, tmp_path)
    yield connection
    connection.close()


def published_in_the_catalog_only(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, path: str, sha: str, text: str
) -> str:
    """A revision whose catalog transaction committed and whose index commit never happened."""
    rev = revision(path, sha)
    catalog.register_revisions(con, [rev])
    chunks = [chunk(rev, text)]
    store.put(store.revision_key(rev.key, pipeline.CHUNKS), pipeline.chunks_to_parquet(chunks))
    catalog.publish_revision(con, rev, chunks, artifact_sha256="0" * 64)
    return rev.key


def test_a_revision_live_in_the_catalog_and_absent_from_the_index_is_repaired(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    store, index = ObjectStore((tmp_path / "store").as_uri()), LexicalIndex(tmp_path / "search")
    key = published_in_the_catalog_only(con, store, "a.md", "1", "wombat burrows")
    assert index.search("wombat") == [] and catalog.searchable(con, [key]) == set()

    assert pipeline.reconcile(con, index, store) == {revision("a.md", "1").document_id: key}

    [hit] = index.search("wombat")
    assert hit.chunk.revision == key and catalog.searchable(con, [key]) == {key}
    # Nothing differs now: one query, nothing written.
    assert pipeline.reconcile(con, index, store) == {}


def test_a_newer_revision_replaces_the_one_the_index_holds_and_a_retired_one_leaves(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    store, index = ObjectStore((tmp_path / "store").as_uri()), LexicalIndex(tmp_path / "search")
    published_in_the_catalog_only(con, store, "a.md", "1", "wombat burrows")
    published_in_the_catalog_only(con, store, "b.md", "1", "quokka smiles")
    pipeline.reconcile(con, index, store)
    newer = published_in_the_catalog_only(con, store, "a.md", "2", "numbat termites")
    catalog.retire_paths(con, "docs", ["b.md"])  # its index delete never happened

    pipeline.reconcile(con, index, store)

    assert index.search("wombat") == [] and index.search("quokka") == []
    [hit] = index.search("numbat")
    assert hit.chunk.revision == newer and index.count() == 1


def test_an_index_made_afresh_is_rebuilt_from_the_catalog(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    # An index of an older schema cannot be opened; its folder removed, the next reconcile
    # writes every live document again, though the catalog had them marked as indexed.
    store, index = ObjectStore((tmp_path / "store").as_uri()), LexicalIndex(tmp_path / "search")
    key = published_in_the_catalog_only(con, store, "a.md", "1", "wombat burrows")
    pipeline.reconcile(con, index, store)
    shutil.rmtree(tmp_path / "search")
    fresh = LexicalIndex(tmp_path / "search")
    assert fresh.count() == 0 and catalog.searchable(con, [key]) == {key}

    pipeline.reconcile(con, fresh, store)

    [hit] = fresh.search("wombat")
    assert hit.chunk.revision == key


def test_a_revision_whose_retries_were_spent_is_pending_again(
    con: duckdb.DuckDBPyConnection,
) -> None:
    spent, refused = revision("a.md", "1"), revision("b.md", "1")
    catalog.register_revisions(con, [spent, refused])
    catalog.record_outcome(con, catalog.Outcome(spent.key, catalog.REFUSED, "retries_exhausted"))
    catalog.record_outcome(con, catalog.Outcome(refused.key, catalog.REFUSED, "encoding"))
    assert [r.key for r in catalog.pending_revisions(con, "docs")] == [spent.key]
