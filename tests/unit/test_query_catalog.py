"""A query against the real catalog file: the datasets table serves, a publish while the query
runs is dataset_changed, and the file is read without holding its lock."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from loom_dagster.datasets.model import (
    ColumnType,
    Dataset,
    DatasetColumn,
    DatasetSchema,
)
from loom_dagster.objectstore import ObjectStore
from loom_dagster.query.catalog import ServedDatasets
from loom_dagster.query.errors import QueryError
from loom_dagster.query.service import run_query
from loom_dagster.query.snapshots import StoreSnapshots
from tests.support.query_datasets import parquet_bytes, serve_in_catalog

SCHEMA = DatasetSchema((DatasetColumn("n", ColumnType.DECIMAL),))
PLAN = {
    "datasets": [{"alias": "a", "dataset": "a.csv#t0"}],
    "aggregates": [{"fn": "sum", "alias": "a", "column": "n"}],
}


def publish(path: Path, store: ObjectStore, sha: str, snapshot: str, values: list[int]) -> Dataset:
    data = parquet_bytes(SCHEMA, [(Decimal(v),) for v in values])
    return serve_in_catalog(
        path,
        store,
        data,
        SCHEMA,
        source="docs",
        path="a.csv",
        sha=sha * 64,
        snapshot=snapshot,
        rows_stored=len(values),
    )


@pytest.fixture
def store(tmp_path: Path) -> ObjectStore:
    return ObjectStore((tmp_path / "store").as_uri())


def test_the_served_snapshot_answers_and_a_new_revision_switches_it(
    tmp_path: Path, store: ObjectStore
) -> None:
    path = tmp_path / "catalog.duckdb"
    first = publish(path, store, "1", "s1", [1, 2])
    served = ServedDatasets(path)
    assert served.served_dataset("a.csv#t0") == first
    assert served.served_dataset(first.dataset_id) == first
    assert run_query(PLAN, served, StoreSnapshots(store)).rows == ((Decimal(3),),)
    publish(path, store, "2", "s2", [10])
    assert not served.is_served(first.dataset_id, "s1")
    answer = run_query(PLAN, served, StoreSnapshots(store))
    assert answer.rows == ((Decimal(10),),)
    assert answer.receipt.snapshots[0].snapshot == "s2"


class _PublishingMeanwhile:
    """A publish of the next revision lands while the statement runs."""

    def __init__(self, path: Path, store: ObjectStore) -> None:
        self.path, self.store = path, store

    @contextlib.contextmanager
    def open(self, key: str) -> Iterator[Path]:
        with StoreSnapshots(self.store).open(key) as snapshot:
            publish(self.path, self.store, "2", "s2", [10])
            yield snapshot


def test_a_publish_while_the_query_runs_is_dataset_changed(
    tmp_path: Path, store: ObjectStore
) -> None:
    path = tmp_path / "catalog.duckdb"
    first = publish(path, store, "1", "s1", [1, 2])
    with pytest.raises(QueryError) as caught:
        run_query(PLAN, ServedDatasets(path), _PublishingMeanwhile(path, store))
    assert str(caught.value) == (
        f"dataset_changed: dataset {first.dataset_id} ('a.csv#t0') changed while the query ran "
        "(snapshot s1 no longer serves it); run it again"
    )


def test_no_catalog_yet_serves_nothing(tmp_path: Path, store: ObjectStore) -> None:
    with pytest.raises(QueryError) as caught:
        run_query(PLAN, ServedDatasets(tmp_path / "none.duckdb"), StoreSnapshots(store))
    assert str(caught.value) == "unknown_dataset: no dataset 'a.csv#t0' is served (by id or name)"
    assert not (tmp_path / "none.duckdb").exists()  # a query creates no catalog


def test_the_catalog_open_in_this_process_is_read_through_it(
    tmp_path: Path, store: ObjectStore
) -> None:
    path = tmp_path / "catalog.duckdb"
    publish(path, store, "1", "s1", [1, 2])
    with duckdb.connect(str(path)) as held:
        held.execute("SELECT 1")
        assert run_query(PLAN, ServedDatasets(path), StoreSnapshots(store)).rows == ((Decimal(3),),)


def test_the_catalog_is_not_held_while_the_statement_runs(
    tmp_path: Path, store: ObjectStore
) -> None:
    path = tmp_path / "catalog.duckdb"
    publish(path, store, "1", "s1", [1, 2])
    writable: list[bool] = []

    class _Probe:
        @contextlib.contextmanager
        def open(self, key: str) -> Iterator[Path]:
            with StoreSnapshots(store).open(key) as snapshot:
                # Another writer can open the file read-write: the query holds no lock on it.
                with duckdb.connect(str(path)) as writer:
                    writer.execute("CHECKPOINT")
                    writable.append(True)
                yield snapshot

    run_query(PLAN, ServedDatasets(path), _Probe())
    assert writable == [True]
