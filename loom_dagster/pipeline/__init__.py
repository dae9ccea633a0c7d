"""The steps one source revision goes through, as plain functions.

original -> artifact -> chunks -> published. The Dagster assets call these for each partition
of a batch; the benchmark's plain loop calls the same functions with no Dagster around them.
Each step writes its result to the object store under `revisions/<key>/`, so the next step
(perhaps in another process) reads it from there.

The package is the domain's top: it never imports `dagster`, nor the Dagster shell or the entry
points above it. `records` holds what the steps leave for each other, `steps` the original,
artifact and chunks steps, `publishing` the switch that makes revisions live (and retires
them), `scan` a folder's scan read and applied, `parsers` which parser made each artifact, and
`approve` a dataset's schema approved.
"""

from loom_dagster.pipeline.publishing import (
    LARGE_ARTIFACT_BYTES,
    drop_stale_datasets,
    publication_order,
    publish,
    reconcile,
    retire,
    sync_vectors,
)
from loom_dagster.pipeline.records import (
    CHUNKS,
    EXTRACTION,
    Extraction,
    chunks_from_parquet,
    chunks_to_parquet,
    read_chunks,
    read_extraction,
)
from loom_dagster.pipeline.scan import (
    SETTLE_S,
    held_line,
    plan_source,
    register_for_run,
    sync_folders,
    sync_source,
)
from loom_dagster.pipeline.steps import (
    exhausted,
    extract,
    extract_batch,
    make_chunks,
    refuse,
    store_original,
)

__all__ = [
    "CHUNKS",
    "LARGE_ARTIFACT_BYTES",
    "EXTRACTION",
    "SETTLE_S",
    "Extraction",
    "chunks_from_parquet",
    "chunks_to_parquet",
    "drop_stale_datasets",
    "exhausted",
    "extract",
    "extract_batch",
    "held_line",
    "make_chunks",
    "plan_source",
    "publication_order",
    "publish",
    "read_chunks",
    "read_extraction",
    "reconcile",
    "refuse",
    "register_for_run",
    "retire",
    "store_original",
    "sync_folders",
    "sync_source",
    "sync_vectors",
]
