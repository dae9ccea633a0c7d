"""The catalog's reads that a large folder makes each scan and each tick (issue 32: per-file reads
at 1,000,000 documents), on both backends: each gives what the query it replaced gave, on a
catalog with superseded, retired, refused, failed and waiting revisions in two folders."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from loom_dagster import catalog, lifecycle
from loom_dagster.catalog import bulk
from loom_dagster.sources import FileState, Revision, Source, document_id, revision_key
from tests.unit.catalog_backends import BACKENDS, open_catalog


@pytest.fixture(params=BACKENDS)
def con(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = open_catalog(request.param, tmp_path)
    for name in ("docs", "other"):
        catalog.upsert_source(connection, Source(name, f"/data/{name}"))
    yield connection
    connection.close()


def revision(path: str, sha: str, source: str = "docs") -> Revision:
    sha = sha * 64
    return Revision(
        revision_key(source, path, sha), document_id(source, path), source, path, 3, 1, sha
    )


def outcome(
    con: duckdb.DuckDBPyConnection, rev: Revision, status: str, code: str | None = None
) -> None:
    catalog.record_outcome(con, catalog.Outcome(rev.key, status, code, code))


def history(con: duckdb.DuckDBPyConnection) -> dict[str, Revision]:
    """A catalog holding each case the reads tell apart, by name."""
    revs = {
        # published, then changed twice: its newest waits for a run
        "a1": revision("a.md", "1"),
        "a2": revision("a.md", "2"),
        "a3": revision("a.md", "3"),
        # published and live
        "b1": revision("b.md", "4"),
        # refused (an outcome: nothing waits)
        "c1": revision("c.md", "5"),
        # its run spent its retries on an unavailable service: it waits again
        "d1": revision("d.md", "6"),
        # published, then deleted: retired
        "e1": revision("e.md", "7"),
        # never ran
        "f1": revision("sub/f.md", "8"),
        # waiting, then changed and published: the older waits no more
        "g1": revision("g.md", "9"),
        "g2": revision("g.md", "a"),
        # another folder's, waiting: not this folder's
        "h1": revision("h.md", "b", source="other"),
        # refused with a code that is not retries_exhausted
        "i1": revision("i.md", "c"),
    }
    catalog.register_revisions(con, list(revs.values()))
    for name in ("a1", "b1", "e1", "g2"):
        catalog.publish_revision(con, revs[name], [], artifact_sha256="x")
    catalog.publish_revision(con, revs["a2"], [], artifact_sha256="y")  # a1 superseded
    outcome(con, revs["c1"], catalog.REFUSED, "too_large")
    outcome(con, revs["d1"], catalog.REFUSED, catalog.RETRIES_EXHAUSTED)
    outcome(con, revs["i1"], catalog.REFUSED, "extractor_failed")
    catalog.retire_paths(con, "docs", ["e.md"])
    return revs


def old_pending(con: duckdb.DuckDBPyConnection, source: str) -> list[Revision]:
    """pending_revisions as it was: the newest of every path, then those with no outcome."""
    rows = con.execute(
        """
        SELECT latest.key, latest.document_id, latest.source, latest.path, latest.size,
               latest.mtime_ns, latest.sha256, latest.device, latest.inode, latest.options
        FROM (
            SELECT DISTINCT ON (r.path) r.* FROM revisions r WHERE r.source = ?
            ORDER BY r.path, r.seq DESC
        ) latest
        LEFT JOIN documents d ON d.document_id = latest.document_id
        WHERE coalesce(d.status, 'pending') <> 'retired'
          AND NOT EXISTS (
              SELECT 1 FROM outcomes o
              WHERE o.revision = latest.key AND coalesce(o.code, '') <> ?
          )
        ORDER BY latest.path
        """,
        [source, catalog.RETRIES_EXHAUSTED],
    ).fetchall()
    return [Revision(*row) for row in rows]


def test_pending_revisions_are_those_the_walk_of_every_revision_found(
    con: duckdb.DuckDBPyConnection,
) -> None:
    revs = history(con)
    found = catalog.pending_revisions(con, "docs")
    assert found == old_pending(con, "docs")
    assert [r.key for r in found] == [revs[n].key for n in ("a3", "d1", "f1")]
    assert catalog.pending_revisions(con, "other") == old_pending(con, "other") == [revs["h1"]]


def test_a_file_changed_back_to_bytes_it_had_waits_as_its_newest_revision(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """A key registered again becomes its path's newest (a new seq): the waiting revision is the
    one with the highest seq, not the one registered last."""
    revs = history(con)
    catalog.register_revisions(con, [revs["g1"]])  # g.md back to its first bytes
    found = catalog.pending_revisions(con, "docs")
    assert found == old_pending(con, "docs")
    assert revs["g1"].key in {r.key for r in found}


def test_known_files_are_the_newest_state_of_each_path_not_retired(
    con: duckdb.DuckDBPyConnection,
) -> None:
    revs = history(con)
    known = catalog.known_files(con, "docs")
    assert sorted(known) == ["a.md", "b.md", "c.md", "d.md", "g.md", "i.md", "sub/f.md"]
    assert known["a.md"] == FileState(3, 1, revs["a3"].sha256, 0, 0, "{}", revs["a3"].key)
    assert isinstance(known["a.md"], FileState)
    assert catalog.known_files(con, "docs", under=["sub"]) == {"sub/f.md": known["sub/f.md"]}


def test_the_live_digest_changes_with_what_is_live_and_only_then(
    con: duckdb.DuckDBPyConnection,
) -> None:
    revs = history(con)
    before = catalog.live_digest(con)
    assert catalog.live_digest(con) == before
    outcome(con, revs["c1"], catalog.REFUSED, "too_large")  # an outcome, nothing live moves
    assert catalog.live_digest(con) == before
    catalog.publish_revision(con, revs["a3"], [], artifact_sha256="z")  # a.md's live revision
    published = catalog.live_digest(con)
    assert published != before
    catalog.retire_paths(con, "docs", ["b.md"])
    assert catalog.live_digest(con) not in (before, published)


def test_retention_read_from_documents_with_history_prunes_what_the_whole_read_prunes(
    con: duckdb.DuckDBPyConnection,
) -> None:
    many = [revision("m.md", sha) for sha in "123456"]  # six revisions, each published
    catalog.register_revisions(con, many)
    for rev in many:
        catalog.publish_revision(con, rev, [], artifact_sha256=rev.sha256)
    revs = history(con)
    retention = lifecycle.Retention(keep_revisions=2)
    whole = lifecycle.plan_retention(catalog.revision_states(con), retention).pruned
    assert set(whole) == {rev.key for rev in many[:4]} | {revs["a1"].key}
    assert lifecycle.pruned_revisions(con, retention) == whole
    for keep in (1, 3, 6):
        retention = lifecycle.Retention(keep_revisions=keep)
        assert lifecycle.pruned_revisions(con, retention) == (
            lifecycle.plan_retention(catalog.revision_states(con), retention).pruned
        )


def test_the_settled_among_some_keys_are_those_the_states_of_every_revision_call_settled(
    con: duckdb.DuckDBPyConnection,
) -> None:
    revs = history(con)
    keys = [rev.key for rev in revs.values()]
    settled = {state.key for state in catalog.revision_states(con) if state.settled}
    assert settled == {revs[name].key for name in ("a2", "b1", "g2")}
    assert catalog.settled_among(con, keys) == settled
    assert catalog.settled_among(con, [revs["b1"].key, revs["a1"].key]) == {revs["b1"].key}
    assert catalog.settled_among(con, []) == set()


@pytest.mark.parametrize("in_arrays", [False, True], ids=["lists", "arrays"])
def test_what_a_copy_of_the_live_set_must_change_is_what_comparing_every_live_document_gives(
    con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch, in_arrays: bool
) -> None:
    revs = history(con)
    if in_arrays:
        monkeypatch.setattr(bulk, "IN_ARRAYS", 0)
    have = {
        "gone.md~0000000000": "gone.md~0000000000@0000000000000000",  # not a document
        revs["e1"].document_id: revs["e1"].key,  # retired since
        revs["a1"].document_id: revs["a1"].key,  # a.md's live revision is a2 now
        revs["b1"].document_id: revs["b1"].key,  # as live
    }
    live = {doc: (source, path, key) for doc, source, path, key in catalog.live_documents(con)}
    stale, gone = catalog.live_unlike(con, have)
    expected = {doc: entry for doc, entry in live.items() if have.get(doc) != entry[2]}
    assert list(stale.items()) == list(expected.items())
    assert revs["a2"].key in {key for _, _, key in stale.values()}
    assert gone == [doc for doc in have if doc not in live] == list(have)[:2]
    assert catalog.live_unlike(con, {doc: key for doc, (_, _, key) in live.items()}) == ({}, [])
