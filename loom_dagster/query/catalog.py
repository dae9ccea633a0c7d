"""The catalog as a query reads it: which snapshot serves a dataset, before and after the statement.

A query asks the catalog twice (the lookup, then the revalidation once the statement ran) and
must hold no lock on its file in between, or a long query would stall a publish. Starting a
DuckDB database costs 13-45 ms here, most of a small query's overhead, so both questions go
through one in-memory database the process keeps for catalog reads alone (it never runs a
caller's statement), attaching the catalog file read-only for each question (about 1 ms) and
detaching it after.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import duckdb

from loom_dagster.catalog import catalog_url, open_shared
from loom_dagster.datasets import catalog as datasets
from loom_dagster.datasets.model import Dataset
from loom_dagster.query.errors import QueryError

_ALIAS = "loom_catalog"
# A publish holds the file's lock for a short transaction: wait for it, as CatalogResource does.
_ATTEMPTS = 12
_FIRST_WAIT_S = 0.01

_reader: duckdb.DuckDBPyConnection | None = None
_reader_lock = threading.Lock()


def _database() -> duckdb.DuckDBPyConnection:
    global _reader
    if _reader is None:
        _reader = duckdb.connect(
            ":memory:",
            config={"autoinstall_known_extensions": False, "autoload_known_extensions": False},
        )
    return _reader


class ServedDatasets:
    """The query package's Catalog over the catalog file (loom_dagster/datasets/catalog.py)."""

    def __init__(self, catalog_path: Path | str) -> None:
        self.path = str(catalog_path)

    @contextlib.contextmanager
    def _attached(self) -> Iterator[duckdb.DuckDBPyConnection | None]:
        url = catalog_url()
        if url is not None:  # LOOM_CATALOG_URL: the rows are on the shared server
            shared = open_shared(url, Path(self.path).parent)
            try:
                yield shared
            finally:
                shared.close()
            return
        with _reader_lock:
            if not Path(self.path).is_file():
                yield None  # no ingest has written a catalog yet: nothing is served
                return
            con = _database()
            wait = _FIRST_WAIT_S
            for attempt in range(_ATTEMPTS):
                try:
                    con.execute(f"ATTACH $path AS {_ALIAS} (READ_ONLY)", {"path": self.path})
                    break
                except duckdb.ResourceInUseException:
                    # This process has the file open already (a step, a test): DuckDB then
                    # shares that open database with a new connection to the same path.
                    with duckdb.connect(self.path) as shared:
                        yield shared
                    return
                except duckdb.IOException as error:
                    if attempt == _ATTEMPTS - 1:
                        raise QueryError(
                            f"the catalog is busy: {str(error).splitlines()[0][:200]}",
                            code="catalog_busy",
                        ) from None
                    time.sleep(wait)
                    wait = min(wait * 2, 1.0)
            try:
                con.execute(f"USE {_ALIAS}")
                yield con
            finally:
                con.execute("USE memory")
                con.execute(f"DETACH {_ALIAS}")

    def served_dataset(self, id_or_name: str) -> Dataset | None:
        with self._attached() as con:
            if con is None:
                return None
            try:
                return datasets.served_dataset(con, id_or_name)
            except duckdb.CatalogException:  # a catalog from before datasets existed
                return None

    def served_datasets(self) -> list[Dataset]:
        """Every served dataset (`loom serve` resolves names among a caller's own)."""
        with self._attached() as con:
            if con is None:
                return []
            try:
                return datasets.list_served(con)
            except duckdb.CatalogException:
                return []

    def is_served(self, dataset_id: str, snapshot: str) -> bool:
        with self._attached() as con:
            if con is None:
                return False
            try:
                return datasets.is_served(con, dataset_id, snapshot)
            except duckdb.CatalogException:
                return False
