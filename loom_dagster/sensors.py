"""Sensors: registered folders in, new revision partitions out; automation turns them into runs.

`loom_folders` stats every registered folder, hashes only what changed and compares it with
the catalog; it asks the instance once which keys exist and adds only new ones. Its evaluation
writes nothing (a `dagster sensor preview`, or a tick that fails or whose result is lost,
changes nothing, and the next tick finds the same files again): the revisions are registered
by the first step of the run that takes their partitions (`pipeline.register_for_run`), and
deleted files are retired by a run of the `sync` job it requests. `loom_ingest_automation`
(declarative automation) then materializes the new partitions in batches, a run per
MAX_REVISIONS_PER_RUN revisions.
"""

import json
from collections.abc import Sequence

from dagster import (
    AddDynamicPartitionsRequest,
    AssetSelection,
    AutomationConditionSensorDefinition,
    DagsterEventType,
    DagsterInstance,
    DagsterRunStatus,
    DefaultSensorStatus,
    DeleteDynamicPartitionsRequest,
    RunRequest,
    RunsFilter,
    SensorEvaluationContext,
    SensorResult,
    SkipReason,
    sensor,
)

from loom_dagster import catalog, lifecycle, pipeline
from loom_dagster.assets import GROUP, ORIGINAL, RUN_CHECKS
from loom_dagster.display import printable
from loom_dagster.errors import SourceError
from loom_dagster.jobs import INGEST_JOB, SYNC_JOB, ingest_job, sync_job
from loom_dagster.partitions import PARTITIONS_NAME, revisions
from loom_dagster.resources.settings import SettingsResource
from loom_dagster.resources.storage import CatalogResource

# A tick has 60 s; hashing is the slow part, so a tick hashes at most this many files and
# keeps its place in the cursor.
MAX_HASHED_PER_TICK = 2000
# Pruning deletes partitions one by one; a tick leaves the rest of a backlog to the next.
MAX_PRUNED_PER_TICK = 1000
SETTLE_S = pipeline.SETTLE_S
# A run requested by an earlier tick and not yet ended: no second one is asked for.
IN_FLIGHT = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
]


def in_flight(instance: DagsterInstance, job: str, partition: str | None = None) -> bool:
    tags = {"dagster/partition": partition} if partition else None
    return bool(
        instance.get_run_ids(RunsFilter(job_name=job, statuses=IN_FLIGHT, tags=tags), limit=1)
    )


@sensor(
    name="loom_folders",
    jobs=[ingest_job, sync_job],
    minimum_interval_seconds=30,
    default_status=DefaultSensorStatus.RUNNING,
    description="Finds new, changed and deleted files of every registered folder: adds a "
    "revision partition for each new one, and asks for a sync run to retire deleted ones.",
)
def loom_folders(
    context: SensorEvaluationContext, catalog_db: CatalogResource, loom: SettingsResource
) -> SensorResult | SkipReason:
    resume: dict[str, str] = json.loads(context.cursor) if context.cursor else {}
    existing = set(context.instance.get_dynamic_partitions(PARTITIONS_NAME))
    keys: list[str] = []
    again: list[str] = []
    waiting: list[str] = []
    sync: list[str] = []
    with catalog_db.connect() as con:  # read only: nothing here writes the catalog
        sources = catalog.list_sources(con)
        for source in sources:
            try:
                plan = pipeline.plan_source(
                    con,
                    source,
                    settle_s=SETTLE_S,
                    max_hashed=MAX_HASHED_PER_TICK,
                    resume_after=resume.get(source.name),
                    max_bytes=loom.max_input_bytes,
                    guard=loom.retire_guard(),
                )
            except SourceError as error:
                # A folder gone or unreadable: an error for that folder, its documents kept.
                if error.code not in ("missing_folder", "unreadable_folder"):
                    raise
                context.log.warning(f"{source.name}: {error.code}: {error.message}")
                continue
            for skipped in plan.scan.skipped:
                context.log.info(
                    f"{source.name}: skipped {printable(skipped.path)}: "
                    f"{skipped.code}: {skipped.message}"
                )
            if plan.scan.held:
                context.log.warning(pipeline.held_line(source.name, plan.scan))
            keys.extend(plan.keys)
            again.extend(plan.again)
            # Registered by a run (or `loom ingest`) and never given a partition: a run
            # registers every new file of a folder it scans, not only its own.
            waiting.extend(r.key for r in catalog.pending_revisions(con, source.name))
            if plan.scan.resume_after:
                resume[source.name] = plan.scan.resume_after
            else:
                resume.pop(source.name, None)
            if plan.sync:
                sync.append(source.name)
            if plan.scan.deleted:
                context.log.info(f"{source.name}: {len(plan.scan.deleted)} deleted files to retire")
        retention = lifecycle.plan_retention(catalog.revision_states(con), loom.retention())
        unregistered = existing - catalog.registered_keys(con, existing)
    if not sources:
        return SkipReason(
            "no folder is registered yet: run `loom ingest FOLDER` or `loom sources add`"
        )
    # A partition a run took without finding its file at those bytes (it changed before the
    # run): if the file is back at them, it is asked for by name (its partition is
    # materialized); once every folder was scanned to its end and none holds them, it goes.
    ran = orphans(context.instance, unregistered)
    again.extend(ran.intersection(keys))
    gone = ran - set(keys) if not resume else set()
    to_add = sorted((set(keys) | set(waiting)) - existing)
    # Superseded and retired revisions beyond the retention leave the partition set (their
    # records stay in the catalog); a new or pending revision is always kept, and so is a key
    # this tick's scan just saw (a file back to older bytes), rather than add and delete it.
    prune = sorted((existing.intersection(retention.pruned) | gone) - set(keys))[
        :MAX_PRUNED_PER_TICK
    ]
    requests: list[AddDynamicPartitionsRequest | DeleteDynamicPartitionsRequest] = (
        [revisions.build_add_request(to_add)] if to_add else []
    )
    if prune:
        requests.append(revisions.build_delete_request(prune))
    runs = run_requests(context.instance, sorted(set(again)), sync)
    # The tick's own line in its log: the UI's "0 runs requested" says nothing of partitions.
    context.log.info(
        f"added {len(to_add)} partitions, deleted {len(prune)}, requested {len(runs)} runs"
        + (f" (sync of {', '.join(sync)})" if any(r.job_name == SYNC_JOB for r in runs) else "")
    )
    return SensorResult(
        run_requests=runs,
        dynamic_partitions_requests=requests,
        cursor=json.dumps(resume, sort_keys=True),
    )


def orphans(instance: DagsterInstance, unregistered: set[str]) -> set[str]:
    """Which partitions with no revision record a run has taken already (`original` is
    materialized): their run found the file changed. The others await their first run."""
    if not unregistered:
        return set()
    storage = instance.event_log_storage.get_latest_storage_id_by_partition(
        ORIGINAL, DagsterEventType.ASSET_MATERIALIZATION, unregistered
    )
    return set(storage)


def run_requests(
    instance: DagsterInstance, again: Sequence[str], sync: Sequence[str]
) -> list[RunRequest]:
    """A run by name for each key that must run again (its partition may hold a
    materialization, so automation sees nothing missing), and one sync run when a folder has
    deleted files to retire; none that an earlier tick's run is still doing."""
    runs = [
        RunRequest(partition_key=key, job_name=INGEST_JOB)
        for key in again
        if not in_flight(instance, INGEST_JOB, key)
    ]
    if sync and not in_flight(instance, SYNC_JOB):
        runs.append(RunRequest(job_name=SYNC_JOB, tags={"loom/sources": ",".join(sync)[:200]}))
    return runs


loom_ingest_automation = AutomationConditionSensorDefinition(
    "loom_ingest_automation",
    target=AssetSelection.groups(GROUP).without_checks() | AssetSelection.checks(*RUN_CHECKS),
    default_status=DefaultSensorStatus.RUNNING,
    description="Materializes new revision partitions in batches (declarative automation).",
)
