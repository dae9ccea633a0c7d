"""A user's asset on a Loom dataset, run by Dagster for real over a real catalog file and store
folder (no ingest: the catalog rows are written as a publish writes them): the resource hands
over the typed frame, the asset graph has the dataset -> asset edge, the observation's data
version is the snapshot, a new snapshot makes the asset stale (the instance's staleness
resolver), and the automation condition requests it again then, and not before."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import dagster as dg
import pytest

from loom_dagster.assets.dataset_sources import dataset_key, loom_dataset
from loom_dagster.datasets.model import ColumnType, DatasetColumn, DatasetSchema
from loom_dagster.objectstore import ObjectStore
from loom_dagster.resources.datasets import LoomDatasets
from tests.support.dataset_assets import StaleStatus, observe, stale_status
from tests.support.query_datasets import parquet_bytes, serve_in_catalog

SCHEMA = DatasetSchema(
    (DatasetColumn("item", ColumnType.TEXT), DatasetColumn("price", ColumnType.DECIMAL))
)
NAME = "prices.csv#t0"


def publish(home: Path, sha: str, snapshot: str, prices: list[str]) -> None:
    serve_in_catalog(
        home / "catalog.duckdb",
        ObjectStore((home / "store").as_uri()),
        parquet_bytes(SCHEMA, [(f"i{n}", Decimal(p)) for n, p in enumerate(prices)]),
        SCHEMA,
        source="docs",
        path="prices.csv",
        sha=sha * 64,
        snapshot=snapshot,
        rows_stored=len(prices),
    )


def definitions(home: Path, seen: list[object]) -> dg.Definitions:
    prices = loom_dataset(NAME, observe_cron=None)

    @dg.asset(deps=[prices], automation_condition=dg.AutomationCondition.eager())
    def total(loom_datasets: LoomDatasets) -> dg.MaterializeResult:
        frame = loom_datasets.pandas(NAME)
        seen.append(frame)
        return dg.MaterializeResult(
            metadata={"total": str(frame["price"].sum()), "snapshot": frame.attrs["loom_snapshot"]}
        )

    return dg.Definitions(
        assets=[prices, total],
        resources={"loom_datasets": LoomDatasets(home=str(home), sources=["docs"])},
    )


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    publish(home, "1", "s1", ["1.50", "2.25"])
    return home


def test_a_user_asset_reads_the_dataset_and_goes_stale_on_a_new_snapshot(home: Path) -> None:
    seen: list[object] = []
    defs = definitions(home, seen)
    graph = defs.resolve_asset_graph()
    assert graph.get(dg.AssetKey("total")).parent_keys == {dataset_key(NAME)}

    with dg.instance_for_test() as instance:
        observe(defs, instance, dataset_key(NAME))
        [record] = instance.fetch_observations(dataset_key(NAME), limit=1).records
        observation = record.asset_observation
        assert observation is not None
        assert observation.tags["dagster/data_version"] == "s1"
        assert observation.metadata["dagster/row_count"].value == 2
        assert observation.metadata["dagster/column_schema"].value == dg.TableSchema(
            columns=[dg.TableColumn("item", "text"), dg.TableColumn("price", "decimal")]
        )

        result = dg.materialize(
            [defs.get_assets_def("total")],
            instance=instance,
            resources={"loom_datasets": LoomDatasets(home=str(home), sources=["docs"])},
        )
        assert result.success
        [frame] = seen
        assert str(frame.dtypes["price"]) == "decimal128(38, 9)[pyarrow]"  # type: ignore[attr-defined]
        metadata = result.asset_materializations_for_node("total")[0].metadata
        assert (metadata["total"].value, metadata["snapshot"].value) == ("3.750000000", "s1")
        assert stale_status(instance, defs, dg.AssetKey("total")) is StaleStatus.FRESH

        first = dg.evaluate_automation_conditions(defs=defs, instance=instance)
        again = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=first.cursor)
        observe(defs, instance, dataset_key(NAME))  # the same snapshot: nothing to do
        same = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=again.cursor)
        assert same.get_num_requested(dg.AssetKey("total")) == 0

        publish(home, "2", "s2", ["10"])  # the spreadsheet's next revision
        observe(defs, instance, dataset_key(NAME))
        assert stale_status(instance, defs, dg.AssetKey("total")) is StaleStatus.STALE
        changed = dg.evaluate_automation_conditions(
            defs=defs, instance=instance, cursor=same.cursor
        )
        assert changed.get_num_requested(dg.AssetKey("total")) == 1
