"""One dynamic partition per source revision; keys are `<path trace>~<hash10>@<sha16>` (sources/keys.py)."""

import json
import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from datetime import UTC, datetime

import sqlalchemy as db
from dagster import (
    AssetKey,
    AutomationCondition,
    BackfillPolicy,
    DagsterEventType,
    DagsterInstance,
    DagsterRunStatus,
    DynamicPartitionsDefinition,
    RunsFilter,
)
from dagster._core.storage.event_log.schema import DynamicPartitionsTable
from dagster._core.storage.event_log.sql_event_log import SqlEventLogStorage
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_END_TAG as RANGE_END_TAG,
)
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_START_TAG as RANGE_START_TAG,
)
from dagster._core.storage.tags import PARTITION_NAME_TAG as PARTITION_TAG

from loom_dagster import lifecycle

PARTITIONS_NAME = "revisions"
revisions = DynamicPartitionsDefinition(name=PARTITIONS_NAME)

# Many revisions to a run: a run costs seconds to start, so a first load of thousands of files
# must be a few runs, each looping over its partition keys.
MAX_REVISIONS_PER_RUN = 200
batch_policy = BackfillPolicy.multi_run(max_partitions_per_run=MAX_REVISIONS_PER_RUN)

# Who runs a revision. Its first run, and a run again after one that failed, is asked for by the
# `loom_folders` sensor alone (sensors.run_requests), whatever state automation is in: `eager`
# runs a partition only when it becomes missing after its first evaluation, so a partition that
# existed before it (a fresh home, where both sensors tick together) would wait for ever. So
# the root asset `original` has no automation condition, and automation keeps the rest:
# - `artifact` is `eager`: it follows a re-materialized `original` (a UI run of it alone), and
#   runs once more a partition whose run stopped after `original` (its `newly_missing`). When
#   the sensor's run materializes it, that resets it: nothing is asked for twice.
# - the skippable outputs of the publishing step (`chunks`, `published`, `datasets`) follow an
#   upstream update only. `newly_missing` is left out: a refused revision never gets `chunks`
#   or `published`, and a revision with no table never gets `datasets`, so `eager` would run
#   the publishing step a second time for every such partition it first saw missing.
# `any_deps_updated` ignores an update made by a run that also targeted the asset, so a run of
# the `ingest` job (all of them at once) asks automation for nothing.
AFTER_UPSTREAM = (
    AutomationCondition.any_deps_updated().since_last_handled()
    & ~AutomationCondition.any_deps_missing()
    & ~AutomationCondition.any_deps_in_progress()
    & ~AutomationCondition.in_progress()
).with_label("after_upstream")


# A run in one of these states holds its partitions: deleting one under it fails the run
# (Dagster resolves a run's partitions again at each output, and a key gone is an error).
HOLDING = [
    DagsterRunStatus.QUEUED,
    DagsterRunStatus.NOT_STARTED,
    DagsterRunStatus.STARTING,
    DagsterRunStatus.STARTED,
    DagsterRunStatus.CANCELING,
]
# Runs read to learn which partitions are held; more in flight than this is a queue to wait for.
MAX_HOLDING_RUNS = 1000


def held_partitions(instance: DagsterInstance, ordered: Sequence[str]) -> set[str]:
    """The partitions of `ordered` (the instance's, in order) a run not ended takes now,
    whoever launched it."""
    runs = instance.get_run_records(RunsFilter(statuses=HOLDING), limit=MAX_HOLDING_RUNS)
    return {k for keys in keys_of_runs(ordered, (r.dagster_run.tags for r in runs)) for k in keys}


def prune_partitions(
    instance: DagsterInstance,
    keys: Iterable[str],
    *,
    dry_run: bool = False,
    window: int = 0,
    settled: Collection[str] | Callable[[Sequence[str]], Collection[str]] = (),
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> list[str]:
    """Delete from the instance the partitions of `keys` it still has, and with a `window`,
    those of `settled` revisions past it (lifecycle.beyond_window), but those a run not ended
    takes (they go at a later prune) and, past the window, those a run failed lately
    (beyond_partition_window); returns the keys deleted, `keys`' first. `progress` is
    told (deleted, of) after each chunk. `settled` may be a function telling which of the
    partitions' keys are settled, asked only when the set is past the window.

    The revisions' catalog records stay: a pruned partition is history, not a loss.
    """
    existing = instance.get_dynamic_partitions(PARTITIONS_NAME)
    doomed = sorted(set(existing).intersection(keys))
    past = 0 < window < len(existing) - len(doomed)
    if doomed or past:
        held = held_partitions(instance, existing)
        doomed = [key for key in doomed if key not in held]
        if past:
            gone = set(doomed)
            rest = [key for key in existing if key not in gone]
            among = settled(rest) if callable(settled) else settled
            doomed += beyond_partition_window(instance, rest, among, window, spared=held)
    if not dry_run:
        delete_partitions(instance, doomed, progress=lambda done: progress(done, len(doomed)))
    return doomed


# Keys deleted in one transaction: Dagster deletes a partition a transaction (~3 ms each on
# SQLite here: 3 s per 1,000), so a home far past the partition window would take most of an
# hour; in one statement per chunk, 10,000 take well under a second.
DELETE_CHUNK = 1000


def delete_partitions(
    instance: DagsterInstance,
    keys: Sequence[str],
    *,
    progress: Callable[[int], None] = lambda _: None,
) -> None:
    """Delete `keys` from the revision partitions, a chunk per transaction (`progress` is told
    how many are deleted after each): the statement Dagster's `delete_dynamic_partition` runs,
    for many keys at once. An instance whose event log is not Dagster's SQL storage deletes
    them one by one, through Dagster."""
    storage = instance.event_log_storage
    for start in range(0, len(keys), DELETE_CHUNK):
        chunk = list(keys[start : start + DELETE_CHUNK])
        if isinstance(storage, SqlEventLogStorage):
            with storage.index_connection() as conn:
                conn.execute(
                    DynamicPartitionsTable.delete().where(
                        db.and_(
                            DynamicPartitionsTable.c.partitions_def_name == PARTITIONS_NAME,
                            DynamicPartitionsTable.c.partition.in_(chunk),
                        )
                    )
                )
        else:
            for key in chunk:
                instance.delete_dynamic_partition(PARTITIONS_NAME, key)
        progress(start + len(chunk))


def contiguous_batches(ordered: Sequence[str], keys: Iterable[str], size: int) -> list[list[str]]:
    """Split `keys` into runs of neighbours in the partition order, at most `size` each.

    A run's partitions are a key range, so a batch must not span a key it should not touch.
    """
    position = {key: i for i, key in enumerate(ordered)}
    batches: list[list[str]] = []
    for key in sorted(keys, key=position.__getitem__):
        last = batches[-1] if batches else None
        if last and len(last) < size and position[last[-1]] + 1 == position[key]:
            last.append(key)
        else:
            batches.append([key])
    return batches


def keys_of_runs(ordered: Sequence[str], runs_tags: Iterable[Mapping[str, str]]) -> list[list[str]]:
    """The revision partitions each run takes, read from its tags: one partition, or a key
    range in the partition order; none for a run of no partition or of a range that is gone."""
    position = {key: i for i, key in enumerate(ordered)}
    found: list[list[str]] = []
    for tags in runs_tags:
        if PARTITION_TAG in tags:
            found.append([tags[PARTITION_TAG]])
            continue
        first = position.get(tags.get(RANGE_START_TAG, ""))
        last = position.get(tags.get(RANGE_END_TAG, ""))
        found.append([] if first is None or last is None else list(ordered[first : last + 1]))
    return found


# Which files a run's revisions are, by folder (JSON: {source: [path, ...]}), set by the folder
# sensor when short enough: the run's first step then looks at those paths to register them
# instead of scanning their folders whole (seconds at 100,000 files).
PATHS_TAG = "loom/paths"
MAX_PATHS_TAG_CHARS = 4000


def paths_tag(files: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The tag naming these (source, path) files, or none when it would be too long."""
    by_source: dict[str, list[str]] = {}
    for source, path in files:
        by_source.setdefault(source, []).append(path)
    text = json.dumps({s: sorted(set(p)) for s, p in sorted(by_source.items())})
    return {PATHS_TAG: text} if by_source and len(text) <= MAX_PATHS_TAG_CHARS else {}


def paths_of(tags: Mapping[str, str]) -> dict[str, list[str]] | None:
    """The files a run's PATHS_TAG names, by folder; None without one (or unreadable)."""
    try:
        value = json.loads(tags[PATHS_TAG])
    except (KeyError, ValueError):
        return None
    if not isinstance(value, dict) or not all(
        isinstance(paths, list) and all(isinstance(p, str) for p in paths)
        for paths in value.values()
    ):
        return None
    return {str(source): list(paths) for source, paths in value.items()}


# Which keys runs hold, took lately, or failed on -------------------------------------------

ENDED = [DagsterRunStatus.SUCCESS, DagsterRunStatus.FAILURE, DagsterRunStatus.CANCELED]
# A revision whose run ended (failed, canceled, or ended without finishing it: an extractor
# that stayed down) is asked for again (by the folder sensor) only this long after, and keeps
# its partition past the window that long: a failing key is no hot loop, and stays in view.
RETRY_AFTER_S = 300.0
# Ended runs read to learn which keys were run lately (the keys runs take now: held_partitions).
MAX_RUNS_SEEN = 1000


def runs_holding(
    instance: DagsterInstance, order: Sequence[str], since: float
) -> tuple[set[str], set[str], set[str]]:
    """Which keys a run takes now (queued or running, whoever launched it: the folder
    sensor, automation, a backfill, `loom ingest`), which a run that ended after `since` took, and
    which of those a run that failed or was canceled took."""
    ended_runs = instance.get_run_records(
        RunsFilter(statuses=ENDED, updated_after=datetime.fromtimestamp(since, tz=UTC)),
        limit=MAX_RUNS_SEEN,
    )
    busy = held_partitions(instance, order)
    ended: set[str] = set()
    failed: set[str] = set()
    for record, keys in zip(
        ended_runs, keys_of_runs(order, (r.dagster_run.tags for r in ended_runs)), strict=True
    ):
        ended.update(keys)
        if record.dagster_run.status != DagsterRunStatus.SUCCESS:
            failed.update(keys)
    return busy, ended, failed


def beyond_partition_window(
    instance: DagsterInstance,
    order: Sequence[str],
    settled: Collection[str],
    window: int,
    *,
    spared: Collection[str],
    now: float | None = None,
) -> list[str]:
    """The partitions of `order` (the set as a prune leaves it) past the partition window
    (lifecycle.beyond_window), but `spared` ones and those a run that ended badly less than
    RETRY_AFTER_S ago took (its failure stays in view): the folder sensor's housekeeping, `loom
    ingest` and `loom partitions compact` alike. The runs are read only when the set is past the
    window."""
    if window <= 0 or len(order) <= window:
        return []
    since = (time.time() if now is None else now) - RETRY_AFTER_S
    _, _, failed = runs_holding(instance, order, since)
    return lifecycle.beyond_window(order, settled, window, spared=set(spared) | failed)


# Keys asked about in one query: SQLite binds at most 32,766 values to a statement.
MATERIALIZED_CHUNK = 5000


def materialized_among(instance: DagsterInstance, asset: AssetKey, keys: Iterable[str]) -> set[str]:
    """Which of `keys` `asset` was materialized for: an indexed look-up of those keys, where
    `instance.get_materialized_partitions` reads every partition the asset ever had (past the
    partition window, most of them no longer partitions: a million on a large home)."""
    ordered = sorted(set(keys))
    found: set[str] = set()
    for first in range(0, len(ordered), MATERIALIZED_CHUNK):
        found.update(
            instance.event_log_storage.get_latest_storage_id_by_partition(
                asset,
                DagsterEventType.ASSET_MATERIALIZATION,
                set(ordered[first : first + MATERIALIZED_CHUNK]),
            )
        )
    return found
