"""What a typed dataset is: its columns and their types, its state, and the snapshot that serves it.

Seed 000 "Datasets" stores rows in two ClickHouse tables with typed slots; here a dataset
snapshot is one immutable Parquet file in the object store (`datasets/<dataset id>/<snapshot>.parquet`)
whose Arrow types are the column types below, and the catalog's `datasets` table holds a row per
(source, dataset, revision). Nothing here imports Dagster; the typing, the catalog rows, the
queries and the commands all speak these types.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum

import pyarrow as pa

# The hidden column every snapshot carries: the row's position in its table (0-based, header
# rows not counted), so a query that returns rows can name them.
ROW_ID = "_row_id"
# Exact numbers keep nine places (the seed's Decimal128(9)); 38 digits leave 29 before the point,
# so a number of 10**29 or more (after rounding to nine places) is a rejected row, as in the seed.
DECIMAL_PRECISION, DECIMAL_SCALE = 38, 9
DECIMAL_TYPE = pa.decimal128(DECIMAL_PRECISION, DECIMAL_SCALE)


class ColumnType(StrEnum):
    """A column's stored type. Durations are stored as exact seconds, as the seed holds them."""

    TEXT = "text"
    DECIMAL = "decimal"
    DOUBLE = "double"
    DATE = "date"
    TIMESTAMP = "timestamp"  # an instant, stored in UTC
    BOOLEAN = "boolean"
    DURATION = "duration"

    @property
    def kind(self) -> str:
        """The seed's slot kind: what a join key's two sides must share, and what compares."""
        return _KINDS[self]

    @property
    def arrow(self) -> pa.DataType:
        return _ARROW[self]


_KINDS = {
    ColumnType.TEXT: "text",
    ColumnType.DECIMAL: "number",
    ColumnType.DURATION: "number",
    ColumnType.DOUBLE: "double",
    ColumnType.DATE: "time",
    ColumnType.TIMESTAMP: "time",
    ColumnType.BOOLEAN: "boolean",
}

_ARROW: dict[ColumnType, pa.DataType] = {
    ColumnType.TEXT: pa.string(),
    ColumnType.DECIMAL: DECIMAL_TYPE,
    ColumnType.DURATION: DECIMAL_TYPE,
    ColumnType.DOUBLE: pa.float64(),
    ColumnType.DATE: pa.date32(),
    ColumnType.TIMESTAMP: pa.timestamp("us", tz="UTC"),
    ColumnType.BOOLEAN: pa.bool_(),
}


class DatasetState(StrEnum):
    INFERRED = "inferred"
    NEEDS_CLARIFICATION = "needs_clarification"
    APPROVED = "approved"


@dataclass(frozen=True)
class DatasetColumn:
    name: str
    type: ColumnType
    approved: bool = False  # the type an approver set, kept by later revisions of the same shape


@dataclass(frozen=True)
class DatasetSchema:
    columns: tuple[DatasetColumn, ...]

    def arrow_schema(self) -> pa.Schema:
        """The snapshot file's schema: the row id, then every column by its name."""
        return pa.schema(
            [pa.field(ROW_ID, pa.int64(), nullable=False)]
            + [pa.field(column.name, column.type.arrow) for column in self.columns]
        )

    def column(self, name: str) -> DatasetColumn | None:
        return next((column for column in self.columns if column.name == name), None)


@dataclass(frozen=True)
class Reject:
    """A row left out of the snapshot, and why (the first 20 of a dataset are kept)."""

    row: int  # the row's position in its table, as ROW_ID counts
    reason: str


@dataclass(frozen=True)
class Dataset:
    """One catalog row: a dataset of one revision of one document.

    It is served while its document's live revision is `revision` (the documents row is the
    switch for chunks and datasets alike).
    """

    dataset_id: str
    source: str
    path: str
    revision: str  # the revision key
    table_id: str  # the artifact table's id
    name: str  # a readable name: `<path>#<table name>`
    schema: DatasetSchema
    state: DatasetState
    questions: tuple[str, ...]
    rows_stored: int
    rows_rejected: int
    rejects: tuple[Reject, ...]
    complete: bool
    incomplete_reasons: tuple[str, ...]
    snapshot: str  # the snapshot id
    snapshot_key: str  # datasets/<dataset id>/<snapshot>.parquet in the object store


def dataset_id(source: str, path: str, table_key: str) -> str:
    """A dataset's id, the same in every revision of its document (seed 000 "Datasets").

    `table_key` is a sheet's name, a CSV or Parquet table's id, a PDF table's id (in page order),
    or `<sheet>/<table id>` for a sheet an extractor split into several tables.
    """
    digest = hashlib.sha256("\0".join((source, path, table_key)).encode("utf-8", "surrogateescape"))
    return "ds_" + digest.hexdigest()[:16]


def snapshot_key(dataset: str, snapshot: str) -> str:
    return f"datasets/{dataset}/{snapshot}.parquet"
