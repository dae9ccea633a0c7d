"""Approving a dataset's schema: retyping columns from the stored artifact under a new snapshot,
switched to only while the document still serves the revision the approver read."""

from __future__ import annotations

from collections.abc import Mapping

import duckdb

from loom_dagster import catalog
from loom_dagster.datasets.build import retype
from loom_dagster.datasets.catalog import DatasetError, served_dataset, write_dataset
from loom_dagster.datasets.model import ColumnType, Dataset
from loom_dagster.datasets.snapshots import delete_snapshots
from loom_dagster.display import one_line
from loom_dagster.objectstore import ObjectStore
from loom_dagster.pipeline.records import load_artifact, read_extraction  # the step's own reader


def parse_types(dataset: Dataset, pairs: Mapping[str, str]) -> dict[str, ColumnType]:
    """`COLUMN=TYPE` answers checked against the schema: a stored column, a known type."""
    types: dict[str, ColumnType] = {}
    for column, name in pairs.items():
        if dataset.schema.column(column) is None:
            raise DatasetError(
                f"{dataset.name} stores no column {one_line(column, 200)!r}",
                code="unknown_column",
            )
        try:
            types[column] = ColumnType(name)
        except ValueError:
            known = ", ".join(t.value for t in ColumnType)
            raise DatasetError(
                f"{one_line(name, 100)!r} is no column type (one of {known})", code="invalid_type"
            ) from None
    return types


def _conflict(dataset: Dataset, read: str, now: str | None) -> DatasetError:
    serving = f"revision {now}" if now else "nothing"
    return DatasetError(
        f"{dataset.name} was read at revision {read}; its document serves {serving} now: "
        "show it again and approve what it serves",
        code="revision_conflict",
    )


def approve(
    con: duckdb.DuckDBPyConnection,
    store: ObjectStore,
    id_or_name: str,
    pairs: Mapping[str, str],
    *,
    revision: str | None = None,
) -> Dataset:
    """Approve the served dataset, retyping the columns `pairs` names; returns its new row.

    `revision` is the revision the approver read (default: the one served now). The retyped
    rows are written under a new snapshot first; the row that switches to it is written only
    if the document still serves that revision and that snapshot, else nothing changes and
    the new snapshot is deleted (revision_conflict).
    """
    dataset = served_dataset(con, id_or_name)
    if dataset is None:
        raise DatasetError(
            f"no served dataset has the id or name {one_line(id_or_name, 200)!r}",
            code="unknown_dataset",
        )
    read = revision or dataset.revision
    if read != dataset.revision:
        raise _conflict(dataset, read, dataset.revision)
    types = parse_types(dataset, pairs)
    source_revision = catalog.get_revision(con, dataset.revision)
    extraction = read_extraction(store, dataset.revision)
    if extraction is None or extraction.refused:
        raise DatasetError(
            f"the artifact of revision {dataset.revision} is gone", code="artifact_gone"
        )
    artifact = load_artifact(store, extraction, source_revision)
    approved = retype(store, artifact, source_revision, dataset, types)
    try:
        with catalog.transaction(con):
            now = served_dataset(con, dataset.dataset_id)
            if now is None or now.revision != read or now.snapshot != dataset.snapshot:
                raise _conflict(dataset, read, None if now is None else now.revision)
            write_dataset(con, approved)
    except BaseException:
        delete_snapshots(store, [approved.snapshot_key])
        raise
    delete_snapshots(store, [dataset.snapshot_key])
    return approved
