"""The ingest job: every step of a batch of revisions, run by `loom ingest` and by sensors."""

from dagster import define_asset_job, in_process_executor

from loom_dagster.assets.revisions import artifact, original, published

INGEST_JOB = "ingest"

ingest_job = define_asset_job(
    INGEST_JOB,
    # `published` is the step that makes both chunks and published.
    selection=[original, artifact, published],
    executor_def=in_process_executor,
    # Its partitions (one per source revision) come from the assets it selects.
    description="Every step of a batch of revisions: original, artifact, chunks, published.",
)
