"""A served dataset read whole or in batches: Arrow record batches, an Arrow table, a pandas
DataFrame with the dtypes its typed schema gives, or a DuckDB relation.

The one reader behind the Dagster resource (resources.datasets.LoomDatasets), `loom datasets
export` and `api.read`. It goes through what a query reads with (query.snapshots): the catalog
names the live snapshot, the object store gives its file, the file is checked against the
schema. Plain Python, no Dagster.

- Namespace: a reader given `sources` resolves a name among those sources' datasets only, so a
  dataset of another source is unknown to it (`unknown_dataset`), as in `loom serve`.
- Incomplete: a dataset whose extraction left part of its table out (`incomplete_dataset`) or
  whose schema needs an answer (`needs_clarification`) is refused unless `allow_incomplete`;
  either way the facts (`ReadFacts`, a frame's `attrs`) say it.
- One snapshot: the file is opened once and every batch comes from that open file, so a
  publish, an approval or gc that replaces or deletes the snapshot meanwhile changes nothing of
  the read (an open file outlives its unlinking). A snapshot gone before it was opened is
  `dataset_changed`, retryable. Never a mix of two snapshots: a snapshot is one immutable file.
- pandas dtypes: text `string`; decimal `decimal128(38, 9)[pyarrow]` (exact: values are
  `decimal.Decimal`, sums stay exact) or, with `decimals="float"`, `Float64`; double `Float64`;
  boolean `boolean`; date and timestamp `datetime64[us, UTC]` (a date is its midnight in UTC);
  duration `timedelta64[us]` (stored as exact seconds, rounded to the microsecond). Nullable
  throughout (pd.NA). Loom has no integer type: whole numbers are decimals. The frame's index
  is `_row_id`, the row's position in its source table.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import duckdb
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from loom_dagster.datasets.model import (
    DECIMAL_TYPE,
    ROW_ID,
    ColumnType,
    Dataset,
    DatasetSchema,
    DatasetState,
)
from loom_dagster.query.errors import QueryError
from loom_dagster.query.plan import shown
from loom_dagster.query.snapshots import SnapshotFiles, check_snapshot, still_served

Decimals = Literal["decimal", "float"]
DEFAULT_BATCH_ROWS = 65_536
_TIME = pa.timestamp("us", tz="UTC")
_SECONDS = pa.decimal256(38, 6)
_MICROS = pa.scalar(1_000_000, pa.decimal256(7, 0))


class ServedCatalog(Protocol):
    """What a read needs of the datasets catalog (query.catalog.ServedDatasets)."""

    def served_dataset(self, id_or_name: str) -> Dataset | None: ...

    def served_datasets(self) -> list[Dataset]: ...

    def is_served(self, dataset_id: str, snapshot: str) -> bool: ...


@dataclass(frozen=True)
class ReadFacts:
    """What a read read: the dataset, its snapshot, and how complete it is (a frame's attrs)."""

    dataset_id: str
    name: str
    source: str
    path: str
    revision: str
    snapshot: str
    state: str
    complete: bool
    incomplete_reasons: tuple[str, ...]
    rows_stored: int
    rows_rejected: int
    column_types: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, dataset: Dataset) -> ReadFacts:
        return cls(
            dataset_id=dataset.dataset_id,
            name=dataset.name,
            source=dataset.source,
            path=dataset.path,
            revision=dataset.revision,
            snapshot=dataset.snapshot,
            state=dataset.state.value,
            complete=dataset.complete,
            incomplete_reasons=dataset.incomplete_reasons,
            rows_stored=dataset.rows_stored,
            rows_rejected=dataset.rows_rejected,
            column_types=tuple((c.name, c.type.value) for c in dataset.schema.columns),
        )

    def attrs(self) -> dict[str, Any]:
        """Plain values only (lists, not tuples), so pandas can copy them with the frame."""
        return {
            "loom_dataset_id": self.dataset_id,
            "loom_name": self.name,
            "loom_source": self.source,
            "loom_path": self.path,
            "loom_revision": self.revision,
            "loom_snapshot": self.snapshot,
            "loom_state": self.state,
            "loom_complete": self.complete,
            "loom_incomplete_reasons": list(self.incomplete_reasons),
            "loom_rows_stored": self.rows_stored,
            "loom_rows_rejected": self.rows_rejected,
            "loom_column_types": dict(self.column_types),
        }


def _pandas_dtypes(decimals: Decimals) -> dict[pa.DataType, Any]:
    return {
        pa.string(): pd.StringDtype(),
        DECIMAL_TYPE: pd.ArrowDtype(DECIMAL_TYPE) if decimals == "decimal" else pd.Float64Dtype(),
        pa.float64(): pd.Float64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
    }


def _typed_for_pandas(schema: DatasetSchema, rows: pa.Table, decimals: Decimals) -> pa.Table:
    """The rows with the columns pandas has no exact dtype for cast to the ones the module's
    docstring names: dates to instants, durations to microseconds, decimals to floats if asked."""
    columns = []
    for index, field in enumerate(rows.schema):
        array = rows.column(index)
        column = schema.column(field.name) if field.name != ROW_ID else None
        if column is not None and column.type is ColumnType.DATE:
            array = array.cast(_TIME)
        elif column is not None and column.type is ColumnType.DURATION:
            # decimal256: the product of a 38-digit decimal and 10**6 is wider than decimal128.
            rounded = pc.round(array, 6, round_mode="half_to_even").cast(_SECONDS)
            array = pc.multiply(rounded, _MICROS).cast(pa.int64()).cast(pa.duration("us"))
        elif column is not None and column.type is ColumnType.DECIMAL and decimals == "float":
            array = array.cast(pa.float64())
        columns.append(array)
    return pa.Table.from_arrays(columns, names=rows.schema.names)


def _refused_state(dataset: Dataset) -> QueryError | None:
    if dataset.state is DatasetState.NEEDS_CLARIFICATION:
        return QueryError(
            f"dataset {dataset.dataset_id} ({shown(dataset.name)}) needs clarification: "
            f"{'; '.join(dataset.questions) or 'its schema has a question'}; approve it first "
            f"(loom datasets show {dataset.dataset_id}) or read it with allow_incomplete",
            code="needs_clarification",
        )
    if not dataset.complete:
        gaps = "; ".join(dataset.incomplete_reasons) or "the extraction left part out"
        return QueryError(
            f"dataset {dataset.dataset_id} ({shown(dataset.name)}) is incomplete ({gaps}); "
            "read it with allow_incomplete to take it anyway",
            code="incomplete_dataset",
        )
    return None


class OpenSnapshot:
    """One dataset's snapshot file, held open: everything read from it is that snapshot."""

    def __init__(self, dataset: Dataset, file: pq.ParquetFile) -> None:
        self.dataset = dataset
        self.facts = ReadFacts.of(dataset)
        self._file = file

    @property
    def schema(self) -> pa.Schema:
        return self.dataset.schema.arrow_schema()

    def batches(
        self, batch_rows: int = DEFAULT_BATCH_ROWS, columns: Sequence[str] | None = None
    ) -> Iterator[pa.RecordBatch]:
        """The rows in order, at most `batch_rows` at a time (one row group in memory at most)."""
        if columns is not None:
            unknown = [c for c in columns if c != ROW_ID and self.dataset.schema.column(c) is None]
            if unknown:
                raise QueryError(
                    f"dataset {shown(self.dataset.name)} has no column {shown(unknown[0])}",
                    code="unknown_column",
                )
        yield from self._file.iter_batches(
            batch_size=batch_rows, columns=None if columns is None else list(columns)
        )

    def reader(self, batch_rows: int = DEFAULT_BATCH_ROWS) -> pa.RecordBatchReader:
        return pa.RecordBatchReader.from_batches(self.schema, self.batches(batch_rows))

    def arrow(self) -> pa.Table:
        return self._file.read().cast(self.schema)

    def pandas_batches(
        self, batch_rows: int = DEFAULT_BATCH_ROWS, decimals: Decimals = "decimal"
    ) -> Iterator[pd.DataFrame]:
        """The rows as DataFrames of at most `batch_rows` rows, for a dataset larger than memory."""
        for batch in self.batches(batch_rows):
            rows = pa.Table.from_batches([batch])
            yield self._frame(_typed_for_pandas(self.dataset.schema, rows, decimals), decimals)

    def pandas(self, decimals: Decimals = "decimal") -> pd.DataFrame:
        rows = self._file.read().cast(self.schema)
        return self._frame(_typed_for_pandas(self.dataset.schema, rows, decimals), decimals)

    def _frame(self, table: pa.Table, decimals: Decimals) -> pd.DataFrame:
        mapping = _pandas_dtypes(decimals)
        frame = table.to_pandas(types_mapper=mapping.get, self_destruct=True)
        frame = frame.set_index(ROW_ID)
        frame.attrs = self.facts.attrs()
        return frame


class DatasetReader:
    """Reads the served datasets of one home, within a namespace (`sources`; None: every one)."""

    def __init__(
        self, catalog: ServedCatalog, files: SnapshotFiles, sources: Iterable[str] | None = None
    ) -> None:
        self.catalog = catalog
        self.files = files
        self.sources = None if sources is None else frozenset(sources)

    def dataset(self, id_or_name: str) -> Dataset:
        """The served dataset of this namespace with this id or name."""
        if self.sources is None:
            found = self.catalog.served_dataset(id_or_name)
        else:
            mine = [d for d in self.catalog.served_datasets() if d.source in self.sources]
            named = [d for d in mine if d.dataset_id == id_or_name] or [
                d for d in mine if d.name == id_or_name
            ]
            if len(named) > 1:
                raise QueryError(
                    f"{len(named)} served datasets are named {shown(id_or_name)}; name one by "
                    "its id",
                    code="ambiguous_dataset",
                )
            found = named[0] if named else None
        if found is None:
            where = "" if self.sources is None else f" in sources {', '.join(sorted(self.sources))}"
            raise QueryError(
                f"no dataset {shown(id_or_name)} is served{where} (by id or name)",
                code="unknown_dataset",
            )
        return found

    def facts(self, id_or_name: str) -> ReadFacts:
        return ReadFacts.of(self.dataset(id_or_name))

    @contextlib.contextmanager
    def open(self, id_or_name: str, *, allow_incomplete: bool = False) -> Iterator[OpenSnapshot]:
        """The dataset's live snapshot, held open until the block ends."""
        dataset = self.dataset(id_or_name)
        refused = None if allow_incomplete else _refused_state(dataset)
        if refused is not None:
            raise refused
        try:
            with self.files.open(dataset.snapshot_key) as path:
                check_snapshot(path, dataset)
                handle = _opened(path)
        except QueryError as error:
            if error.code in ("snapshot_missing", "snapshot_mismatch"):
                still_served(self.catalog, [dataset])  # gone because replaced: retryable
            raise
        # The open handle keeps the file readable after the block above dropped a remote
        # store's temporary copy or gc deleted a local one.
        with handle:
            yield OpenSnapshot(dataset, pq.ParquetFile(handle))

    def arrow(self, id_or_name: str, *, allow_incomplete: bool = False) -> pa.Table:
        with self.open(id_or_name, allow_incomplete=allow_incomplete) as snapshot:
            return snapshot.arrow()

    def pandas(
        self, id_or_name: str, *, allow_incomplete: bool = False, decimals: Decimals = "decimal"
    ) -> pd.DataFrame:
        with self.open(id_or_name, allow_incomplete=allow_incomplete) as snapshot:
            return snapshot.pandas(decimals)

    def relation(
        self,
        id_or_name: str,
        connection: duckdb.DuckDBPyConnection | None = None,
        *,
        allow_incomplete: bool = False,
    ) -> duckdb.DuckDBPyRelation:
        """A DuckDB relation over the snapshot's rows, read into memory first (the snapshot may
        be deleted once this returns; `open(...).reader()` streams a dataset larger than memory
        into DuckDB instead)."""
        table = self.arrow(id_or_name, allow_incomplete=allow_incomplete)
        con = connection if connection is not None else duckdb.connect(":memory:")
        return con.from_arrow(table)


def _opened(path: Path) -> Any:
    try:
        return open(path, "rb")  # noqa: SIM115 - held by the caller's `with`
    except FileNotFoundError:
        raise QueryError(
            f"snapshot {shown(path.name)} is not in the object store", code="snapshot_missing"
        ) from None
