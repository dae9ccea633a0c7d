"""The catalog on a real DuckDB file: registry, publishing, superseding, retiring."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from loom_dagster import catalog
from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Locator
from loom_dagster.sources import Revision, Source, document_id, revision_key


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect(str(tmp_path / "catalog.duckdb"))
    catalog.ensure_schema(connection)
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


def chunk_texts(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [row[0] for row in con.execute("SELECT text FROM chunks ORDER BY text").fetchall()]


def test_publishing_a_newer_revision_replaces_the_live_one(con: duckdb.DuckDBPyConnection) -> None:
    old, new = revision("a.md", "1"), revision("a.md", "2")
    catalog.register_revisions(con, [old, new])
    assert catalog.publish_revision(con, old, [chunk(old, "old")], artifact_sha256="x") is None
    assert catalog.publish_revision(con, new, [chunk(new, "new")], artifact_sha256="y") == old.key
    assert chunk_texts(con) == ["new"]
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
    assert chunk_texts(con) == ["new"]
    assert catalog.outcomes_for(con, [old.key])[old.key].status == catalog.SUPERSEDED


def test_a_failed_publish_leaves_nothing_half_written(con: duckdb.DuckDBPyConnection) -> None:
    old, new = revision("a.md", "1"), revision("a.md", "2")
    catalog.register_revisions(con, [old, new])
    catalog.publish_revision(con, old, [chunk(old, "old")], artifact_sha256="x")
    duplicate = [chunk(new, "new"), chunk(new, "new again")]  # one chunk id twice: the insert fails
    with pytest.raises(duckdb.ConstraintException):
        catalog.publish_revision(con, new, duplicate, artifact_sha256="y")
    assert chunk_texts(con) == ["old"]
    assert catalog.live_documents(con)[0][3] == old.key


def test_retiring_a_deleted_path_removes_its_chunks_and_its_live_revision(
    con: duckdb.DuckDBPyConnection,
) -> None:
    a, b = revision("a.md", "1"), revision("b.md", "2")
    catalog.register_revisions(con, [a, b])
    for rev in (a, b):
        catalog.publish_revision(con, rev, [chunk(rev, rev.path)], artifact_sha256="x")
    assert catalog.retire_paths(con, "docs", ["a.md"]) == [a.document_id]
    assert chunk_texts(con) == ["b.md"]
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
