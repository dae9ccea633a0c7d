"""A served dataset written out whole for another engine: its live snapshot as one Parquet or CSV
file, to a local path or any object-store URL (`s3://bucket/key.parquet`).

Streamed batch by batch from the snapshot opened (query.read), into a store object that
appears whole or not at all (ObjectStore.writing): a reader of the target never sees half a
file, and a publish during the export changes nothing of it. Parquet keeps the snapshot's Arrow
types (decimal128(38, 9), timestamp[us, UTC], date32, ...); CSV writes Arrow's text of each
value (decimals with their nine places, instants in ISO 8601 with `Z`, durations as seconds).
The hidden `_row_id` column is kept: it names the row in its source table.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from loom_dagster.objectstore import ObjectStore
from loom_dagster.query.errors import QueryError
from loom_dagster.query.plan import shown
from loom_dagster.query.read import DatasetReader, ReadFacts

Format = Literal["parquet", "csv"]
FORMATS: tuple[Format, ...] = ("parquet", "csv")


@dataclass(frozen=True)
class Exported:
    target: str  # the path or URL written
    rows: int
    facts: ReadFacts


def split_target(target: str) -> tuple[str, str]:
    """The store URL of the target's folder and the object's name in it."""
    if "://" in target:
        folder, name = posixpath.split(target.rstrip("/"))
        if not name or folder.endswith(":/"):
            raise QueryError(
                f"the export target {shown(target)} names no object (scheme://bucket/key)",
                code="invalid_target",
            )
        return folder, name
    path = Path(target).expanduser().resolve()
    if path.is_dir():
        raise QueryError(f"the export target {shown(target)} is a folder", code="invalid_target")
    return path.parent.as_uri(), path.name


def export_dataset(
    reader: DatasetReader,
    name: str,
    target: str,
    fmt: Format,
    *,
    allow_incomplete: bool = False,
) -> Exported:
    """Write the dataset's live snapshot to `target` in `fmt`."""
    if fmt not in FORMATS:
        raise QueryError(
            f"the format must be {' or '.join(FORMATS)}, not {shown(fmt)}", code="invalid_format"
        )
    folder, object_name = split_target(target)
    rows = 0
    with (
        reader.open(name, allow_incomplete=allow_incomplete) as snapshot,
        ObjectStore(folder).writing(object_name) as handle,
    ):
        if fmt == "parquet":
            with pq.ParquetWriter(handle, snapshot.schema, compression="zstd") as parquet:
                for batch in snapshot.batches():
                    parquet.write_batch(batch)
                    rows += batch.num_rows
        else:
            with pacsv.CSVWriter(handle, snapshot.schema) as csv:
                for batch in snapshot.batches():
                    csv.write_batch(batch)
                    rows += batch.num_rows
        facts = snapshot.facts
    return Exported(target, rows, facts)
