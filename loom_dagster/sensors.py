"""Sensors: registered folders in, new revision partitions out; automation turns them into runs.

`loom_folders` stats every registered folder, hashes only what changed, registers new
revisions and retires deleted files; it asks the instance once which keys exist and adds only
new ones. `loom_ingest_automation` (declarative automation) then materializes the new
partitions in batches, a run per MAX_REVISIONS_PER_RUN revisions.
"""

import json

from dagster import (
    AddDynamicPartitionsRequest,
    AssetSelection,
    AutomationConditionSensorDefinition,
    DefaultSensorStatus,
    DeleteDynamicPartitionsRequest,
    RunRequest,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from loom_dagster import catalog, lifecycle, pipeline
from loom_dagster.assets.revisions import GROUP
from loom_dagster.jobs import INGEST_JOB
from loom_dagster.partitions import PARTITIONS_NAME, revisions
from loom_dagster.resources.storage import CatalogResource, SearchIndexResource

# A tick has 60 s; hashing is the slow part, so a tick hashes at most this many files and
# keeps its place in the cursor.
MAX_HASHED_PER_TICK = 2000
# Pruning deletes partitions one by one; a tick leaves the rest of a backlog to the next.
MAX_PRUNED_PER_TICK = 1000
# A file modified this recently may still be being written.
SETTLE_S = 2.0


@sensor(
    name="loom_folders",
    job_name=INGEST_JOB,
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description="Registers new and changed files of every registered folder as revision partitions.",
)
def loom_folders(
    context: SensorEvaluationContext, catalog_db: CatalogResource, search_index: SearchIndexResource
) -> SensorResult | SkipReason:
    resume: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    index = search_index.get()
    new_keys: list[str] = []
    rerun_keys: list[str] = []
    waiting: list[str] = []
    with catalog_db.connect() as con:
        sources = catalog.list_sources(con)
        for source in sources:
            result = pipeline.sync_source(
                con,
                index,
                source,
                settle_s=SETTLE_S,
                max_hashed=MAX_HASHED_PER_TICK,
                resume_after=resume.get(source.name),
            )
            new_keys.extend(r.key for r in result.new)
            rerun_keys.extend(result.rerun)
            # Registered by an earlier evaluation whose result was never applied (a preview,
            # a tick that failed after registering): recomputed here, so none is stranded.
            waiting.extend(r.key for r in catalog.pending_revisions(con, source.name))
            if result.resume_after:
                resume[source.name] = result.resume_after
            else:
                resume.pop(source.name, None)
            if result.deleted:
                context.log.info(f"{source.name}: retired {len(result.deleted)} deleted files")
        retention = lifecycle.plan_retention(
            catalog.revision_states(con), lifecycle.Retention.from_env()
        )
    if not sources:
        return SkipReason(
            "no folder is registered yet: run `loom ingest FOLDER` or `loom sources add`"
        )
    existing = set(context.instance.get_dynamic_partitions(PARTITIONS_NAME))
    to_add = sorted((set(new_keys) | set(waiting)) - existing)
    # A key that already has a partition (a file deleted and written again with the same
    # bytes), or a key registered before that comes back (an edit undone, its partition pruned
    # and added again here): its partition may hold a materialization, so automation sees
    # nothing missing and it is asked for by name. Dagster adds the partitions first.
    again = sorted((set(new_keys) & existing) | set(rerun_keys))
    # Superseded and retired revisions beyond the retention leave the partition set (their
    # records stay in the catalog); a new or pending revision is always kept, and so is a key
    # this tick's scan just saw (a file back to older bytes), rather than add and delete it.
    prune = sorted(existing.intersection(retention.pruned) - set(new_keys))[:MAX_PRUNED_PER_TICK]
    requests: list[AddDynamicPartitionsRequest | DeleteDynamicPartitionsRequest] = (
        [revisions.build_add_request(to_add)] if to_add else []
    )
    if prune:
        requests.append(revisions.build_delete_request(prune))
    # The tick's own line in its log: the UI's "0 runs requested" says nothing of partitions.
    context.log.info(
        f"added {len(to_add)} partitions, deleted {len(prune)}, requested {len(again)} runs"
    )
    return SensorResult(
        run_requests=[RunRequest(partition_key=key, job_name=INGEST_JOB) for key in again],
        dynamic_partitions_requests=requests,
        cursor=json.dumps(resume, sort_keys=True),
    )


loom_ingest_automation = AutomationConditionSensorDefinition(
    "loom_ingest_automation",
    target=AssetSelection.groups(GROUP),
    default_status=DefaultSensorStatus.RUNNING,
    description="Materializes new revision partitions in batches (declarative automation).",
)
