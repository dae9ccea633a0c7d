"""Dataset snapshots: one immutable Parquet file each, in the object store under
`datasets/<dataset id>/<snapshot>.parquet` (model.snapshot_key), never edited: a retype or a new
revision writes another, and the one no catalog row serves is deleted."""

from __future__ import annotations

import io
import uuid
from collections.abc import Iterable

import pyarrow as pa
import pyarrow.parquet as pq

from loom_dagster.datasets.model import snapshot_key
from loom_dagster.objectstore import ObjectStore

PREFIX = "datasets"
# Rows per Parquet row group: a reader streaming a snapshot in batches (query.read) holds one
# row group at a time, so this bounds its memory whatever the dataset's size.
ROW_GROUP_ROWS = 131_072


def new_snapshot() -> str:
    return uuid.uuid4().hex


def write_snapshot(store: ObjectStore, dataset: str, snapshot: str, table: pa.Table) -> str:
    """Write the snapshot whole (the store's put is all or nothing); returns its key."""
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", row_group_size=ROW_GROUP_ROWS)
    key = snapshot_key(dataset, snapshot)
    store.put(key, sink.getvalue())
    return key


def read_snapshot(store: ObjectStore, key: str) -> pa.Table:
    return pq.read_table(io.BytesIO(store.get(key)))


def delete_snapshots(store: ObjectStore, keys: Iterable[str]) -> list[str]:
    """Delete each snapshot (one already gone is no error); returns the keys deleted."""
    deleted = []
    for key in keys:
        if not key.startswith(PREFIX + "/"):
            continue  # only ever a snapshot: a catalog row names nothing else
        store.delete(key)
        deleted.append(key)
    return deleted
