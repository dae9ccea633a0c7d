"""A revision whose file was deleted after its run read it is not made live (issue 39, part 4):
a real DuckDB catalog, tantivy index and store folder, no Dagster."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import duckdb
import pytest

from loom_dagster import catalog, pipeline
from loom_dagster.assets.live import not_served
from loom_dagster.objectstore import ObjectStore
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.sources import Revision, Source, document_id, gone_from, revision_key
from tests.unit.test_catalog import chunk


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    made = tmp_path / "docs"
    made.mkdir()
    return made


@pytest.fixture
def con(tmp_path: Path, folder: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect(str(tmp_path / "catalog.duckdb"))
    catalog.ensure_schema(connection)
    catalog.upsert_source(connection, Source("docs", str(folder)))
    yield connection
    connection.close()


@pytest.fixture
def store(tmp_path: Path) -> ObjectStore:
    return ObjectStore((tmp_path / "store").as_uri())


@pytest.fixture
def index(tmp_path: Path) -> LexicalIndex:
    return LexicalIndex(tmp_path / "search")


def extracted(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, folder: Path, path: str, text: str
) -> Revision:
    """A file registered, extracted and chunked, as a run leaves it before its publishing."""
    data = text.encode()
    (folder / path).write_bytes(data)
    sha = store.put_original(data)
    rev = Revision(
        revision_key("docs", path, sha), document_id("docs", path), "docs", path, len(data), 1, sha
    )
    catalog.register_revisions(con, [rev])
    artifact = store.put_artifact(b"{}")
    record = pipeline.Extraction(rev.key, "extracted", artifact_sha256=artifact, format="markdown")
    store.put_json(store.revision_key(rev.key, pipeline.EXTRACTION), asdict(record))
    chunks = pipeline.chunks_to_parquet([chunk(rev, text)])
    store.put(store.revision_key(rev.key, pipeline.CHUNKS), chunks)
    return rev


def test_a_revision_whose_file_was_deleted_since_its_run_read_it_is_refused_source_gone(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, index: LexicalIndex, folder: Path
) -> None:
    rev = extracted(con, store, folder, "ferry.md", "ferry timetable capstan")
    (folder / "ferry.md").unlink()

    [outcome] = pipeline.publish(con, index, store, [rev])

    assert (outcome.status, outcome.code) == (catalog.REFUSED, "source_gone")
    assert catalog.live_documents(con) == []
    assert index.search("capstan") == []


def test_a_revision_retired_before_its_run_publishes_is_not_brought_back(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, index: LexicalIndex, folder: Path
) -> None:
    rev = extracted(con, store, folder, "ferry.md", "ferry timetable capstan")
    (folder / "ferry.md").unlink()
    pipeline.retire(con, index, "docs", ["ferry.md"])  # a scan saw it gone first

    [outcome] = pipeline.publish(con, index, store, [rev])

    assert outcome.status == catalog.REFUSED
    [state] = catalog.document_states(con, [rev.document_id])
    assert (state.document_status, state.live_revision) == ("retired", None)
    assert index.search("capstan") == []


def test_its_neighbours_in_the_batch_are_published(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, index: LexicalIndex, folder: Path
) -> None:
    gone = extracted(con, store, folder, "ferry.md", "ferry timetable capstan")
    kept = extracted(con, store, folder, "lock.md", "lock keeper sternpost")
    (folder / "ferry.md").unlink()

    outcomes = pipeline.publish(con, index, store, [gone, kept])

    assert [o.status for o in outcomes] == [catalog.REFUSED, catalog.PUBLISHED]
    [hit] = index.search("sternpost")
    assert hit.chunk.revision == kept.key


def test_a_file_is_gone_only_from_a_folder_that_is_there(tmp_path: Path, folder: Path) -> None:
    (folder / "here.md").write_text("here")
    assert not gone_from(str(folder), "here.md")
    assert gone_from(str(folder), "deleted.md")
    assert gone_from(str(folder), "no/such/folder.md")
    # An unmounted share hides its files; it does not delete them.
    assert not gone_from(str(tmp_path / "unmounted"), "here.md")


def test_a_retired_documents_revision_no_run_finished_keeps_its_partition() -> None:
    """Its run may be taking it now: a run whose partition is deleted under it fails."""
    in_flight = catalog.DocumentRevision("k1", None, None, "retired")
    published = catalog.DocumentRevision("k0", catalog.PUBLISHED, None, "retired")

    assert not_served([in_flight, published]) == ["k0"]
