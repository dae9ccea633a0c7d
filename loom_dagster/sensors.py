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
import time
from collections.abc import Sequence
from datetime import UTC, datetime

from dagster import (
    AddDynamicPartitionsRequest,
    AssetCheckEvaluation,
    AssetCheckKey,
    AssetCheckResult,
    AssetCheckSeverity,
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
    asset_check,
    sensor,
)

from loom_dagster import catalog, lifecycle, pipeline
from loom_dagster.assets import GROUP, ORIGINAL, RUN_CHECKS
from loom_dagster.contract.metadata import metadata_text
from loom_dagster.display import printable
from loom_dagster.errors import SourceError
from loom_dagster.jobs import INGEST_JOB, SYNC_JOB, ingest_job, sync_job
from loom_dagster.partitions import (
    MAX_REVISIONS_PER_RUN,
    PARTITIONS_NAME,
    RANGE_END_TAG,
    RANGE_START_TAG,
    contiguous_batches,
    held_partitions,
    keys_of_runs,
    revisions,
)
from loom_dagster.resources.settings import SettingsResource
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.sources import key_document_digest
from loom_dagster.waiting import (
    WAIT_BOUND_S,
    Waiting,
    duration,
    scan_waiting,
    waiting_in,
    waiting_paths,
)

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
# A run being canceled still holds its partitions; an ended one does not.
BUSY = [*IN_FLIGHT, DagsterRunStatus.CANCELING]
ENDED = [DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED]
# A revision whose run ended (failed, canceled, or ended without finishing it: an extractor
# that stayed down) is asked for again only this long after: a failing key is no hot loop.
RETRY_AFTER_S = 300.0
# Runs asked for by one tick (MAX_REVISIONS_PER_RUN revisions each); the rest waits a tick,
# so a first load of many thousand files does not flood the run queue at once.
MAX_RUNS_PER_TICK = 10
# Runs read to learn which keys are taken; more in flight than this is a queue to wait for.
MAX_RUNS_SEEN = 1000


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
    existing_order = context.instance.get_dynamic_partitions(PARTITIONS_NAME)
    existing = set(existing_order)
    keys: list[str] = []
    again: list[str] = []
    waiting: list[str] = []
    sync: list[str] = []
    late: list[Waiting] = []
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
            new = [r.path for r in plan.scan.new if r.key not in plan.again]
            waits = waiting_in(con, source, waiting_paths(con, source, new))
            if waits.late:
                late.append(waits)
        retention = lifecycle.plan_retention(catalog.revision_states(con), loom.retention())
        unregistered = existing - catalog.registered_keys(con, existing)
        # A key no file of any registered folder ever had (made up in the UI's "Add a
        # partition"): its runs fail at once, so it must not be asked for again and again.
        digests = {key: key_document_digest(key) for key in unregistered}
        known = catalog.known_document_digests(con, {d for d in digests.values() if d})
        made_up = {key for key, digest in digests.items() if digest not in known}
    if not sources:
        return SkipReason(
            "no folder is registered yet: run `loom ingest FOLDER` or `loom sources add`"
        )
    # A partition a run took without finding its file at those bytes (it changed before the
    # run): if the file is back at them, it is asked for by name (its partition is
    # materialized); once every folder was scanned to its end and none holds them, it goes.
    ran = orphans(context.instance, unregistered)
    again.extend(ran.intersection(keys))
    gone = (ran | made_up) - set(keys) if not resume else set()
    to_add = sorted((set(keys) | set(waiting)) - existing)
    # Superseded and retired revisions beyond the retention leave the partition set (their
    # records stay in the catalog); a new or pending revision is always kept, and so is a key
    # this tick's scan just saw (a file back to older bytes), rather than add and delete it,
    # and a key a run not ended takes (deleted under it, the run fails): a later tick's.
    held = held_partitions(context.instance, existing_order)
    prune = sorted((existing.intersection(retention.pruned) | gone) - set(keys) - held)[
        :MAX_PRUNED_PER_TICK
    ]
    requests: list[AddDynamicPartitionsRequest | DeleteDynamicPartitionsRequest] = (
        [revisions.build_add_request(to_add)] if to_add else []
    )
    if prune:
        requests.append(revisions.build_delete_request(prune))
    # Partitions as they are once this tick's requests are applied (adds and deletes first).
    order = [key for key in existing_order if key not in set(prune)] + to_add
    registered_waiting = existing.intersection(waiting) - set(prune)
    never_run = existing - context.instance.get_materialized_partitions(ORIGINAL) - set(prune)
    runs = run_requests(
        context.instance,
        order,
        fresh=to_add,
        again=sorted(set(again)),
        idle=sorted(never_run | registered_waiting),
        sync=sync,
    )
    # The tick's own line in its log: the UI's "0 runs requested" says nothing of partitions.
    context.log.info(
        f"added {len(to_add)} partitions, deleted {len(prune)}, requested {len(runs)} runs"
        + (f" (sync of {', '.join(sync)})" if any(r.job_name == SYNC_JOB for r in runs) else "")
    )
    for waits in late:
        context.log.warning(waits.alarm())
    return SensorResult(
        run_requests=runs,
        dynamic_partitions_requests=requests,
        cursor=json.dumps(resume, sort_keys=True),
        asset_events=waiting_events(context.instance, late),
    )


# The `waiting` check: red while a revision has waited past WAIT_BOUND_S -------------------

WAITING_CHECK = AssetCheckKey(ORIGINAL, "waiting")


def waiting_evaluation(late: Sequence[Waiting]) -> AssetCheckEvaluation:
    return AssetCheckEvaluation(
        asset_key=ORIGINAL,
        check_name=WAITING_CHECK.name,
        passed=not late,
        severity=AssetCheckSeverity.ERROR,
        description=metadata_text(
            "; ".join(w.alarm() for w in late)
            if late
            else f"no revision has waited more than {duration(WAIT_BOUND_S)}"
        ),
        # What the check is about, without the durations that grow at every tick.
        metadata={"late": "; ".join(f"{w.source}:{w.oldest_path}" for w in late)},
    )


def waiting_events(
    instance: DagsterInstance, late: Sequence[Waiting]
) -> list[AssetCheckEvaluation]:
    """The check's evaluation when it changes (red, red for another file, green again), none
    otherwise: a tick every 30 s would otherwise log an event each."""
    evaluation = waiting_evaluation(late)
    history = instance.event_log_storage.get_asset_check_execution_history(WAITING_CHECK, limit=1)
    last = history[0].event if history else None
    before = last.dagster_event if last is not None else None
    data = before.event_specific_data if before is not None else None
    if isinstance(data, AssetCheckEvaluation):
        if data.passed == evaluation.passed and data.metadata.get("late") == (
            evaluation.metadata.get("late")
        ):
            return []
    elif evaluation.passed:
        return []  # never red: nothing to say
    return [evaluation]


@asset_check(
    asset=ORIGINAL,
    name=WAITING_CHECK.name,
    description="No revision of a watched folder has waited for a run more than "
    f"{duration(WAIT_BOUND_S)} (evaluated by the loom_folders sensor when it "
    "changes; red names the file). See the README's 'Watched folders'.",
)
def waiting_check(catalog_db: CatalogResource) -> AssetCheckResult:
    with catalog_db.connect() as con:
        found = [scan_waiting(con, source) for source in catalog.list_sources(con)]
    evaluation = waiting_evaluation([w for w in found if w.late])
    return AssetCheckResult(
        passed=evaluation.passed,
        severity=evaluation.severity,
        description=evaluation.description,
        metadata=evaluation.metadata,
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
    instance: DagsterInstance,
    order: Sequence[str],
    *,
    fresh: Sequence[str] = (),
    again: Sequence[str] = (),
    idle: Sequence[str] = (),
    sync: Sequence[str] = (),
    now: float | None = None,
) -> list[RunRequest]:
    """The runs this tick asks for: the ingest job over `fresh` keys (partitions this tick
    adds), `again` keys (registered before, to run again: their partition may hold a
    materialization) and `idle` ones (a partition no run took, or a revision registered and
    never finished), in runs of neighbouring partitions, MAX_REVISIONS_PER_RUN each; and one
    sync run when a folder has deleted files to retire.

    The folder sensor is the one path that asks for a revision's first run, whatever state
    automation is in: a partition that existed before automation's first evaluation is never
    "newly missing" to it. Nothing is asked for twice: a key a run in flight takes is left to
    it, and a key whose run ended less than RETRY_AFTER_S ago (failed, canceled, or ended
    without finishing it) waits that long before it is asked for again.
    """
    now = time.time() if now is None else now
    busy, ended, failed = runs_holding(instance, order, now - RETRY_AFTER_S)
    todo = set(fresh) | (set(again) - busy - failed) | (set(idle) - busy - ended)
    batches = contiguous_batches(order, todo, MAX_REVISIONS_PER_RUN)[:MAX_RUNS_PER_TICK]
    runs = [ingest_request(batch) for batch in batches]
    if sync and not in_flight(instance, SYNC_JOB):
        runs.append(RunRequest(job_name=SYNC_JOB, tags={"loom/sources": ",".join(sync)[:200]}))
    return runs


def ingest_request(batch: Sequence[str]) -> RunRequest:
    """A run of the ingest job over a batch of neighbouring partitions: one by name, more as a
    key range (the tags `loom ingest`'s runs and the UI's backfills use)."""
    if len(batch) == 1:
        return RunRequest(partition_key=batch[0], job_name=INGEST_JOB)
    return RunRequest(
        job_name=INGEST_JOB,
        tags={RANGE_START_TAG: batch[0], RANGE_END_TAG: batch[-1]},
    )


def runs_holding(
    instance: DagsterInstance, order: Sequence[str], since: float
) -> tuple[set[str], set[str], set[str]]:
    """Which keys a run takes now (queued or running, whoever launched it: this sensor,
    automation, a backfill, `loom ingest`), which a run that ended after `since` took, and
    which of those a run that failed or was canceled took."""
    busy_runs = instance.get_run_records(RunsFilter(statuses=BUSY), limit=MAX_RUNS_SEEN)
    ended_runs = instance.get_run_records(
        RunsFilter(statuses=ENDED, updated_after=datetime.fromtimestamp(since, tz=UTC)),
        limit=MAX_RUNS_SEEN,
    )
    busy = {
        k for keys in keys_of_runs(order, (r.dagster_run.tags for r in busy_runs)) for k in keys
    }
    ended: set[str] = set()
    failed: set[str] = set()
    for record, keys in zip(
        ended_runs, keys_of_runs(order, (r.dagster_run.tags for r in ended_runs)), strict=True
    ):
        ended.update(keys)
        if record.dagster_run.status != DagsterRunStatus.SUCCESS:
            failed.update(keys)
    return busy, ended, failed


loom_ingest_automation = AutomationConditionSensorDefinition(
    "loom_ingest_automation",
    target=AssetSelection.groups(GROUP).without_checks() | AssetSelection.checks(*RUN_CHECKS),
    default_status=DefaultSensorStatus.RUNNING,
    description="Materializes new revision partitions in batches (declarative automation).",
)
