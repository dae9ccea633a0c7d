"""Retention and garbage collection on a real DuckDB catalog file and a real store folder."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

from loom_dagster import catalog, lifecycle
from loom_dagster.cli import main
from loom_dagster.errors import SettingsError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.sources import Revision, Source, document_id, revision_key

LONG_AGO = time.time() - 86400


@pytest.fixture
def con(tmp_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    connection = duckdb.connect(str(tmp_path / "catalog.duckdb"))
    catalog.ensure_schema(connection)
    catalog.upsert_source(connection, Source("docs", "/data/docs"))
    yield connection
    connection.close()


@pytest.fixture
def store(tmp_path: Path) -> ObjectStore:
    return ObjectStore((tmp_path / "store").as_uri())


def stored(
    store: ObjectStore, path: str, data: bytes, *, source: str = "docs", artifact: bool = True
) -> Revision:
    """A revision whose original, artifact and per-revision files are in the store, as the
    steps leave them; registered in no catalog yet."""
    sha = store.put_original(data)
    rev = Revision(
        revision_key(source, path, sha), document_id(source, path), source, path, len(data), 1, sha
    )
    if artifact:
        art = store.put_artifact(b'{"artifact of": "' + data + b'"}')
        store.put_json(store.revision_key(rev.key, "extraction.json"), {"artifact_sha256": art})
        store.put(store.revision_key(rev.key, "chunks.parquet"), b"chunks of " + data)
    return rev


def publish(con: duckdb.DuckDBPyConnection, store: ObjectStore, rev: Revision) -> None:
    art = store.get_json(store.revision_key(rev.key, "extraction.json"))["artifact_sha256"]
    catalog.register_revisions(con, [rev])
    catalog.publish_revision(con, rev, [], artifact_sha256=art)


def age_everything(store: ObjectStore, root: Path) -> None:
    for path in root.rglob("*"):
        if path.is_file():
            os.utime(path, (LONG_AGO, LONG_AGO))


def history(con: duckdb.DuckDBPyConnection, store: ObjectStore, n: int) -> list[Revision]:
    """`n` revisions of a.md, each published in turn: the last is live, the rest superseded."""
    revs = [stored(store, "a.md", f"version {i}".encode()) for i in range(n)]
    for rev in revs:
        publish(con, store, rev)
    return revs


def plan(con: duckdb.DuckDBPyConnection, keep: int = 2) -> lifecycle.RetentionPlan:
    return lifecycle.plan_retention(catalog.revision_states(con), lifecycle.Retention(keep))


def test_retention_keeps_the_live_and_newest_revisions_and_prunes_the_rest(
    con: duckdb.DuckDBPyConnection, store: ObjectStore
) -> None:
    revs = history(con, store, 5)

    result = plan(con, keep=2)

    assert result.kept == {revs[4].key, revs[3].key}
    assert result.pruned == tuple(r.key for r in revs[:3])
    # The pruned revisions' records stay: they are the history.
    assert len(catalog.revision_states(con)) == 5


def test_the_states_of_some_keys_are_every_revision_of_their_documents_and_plan_alike(
    con: duckdb.DuckDBPyConnection, store: ObjectStore
) -> None:
    """The folder sensor reads only the documents its partitions belong to: retention ranks a
    revision among all of its document's, so each of those documents comes whole, and the plan
    says of them what the plan of every revision says."""
    revs = history(con, store, 4)
    other = stored(store, "b.md", b"another document")
    publish(con, store, other)

    states = catalog.revision_states(con, documents_of={revs[1].key})

    assert [s.key for s in states] == [r.key for r in reversed(revs)]
    assert catalog.revision_states(con, documents_of=set()) == []
    everything = lifecycle.plan_retention(catalog.revision_states(con), lifecycle.Retention(2))
    some = lifecycle.plan_retention(states, lifecycle.Retention(2))
    assert some.pruned == everything.pruned == tuple(r.key for r in revs[:2])
    assert some.kept == everything.kept - {other.key}


def test_the_live_revision_is_kept_when_newer_ones_were_refused(
    con: duckdb.DuckDBPyConnection, store: ObjectStore
) -> None:
    live = history(con, store, 1)[0]
    refused = [stored(store, "a.md", f"bad {i}".encode(), artifact=False) for i in range(3)]
    catalog.register_revisions(con, refused)
    for rev in refused:
        catalog.record_outcome(con, catalog.Outcome(rev.key, catalog.REFUSED, "encoding", "no"))

    result = plan(con, keep=1)

    assert result.kept == {live.key, refused[2].key}


def test_a_revision_no_run_has_finished_is_kept_however_old(
    con: duckdb.DuckDBPyConnection, store: ObjectStore
) -> None:
    revs = history(con, store, 3)
    # Registered after the live one, with no outcome: its run is in flight (or failed).
    pending = stored(store, "a.md", b"being extracted")
    catalog.register_revisions(con, [pending])
    older_pending = stored(store, "b.md", b"never ran")
    catalog.register_revisions(con, [older_pending])

    result = plan(con, keep=1)

    assert pending.key in result.kept and older_pending.key in result.kept
    assert revs[2].key in result.kept  # still live
    assert set(result.pruned) == {revs[0].key, revs[1].key}


def test_an_age_keeps_young_revisions_beyond_the_count(
    con: duckdb.DuckDBPyConnection, store: ObjectStore
) -> None:
    revs = history(con, store, 3)
    assert (
        lifecycle.plan_retention(
            catalog.revision_states(con), lifecycle.Retention(1, keep_days=1)
        ).pruned
        == ()
    )
    con.execute("UPDATE revisions SET registered_at = registered_at - INTERVAL 2 DAY")
    assert lifecycle.plan_retention(
        catalog.revision_states(con), lifecycle.Retention(1, keep_days=1)
    ).pruned == (revs[0].key, revs[1].key)


def test_gc_dry_run_names_exactly_what_gc_then_deletes(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, tmp_path: Path
) -> None:
    revs = history(con, store, 4)
    age_everything(store, tmp_path / "store")
    states = catalog.revision_states(con)
    retention = plan(con, keep=2)

    pruned = revs[:2]
    expected = sorted(
        [store.original_key(r.sha256) for r in pruned]
        + [store.artifact_key(art(store, r)) for r in pruned]
        + [
            store.revision_key(r.key, name)
            for r in pruned
            for name in ("chunks.parquet", "extraction.json")
        ]
    )

    dry = lifecycle.collect(store, states, retention, grace_s=60, dry_run=True)
    assert all(store.exists(key) for key in expected)  # a dry run deletes nothing
    done = lifecycle.collect(store, states, retention, grace_s=60)

    assert dry.objects == done.objects
    assert sorted(o.key for o in done.objects) == expected
    assert not any(store.exists(key) for key in expected)
    assert done.totals()["originals"] == (2, len(b"version 0") + len(b"version 1"))
    for rev in revs[2:]:
        assert store.exists(store.original_key(rev.sha256))
        assert store.exists(store.revision_key(rev.key, "chunks.parquet"))
    # Collected once, there is nothing left to collect.
    assert lifecycle.collect(store, states, retention, grace_s=60).objects == ()


def art(store: ObjectStore, rev: Revision) -> str:
    return str(store.get_json(store.revision_key(rev.key, "extraction.json"))["artifact_sha256"])


def test_an_original_a_kept_revision_shares_is_kept(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, tmp_path: Path
) -> None:
    revs = history(con, store, 3)
    # Another document holds the same bytes as the oldest, pruned revision of a.md.
    twin = stored(store, "copy-of-a.md", b"version 0")
    publish(con, store, twin)
    age_everything(store, tmp_path / "store")
    retention = plan(con, keep=1)
    assert revs[0].key in retention.pruned

    done = lifecycle.collect(store, catalog.revision_states(con), retention, grace_s=60)

    deleted = {o.key for o in done.objects}
    assert store.original_key(revs[0].sha256) not in deleted
    assert store.exists(store.original_key(revs[0].sha256))
    assert store.original_key(revs[1].sha256) in deleted


def test_a_pending_revisions_objects_are_kept(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, tmp_path: Path
) -> None:
    history(con, store, 2)
    pending = stored(store, "a.md", b"in flight")
    catalog.register_revisions(con, [pending])
    age_everything(store, tmp_path / "store")

    done = lifecycle.collect(store, catalog.revision_states(con), plan(con, keep=1), grace_s=60)

    deleted = {o.key for o in done.objects}
    assert store.original_key(pending.sha256) not in deleted
    # Its artifact is named only by its extraction.json: the catalog has no outcome yet.
    assert store.artifact_key(art(store, pending)) not in deleted
    assert store.exists(store.revision_key(pending.key, "chunks.parquet"))


def test_objects_younger_than_the_grace_are_spared(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, tmp_path: Path
) -> None:
    history(con, store, 3)
    age_everything(store, tmp_path / "store")
    # An artifact a step has just written, whose extraction.json is not written yet.
    fresh = store.put_artifact(b'{"just": "written"}')
    states, retention = catalog.revision_states(con), plan(con, keep=1)

    done = lifecycle.collect(store, states, retention, grace_s=3600)

    assert store.artifact_key(fresh) not in {o.key for o in done.objects}
    assert store.exists(store.artifact_key(fresh))
    assert done.objects  # the old garbage went


def test_an_object_reused_after_the_listing_is_not_deleted(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, tmp_path: Path
) -> None:
    revs = history(con, store, 3)
    age_everything(store, tmp_path / "store")
    states, retention = catalog.revision_states(con), plan(con, keep=1)
    dry = lifecycle.collect(store, states, retention, grace_s=60, dry_run=True)
    assert store.original_key(revs[0].sha256) in {o.key for o in dry.objects}

    # A step stores the same bytes again (a new revision reverting to them): the store
    # refreshes the object instead of rewriting it, and the deletion sees that.
    store.put_original(b"version 0")
    done = lifecycle._delete(store, dry.objects, dry_run=False)

    assert store.original_key(revs[0].sha256) in done.skipped
    assert store.exists(store.original_key(revs[0].sha256))
    assert not store.exists(store.original_key(revs[1].sha256))


def test_a_purge_deletes_only_the_sources_objects_no_other_source_keeps(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, tmp_path: Path
) -> None:
    catalog.upsert_source(con, Source("other", "/data/other"))
    mine = stored(store, "a.md", b"shared bytes")
    only_mine = stored(store, "b.md", b"only here")
    theirs = stored(store, "a.md", b"shared bytes", source="other")
    for rev in (mine, only_mine, theirs):
        publish(con, store, rev)
    unrelated = store.put_artifact(b'{"garbage": "of nobody"}')
    age_everything(store, tmp_path / "store")

    done = lifecycle.purge(store, catalog.revision_states(con), "docs", lifecycle.Retention())

    deleted = {o.key for o in done.objects}
    assert store.original_key(only_mine.sha256) in deleted
    assert store.revision_key(mine.key, "chunks.parquet") in deleted
    assert store.original_key(mine.sha256) not in deleted  # "other" keeps the same bytes
    assert store.exists(store.original_key(theirs.sha256))
    assert store.exists(store.artifact_key(unrelated))  # not the source's: left to gc


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        (
            "LOOM_KEEP_REVISIONS",
            "0",
            "LOOM_KEEP_REVISIONS must be a positive whole number, not '0'",
        ),
        (
            "LOOM_KEEP_REVISIONS",
            "three",
            "LOOM_KEEP_REVISIONS must be a positive whole number, not 'three'",
        ),
        ("LOOM_KEEP_DAYS", "-1", "LOOM_KEEP_DAYS must be a positive whole number, not '-1'"),
    ],
)
def test_a_bad_retention_setting_names_the_variable(name: str, value: str, message: str) -> None:
    with pytest.raises(SettingsError) as error:
        lifecycle.Retention.from_env({name: value})
    assert (error.value.code, error.value.message) == ("invalid_setting", message)


def test_retention_defaults_to_three_revisions_and_no_age() -> None:
    assert lifecycle.Retention.from_env({}) == lifecycle.Retention(3, 0)


@pytest.mark.parametrize("value", ["-1", "soon", "nan"])
def test_gc_refuses_a_grace_that_is_not_minutes(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["gc", "--grace-minutes", value])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"loom gc: error: argument --grace-minutes: must be a number of minutes, 0 or more, "
        f"not {value!r}"
    )


def test_gc_with_a_bad_retention_setting_is_one_line_and_touches_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("LOOM_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LOOM_KEEP_REVISIONS", "0")

    assert main(["gc"]) == 1

    assert capsys.readouterr().err == (
        "loom: invalid_setting: LOOM_KEEP_REVISIONS must be a positive whole number, not '0'\n"
    )
    assert not (tmp_path / "home").exists()


def test_the_domain_module_loads_no_dagster() -> None:
    # Retention and gc are plain Python; only partitions.py and api.py touch the instance.
    probe = "import sys, loom_dagster.lifecycle; print(sorted(m for m in sys.modules if m.startswith('dagster')))"
    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
