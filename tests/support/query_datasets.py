"""Datasets for query tests: real Parquet snapshots in a real object-store folder, written from
the shared model, and an in-memory stand-in for the catalog's `datasets` table (not this
package's), answering the two questions a query asks of it."""

from __future__ import annotations

import io
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from loom_dagster import catalog
from loom_dagster.datasets.catalog import write_dataset
from loom_dagster.datasets.model import (
    ROW_ID,
    ColumnType,
    Dataset,
    DatasetColumn,
    DatasetSchema,
    DatasetState,
    dataset_id,
    snapshot_key,
)
from loom_dagster.objectstore import ObjectStore
from loom_dagster.sources import Revision, Source, document_id, revision_key


class MemoryCatalog:
    def __init__(self) -> None:
        self.served: dict[str, Dataset] = {}
        self.lookups = 0

    def serve(self, dataset: Dataset) -> None:
        self.served[dataset.dataset_id] = dataset

    def served_dataset(self, id_or_name: str) -> Dataset | None:
        self.lookups += 1
        if id_or_name in self.served:
            return self.served[id_or_name]
        return next((d for d in self.served.values() if d.name == id_or_name), None)

    def is_served(self, dataset_id: str, snapshot: str) -> bool:
        found = self.served.get(dataset_id)
        return found is not None and found.snapshot == snapshot


def parquet_bytes(schema: DatasetSchema, rows: Sequence[Sequence[Any]]) -> bytes:
    arrow = schema.arrow_schema()
    columns = [list(range(len(rows)))] + [
        [row[i] for row in rows] for i in range(len(schema.columns))
    ]
    table = pa.Table.from_arrays(
        [pa.array(values, type=field.type) for values, field in zip(columns, arrow, strict=True)],
        schema=arrow,
    )
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def publish(
    store: ObjectStore,
    catalog: MemoryCatalog,
    name: str,
    columns: Sequence[tuple[str, ColumnType]],
    rows: Sequence[Sequence[Any]],
    *,
    snapshot: str = "snap1",
    **fields: Any,
) -> Dataset:
    """Write a snapshot of `rows` to the store and serve it under `name`."""
    schema = DatasetSchema(tuple(DatasetColumn(n, t) for n, t in columns))
    identifier = dataset_id("src", f"{name}.csv", name)
    key = snapshot_key(identifier, snapshot)
    store.put(key, parquet_bytes(schema, rows))
    dataset = Dataset(
        dataset_id=identifier,
        source="src",
        path=f"{name}.csv",
        revision=f"rev-{snapshot}",
        table_id="t1",
        name=name,
        schema=schema,
        state=DatasetState.INFERRED,
        questions=(),
        rows_stored=len(rows),
        rows_rejected=0,
        rejects=(),
        complete=True,
        incomplete_reasons=(),
        snapshot=snapshot,
        snapshot_key=key,
    )
    dataset = replace(dataset, **fields)
    catalog.serve(dataset)
    return dataset


def serve_in_catalog(
    catalog_path: Path,
    store: ObjectStore,
    snapshot_bytes: bytes,
    schema: DatasetSchema,
    *,
    source: str,
    path: str,
    sha: str,
    snapshot: str,
    rows_stored: int,
    **fields: Any,
) -> Dataset:
    """Serve a dataset for real: its snapshot in the store, its revision registered and
    published in the catalog file, its `datasets` row written (table `t0`, named `<path>#t0`)."""
    revision = Revision(
        revision_key(source, path, sha), document_id(source, path), source, path, 3, 1, sha
    )
    identifier = dataset_id(source, path, "t0")
    dataset = Dataset(
        dataset_id=identifier,
        source=source,
        path=path,
        revision=revision.key,
        table_id="t0",
        name=f"{path}#t0",
        schema=schema,
        state=DatasetState.INFERRED,
        questions=(),
        rows_stored=rows_stored,
        rows_rejected=0,
        rejects=(),
        complete=True,
        incomplete_reasons=(),
        snapshot=snapshot,
        snapshot_key=snapshot_key(identifier, snapshot),
    )
    dataset = replace(dataset, **fields)
    store.put(dataset.snapshot_key, snapshot_bytes)
    with duckdb.connect(str(catalog_path)) as con:
        catalog.ensure_schema(con)
        catalog.upsert_source(con, Source(source, f"/data/{source}"))
        catalog.register_revisions(con, [revision])
        write_dataset(con, dataset)
        catalog.publish_revision(con, revision, [], artifact_sha256=sha)
    return dataset


__all__ = ["ROW_ID", "MemoryCatalog", "parquet_bytes", "publish", "serve_in_catalog"]
