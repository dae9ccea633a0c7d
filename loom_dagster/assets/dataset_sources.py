"""A Loom dataset as an upstream asset of a user's own graph: an observable source asset per
dataset whose data version is the snapshot that serves it.

    prices = loom_dataset("prices.xlsx#Prices")

    @dg.asset(deps=[prices], automation_condition=dg.AutomationCondition.eager())
    def totals(loom_datasets: LoomDatasets) -> None:
        frame = loom_datasets.pandas("prices.xlsx#Prices")

An observation (run by the automation condition given, a sensor or the UI's "Observe") records
the live snapshot id as the asset's DataVersion, with `dagster/row_count` and
`dagster/column_schema`. A new revision of the spreadsheet, or an approval that retypes it,
serves another snapshot: the next observation changes the version, Dagster marks every asset
downstream of it stale, and an eager automation condition re-materializes them (Dagster counts
an observation as an update only when its data version changed, so an observation that finds
the same snapshot requests nothing).
"""

from __future__ import annotations

import re

import dagster as dg

from loom_dagster.assets.metadata import schema_columns
from loom_dagster.contract.metadata import metadata_text
from loom_dagster.resources.datasets import LoomDatasets

RESOURCE_KEY = "loom_datasets"
GROUP = "loom_datasets"
# How often a dataset is looked at by default: one catalog read, no snapshot opened.
DEFAULT_OBSERVE_CRON = "*/5 * * * *"


def dataset_key(name: str) -> dg.AssetKey:
    """`loom/dataset/<name>` with each character an asset key may not hold as `_`."""
    return dg.AssetKey(["loom", "dataset", re.sub(r"[^A-Za-z0-9_]", "_", name)])


def loom_dataset(
    name: str,
    *,
    key: dg.AssetKey | str | None = None,
    resource_key: str = RESOURCE_KEY,
    observe_cron: str | None = DEFAULT_OBSERVE_CRON,
    group_name: str = GROUP,
) -> dg.SourceAsset:
    """The observable source asset of the served dataset `name` (its name or id), observed on
    `observe_cron` by declarative automation (None: only when asked)."""
    condition = (
        None
        if observe_cron is None
        else dg.AutomationCondition.cron_tick_passed(observe_cron)
        & ~dg.AutomationCondition.in_progress()
    )

    @dg.observable_source_asset(
        key=dg.AssetKey.from_coercible(key) if key is not None else dataset_key(name),
        description=f"Loom dataset {metadata_text(name, 200)}: its live snapshot",
        group_name=group_name,
        required_resource_keys={resource_key},
        automation_condition=condition,
    )
    def _observe(context: dg.OpExecutionContext) -> dg.ObserveResult:
        datasets: LoomDatasets = getattr(context.resources, resource_key)
        found = datasets.dataset(name)
        return dg.ObserveResult(
            data_version=dg.DataVersion(found.snapshot),
            metadata={
                "dagster/row_count": dg.MetadataValue.int(found.rows_stored),
                "dagster/column_schema": dg.MetadataValue.table_schema(
                    dg.TableSchema(columns=schema_columns(found))
                ),
                "dataset_id": dg.MetadataValue.text(found.dataset_id),
                "name": dg.MetadataValue.text(metadata_text(found.name)),
                "revision": dg.MetadataValue.text(found.revision),
                "snapshot": dg.MetadataValue.text(found.snapshot),
                "state": dg.MetadataValue.text(found.state.value),
                "complete": dg.MetadataValue.bool(found.complete),
                "rows_rejected": dg.MetadataValue.int(found.rows_rejected),
            },
        )

    return _observe
