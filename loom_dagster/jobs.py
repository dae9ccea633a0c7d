"""The jobs: `ingest` (every step of a batch of revisions, run by `loom ingest` and by
sensors) and `sync` (a scan of the folders applied: revisions registered, deleted files
retired), which the `loom_folders` sensor asks for, since its own evaluation writes nothing."""

from dagster import (
    AssetSelection,
    OpExecutionContext,
    define_asset_job,
    in_process_executor,
    job,
    op,
)

from loom_dagster import catalog, pipeline
from loom_dagster.assets import RUN_CHECKS, artifact, original, published, report_retired
from loom_dagster.resources.settings import SettingsResource
from loom_dagster.resources.storage import CatalogResource, SearchIndexResource

INGEST_JOB = "ingest"
SYNC_JOB = "sync"

# `published` is the step that makes both chunks and published; of the checks, those each
# partition gets in its run (RUN_CHECKS).
INGEST_SELECTION = AssetSelection.assets(
    original, artifact, published
).without_checks() | AssetSelection.checks(*RUN_CHECKS)

# What a run of the job updates, named in every run the folder sensor asks for: automation's
# `any_deps_updated` ignores an update made by a run whose own selection holds the asset, and a
# run asked for by job name alone records none, so automation ran its partitions a second time.
INGEST_ASSET_KEYS = [*original.keys, *artifact.keys, *published.keys]
INGEST_CHECK_KEYS = list(RUN_CHECKS)

ingest_job = define_asset_job(
    INGEST_JOB,
    selection=INGEST_SELECTION,
    executor_def=in_process_executor,
    # Its partitions (one per source revision) come from the assets it selects.
    description="Every step of a batch of revisions: original, artifact, chunks, published.",
)


# In the catalog's pool: it writes the catalog and the index, as publishing does.
@op(pool="loom_catalog")
def sync_folders(
    context: OpExecutionContext,
    catalog_db: CatalogResource,
    search_index: SearchIndexResource,
    loom: SettingsResource,
) -> None:
    """Scan every registered folder and apply it: new revisions registered, moved files'
    identity recorded, deleted files retired (from the catalog and search)."""
    with catalog_db.connect() as con:
        retired = pipeline.sync_folders(
            con,
            search_index.get(),
            catalog.list_sources(con),
            vectors=search_index.vectors(),
            max_bytes=loom.max_input_bytes,
            guard=loom.retire_guard(),
            say=context.log.warning,
        )
        states = catalog.document_states(con, retired)
    report_retired(context.instance, states)
    context.log.info(f"retired {len(retired)} documents of deleted files")


@job(
    name=SYNC_JOB,
    executor_def=in_process_executor,
    description="Registers what changed in the registered folders and retires deleted files.",
)
def sync_job() -> None:
    sync_folders()
