"""A snapshot file as a reader holds it: where it is read from, that it holds its dataset's
schema, and whether it still serves its dataset once the read is done.

Shared by every reader of a live snapshot: a query (`loom query`, `loom sql`, `loom serve`) and
a dataset read whole or in batches (query.read: the Dagster resource, `loom datasets export`,
`api.read`). No sqlglot here, so the Dagster shell may import it.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Protocol

import fsspec
import pyarrow.parquet as pq
from fsspec.implementations.local import LocalFileSystem

from loom_dagster.datasets.model import Dataset
from loom_dagster.objectstore import ObjectStore
from loom_dagster.query.errors import DatasetChanged, QueryError
from loom_dagster.query.plan import shown


class Catalog(Protocol):
    """What a query needs of the datasets catalog (loom_dagster/datasets/catalog.py)."""

    def served_dataset(self, id_or_name: str) -> Dataset | None:
        """The dataset as its document's live revision serves it, by id or name."""

    def is_served(self, dataset_id: str, snapshot: str) -> bool:
        """Whether `snapshot` still serves `dataset_id` now."""


class SnapshotFiles(Protocol):
    """Where a snapshot's Parquet file can be read from, as a local path, while held."""

    def open(self, snapshot_key: str) -> contextlib.AbstractContextManager[Path]: ...


class StoreSnapshots:
    """Snapshots in the object store: a local store's file read in place; a remote store's
    copied into a private temporary folder for the query's time."""

    def __init__(self, store: ObjectStore) -> None:
        self.store = store
        self._fs, self._root = fsspec.core.url_to_fs(store.url)

    @contextlib.contextmanager
    def open(self, snapshot_key: str) -> Iterator[Path]:
        if isinstance(self._fs, LocalFileSystem):
            path = Path(self._root) / snapshot_key
            if not path.is_file():
                raise QueryError(
                    f"snapshot {shown(snapshot_key)} is not in the object store",
                    code="snapshot_missing",
                )
            yield path.resolve()
            return
        with tempfile.TemporaryDirectory(prefix="loom-query-") as folder:
            try:
                data = self.store.get(snapshot_key)
            except QueryError:
                raise
            except Exception as error:
                raise QueryError(
                    f"snapshot {shown(snapshot_key)} cannot be read: {error}",
                    code="snapshot_missing",
                ) from None
            path = Path(folder) / "snapshot.parquet"
            path.write_bytes(data)
            yield path


def completeness(aliases: Sequence[str], datasets: Sequence[Dataset]) -> tuple[str, ...]:
    """Why an answer may not cover every value: a dataset that left part of its table out or
    rejected rows."""
    reasons = []
    for alias, dataset in zip(aliases, datasets, strict=True):
        if not dataset.complete:
            gaps = "; ".join(dataset.incomplete_reasons) or "the extraction left part out"
            reasons.append(f"{alias}: incomplete ({gaps})")
        if dataset.rows_rejected:
            reasons.append(f"{alias}: {dataset.rows_rejected} rows rejected")
    return tuple(reasons)


def check_snapshot(path: Path, dataset: Dataset) -> None:
    """The file's columns are the schema's, in order: the statement names them by position."""
    try:
        found = pq.read_schema(path)
    except (OSError, ValueError) as error:
        raise QueryError(
            f"snapshot {dataset.snapshot} of {dataset.dataset_id} cannot be read: {error}",
            code="snapshot_mismatch",
        ) from None
    expected = dataset.schema.arrow_schema()
    if [(f.name, f.type) for f in found] != [(f.name, f.type) for f in expected]:
        raise QueryError(
            f"snapshot {dataset.snapshot} of {dataset.dataset_id} does not hold its schema's "
            "columns",
            code="snapshot_mismatch",
        )


@contextlib.contextmanager
def opened(files: SnapshotFiles, datasets: Sequence[Dataset]) -> Iterator[list[Path]]:
    """Every dataset's snapshot file, held open for the query, each checked against its schema."""
    with contextlib.ExitStack() as stack:
        paths = []
        for dataset in datasets:
            path = stack.enter_context(files.open(dataset.snapshot_key))
            check_snapshot(path, dataset)
            paths.append(path)
        yield paths


def still_served(catalog: Catalog, datasets: Sequence[Dataset]) -> None:
    for dataset in datasets:
        if not catalog.is_served(dataset.dataset_id, dataset.snapshot):
            raise DatasetChanged(
                f"dataset {dataset.dataset_id} ({shown(dataset.name)}) changed while the query "
                f"ran (snapshot {dataset.snapshot} no longer serves it); run it again"
            )
