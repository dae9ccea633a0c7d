"""What the tests of a user's asset on a Loom dataset ask Dagster: observe the dataset's source
asset as the UI's "Observe" does, and the staleness the UI shows for an asset (the instance's
stale-status resolver over the definitions' asset graph)."""

from __future__ import annotations

import dagster as dg
from dagster._core.definitions.data_version import CachingStaleStatusResolver, StaleStatus
from dagster._core.loader import LoadingContextForTest


def observe(defs: dg.Definitions, instance: dg.DagsterInstance, key: dg.AssetKey) -> None:
    job = defs.resolve_implicit_global_asset_job_def()
    job.get_subset(asset_selection={key}).execute_in_process(instance=instance)


def stale_status(
    instance: dg.DagsterInstance, defs: dg.Definitions, key: dg.AssetKey
) -> StaleStatus:
    resolver = CachingStaleStatusResolver(
        instance, defs.resolve_asset_graph(), LoadingContextForTest(instance)
    )
    return resolver.get_status(key)


__all__ = ["StaleStatus", "observe", "stale_status"]
