"""The typed datasets the published tables became (list, show, approve), the queries over
them (a typed plan, or one SELECT), and a dataset read whole (pandas, Arrow) or exported."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from loom_dagster import catalog
from loom_dagster.datasets.model import Dataset
from loom_dagster.display import one_line
from loom_dagster.objectstore import ObjectStore
from loom_dagster.settings import LoomSettings

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa

    from loom_dagster.query.export import Exported, Format
    from loom_dagster.query.read import DatasetReader, Decimals
    from loom_dagster.query.run import Answer, Ceilings


# Datasets --------------------------------------------------------------------------------------


def datasets() -> list[Dataset]:
    """Every served dataset."""
    from loom_dagster.datasets.catalog import list_served

    settings = LoomSettings.from_env()
    settings.prepare()
    with catalog.connect(settings.catalog_path) as con:
        return list_served(con)


def dataset(id_or_name: str) -> Dataset:
    """The served dataset with this id or name (unknown_dataset when none is served)."""
    from loom_dagster.datasets.catalog import DatasetError, served_dataset

    settings = LoomSettings.from_env()
    settings.prepare()
    with catalog.connect(settings.catalog_path) as con:
        found = served_dataset(con, id_or_name)
    if found is None:
        raise DatasetError(
            f"no served dataset has the id or name {one_line(id_or_name, 200)!r}",
            code="unknown_dataset",
        )
    return found


def approve_dataset(
    id_or_name: str, types: Mapping[str, str], *, revision: str | None = None
) -> Dataset:
    """Approve a served dataset, retyping the columns `types` names (pipeline.approve)."""
    from loom_dagster.pipeline.approve import approve

    settings = LoomSettings.from_env()
    settings.prepare()
    store = ObjectStore(settings.object_store_url)
    with catalog.connect(settings.catalog_path) as con:
        return approve(con, store, id_or_name, types, revision=revision)


# Queries ---------------------------------------------------------------------------------------


def query(plan: str | bytes | Mapping[str, object], *, ceilings: Ceilings | None = None) -> Answer:
    """Answer a typed plan (seed 000 "Queries") over the served datasets, with its receipt."""
    from loom_dagster.query.catalog import ServedDatasets
    from loom_dagster.query.service import run_query
    from loom_dagster.query.snapshots import StoreSnapshots

    settings = LoomSettings.from_env()
    settings.prepare()
    files = StoreSnapshots(ObjectStore(settings.object_store_url))
    return run_query(plan, ServedDatasets(settings.catalog_path), files, ceilings)


def sql(text: str, *, ceilings: Ceilings | None = None) -> Answer:
    """Answer one allowlisted SELECT over dataset names as tables (`loom sql`)."""
    from loom_dagster.query.catalog import ServedDatasets
    from loom_dagster.query.service import run_sql
    from loom_dagster.query.snapshots import StoreSnapshots

    settings = LoomSettings.from_env()
    settings.prepare()
    files = StoreSnapshots(ObjectStore(settings.object_store_url))
    return run_sql(text, ServedDatasets(settings.catalog_path), files, ceilings)


# Reading and exporting a dataset ---------------------------------------------------------------


def _reader(sources: Iterable[str] | None) -> DatasetReader:
    from loom_dagster.query.catalog import ServedDatasets
    from loom_dagster.query.read import DatasetReader
    from loom_dagster.query.snapshots import StoreSnapshots

    settings = LoomSettings.from_env()
    files = StoreSnapshots(ObjectStore(settings.object_store_url))
    return DatasetReader(ServedDatasets(settings.catalog_path), files, sources)


def read(
    id_or_name: str,
    *,
    allow_incomplete: bool = False,
    decimals: Decimals = "decimal",
    sources: Iterable[str] | None = None,
) -> pd.DataFrame:
    """The served dataset's live snapshot as a pandas DataFrame with its typed schema's dtypes
    (query.read), for a notebook: `from loom_dagster import api; api.read("prices.csv#prices.csv")`.
    `sources` limits the names resolved to those sources' datasets."""
    return _reader(sources).pandas(id_or_name, allow_incomplete=allow_incomplete, decimals=decimals)


def read_arrow(
    id_or_name: str, *, allow_incomplete: bool = False, sources: Iterable[str] | None = None
) -> pa.Table:
    """The served dataset's live snapshot as an Arrow table, its types as stored."""
    return _reader(sources).arrow(id_or_name, allow_incomplete=allow_incomplete)


def export_dataset(
    id_or_name: str,
    target: str,
    fmt: Format = "parquet",
    *,
    allow_incomplete: bool = False,
    sources: Iterable[str] | None = None,
) -> Exported:
    """Write the served dataset's live snapshot to a path or object-store URL (`loom datasets
    export`)."""
    from loom_dagster.query.export import export_dataset as export

    return export(_reader(sources), id_or_name, target, fmt, allow_incomplete=allow_incomplete)
