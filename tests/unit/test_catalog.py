"""The catalog on a real DuckDB file: registry, publishing, superseding, retiring."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from loom_dagster import catalog
from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.sources import OptionRule, Revision, Source, document_id, revision_key
from tests.unit.catalog_backends import BACKENDS, open_catalog


@pytest.fixture(params=BACKENDS)
def con(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = open_catalog(request.param, tmp_path)
    catalog.upsert_source(connection, Source("docs", "/data/docs"))
    yield connection
    connection.close()


def revision(path: str, sha: str) -> Revision:
    sha = sha * 64
    return Revision(
        revision_key("docs", path, sha), document_id("docs", path), "docs", path, 3, 1, sha
    )


def chunk(rev: Revision, text: str) -> Chunk:
    return Chunk(
        0, text, ("b0",), "paragraph", (), Locator(line_start=1, line_end=1), (), rev.key, "text"
    )


def live_revisions(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [document[3] for document in catalog.live_documents(con)]


def test_publishing_a_newer_revision_replaces_the_live_one(con: duckdb.DuckDBPyConnection) -> None:
    old, new = revision("a.md", "1"), revision("a.md", "2")
    catalog.register_revisions(con, [old, new])
    assert catalog.publish_revision(con, old, [chunk(old, "old")], artifact_sha256="x") is None
    assert catalog.publish_revision(con, new, [chunk(new, "new")], artifact_sha256="y") == old.key
    assert live_revisions(con) == [new.key]
    outcomes = catalog.outcomes_for(con, [old.key, new.key])
    assert (outcomes[old.key].status, outcomes[new.key].status) == (
        catalog.SUPERSEDED,
        catalog.PUBLISHED,
    )


def test_an_older_revision_never_replaces_a_newer_live_one(con: duckdb.DuckDBPyConnection) -> None:
    old, new = revision("a.md", "1"), revision("a.md", "2")
    catalog.register_revisions(con, [old, new])
    catalog.publish_revision(con, new, [chunk(new, "new")], artifact_sha256="y")
    assert catalog.publish_revision(con, old, [chunk(old, "old")], artifact_sha256="x") is None
    assert live_revisions(con) == [new.key]
    assert catalog.outcomes_for(con, [old.key])[old.key].status == catalog.SUPERSEDED


def test_a_failed_publish_leaves_nothing_half_written(con: duckdb.DuckDBPyConnection) -> None:
    old, new = revision("a.md", "1"), revision("a.md", "2")
    catalog.register_revisions(con, [old, new])
    catalog.publish_revision(con, old, [chunk(old, "old")], artifact_sha256="x")
    # A value DuckDB cannot store fails the last statement, after the document was made live
    # and the old revision recorded superseded: both are rolled back (PostgreSQL's refusal is
    # the adapter's typed CatalogError).
    with pytest.raises((duckdb.Error, catalog.CatalogError)):
        catalog.publish_revision(con, new, [chunk(new, "new")], artifact_sha256=object())  # type: ignore[arg-type]
    assert live_revisions(con) == [old.key]
    assert catalog.outcomes_for(con, [old.key])[old.key].status == catalog.PUBLISHED
    assert catalog.counts(con) == {"live_documents": 1, "chunks": 1}


def test_retiring_a_deleted_path_removes_its_live_revision_and_its_chunks_from_the_count(
    con: duckdb.DuckDBPyConnection,
) -> None:
    a, b = revision("a.md", "1"), revision("b.md", "2")
    catalog.register_revisions(con, [a, b])
    for rev in (a, b):
        catalog.publish_revision(con, rev, [chunk(rev, rev.path)], artifact_sha256="x")
    assert catalog.retire_paths(con, "docs", ["a.md"]) == [a.document_id]
    assert live_revisions(con) == [b.key]
    assert catalog.counts(con) == {"live_documents": 1, "chunks": 1}
    assert [d[2] for d in catalog.live_documents(con)] == ["b.md"]
    assert "a.md" not in catalog.known_files(con, "docs")


def test_a_revision_with_no_outcome_is_pending_until_one_is_recorded(
    con: duckdb.DuckDBPyConnection,
) -> None:
    a = revision("a.md", "1")
    catalog.register_revisions(con, [a])
    assert [r.key for r in catalog.pending_revisions(con, "docs")] == [a.key]
    catalog.record_outcome(con, catalog.Outcome(a.key, catalog.REFUSED, "encoding", "bad byte"))
    assert catalog.pending_revisions(con, "docs") == []
    assert catalog.known_files(con, "docs")["a.md"].sha256 == a.sha256


def test_registering_a_key_twice_keeps_the_first_record(con: duckdb.DuckDBPyConnection) -> None:
    a = revision("a.md", "1")
    catalog.register_revisions(con, [a])
    catalog.register_revisions(con, [a])
    assert catalog.get_revision(con, a.key) == a


def test_every_outcome_is_kept_and_a_superseded_revision_keeps_the_run_that_published_it(
    con: duckdb.DuckDBPyConnection,
) -> None:
    old, new = revision("a.md", "1"), revision("a.md", "2")
    catalog.register_revisions(con, [old])
    catalog.publish_revision(con, old, [chunk(old, "old")], artifact_sha256="x", run_id="run-1")
    catalog.register_revisions(con, [new])
    catalog.publish_revision(con, new, [chunk(new, "new")], artifact_sha256="y", run_id="run-2")

    assert catalog.outcomes_for(con, [old.key])[old.key].status == catalog.SUPERSEDED
    history = catalog.file_history(con, "docs", "a.md")
    assert [(h.revision.key, h.status) for h in history] == [
        (old.key, catalog.SUPERSEDED),
        (new.key, "live"),
    ]
    assert [(o.status, o.run_id, o.chunk_count) for o in history[0].outcomes] == [
        (catalog.PUBLISHED, "run-1", 1),
        (catalog.SUPERSEDED, "run-2", None),
    ]
    assert [(o.status, o.run_id) for o in history[1].outcomes] == [(catalog.PUBLISHED, "run-2")]


def test_a_file_back_to_bytes_it_had_is_its_newest_revision_again_and_runs_again(
    con: duckdb.DuckDBPyConnection,
) -> None:
    first, second = revision("a.md", "1"), revision("a.md", "2")
    catalog.register_revisions(con, [first])
    catalog.publish_revision(con, first, [chunk(first, "one")], artifact_sha256="x")
    catalog.register_revisions(con, [second])
    catalog.publish_revision(con, second, [chunk(second, "two")], artifact_sha256="y")

    catalog.register_revisions(con, [first])  # the edit undone (or the options set back)
    assert catalog.known_files(con, "docs")["a.md"].sha256 == first.sha256
    assert [r.key for r in catalog.pending_revisions(con, "docs")] == [first.key]
    assert (
        catalog.publish_revision(con, first, [chunk(first, "one")], artifact_sha256="x")
        == second.key
    )
    assert live_revisions(con) == [first.key]


def test_a_revision_refused_as_changed_runs_again_when_its_file_is_the_same_bytes_elsewhere(
    con: duckdb.DuckDBPyConnection,
) -> None:
    a = revision("a.md", "1")
    catalog.register_revisions(con, [a])
    catalog.record_outcome(con, catalog.Outcome(a.key, catalog.REFUSED, "source_changed", "x"))
    rewritten = Revision(a.key, a.document_id, "docs", "a.md", 3, 2, a.sha256, device=7, inode=9)
    assert catalog.refresh_identity(con, [rewritten]) == [a.key]
    assert catalog.get_revision(con, a.key) == rewritten
    assert [r.key for r in catalog.pending_revisions(con, "docs")] == [a.key]


def test_a_source_is_found_by_its_root_and_keeps_its_options(
    con: duckdb.DuckDBPyConnection,
) -> None:
    rule = OptionRule("legacy/*", "encoding", "latin-1")
    catalog.upsert_source(con, Source("notes", "/a/notes", ("**/*.txt",), (rule,)))
    found = catalog.source_at(con, "/a/notes")
    assert found == Source("notes", "/a/notes", ("**/*.txt",), (rule,))
    assert catalog.source_at(con, "/b/notes") is None


def test_a_source_summary_counts_live_and_retired_documents_and_the_last_sync(
    con: duckdb.DuckDBPyConnection,
) -> None:
    a, b = revision("a.md", "1"), revision("b.md", "2")
    catalog.register_revisions(con, [a, b])
    for rev in (a, b):
        catalog.publish_revision(con, rev, [chunk(rev, rev.path)], artifact_sha256="x")
    catalog.retire_paths(con, "docs", ["b.md"])
    [summary] = catalog.source_summaries(con)
    assert (summary.live, summary.retired, summary.pending, summary.last_sync) == (1, 1, 0, None)
    catalog.mark_synced(con, "docs")
    assert catalog.source_summaries(con)[0].last_sync is not None


def test_a_catalog_from_before_identity_and_options_opens_with_them_unset(tmp_path: Path) -> None:
    old = duckdb.connect(str(tmp_path / "old.duckdb"))
    old.execute(
        "CREATE SEQUENCE revision_seq; CREATE TABLE sources (name VARCHAR PRIMARY KEY, "
        "root VARCHAR NOT NULL, include VARCHAR NOT NULL, registered_at TIMESTAMP); "
        "CREATE TABLE revisions (key VARCHAR PRIMARY KEY, seq BIGINT NOT NULL DEFAULT "
        "nextval('revision_seq'), document_id VARCHAR NOT NULL, source VARCHAR NOT NULL, "
        "path VARCHAR NOT NULL, size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, "
        "sha256 VARCHAR NOT NULL, registered_at TIMESTAMP)"
    )
    old.execute("INSERT INTO sources VALUES ('docs', '/data/docs', '[\"**/*\"]', NULL)")
    a = revision("a.md", "1")
    old.execute(
        "INSERT INTO revisions (key, document_id, source, path, size, mtime_ns, sha256) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        [a.key, a.document_id, a.source, a.path, a.size, a.mtime_ns, a.sha256],
    )
    catalog.ensure_schema(old)
    assert catalog.get_revision(old, a.key) == a  # device, inode 0: not compared on read
    assert catalog.list_sources(old) == [Source("docs", "/data/docs")]
    old.close()


def test_a_key_registered_twice_as_its_paths_newest_keeps_its_outcome(
    con: duckdb.DuckDBPyConnection,
) -> None:
    a = revision("a.md", "1")
    catalog.register_revisions(con, [a])
    catalog.publish_revision(con, a, [chunk(a, "a")], artifact_sha256="x")
    catalog.register_revisions(con, [a])  # a second scan that saw the same change
    assert catalog.pending_revisions(con, "docs") == []


def test_the_catalog_keeps_no_copy_of_the_chunks(tmp_path: Path) -> None:
    # Written on every publish and read by nothing: the chunks live in chunks.parquet and search.
    path = tmp_path / "old.duckdb"
    with duckdb.connect(str(path)) as old:
        old.execute("CREATE TABLE chunks (chunk_id VARCHAR PRIMARY KEY, text VARCHAR)")
        old.execute("INSERT INTO chunks VALUES ('r#0', 'a chunk an earlier version stored')")
    with duckdb.connect(str(path)) as con:
        catalog.ensure_schema(con)
        tables = {
            row[0] for row in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()
        }
    assert "chunks" not in tables


def test_counts_are_the_live_documents_and_the_chunks_of_their_live_revisions(
    con: duckdb.DuckDBPyConnection,
) -> None:
    old, new, other = revision("a.md", "1"), revision("a.md", "2"), revision("b.md", "3")
    catalog.register_revisions(con, [old, new, other])
    catalog.publish_revision(con, old, [chunk(old, "old")], artifact_sha256="x")
    two = [
        chunk(new, "new"),
        Chunk(1, "more", ("b1",), "paragraph", (), Locator(), (), new.key, "text"),
    ]
    catalog.publish_revision(con, new, two, artifact_sha256="y")
    catalog.publish_revision(con, other, [], artifact_sha256="z")
    assert catalog.counts(con) == {"live_documents": 2, "chunks": 2}
