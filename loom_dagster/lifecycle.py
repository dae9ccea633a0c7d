"""Retention and garbage collection: which revisions are kept, and which stored objects no kept
revision needs.

Plain Python over catalog records and the object store; the Dagster side (deleting pruned
partitions from the instance) is `loom_dagster.partitions.prune_partitions`.

Kept, per document: the live revision, the `LOOM_KEEP_REVISIONS` newest revisions, those
registered less than `LOOM_KEEP_DAYS` days ago, and every revision no run has finished yet (it
is pending or in flight). The rest are pruned: their partitions leave the Dagster instance and
their objects become garbage, while their catalog records stay as the history. (A revision
superseded or retired since leaves the partitions at once, whatever is kept of its objects:
assets/live.py; pruning still takes the partitions a home made before that still holds.)

The partition window (`LOOM_PARTITION_WINDOW`, `beyond_window`) takes out of the partition set
what retention keeps there too: past the window, the partitions of settled live revisions, first
added first. Their revisions stay live, searchable and kept (their objects are not garbage):
only Dagster's partition goes, its events staying as the history.

Garbage is whatever sits under `originals/`, `artifacts/` or `revisions/` that no kept revision
references (content-addressed: an original two documents share stays while either keeps it).
Callers hold the catalog's connection for the whole of a collection, the catalog's
single-writer discipline, so no revision is registered between the plan and the deletions.
What that cannot cover is a step already past its catalog read: an artifact is written before
the `extraction.json` that names it. So an object modified within the grace period is never
collected, a step that reuses a stored object refreshes its time (ObjectStore._put_or_refresh),
and each object's time is read again just before it is deleted.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from loom_dagster.errors import SettingsError
from loom_dagster.variables import positive_int, whole_number

if TYPE_CHECKING:
    # Imported where used: LoomSettings reads Retention from here, and `loom search` loads the
    # settings without DuckDB (the catalog) or fsspec (the store).
    import duckdb

    from loom_dagster import catalog
    from loom_dagster.objectstore import ObjectStore, StoredObject

KEEP_REVISIONS_ENV = "LOOM_KEEP_REVISIONS"
KEEP_DAYS_ENV = "LOOM_KEEP_DAYS"
DEFAULT_KEEP_REVISIONS = 3
DEFAULT_GRACE_S = 3600.0
# Past this many partitions, the settled revisions' partitions that were added first leave the
# partition set (`beyond_window`): what walks the whole set (the folder sensor's housekeeping, the
# UI's partition health, a backfill's planning) grows with it (docs/scale.md).
PARTITION_WINDOW_ENV = "LOOM_PARTITION_WINDOW"
DEFAULT_PARTITION_WINDOW = 50_000
KINDS = ("originals", "artifacts", "revisions")
EXTRACTION = (
    "extraction.json"  # the name pipeline/records.py writes each revision's extraction under
)


@dataclass(frozen=True)
class Retention:
    keep_revisions: int = DEFAULT_KEEP_REVISIONS  # newest revisions kept per document (>= 1)
    keep_days: int = 0  # revisions younger than this are kept too; 0: no age rule

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Retention:
        """From the settings' mapping (LoomSettings.from_env reads the environment once)."""
        return cls(
            keep_revisions=positive_int(env, KEEP_REVISIONS_ENV, DEFAULT_KEEP_REVISIONS),
            keep_days=positive_int(env, KEEP_DAYS_ENV, 0),
        )

    def keeps(self, state: catalog.RevisionState, rank: int) -> bool:
        """`rank` is the revision's place among its document's, 0 for the newest."""
        return (
            state.status is None
            or state.live
            or rank < self.keep_revisions
            or (self.keep_days > 0 and state.age_s < self.keep_days * 86400)
        )


RETIRE_MAX_SHARE_ENV = "LOOM_RETIRE_MAX_SHARE"
RETIRE_MIN_COUNT_ENV = "LOOM_RETIRE_MIN_COUNT"


@dataclass(frozen=True)
class RetireGuard:
    """When a scan's deletions are held instead of retired, as sync tools guard against mass
    deletion: an unmounted share leaves its mount point empty, and a folder that vanished
    would otherwise take every document out of search at once.

    A scan is held when it would retire every document the folder has, or more than
    `max_share` of them and at least `min_count` (so a small folder's ordinary deletions
    still go through). Held deletions stay live and are said so until confirmed
    (`loom ingest --confirm-retire`)."""

    max_share: float = 0.5  # LOOM_RETIRE_MAX_SHARE, in (0, 1]; 1 turns the share rule off
    min_count: int = 5  # LOOM_RETIRE_MIN_COUNT

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> RetireGuard:
        raw = env.get(RETIRE_MAX_SHARE_ENV) or ""
        share = cls.max_share
        if raw:
            try:
                share = float(raw)
            except ValueError:
                share = -1.0
            if not 0.0 < share <= 1.0:
                raise SettingsError(
                    f"{RETIRE_MAX_SHARE_ENV} must be a number in (0, 1], not {raw!r}"
                )
        return cls(share, positive_int(env, RETIRE_MIN_COUNT_ENV, cls.min_count))

    def holds(self, deleted: int, known: int) -> str | None:
        """Why `deleted` of `known` documents are held, or None when they may be retired."""
        if deleted == 0:
            return None
        if deleted >= known:
            return f"all {known} of its documents would be retired"
        if deleted > self.max_share * known and deleted >= self.min_count:
            return (
                f"{deleted} of its {known} documents would be retired, more than "
                f"{self.max_share:g} of them ({RETIRE_MAX_SHARE_ENV})"
            )
        return None


def partition_window(env: Mapping[str, str]) -> int:
    """LOOM_PARTITION_WINDOW from the settings' mapping; 0: no window."""
    return whole_number(env, PARTITION_WINDOW_ENV, DEFAULT_PARTITION_WINDOW, "no window")


def beyond_window(
    order: Sequence[str],
    settled: Collection[str],
    window: int,
    *,
    spared: Collection[str] = (),
) -> list[str]:
    """The partitions to remove so that `order` (the partition set, in the order its keys were
    added) is back within `window`: its `settled` keys (a live revision whose publication is
    recorded: catalog.RevisionState.settled) that were added first, but the `spared` ones (held
    by a run, just seen, just failed). Fewer when too few are settled: a pending, refused or
    failing revision keeps its partition whatever the window. None with no window (0).

    Added first, not registered first: a key added again (a one-file backfill from the UI goes
    to the end of the order) is the last to go, so its run finds it."""
    excess = len(order) - window
    if window <= 0 or excess <= 0:
        return []
    doomed: list[str] = []
    for key in order:
        if key in settled and key not in spared:
            doomed.append(key)
            if len(doomed) == excess:
                break
    return doomed


@dataclass(frozen=True)
class RetentionPlan:
    kept: frozenset[str]
    pruned: tuple[str, ...]  # in registry order


def plan_retention(
    states: Iterable[catalog.RevisionState],
    retention: Retention,
    *,
    dropped_sources: Collection[str] = (),
) -> RetentionPlan:
    """Which revisions are kept; every revision of a dropped (purged) source is pruned."""
    by_document: dict[str, list[catalog.RevisionState]] = {}
    for state in states:
        by_document.setdefault(state.document_id, []).append(state)
    kept: set[str] = set()
    pruned: list[catalog.RevisionState] = []
    for revisions in by_document.values():
        revisions.sort(key=lambda s: s.seq, reverse=True)
        for rank, state in enumerate(revisions):
            if state.source not in dropped_sources and retention.keeps(state, rank):
                kept.add(state.key)
            else:
                pruned.append(state)
    pruned.sort(key=lambda s: s.seq)
    return RetentionPlan(frozenset(kept), tuple(s.key for s in pruned))


def pruned_revisions(con: duckdb.DuckDBPyConnection, retention: Retention) -> tuple[str, ...]:
    """`plan_retention(catalog.revision_states(con), retention).pruned`, read from the documents
    that can have a revision pruned: retention keeps each document's newest `keep_revisions`
    (and its live and unfinished ones), so a document with no more revisions than that has
    none, and a home of a million single-revision documents reads none of them."""
    from loom_dagster import catalog

    states = catalog.revision_states(con, more_than=retention.keep_revisions)
    return plan_retention(states, retention).pruned


@dataclass(frozen=True)
class References:
    """The objects some set of revisions needs: originals and artifacts by SHA-256, and the
    per-revision folders by revision key."""

    originals: frozenset[str] = frozenset()
    artifacts: frozenset[str] = frozenset()
    revisions: frozenset[str] = frozenset()

    def holds(self, key: str) -> bool:
        kind, owner = _owner(key)
        if kind == "originals":
            return owner in self.originals
        if kind == "artifacts":
            return owner.removesuffix(".json") in self.artifacts
        return kind == "revisions" and owner in self.revisions


def _owner(key: str) -> tuple[str, str]:
    # originals/<2 hex>/<sha>, artifacts/<2 hex>/<sha>.json, revisions/<key>/<file>
    parts = key.split("/")
    if parts[0] in ("originals", "artifacts") and len(parts) == 3:
        return parts[0], parts[2]
    if parts[0] == "revisions" and len(parts) >= 3:
        return "revisions", parts[1]
    return parts[0], ""


def references_of(
    store: ObjectStore,
    states: Iterable[catalog.RevisionState],
    keys: Collection[str],
    stored: Collection[str],
) -> References:
    """What the revisions named in `keys` need. An artifact the catalog does not name (the
    revision is pending, or its outcome was rewritten as superseded) is read from the
    revision's own `extraction.json`, when `stored` holds one."""
    from loom_dagster import catalog
    from loom_dagster.objectstore import ObjectStore

    originals: set[str] = set()
    artifacts: set[str] = set()
    for state in states:
        if state.key not in keys:
            continue
        originals.add(state.sha256)
        if state.artifact_sha256:
            artifacts.add(state.artifact_sha256)
        elif state.status != catalog.REFUSED:
            record = ObjectStore.revision_key(state.key, EXTRACTION)
            if record in stored:
                sha = store.get_json(record).get("artifact_sha256")
                if sha:
                    artifacts.add(str(sha))
    return References(frozenset(originals), frozenset(artifacts), frozenset(keys))


@dataclass(frozen=True)
class Collected:
    """What a collection deletes (or, dry, would delete)."""

    partitions: tuple[str, ...] = ()
    objects: tuple[StoredObject, ...] = ()
    skipped: tuple[str, ...] = field(default=())  # refreshed or gone since they were listed

    def totals(self) -> dict[str, tuple[int, int]]:
        """(count, bytes) per kind of object, every kind named."""
        totals = {kind: (0, 0) for kind in KINDS}
        for obj in self.objects:
            kind = _owner(obj.key)[0]
            count, size = totals.get(kind, (0, 0))
            totals[kind] = (count + 1, size + obj.size)
        return totals


def list_store(store: ObjectStore) -> list[StoredObject]:
    return [obj for kind in KINDS for obj in store.list_objects(kind)]


def garbage(
    objects: Iterable[StoredObject],
    keep: References,
    *,
    now: float,
    grace_s: float,
    within: References | None = None,
) -> tuple[StoredObject, ...]:
    """The objects `keep` does not hold, modified at least `grace_s` ago; with `within`, only
    those it holds (the objects of one purged source)."""
    return tuple(
        obj
        for obj in objects
        if _owner(obj.key)[0] in KINDS
        and not keep.holds(obj.key)
        and (within is None or within.holds(obj.key))
        and now - obj.modified >= grace_s
    )


def collect(
    store: ObjectStore,
    states: Sequence[catalog.RevisionState],
    plan: RetentionPlan,
    *,
    grace_s: float = DEFAULT_GRACE_S,
    dry_run: bool = False,
    now: float | None = None,
    objects: Sequence[StoredObject] | None = None,
) -> Collected:
    """Delete (or with `dry_run`, only name) every object no kept revision references.

    `objects` is a listing of the store taken before the catalog was read (the slow part, so
    callers take it before they hold the catalog); an object written after it is not touched.
    """
    objects = list_store(store) if objects is None else objects
    keep = references_of(store, states, plan.kept, {o.key for o in objects})
    doomed = garbage(objects, keep, now=time.time() if now is None else now, grace_s=grace_s)
    return _delete(store, doomed, dry_run=dry_run)


def purge(
    store: ObjectStore,
    states: Sequence[catalog.RevisionState],
    source: str,
    retention: Retention,
    *,
    dry_run: bool = False,
    objects: Sequence[StoredObject] | None = None,
) -> Collected:
    """Delete the objects of `source`'s revisions that no other source's kept revision needs.

    Not held back by the grace period (a purge asks for them to go now); an object a step
    refreshed since the listing still stays.
    """
    plan = plan_retention(states, retention, dropped_sources={source})
    objects = list_store(store) if objects is None else objects
    stored = {o.key for o in objects}
    keep = references_of(store, states, plan.kept, stored)
    own = references_of(store, states, {s.key for s in states if s.source == source}, stored)
    doomed = garbage(objects, keep, now=time.time(), grace_s=0, within=own)
    return _delete(store, doomed, dry_run=dry_run)


def _delete(store: ObjectStore, doomed: Sequence[StoredObject], *, dry_run: bool) -> Collected:
    if dry_run:
        return Collected(objects=tuple(doomed))
    deleted, skipped = [], []
    for obj in doomed:
        # Read the time again: a step that reused the object since the listing refreshed it.
        if store.modified(obj.key) != obj.modified:
            skipped.append(obj.key)
            continue
        store.delete(obj.key)
        deleted.append(obj)
    return Collected(objects=tuple(deleted), skipped=tuple(skipped))


# Dataset snapshots -----------------------------------------------------------------------------
# Not tied to a kept revision: a snapshot is garbage once no catalog row can serve it (its
# revision superseded or retired, or an approval replaced it), or when no row names it at all
# (a run or an approval that stopped before its row), the latter past the grace period.

DATASETS = "datasets"


def list_snapshots(store: ObjectStore) -> list[StoredObject]:
    return store.list_objects(DATASETS)


def collect_datasets(
    con: duckdb.DuckDBPyConnection,
    store: ObjectStore,
    objects: Sequence[StoredObject],
    *,
    grace_s: float = DEFAULT_GRACE_S,
    dry_run: bool = False,
    now: float | None = None,
) -> Collected:
    """Delete (or with `dry_run`, only name) the snapshots no row serves or may serve: the stale
    rows' snapshots (their rows forgotten first), then, among `objects` (listed before the
    catalog was held), the files no row names that are older than `grace_s`."""
    from loom_dagster.datasets.catalog import (
        forget_snapshots,
        referenced_snapshots,
        stale_snapshots,
    )

    stale = set(stale_snapshots(con))
    named = referenced_snapshots(con) - stale
    now = time.time() if now is None else now
    doomed = [
        obj
        for obj in objects
        if obj.key.startswith(DATASETS + "/")
        and obj.key not in named
        and (obj.key in stale or now - obj.modified >= grace_s)
    ]
    if dry_run:
        return Collected(objects=tuple(doomed))
    if stale:
        forget_snapshots(con, sorted(stale))
    deleted = []
    for obj in doomed:
        store.delete(obj.key)
        deleted.append(obj)
    return Collected(objects=tuple(deleted))
