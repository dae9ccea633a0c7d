"""The ingest job: every step of a batch of revisions, run by `loom ingest` and by sensors."""

from dagster import define_asset_job, in_process_executor

from loom_dagster.assets.revisions import artifact, chunks, original, published
from loom_dagster.partitions import revisions

INGEST_JOB = "ingest"

ingest_job = define_asset_job(
    INGEST_JOB,
    selection=[original, artifact, chunks, published],
    partitions_def=revisions,
    executor_def=in_process_executor,
    description="Every step of a batch of revisions: original, artifact, chunks, published.",
)
