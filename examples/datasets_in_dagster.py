"""A user's own Dagster assets on a Loom dataset: copy this file to start yours.

The example folder's workbook `runbooks/disk-usage.xlsx` becomes the dataset
`runbooks/disk-usage.xlsx#Disk usage` once `loom ingest examples/docs` published it. Here it is
an upstream asset of `volumes_over_75` (the lineage the UI draws), observed every five minutes:
a new revision of the workbook serves a new snapshot, the observation's data version changes,
`volumes_over_75` turns stale and declarative automation (`my_assets_automation`, running from
the start under a daemon) materializes it again.

Load it beside Loom's own code location (examples/workspace.yaml):

    export LOOM_HOME=$PWD/.loom DAGSTER_HOME=$PWD/.loom/dagster
    .venv/bin/dagster dev -w examples/workspace.yaml

or materialize it once from the command line:

    .venv/bin/dagster asset materialize -f examples/datasets_in_dagster.py --select volumes_over_75

docs/datasets-in-dagster.md is the guide.
"""

# No `from __future__ import annotations`: Dagster reads the `context` annotation itself.

import dagster as dg

from loom_dagster.assets.dataset_sources import loom_dataset
from loom_dagster.resources.datasets import LoomDatasets

DISK_USAGE = "runbooks/disk-usage.xlsx#Disk usage"
THRESHOLD = 75.0  # percent

disk_usage = loom_dataset(DISK_USAGE)


@dg.asset(deps=[disk_usage], automation_condition=dg.AutomationCondition.eager())
def volumes_over_75(context: dg.AssetExecutionContext, loom_datasets: LoomDatasets) -> dg.Output:
    """The volumes more than 75 % used, fullest first, from the workbook's live snapshot."""
    frame = loom_datasets.pandas(DISK_USAGE)
    full = frame[frame["used %"] > THRESHOLD].sort_values("used %", ascending=False)
    context.log.info(f"read snapshot {frame.attrs['loom_snapshot']} ({len(frame)} rows)")
    return dg.Output(
        full[["host", "volume", "used %"]].reset_index(drop=True),
        metadata={
            "dagster/row_count": len(full),
            "hosts": ", ".join(full["host"]),
            "loom snapshot": frame.attrs["loom_snapshot"],
            "loom revision": frame.attrs["loom_revision"],
        },
    )


# Declarative automation for this code location, on from the start: it observes `disk_usage`
# on its cron and materializes `volumes_over_75` when the observation finds a new snapshot.
automation = dg.AutomationConditionSensorDefinition(
    "my_assets_automation",
    target=dg.AssetSelection.assets(disk_usage.key, volumes_over_75),
    default_status=dg.DefaultSensorStatus.RUNNING,
)

defs = dg.Definitions(
    assets=[disk_usage, volumes_over_75],
    sensors=[automation],
    # The home comes from LOOM_HOME when the run starts (an S3 store's credentials from AWS_*);
    # `sources` keeps this code to the example folder's datasets.
    resources={"loom_datasets": LoomDatasets(home=dg.EnvVar("LOOM_HOME"), sources=["docs"])},
)
