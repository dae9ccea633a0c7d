"""A revision's tables as datasets with their snapshots: approved types carried, a retype, and
a table 16,384 columns wide."""

from __future__ import annotations

from dataclasses import replace
from decimal import Decimal
from pathlib import Path

import pytest

from loom_dagster.contract.artifact import Artifact, Column, Coverage, Locator, Table
from loom_dagster.datasets.build import build_datasets, retype
from loom_dagster.datasets.catalog import DatasetError
from loom_dagster.datasets.infer import MAX_STORED_COLUMNS
from loom_dagster.datasets.model import ROW_ID, ColumnType, DatasetState
from loom_dagster.datasets.snapshots import read_snapshot
from loom_dagster.objectstore import ObjectStore
from loom_dagster.sources import Revision


def artifact(columns: list[tuple[str, str]], rows: list[list[object]]) -> Artifact:
    table = Table(
        "t0", "a.csv", tuple(Column(n, t) for n, t in columns), tuple(map(tuple, rows)), 1,
        Locator(row_start=1, row_end=len(rows) + 1),
    )  # fmt: skip
    return Artifact(1, "csv", "p", "1", {}, {}, (), Coverage("rows", 1, 1), (), (table,))


REVISION = Revision("a.csv~1@1", "doc", "docs", "a.csv", 1, 1, "1" * 64)
LATER = replace(REVISION, key="a.csv~1@2", sha256="2" * 64)


@pytest.fixture
def store(tmp_path: Path) -> ObjectStore:
    return ObjectStore((tmp_path / "store").as_uri())


def test_a_table_becomes_a_dataset_with_its_snapshot(store: ObjectStore) -> None:
    art = artifact([("host", "string"), ("v", "mixed")], [["a", 1], ["b", "x"]])
    [dataset] = build_datasets(store, art, REVISION, lambda _: None)
    assert dataset.state is DatasetState.NEEDS_CLARIFICATION
    assert dataset.snapshot_key == f"datasets/{dataset.dataset_id}/{dataset.snapshot}.parquet"
    assert read_snapshot(store, dataset.snapshot_key).to_pylist() == [
        {ROW_ID: 0, "host": "a", "v": "1"},
        {ROW_ID: 1, "host": "b", "v": "x"},
    ]


def test_approved_types_carry_to_a_revision_of_the_same_columns(store: ObjectStore) -> None:
    art = artifact([("host", "string"), ("v", "mixed")], [["a", 1], ["b", "x"]])
    [first] = build_datasets(store, art, REVISION, lambda _: None)
    approved = retype(store, art, REVISION, first, {"v": ColumnType.DECIMAL})
    assert approved.state is DatasetState.APPROVED and approved.questions == ()
    assert approved.rows_stored == 1 and approved.rows_rejected == 1
    assert [(r.row, r.reason) for r in approved.rejects] == [(1, "column 'v': 'x' is not a number")]

    [later] = build_datasets(store, art, LATER, lambda _: approved)
    assert later.state is DatasetState.APPROVED and later.schema == approved.schema
    assert read_snapshot(store, later.snapshot_key).column("v").to_pylist() == [Decimal(1)]
    # Columns renamed or reordered: the approval no longer applies.
    other = artifact([("v", "mixed"), ("host", "string")], [[1, "a"]])
    [fresh] = build_datasets(store, other, LATER, lambda _: approved)
    assert fresh.state is DatasetState.NEEDS_CLARIFICATION
    assert fresh.schema.column("v").type is ColumnType.TEXT  # type: ignore[union-attr]


def test_a_retype_of_a_table_the_artifact_lacks_is_refused(store: ObjectStore) -> None:
    art = artifact([("host", "string")], [["a"]])
    [dataset] = build_datasets(store, art, REVISION, lambda _: None)
    with pytest.raises(DatasetError) as raised:
        retype(store, art, REVISION, replace(dataset, dataset_id="ds_other"), {})
    assert raised.value.code == "unknown_dataset"


def test_a_table_16384_columns_wide_is_stored_to_the_limit(store: ObjectStore) -> None:
    width = 16_384
    art = artifact([(f"c{i}", "number") for i in range(width)], [list(range(width))] * 3)
    [dataset] = build_datasets(store, art, REVISION, lambda _: None)
    snapshot = read_snapshot(store, dataset.snapshot_key)
    assert snapshot.num_columns == MAX_STORED_COLUMNS + 1 and snapshot.num_rows == 3
    assert not dataset.complete
    assert dataset.questions == (
        f"{width - MAX_STORED_COLUMNS} decimal columns past the 1,024 a dataset stores are not "
        "stored, from 'c1024'",
    )
