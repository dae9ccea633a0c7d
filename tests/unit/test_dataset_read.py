"""Reading a served dataset (query.read) from a real catalog file and a real store folder: the
pandas dtypes each column type gives, the facts a frame carries, the namespace, the refusal of
an incomplete dataset, and one snapshot per read even when a publish replaces it meanwhile."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from loom_dagster.datasets.model import (
    ColumnType,
    Dataset,
    DatasetColumn,
    DatasetSchema,
    DatasetState,
)
from loom_dagster.datasets.snapshots import ROW_GROUP_ROWS, write_snapshot
from loom_dagster.objectstore import ObjectStore
from loom_dagster.query.catalog import ServedDatasets
from loom_dagster.query.errors import QueryError
from loom_dagster.query.export import export_dataset
from loom_dagster.query.read import DatasetReader
from loom_dagster.query.snapshots import StoreSnapshots
from tests.support.query_datasets import parquet_bytes, serve_in_catalog

SCHEMA = DatasetSchema(
    (
        DatasetColumn("host", ColumnType.TEXT),
        DatasetColumn("price", ColumnType.DECIMAL),
        DatasetColumn("ratio", ColumnType.DOUBLE),
        DatasetColumn("day", ColumnType.DATE),
        DatasetColumn("seen", ColumnType.TIMESTAMP),
        DatasetColumn("up", ColumnType.BOOLEAN),
        DatasetColumn("took", ColumnType.DURATION),
    )
)
ROWS = [
    (
        "alpha",
        Decimal("12.345000001"),
        0.5,
        date(2024, 1, 31),
        datetime(2024, 2, 1, 8, 30, tzinfo=UTC),
        True,
        Decimal("5400.25"),
    ),
    ("beta", None, None, None, None, None, None),
]


def serve(
    catalog: Path,
    store: ObjectStore,
    sha: str,
    snapshot: str,
    rows: list[tuple[object, ...]],
    *,
    source: str = "docs",
    **fields: object,
) -> Dataset:
    return serve_in_catalog(
        catalog,
        store,
        parquet_bytes(SCHEMA, rows),
        SCHEMA,
        source=source,
        path="hosts.csv",
        sha=sha * 64,
        snapshot=snapshot,
        rows_stored=len(rows),
        **fields,
    )


@pytest.fixture
def store(tmp_path: Path) -> ObjectStore:
    return ObjectStore((tmp_path / "store").as_uri())


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    return tmp_path / "catalog.duckdb"


def reader(catalog: Path, store: ObjectStore, sources: list[str] | None = None) -> DatasetReader:
    return DatasetReader(ServedDatasets(catalog), StoreSnapshots(store), sources)


def test_pandas_gets_each_column_type_its_dtype_and_exact_values(
    catalog: Path, store: ObjectStore
) -> None:
    dataset = serve(catalog, store, "1", "s1", ROWS)
    frame = reader(catalog, store).pandas("hosts.csv#t0")
    assert {name: str(dtype) for name, dtype in frame.dtypes.items()} == {
        "host": "string",
        "price": "decimal128(38, 9)[pyarrow]",
        "ratio": "Float64",
        "day": "datetime64[us, UTC]",
        "seen": "datetime64[us, UTC]",
        "up": "boolean",
        "took": "timedelta64[us]",
    }
    assert frame.index.name == "_row_id" and list(frame.index) == [0, 1]
    first = frame.loc[0]
    assert first["host"] == "alpha"
    assert first["price"] == Decimal("12.345000001")
    assert first["ratio"] == 0.5
    assert first["day"] == pd.Timestamp("2024-01-31", tz="UTC")
    assert first["seen"] == pd.Timestamp("2024-02-01 08:30", tz="UTC")
    assert first["up"] is True or first["up"] == True  # noqa: E712 - numpy's bool
    assert first["took"] == timedelta(hours=1, minutes=30, seconds=0.25)
    assert frame.loc[1].drop("host").isna().all()
    assert frame.attrs["loom_snapshot"] == "s1"
    assert frame.attrs["loom_dataset_id"] == dataset.dataset_id
    assert frame.attrs["loom_complete"] is True
    assert frame.attrs["loom_column_types"]["took"] == "duration"


def test_decimals_as_floats_when_asked(catalog: Path, store: ObjectStore) -> None:
    serve(catalog, store, "1", "s1", ROWS)
    frame = reader(catalog, store).pandas("hosts.csv#t0", decimals="float")
    assert str(frame.dtypes["price"]) == "Float64"
    assert frame.loc[0, "price"] == pytest.approx(12.345000001)


def test_arrow_and_duckdb_read_the_snapshot_as_stored(catalog: Path, store: ObjectStore) -> None:
    serve(catalog, store, "1", "s1", ROWS)
    read = reader(catalog, store)
    table = read.arrow("hosts.csv#t0")
    assert table.schema.equals(SCHEMA.arrow_schema())
    assert table.column("price").to_pylist() == [Decimal("12.345000001"), None]
    relation = read.relation("hosts.csv#t0")
    assert relation.aggregate("sum(price)").fetchall() == [(Decimal("12.345000001"),)]


def test_an_incomplete_or_unanswered_dataset_is_refused_unless_allowed(
    catalog: Path, store: ObjectStore
) -> None:
    serve(catalog, store, "1", "s1", ROWS, complete=False, incomplete_reasons=("rows cut",))
    read = reader(catalog, store)
    with pytest.raises(QueryError) as refused:
        read.pandas("hosts.csv#t0")
    assert refused.value.code == "incomplete_dataset"
    assert "rows cut" in str(refused.value)
    frame = read.pandas("hosts.csv#t0", allow_incomplete=True)
    assert frame.attrs["loom_complete"] is False
    assert frame.attrs["loom_incomplete_reasons"] == ["rows cut"]

    serve(catalog, store, "2", "s2", ROWS, state=DatasetState.NEEDS_CLARIFICATION)
    with pytest.raises(QueryError) as unanswered:
        read.arrow("hosts.csv#t0")
    assert unanswered.value.code == "needs_clarification"


def test_a_dataset_of_another_source_is_unknown_to_the_namespace(
    catalog: Path, store: ObjectStore
) -> None:
    dataset = serve(catalog, store, "1", "s1", ROWS, source="finance")
    for name in ("hosts.csv#t0", dataset.dataset_id):
        with pytest.raises(QueryError) as refused:
            reader(catalog, store, ["docs"]).arrow(name)
        assert refused.value.code == "unknown_dataset"
    assert reader(catalog, store, ["finance"]).arrow("hosts.csv#t0").num_rows == 2


def test_a_read_finishes_on_the_snapshot_it_opened_while_a_publish_replaces_it(
    catalog: Path, store: ObjectStore, tmp_path: Path
) -> None:
    first = serve(catalog, store, "1", "s1", ROWS * 50)
    read = reader(catalog, store)
    with read.open("hosts.csv#t0") as snapshot:
        batches = snapshot.batches(batch_rows=10)
        seen = [next(batches)]
        serve(catalog, store, "2", "s2", ROWS[:1])  # the next revision, served now
        store.delete(first.snapshot_key)  # and the old file gone, as gc would
        seen.extend(batches)
    table = pa.Table.from_batches(seen)
    assert table.num_rows == 100
    assert table.column("host").to_pylist() == ["alpha", "beta"] * 50
    assert read.pandas("hosts.csv#t0").attrs["loom_snapshot"] == "s2"


def test_a_snapshot_gone_before_it_was_opened_is_retryable(
    catalog: Path, store: ObjectStore
) -> None:
    first = serve(catalog, store, "1", "s1", ROWS)
    read = reader(catalog, store)
    stale = read.dataset("hosts.csv#t0")
    serve(catalog, store, "2", "s2", ROWS[:1])
    store.delete(first.snapshot_key)

    class Stale:  # the lookup happened before the publish
        def __getattr__(self, name: str) -> object:
            return getattr(ServedDatasets(catalog), name)

        def served_datasets(self) -> list[Dataset]:
            return [stale]

    with pytest.raises(QueryError) as changed:
        DatasetReader(Stale(), StoreSnapshots(store), ["docs"]).arrow("hosts.csv#t0")
    assert changed.value.code == "dataset_changed"
    assert changed.value.retryable


def test_export_writes_the_snapshot_as_parquet_and_csv_that_read_back_equal(
    catalog: Path, store: ObjectStore, tmp_path: Path
) -> None:
    serve(catalog, store, "1", "s1", ROWS)
    read = reader(catalog, store)
    target = tmp_path / "out" / "hosts.parquet"
    done = export_dataset(read, "hosts.csv#t0", str(target), "parquet")
    assert (done.rows, done.facts.snapshot) == (2, "s1")
    assert pq.read_table(target).equals(read.arrow("hosts.csv#t0"))
    assert not list(target.parent.glob("*.partial"))

    csv_target = tmp_path / "hosts.csv"
    export_dataset(read, "hosts.csv#t0", str(csv_target), "csv")
    lines = csv_target.read_text().splitlines()
    assert lines[0] == '"_row_id","host","price","ratio","day","seen","up","took"'
    assert (
        lines[1]
        == '0,"alpha",12.345000001,0.5,2024-01-31,2024-02-01 08:30:00.000000Z,true,5400.250000000'
    )


def test_an_export_refused_leaves_no_file(
    catalog: Path, store: ObjectStore, tmp_path: Path
) -> None:
    serve(catalog, store, "1", "s1", ROWS, complete=False)
    target = tmp_path / "hosts.parquet"
    with pytest.raises(QueryError) as refused:
        export_dataset(reader(catalog, store), "hosts.csv#t0", str(target), "parquet")
    assert refused.value.code == "incomplete_dataset"
    assert not target.exists() and not list(tmp_path.glob("*.partial"))


def test_a_snapshot_is_written_in_row_groups_a_streaming_read_holds_one_at_a_time(
    catalog: Path, store: ObjectStore
) -> None:
    schema = DatasetSchema((DatasetColumn("n", ColumnType.DOUBLE),))
    rows = ROW_GROUP_ROWS + 1
    table = pa.table(
        {"_row_id": pa.array(range(rows), pa.int64()), "n": pa.array([0.5] * rows)},
        schema=schema.arrow_schema(),
    )
    key = write_snapshot(store, "ds_x", "s1", table)
    with StoreSnapshots(store).open(key) as path:
        assert pq.ParquetFile(path).metadata.num_row_groups == 2


def test_streaming_reads_give_the_same_rows_as_a_whole_read(
    catalog: Path, store: ObjectStore
) -> None:
    serve(catalog, store, "1", "s1", ROWS * 5)
    read = reader(catalog, store)
    whole = read.pandas("hosts.csv#t0")
    with read.open("hosts.csv#t0") as snapshot:
        parts = list(snapshot.pandas_batches(batch_rows=3))
        streamed = snapshot.reader(batch_rows=4).read_all()
        with pytest.raises(QueryError) as unknown:
            list(snapshot.batches(columns=["nope"]))
    assert [len(p) for p in parts] == [3, 3, 3, 1]
    assert pd.concat(parts).equals(whole)
    assert parts[0].attrs["loom_snapshot"] == "s1"
    assert streamed.equals(read.arrow("hosts.csv#t0"))
    assert unknown.value.code == "unknown_column"
