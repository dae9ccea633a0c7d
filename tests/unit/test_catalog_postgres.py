"""The catalog on PostgreSQL (issue 18.3): what only a shared catalog has to get right.

Two connections stand for two workers: the same document published from both is ordered by its
revisions (the lock of the second waits, then it sees the first), each home keeps its own
search-index marks, and a server that is gone or refuses the login is a typed, one-line error.
The embedded file's upgrade moves its marks. Runs on a real server (tests/support/postgres.py).
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import duckdb
import psycopg2
import pytest

from loom_dagster import catalog
from loom_dagster.catalog.postgres import PostgresCatalog, _placeholders, _redacted, _upsert
from loom_dagster.sources import Source
from tests.support.postgres import server_binaries
from tests.unit.catalog_backends import fresh_url, server_url
from tests.unit.test_catalog import chunk, revision

needs_server = pytest.mark.skipif(server_binaries() is None, reason="no PostgreSQL server")


@pytest.fixture
def url() -> str:
    return fresh_url()


@pytest.fixture
def two(url: str, tmp_path: Path) -> Iterator[tuple[duckdb.DuckDBPyConnection, ...]]:
    """Two workers' connections to one catalog, each from its own home."""
    homes = [tmp_path / "a", tmp_path / "b"]
    for home in homes:
        home.mkdir()
    cons = tuple(catalog.open_shared(url, home) for home in homes)
    catalog.upsert_source(cons[0], Source("docs", "/data/docs"))
    yield cons
    for con in cons:
        con.close()


def test_a_url_in_a_message_shows_no_password() -> None:
    assert _redacted("postgresql://loom:s3cret@db:5432/c?password=other&sslmode=require") == (
        "postgresql://loom:***@db:5432/c?password=***&sslmode=require"
    )


def test_duckdb_spelling_becomes_postgres_spelling() -> None:
    assert _placeholders("SELECT '?%' || ? WHERE a LIKE 'x%' AND b = ?") == (
        "SELECT '?%%' || %s WHERE a LIKE 'x%%' AND b = %s"
    )
    assert _upsert("INSERT OR REPLACE INTO outcomes (revision, status) VALUES (?, ?)") == (
        "INSERT INTO outcomes (revision, status) VALUES (?, ?) "
        "ON CONFLICT (revision) DO UPDATE SET status = excluded.status"
    )


@needs_server
def test_the_same_document_from_two_workers_keeps_the_newer_revision(
    two: tuple[duckdb.DuckDBPyConnection, ...], url: str
) -> None:
    a, b = two
    old, new = revision("a.md", "1"), revision("a.md", "2")
    catalog.register_revisions(a, [old, new])
    results: list[str | None] = []
    # Worker A publishes the newer revision and holds its transaction open; worker B publishes
    # the older one meanwhile. Without the document's lock B reads "nothing live", waits only
    # for the row, then overwrites A's newer revision with its older one.
    with catalog.atomic(a):
        catalog.publish_revision(a, new, [chunk(new, "new")], artifact_sha256="y")
        worker = threading.Thread(
            target=lambda: results.append(
                catalog.publish_revision(b, old, [chunk(old, "old")], artifact_sha256="x")
            )
        )
        worker.start()
        watcher = psycopg2.connect(url)
        try:
            watcher.autocommit = True
            cursor = watcher.cursor()
            waiting = 0
            while not waiting and worker.is_alive():  # B is blocked on A, not finished
                cursor.execute("SELECT count(*) FROM pg_locks WHERE NOT granted")
                waiting = cursor.fetchone()[0]
        finally:
            watcher.close()
        assert waiting, "worker B never waited for worker A"
    worker.join()
    assert results == [None]
    assert [d[3] for d in catalog.live_documents(a)] == [new.key]
    outcomes = catalog.outcomes_for(b, [old.key, new.key])
    assert (outcomes[old.key].status, outcomes[new.key].status) == ("superseded", "published")


@needs_server
def test_each_home_keeps_its_own_index_marks(two: tuple[duckdb.DuckDBPyConnection, ...]) -> None:
    a, b = two
    rev = revision("a.md", "1")
    catalog.register_revisions(a, [rev])
    catalog.publish_revision(a, rev, [chunk(rev, "a")], artifact_sha256="x")
    catalog.mark_indexed(a, {rev.document_id: rev.key})
    # A's index holds it; B's does not, so B's reconcile still writes it to B's index.
    assert catalog.unindexed(a) == []
    assert catalog.unindexed(b) == [(rev.document_id, rev.key)]
    assert catalog.searchable(a, [rev.key]) == {rev.key}
    assert catalog.searchable(b, [rev.key]) == set()
    catalog.unmark_indexed(b)  # B's index made afresh: A's marks stay
    assert catalog.unindexed(a) == []


@needs_server
def test_a_refused_login_is_a_typed_error_not_retried(tmp_path: Path) -> None:
    wrong = server_url().replace("//loom@", "//no_such_role@")
    with pytest.raises(catalog.CatalogRefused) as caught:
        catalog.open_shared(wrong, tmp_path)
    assert caught.value.code == "catalog_refused" and not caught.value.retryable
    assert "no_such_role" in str(caught.value) and "\n" not in str(caught.value)


def test_a_server_that_is_not_there_is_unavailable_and_retryable(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(catalog.CatalogUnavailable) as caught:
        catalog.open_shared(f"postgresql://loom:secret@127.0.0.1:{port}/postgres", tmp_path)
    assert caught.value.code == "catalog_unavailable" and caught.value.retryable
    assert "secret" not in str(caught.value) and "\n" not in str(caught.value)


@needs_server
def test_a_connection_the_server_dropped_is_unavailable_and_retryable(
    two: tuple[duckdb.DuckDBPyConnection, ...], url: str
) -> None:
    a, _ = two
    assert isinstance(a, PostgresCatalog)
    pid = a.execute("SELECT pg_backend_pid()").fetchone()
    assert pid is not None
    admin = psycopg2.connect(url)
    try:
        admin.autocommit = True
        admin.cursor().execute("SELECT pg_terminate_backend(%s)", [pid[0]])
    finally:
        admin.close()
    with pytest.raises(catalog.CatalogUnavailable) as caught:
        catalog.list_sources(a)
    assert caught.value.retryable


def test_an_embedded_catalog_from_before_index_marks_keeps_them(tmp_path: Path) -> None:
    path = tmp_path / "catalog.duckdb"
    con = duckdb.connect(str(path))
    catalog.ensure_schema(con)
    catalog.upsert_source(con, Source("docs", "/data/docs"))
    rev, other = revision("a.md", "1"), revision("b.md", "1")
    catalog.register_revisions(con, [rev, other])
    catalog.publish_revision(con, rev, [chunk(rev, "a")], artifact_sha256="x")
    catalog.publish_revision(con, other, [chunk(other, "b")], artifact_sha256="x")
    # As a catalog before per-index marks held them: on `documents`, the one index's.
    con.execute("DELETE FROM index_marks")
    con.execute("ALTER TABLE documents ADD COLUMN indexed_revision VARCHAR")
    con.execute(
        "UPDATE documents SET indexed_revision = ? WHERE document_id = ?",
        [rev.key, rev.document_id],
    )
    con.close()
    with catalog.connect(path) as upgraded:
        assert catalog.unindexed(upgraded) == [(other.document_id, other.key)]
        columns = upgraded.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'documents'"
        ).fetchall()
    assert ("indexed_revision",) not in columns
