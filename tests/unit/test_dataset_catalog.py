"""The datasets table on a real DuckDB file: which rows serve, and which snapshots are stale."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from loom_dagster import catalog, lifecycle
from loom_dagster.datasets import catalog as datasets
from loom_dagster.datasets.model import (
    ColumnType,
    Dataset,
    DatasetColumn,
    DatasetSchema,
    DatasetState,
    Reject,
    dataset_id,
    snapshot_key,
)
from loom_dagster.objectstore import ObjectStore
from loom_dagster.sources import Revision, Source, document_id, revision_key
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


def row(rev: Revision, snapshot: str, table: str = "t0") -> Dataset:
    did = dataset_id(rev.source, rev.path, table)
    return Dataset(
        dataset_id=did,
        source=rev.source,
        path=rev.path,
        revision=rev.key,
        table_id=table,
        name=f"{rev.path}#{table}",
        schema=DatasetSchema((DatasetColumn("n", ColumnType.DECIMAL),)),
        state=DatasetState.INFERRED,
        questions=(),
        rows_stored=2,
        rows_rejected=1,
        rejects=(Reject(1, "row 1: cell error #N/A in column n"),),
        complete=True,
        incomplete_reasons=(),
        snapshot=snapshot,
        snapshot_key=snapshot_key(did, snapshot),
    )


def test_a_row_serves_only_while_its_revision_is_live(con: duckdb.DuckDBPyConnection) -> None:
    old, new = revision("a.csv", "1"), revision("a.csv", "2")
    catalog.register_revisions(con, [old, new])
    first = row(old, "s1")
    datasets.write_dataset(con, first)
    # Written, not yet switched: nothing serves it.
    assert datasets.served_dataset(con, first.dataset_id) is None
    assert not datasets.is_served(con, first.dataset_id, "s1")
    catalog.publish_revision(con, old, [], artifact_sha256="x")
    assert datasets.served_dataset(con, first.dataset_id) == first
    assert datasets.served_dataset(con, "a.csv#t0") == first
    assert datasets.is_served(con, first.dataset_id, "s1")
    # The next revision's row is written; the old one serves until the switch.
    datasets.write_dataset(con, row(new, "s2"))
    assert datasets.is_served(con, first.dataset_id, "s1")
    assert datasets.stale_snapshots(con) == []
    catalog.publish_revision(con, new, [], artifact_sha256="y")
    assert not datasets.is_served(con, first.dataset_id, "s1")
    assert datasets.is_served(con, first.dataset_id, "s2")
    assert [d.snapshot for d in datasets.list_served(con)] == ["s2"]
    assert datasets.stale_snapshots(con) == [first.snapshot_key]


def test_a_retired_document_serves_nothing(con: duckdb.DuckDBPyConnection) -> None:
    rev = revision("a.csv", "1")
    catalog.register_revisions(con, [rev])
    written = row(rev, "s1")
    datasets.write_dataset(con, written)
    catalog.publish_revision(con, rev, [], artifact_sha256="x")
    catalog.retire_paths(con, "docs", ["a.csv"])
    assert datasets.list_served(con) == []
    assert datasets.served_dataset(con, written.dataset_id) is None
    assert datasets.stale_snapshots(con) == [written.snapshot_key]


def test_a_replaced_row_returns_the_snapshot_it_held(con: duckdb.DuckDBPyConnection) -> None:
    rev = revision("a.csv", "1")
    catalog.register_revisions(con, [rev])
    assert datasets.write_dataset(con, row(rev, "s1")) is None
    assert datasets.write_dataset(con, row(rev, "s2")) == row(rev, "s1").snapshot_key


def test_a_name_two_served_datasets_share_is_ambiguous(con: duckdb.DuckDBPyConnection) -> None:
    catalog.upsert_source(con, Source("more", "/data/more"))
    a = revision("a.csv", "1")
    b = Revision(
        revision_key("more", "a.csv", "3" * 64),
        document_id("more", "a.csv"),
        "more",
        "a.csv",
        3,
        1,
        "3" * 64,
    )
    catalog.register_revisions(con, [a, b])
    for rev, snap in ((a, "s1"), (b, "s2")):
        datasets.write_dataset(con, row(rev, snap))
        catalog.publish_revision(con, rev, [], artifact_sha256="x")
    with pytest.raises(datasets.DatasetError) as raised:
        datasets.served_dataset(con, "a.csv#t0")
    assert raised.value.code == "ambiguous_dataset"
    assert datasets.served_dataset(con, row(b, "s2").dataset_id) == row(b, "s2")


def test_gc_deletes_stale_snapshots_and_old_files_no_row_names(
    con: duckdb.DuckDBPyConnection, tmp_path: Path
) -> None:
    store = ObjectStore((tmp_path / "store").as_uri())
    old, new = revision("a.csv", "1"), revision("a.csv", "2")
    catalog.register_revisions(con, [old, new])
    stale, live = row(old, "s1"), row(new, "s2")
    datasets.write_dataset(con, stale)
    catalog.publish_revision(con, old, [], artifact_sha256="x")
    datasets.write_dataset(con, live)
    catalog.publish_revision(con, new, [], artifact_sha256="y")
    orphan_old, orphan_new = "datasets/ds_x/old.parquet", "datasets/ds_x/new.parquet"
    for key in (stale.snapshot_key, live.snapshot_key, orphan_old, orphan_new):
        store.put(key, b"PAR1")
    objects = lifecycle.list_snapshots(store)
    ages = {o.key: o.modified for o in objects}
    now = ages[orphan_new] + 10  # every file 10 s old; the orphan_old 2 h
    objects = [
        replace(o, modified=o.modified - 7200) if o.key == orphan_old else o for o in objects
    ]

    dry = lifecycle.collect_datasets(con, store, objects, grace_s=3600, dry_run=True, now=now)
    assert sorted(o.key for o in dry.objects) == sorted([stale.snapshot_key, orphan_old])
    assert store.exists(stale.snapshot_key)

    done = lifecycle.collect_datasets(con, store, objects, grace_s=3600, now=now)
    assert sorted(o.key for o in done.objects) == sorted([stale.snapshot_key, orphan_old])
    assert [store.exists(k) for k in (stale.snapshot_key, orphan_old)] == [False, False]
    assert [store.exists(k) for k in (live.snapshot_key, orphan_new)] == [True, True]
    assert datasets.get_dataset(con, stale.dataset_id, old.key) is None  # its row forgotten
    assert datasets.is_served(con, live.dataset_id, "s2")


def test_a_batchs_datasets_are_read_in_one_query_as_each_revisions_alone(
    con: duckdb.DuckDBPyConnection,
) -> None:
    """The publishing step reads its whole batch's datasets at once (one query, not one per
    revision): the same rows, in the same order, as asking for each revision."""
    a, b, none = revision("a.xlsx", "1"), revision("b.csv", "2"), revision("c.md", "3")
    catalog.register_revisions(con, [a, b, none])
    for written in (row(a, "s1", "t1"), row(a, "s1", "t0"), row(b, "s2")):
        datasets.write_dataset(con, written)

    batch = datasets.datasets_of_revisions(con, [a.key, b.key, none.key])

    assert batch == {r.key: datasets.datasets_of_revision(con, r.key) for r in (a, b, none)}
    assert [d.table_id for d in batch[a.key]] == ["t0", "t1"]
    assert batch[none.key] == []
    assert datasets.datasets_of_revisions(con, []) == {}
