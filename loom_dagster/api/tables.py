"""The typed datasets the published tables became (list, show, approve) and the queries over
them (a typed plan, or one SELECT)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from loom_dagster.datasets.model import Dataset
from loom_dagster.display import one_line
from loom_dagster.objectstore import ObjectStore
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.settings import LoomSettings

if TYPE_CHECKING:
    from loom_dagster.query.run import Answer, Ceilings


# Datasets --------------------------------------------------------------------------------------


def datasets() -> list[Dataset]:
    """Every served dataset."""
    from loom_dagster.datasets.catalog import list_served

    settings = LoomSettings.from_env()
    settings.prepare()
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        return list_served(con)


def dataset(id_or_name: str) -> Dataset:
    """The served dataset with this id or name (unknown_dataset when none is served)."""
    from loom_dagster.datasets.catalog import DatasetError, served_dataset

    settings = LoomSettings.from_env()
    settings.prepare()
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
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
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        return approve(con, store, id_or_name, types, revision=revision)


# Queries ---------------------------------------------------------------------------------------


def query(plan: str | bytes | Mapping[str, object], *, ceilings: Ceilings | None = None) -> Answer:
    """Answer a typed plan (seed 000 "Queries") over the served datasets, with its receipt."""
    from loom_dagster.query.catalog import ServedDatasets
    from loom_dagster.query.run import StoreSnapshots
    from loom_dagster.query.service import run_query

    settings = LoomSettings.from_env()
    settings.prepare()
    files = StoreSnapshots(ObjectStore(settings.object_store_url))
    return run_query(plan, ServedDatasets(settings.catalog_path), files, ceilings)


def sql(text: str, *, ceilings: Ceilings | None = None) -> Answer:
    """Answer one allowlisted SELECT over dataset names as tables (`loom sql`)."""
    from loom_dagster.query.catalog import ServedDatasets
    from loom_dagster.query.run import StoreSnapshots
    from loom_dagster.query.service import run_sql

    settings = LoomSettings.from_env()
    settings.prepare()
    files = StoreSnapshots(ObjectStore(settings.object_store_url))
    return run_sql(text, ServedDatasets(settings.catalog_path), files, ceilings)
