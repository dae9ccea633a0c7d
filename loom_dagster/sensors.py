"""Sensors: registered folders in, new revision partitions out; automation turns them into runs.

`loom_folders` ticks every second: it reads the watcher's journal of changed paths
(pipeline/watching.py) and looks only at those, or stats a folder whole where no watcher covers
it (every 30 s); it hashes only what changed and compares it with the catalog, and adds only
new keys, asking for their runs in the same tick. Its evaluation writes nothing but the list
of folders the watcher is to watch (a `dagster sensor preview`, or a tick that fails or whose result is lost,
changes nothing, and the next tick finds the same files again): the revisions are registered
by the first step of the run that takes their partitions (`pipeline.register_for_run`), and
deleted files are retired by a run of the `sync` job it requests. `loom_ingest_automation`
(declarative automation) then materializes the new partitions in batches, a run per
MAX_REVISIONS_PER_RUN revisions. Its housekeeping keeps the partition set small: retention's
pruning, and past LOOM_PARTITION_WINDOW the settled revisions' partitions added first
(`beyond_partition_window`).
"""

import time
from collections.abc import Mapping, Sequence
from pathlib import Path

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
from loom_dagster.jobs import (
    INGEST_ASSET_KEYS,
    INGEST_CHECK_KEYS,
    INGEST_JOB,
    SYNC_JOB,
    ingest_job,
    sync_job,
)
from loom_dagster.partitions import (
    MAX_REVISIONS_PER_RUN,
    PARTITIONS_NAME,
    RANGE_END_TAG,
    RANGE_START_TAG,
    RETRY_AFTER_S,
    beyond_partition_window,
    contiguous_batches,
    held_partitions,
    materialized_among,
    paths_tag,
    revisions,
    runs_holding,
)
from loom_dagster.pipeline import watching
from loom_dagster.resources.settings import SettingsResource
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.sources import key_document_digest
from loom_dagster.sources.settling import Settle
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
# Runs asked for by one tick (MAX_REVISIONS_PER_RUN revisions each); the rest waits a tick,
# so a first load of many thousand files does not flood the run queue at once.
MAX_RUNS_PER_TICK = 10
# Ingest runs in flight (queued or running) at which a tick asks for no run of the partitions it
# adds: the cursor carries them (`deferred`), and the first tick that finds fewer runs in flight
# asks for them all in runs of neighbours. Runs publish one at a time (the `loom_catalog` pool),
# so a run a tick for each file or two that arrived in its second piles up behind the publishing
# step, and every run extracting meanwhile slows it further: two files a second beside a large
# file took 90 s to publish at p50 that way (docs/benchmarks/load.md).
MAX_INGEST_RUNS_IN_FLIGHT = 3
# Deferred keys the cursor carries (a cursor is stored with every tick, each second); past it the
# oldest are left to the housekeeping tick, which asks for every partition no run took.
MAX_DEFERRED = MAX_REVISIONS_PER_RUN * 5


def in_flight(instance: DagsterInstance, job: str, partition: str | None = None) -> bool:
    tags = {"dagster/partition": partition} if partition else None
    return bool(
        instance.get_run_ids(RunsFilter(job_name=job, statuses=IN_FLIGHT, tags=tags), limit=1)
    )


# A tick that saw more keys than this reads every partition once rather than ask for each.
MAX_KEYS_ASKED_ONE_BY_ONE = 200
# Ticks this often: with a watcher alive a tick reads the journal (its cost is what changed),
# and without one it scans a folder whole only every watching.POLL_S.
TICK_S = 1


@sensor(
    name="loom_folders",
    jobs=[ingest_job, sync_job],
    minimum_interval_seconds=TICK_S,
    default_status=DefaultSensorStatus.RUNNING,
    description="Finds new, changed and deleted files of every registered folder (from the "
    "watcher's journal, or a polling scan): adds a revision partition for each new one and "
    "asks for its run, and asks for a sync run to retire deleted ones.",
)
def loom_folders(
    context: SensorEvaluationContext, catalog_db: CatalogResource, loom: SettingsResource
) -> SensorResult | SkipReason:
    now = time.time()
    cursor = watching.WatchCursor.loads(context.cursor)
    if loom.home and watching.idle(Path(loom.home), cursor, now, housekeeping_s=watching.POLL_S):
        if not cursor.deferred:
            return SensorResult(skip_reason="nothing changed", cursor=context.cursor)
        if backlogged(context.instance):
            return SensorResult(
                skip_reason=f"{len(cursor.deferred)} new partitions wait for a run in flight "
                "to end",
                cursor=context.cursor,
            )
    keys: list[str] = []
    where: dict[str, tuple[str, str]] = {}  # key -> (source, path) of what this tick saw
    again: list[str] = []
    waiting: list[str] = []
    sync: list[str] = []
    late: list[Waiting] = []
    fresh_paths: dict[str, list[str]] = {}  # per folder, its new files this tick
    with catalog_db.connect() as con:  # read only: nothing here writes the catalog
        sources = catalog.list_sources(con)
        tick = watching.plan_tick(Path(loom.home), sources, cursor, now) if loom.home else None
        looks = tick.looks if tick else [watching.FolderLook(s, None, {}) for s in sources]
        whole = any(look.only is None for look in looks)
        # Housekeeping (waiting revisions, retention, orphans, retries) comes with the polling
        # period, as the tick did before the journal; a journal tick only adds what changed.
        housekeeping = whole or now - cursor.scanned.get("", 0.0) >= watching.POLL_S
        nxt = tick.cursor if tick else cursor
        if not looks and not housekeeping and not nxt.deferred:
            return SensorResult(skip_reason="nothing changed", cursor=nxt.dumps())
        for look in looks:
            source = look.source
            settle = Settle(nxt.looks.get(source.name, {}), look.closed, quiet_s=SETTLE_S)
            try:
                plan = pipeline.plan_source(
                    con,
                    source,
                    max_hashed=MAX_HASHED_PER_TICK,
                    resume_after=nxt.resume.get(source.name) if look.only is None else None,
                    max_bytes=loom.max_input_bytes,
                    guard=loom.retire_guard(),
                    only=look.only,
                    settle=settle,
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
            where.update((r.key, (r.source, r.path)) for r in plan.scan.new + plan.scan.moved)
            watching.settle_looks(nxt, source.name, settle.pending, look.only)
            stopped = plan.scan.resume_after
            if look.only is None:
                if stopped:
                    nxt.resume[source.name] = stopped
                else:
                    nxt.resume.pop(source.name, None)
                    nxt.scanned[source.name] = now
            else:  # the paths a capped look did not reach wait for the next tick
                nxt.todo[source.name] = sorted(p for p in look.only if stopped and p > stopped)[
                    : watching.MAX_PENDING
                ]
            if plan.sync:
                sync.append(source.name)
            if plan.scan.deleted:
                context.log.info(f"{source.name}: {len(plan.scan.deleted)} deleted files to retire")
            fresh_paths[source.name] = [r.path for r in plan.scan.new if r.key not in plan.again]
        if housekeeping:
            nxt.scanned[""] = now
            for source in sources:
                # Every folder's waiting revisions, looked at this tick or not. Registered by
                # a run (or `loom ingest`) and never given a partition: a run registers every
                # new file of a folder it scans, not only its own.
                pending = catalog.pending_revisions(con, source.name)
                new = fresh_paths.get(source.name, [])
                waits = waiting_in(con, source, waiting_paths(new, pending))
                if waits.late:
                    late.append(waits)
                waiting.extend(r.key for r in pending)
    if not sources:
        return SkipReason(
            "no folder is registered yet: run `loom ingest FOLDER` or `loom sources add`"
        )
    # Runs in flight are counted once a tick, and only when it has new partitions to ask for.
    backlog = bool(keys or waiting or nxt.deferred) and backlogged(context.instance)
    # Deferred keys join a run of neighbours, whose key range needs every partition's order.
    asks_deferred = bool(nxt.deferred) and not backlog
    every_key = housekeeping or again or asks_deferred or len(set(keys)) > MAX_KEYS_ASKED_ONE_BY_ONE
    if every_key:
        existing_order = context.instance.get_dynamic_partitions(PARTITIONS_NAME)
    else:
        # A journal tick asks only about the keys it saw, not for every partition (100,000 of
        # them on a large home): it asks only for new keys' runs, which need no other.
        seen = sorted(set(keys))
        existing_order = [
            k for k in seen if context.instance.has_dynamic_partition(PARTITIONS_NAME, k)
        ]
    existing = set(existing_order)
    to_add = sorted((set(keys) | set(waiting)) - existing)
    prune: list[str] = []
    windowed: list[str] = []
    idle: set[str] = set()
    if housekeeping:
        with catalog_db.connect() as con:
            # Retention and the window decide only about partitions: the revisions of the
            # documents that have one (each document's every revision, as retention ranks them)
            # are all they read, not every revision of the home (a million, past the window).
            states = catalog.revision_states(con, documents_of=existing.union(to_add))
            unregistered = existing - catalog.registered_keys(con, existing)
            # A key no file of any registered folder ever had (made up in the UI's "Add a
            # partition"): its runs fail at once, so it must not be asked for again and again.
            digests = {key: key_document_digest(key) for key in unregistered}
            known = catalog.known_document_digests(con, {d for d in digests.values() if d})
        made_up = {key for key, digest in digests.items() if digest not in known}
        # A partition a run took without finding its file at those bytes (it changed before
        # the run): if the file is back at them, it is asked for by name (its partition is
        # materialized); once every folder was scanned to its end and none holds them, it goes.
        ran = orphans(context.instance, unregistered)
        again.extend(ran.intersection(keys))
        gone = (ran | made_up) - set(keys) if whole and not nxt.resume else set()
        # Superseded and retired revisions beyond the retention leave the partition set (their
        # records stay in the catalog); a new or pending revision is always kept, and so is a
        # key this tick's scan just saw (a file back to older bytes), rather than add and
        # delete it.
        # A key a run not ended takes stays too (deleted under it, the run fails): a later
        # tick's.
        retention = lifecycle.plan_retention(states, loom.retention())
        settled = {state.key for state in states if state.settled}
        held = held_partitions(context.instance, existing_order)
        prune = sorted((existing.intersection(retention.pruned) | gone) - set(keys) - held)[
            :MAX_PRUNED_PER_TICK
        ]
        first_pruned = set(prune)  # a set once: the list below walks every partition
        # Past the partition window, the settled revisions' partitions added first go too
        # (their documents stay live, their facts in the catalog), but a key this tick saw, a
        # run holds, or a run that failed lately took (its failure stays in view).
        windowed = beyond_partition_window(
            context.instance,
            [key for key in existing_order if key not in first_pruned] + to_add,
            settled,
            loom.partition_window,
            spared=held | set(keys),
        )[: MAX_PRUNED_PER_TICK - len(prune)]
        prune += windowed
        registered_waiting = existing.intersection(waiting) - set(prune)
        unpruned = existing - set(prune)
        idle = unpruned - materialized_among(context.instance, ORIGINAL, unpruned)
        idle |= registered_waiting
    requests: list[AddDynamicPartitionsRequest | DeleteDynamicPartitionsRequest] = (
        [revisions.build_add_request(to_add)] if to_add else []
    )
    if prune:
        requests.append(revisions.build_delete_request(prune))
    # Partitions as they are once this tick's requests are applied (adds and deletes first).
    gone_now = set(prune)
    order = [key for key in existing_order if key not in gone_now] + to_add
    # A deferred key no longer a partition (pruned, deleted in the UI) is dropped; a tick that
    # did not read every partition cannot tell, and keeps them all.
    deferred = [
        key for key in nxt.deferred if (key in existing or not every_key) and key not in gone_now
    ]
    runs = run_requests(
        context.instance,
        order,
        fresh=to_add,
        deferred=deferred,
        again=sorted(set(again)),
        idle=sorted(idle),
        sync=sync,
        where=where,
        backlog=backlog,
    )
    nxt.deferred = still_deferred(deferred, to_add, backlog=backlog, housekeeping=housekeeping)
    # The tick's own line in its log: the UI's "0 runs requested" says nothing of partitions.
    if requests or runs or housekeeping:
        context.log.info(
            f"added {len(to_add)} partitions, deleted {len(prune)}"
            + (f" ({len(windowed)} past the partition window)" if windowed else "")
            + f", requested {len(runs)} runs"
            + (f" (sync of {', '.join(sync)})" if any(r.job_name == SYNC_JOB for r in runs) else "")
        )
    for waits in late:
        context.log.warning(waits.alarm())
    return SensorResult(
        run_requests=runs,
        dynamic_partitions_requests=requests,
        cursor=nxt.dumps(),
        asset_events=waiting_events(context.instance, late) if housekeeping else [],
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
    deferred: Sequence[str] = (),
    again: Sequence[str] = (),
    idle: Sequence[str] = (),
    sync: Sequence[str] = (),
    now: float | None = None,
    where: Mapping[str, tuple[str, str]] | None = None,
    backlog: bool | None = None,
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
    without finishing it) waits that long before it is asked for again. While
    MAX_INGEST_RUNS_IN_FLIGHT ingest runs are in flight (`backlog`; None: count them), neither
    `fresh` keys nor `deferred` ones (fresh keys an earlier tick held back, which a run may have
    taken since) are asked for: the cursor carries them (`still_deferred`), so files that arrive
    meanwhile share a run once one ends.
    """
    now = time.time() if now is None else now
    busy, ended, failed = runs_holding(instance, order, now - RETRY_AFTER_S)
    todo = (set(again) - busy - failed) | (set(idle) - busy - ended)
    if (fresh or deferred) and not (backlogged(instance) if backlog is None else backlog):
        todo |= set(fresh) | (set(deferred) - busy - ended)
    batches = contiguous_batches(order, todo, MAX_REVISIONS_PER_RUN)[:MAX_RUNS_PER_TICK]
    runs = [ingest_request(batch, where or {}) for batch in batches]
    if sync and not in_flight(instance, SYNC_JOB):
        runs.append(RunRequest(job_name=SYNC_JOB, tags={"loom/sources": ",".join(sync)[:200]}))
    return runs


def still_deferred(
    deferred: Sequence[str], fresh: Sequence[str], *, backlog: bool, housekeeping: bool
) -> list[str]:
    """The keys the next tick's cursor carries: while runs are backlogged, the deferred ones
    and this tick's fresh ones (the newest MAX_DEFERRED); none once they were asked for. A
    housekeeping tick asks for every partition no run took (its `idle`), the deferred ones among
    them, so only its own fresh keys stay deferred."""
    if not backlog:
        return []
    kept = list(fresh) if housekeeping else [*deferred, *fresh]
    return kept[-MAX_DEFERRED:]


def backlogged(instance: DagsterInstance) -> bool:
    """Whether MAX_INGEST_RUNS_IN_FLIGHT ingest runs are queued or running already."""
    in_flight_runs = instance.get_runs_count(RunsFilter(job_name=INGEST_JOB, statuses=IN_FLIGHT))
    return in_flight_runs >= MAX_INGEST_RUNS_IN_FLIGHT


def ingest_request(
    batch: Sequence[str], where: Mapping[str, tuple[str, str]] | None = None
) -> RunRequest:
    """A run of the ingest job over a batch of neighbouring partitions: one by name, more as a
    key range (the tags `loom ingest`'s runs and the UI's backfills use). When this tick saw
    every one of their files (`where`), the run is told which (PATHS_TAG)."""
    where = where or {}
    files = [where[key] for key in batch if key in where]
    tags = paths_tag(files) if len(files) == len(batch) else {}
    single = len(batch) == 1
    return RunRequest(
        partition_key=batch[0] if single else None,
        job_name=INGEST_JOB,
        tags=tags if single else {RANGE_START_TAG: batch[0], RANGE_END_TAG: batch[-1], **tags},
        asset_selection=INGEST_ASSET_KEYS,
        asset_check_keys=INGEST_CHECK_KEYS,
    )


loom_ingest_automation = AutomationConditionSensorDefinition(
    "loom_ingest_automation",
    target=AssetSelection.groups(GROUP).without_checks() | AssetSelection.checks(*RUN_CHECKS),
    default_status=DefaultSensorStatus.RUNNING,
    description="Materializes new revision partitions in batches (declarative automation).",
)
