"""The asset graph of one source revision: original -> artifact -> chunks -> published.

Each step runs for a batch of revisions (a partition key range) and loops over them; the work
for one revision is a function in `loom_dagster.pipeline`. A refused revision is an outcome
recorded for it, never a failure of its batch.

What the UI shows is per revision, never the batch's sum: no step lets Dagster derive its
materializations from an output (one event per partition of the range, all alike); each logs an
`AssetMaterialization` per partition with that partition's metadata and its data and code
versions (`versions`), so Dagster's staleness is right per partition. `original` and `artifact`
make one for every partition of the run, then log the `extracted` and `complete` checks of each
against it. `chunks`, `published` and `datasets` are one step that makes one for exactly the
partitions it chunked, made live or typed, so a refused revision has none, and records an
`AssetObservation` on `published` for a refused or superseded one, saying which.

One module per step, each with its checks: `original`, `artifact` (with `extracted`, `complete`
and `current_parser`), `published` (the step that makes `chunks`, `published` and `datasets`,
with `typed`), and `live` (the `live` check, in a run and outside one). `specs` holds the
graph's keys and check names, `metadata` what each partition carries, `versions` its data and
code versions, `runtime` what the steps share when they run.
"""

from loom_dagster.assets.artifact import artifact, artifact_asset
from loom_dagster.assets.live import report_retired
from loom_dagster.assets.original import original
from loom_dagster.assets.published import published
from loom_dagster.assets.runtime import retried_only_when_retryable
from loom_dagster.assets.specs import EXTRACTED_CHECK, GROUP, ORIGINAL, PACKAGE_VERSION, RUN_CHECKS

__all__ = [
    "EXTRACTED_CHECK",
    "GROUP",
    "ORIGINAL",
    "PACKAGE_VERSION",
    "RUN_CHECKS",
    "artifact",
    "artifact_asset",
    "original",
    "published",
    "report_retired",
    "retried_only_when_retryable",
]
