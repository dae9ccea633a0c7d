"""`LoomDatasets`: the resource a user's own asset takes to read Loom's served datasets as pandas,
Arrow or DuckDB (a thin shell over query.read, which holds every rule of a read).

Its settings are plain, non-secret config given as values, like every Loom resource's (the home,
and the object store's URL when it is not the home's folder; an S3 store's credentials stay in the
standard AWS variables, never in config). Set them with `dg.EnvVar` to read them at launch:

    defs = dg.Definitions(
        assets=[...],
        resources={"loom_datasets": LoomDatasets(home=dg.EnvVar("LOOM_HOME"), sources=["finance"])},
    )
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import dagster as dg
import duckdb
import pandas as pd
import pyarrow as pa

from loom_dagster.datasets.model import Dataset
from loom_dagster.objectstore import ObjectStore
from loom_dagster.query.catalog import ServedDatasets
from loom_dagster.query.read import DatasetReader, Decimals, OpenSnapshot
from loom_dagster.query.snapshots import StoreSnapshots
from loom_dagster.settings import LoomSettings


class LoomDatasets(dg.ConfigurableResource):
    """Loom's served datasets of one home, read-only, within a namespace of sources."""

    # The Loom home, given as a value (`dg.EnvVar("LOOM_HOME")` in a Definitions): a resource
    # reads no environment of its own, so the Resources tab shows where its data comes from.
    home: str
    object_store_url: str = ""  # LOOM_OBJECT_STORE_URL; "" takes the home's store folder
    # The namespace: the sources whose datasets this code may read (None: every source).
    sources: list[str] | None = None

    def settings(self) -> LoomSettings:
        env = {"LOOM_HOME": self.home}
        if self.object_store_url:
            env["LOOM_OBJECT_STORE_URL"] = self.object_store_url
        return LoomSettings.from_env(env)

    def reader(self) -> DatasetReader:
        settings = self.settings()
        files = StoreSnapshots(ObjectStore(settings.object_store_url))
        return DatasetReader(ServedDatasets(settings.catalog_path), files, self.sources)

    def dataset(self, name: str) -> Dataset:
        """The served dataset (by name or id) as the catalog holds it: schema, state, snapshot."""
        return self.reader().dataset(name)

    def pandas(
        self, name: str, *, allow_incomplete: bool = False, decimals: Decimals = "decimal"
    ) -> pd.DataFrame:
        """The live snapshot as a DataFrame with the typed schema's dtypes; `attrs` carry the
        facts (snapshot, revision, complete, ...)."""
        return self.reader().pandas(name, allow_incomplete=allow_incomplete, decimals=decimals)

    def arrow(self, name: str, *, allow_incomplete: bool = False) -> pa.Table:
        return self.reader().arrow(name, allow_incomplete=allow_incomplete)

    def duckdb(
        self,
        name: str,
        connection: duckdb.DuckDBPyConnection | None = None,
        *,
        allow_incomplete: bool = False,
    ) -> duckdb.DuckDBPyRelation:
        return self.reader().relation(name, connection, allow_incomplete=allow_incomplete)

    @contextlib.contextmanager
    def open(self, name: str, *, allow_incomplete: bool = False) -> Iterator[OpenSnapshot]:
        """The live snapshot held open: `.batches()` / `.pandas_batches()` stream a dataset
        larger than memory, all of it from the snapshot opened."""
        with self.reader().open(name, allow_incomplete=allow_incomplete) as snapshot:
            yield snapshot
