"""Retention, garbage collection and removing a source: the partitions of revisions retention
no longer keeps pruned, the objects no kept revision needs deleted, a source retired."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

import duckdb

from loom_dagster import catalog, lifecycle, pipeline
from loom_dagster.api.home import dagster_instance, prepare_environment
from loom_dagster.errors import SourceError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.search.vector import open_vectors
from loom_dagster.settings import LoomSettings

# Retention, garbage collection and removing a source ------------------------------------------


def prune_partitions_now(
    instance: object,
    catalog_db: CatalogResource,
    retention: lifecycle.Retention,
    *,
    window: int = 0,
    dry_run: bool = False,
    planned: Callable[[Sequence[str]], None] = lambda _: None,
    progress: Callable[[int, int], None] = lambda done, total: None,
) -> list[str]:
    """Delete the partitions of revisions retention no longer keeps, and those of settled
    revisions past the partition `window` (ingest calls this; `loom partitions compact` too);
    `planned` is given every key the retention plan prunes, deleted now or before (the window's
    change only when partitions are added: nothing the next ingest's quick path must see)."""
    from dagster import DagsterInstance

    from loom_dagster.partitions import prune_partitions

    assert isinstance(instance, DagsterInstance)
    # Under the catalog's connection: no revision is registered (or revived) between the
    # plan and the deletions.
    with catalog_db.connect() as con:
        # Neither reads every revision: retention reads the documents with more revisions than
        # it keeps, the window asks which of the partitions' keys are settled (and only past it).
        pruned = lifecycle.pruned_revisions(con, retention)
        doomed = prune_partitions(
            instance,
            pruned,
            dry_run=dry_run,
            window=window,
            settled=lambda keys: catalog.settled_among(con, keys),
            progress=progress,
        )
        planned(pruned)
        return doomed


@dataclass(frozen=True)
class Compaction:
    """What `loom partitions compact` deleted, and what is left."""

    retention: int  # partitions of revisions retention no longer keeps
    window: int  # partitions of settled revisions past the window
    left: int  # partitions left in the set
    size: int  # the window (LOOM_PARTITION_WINDOW; 0: none)


def compact_partitions(*, progress: Callable[[str], None] = lambda _: None) -> Compaction:
    """Apply retention and the partition window to the instance at once, as the folder sensor
    does at most MAX_PRUNED_PER_TICK partitions a tick: for a home made before the window, or
    past it by far. Each chunk of deletions is its own transaction, so an interrupted compaction
    keeps what it deleted and the next one does the rest; nothing runs, and no catalog record,
    event or object is touched."""
    from loom_dagster.partitions import PARTITIONS_NAME

    settings = LoomSettings.from_env()
    prepare_environment(settings)
    instance = dagster_instance(settings)
    pruned: list[str] = []
    doomed = prune_partitions_now(
        instance,
        CatalogResource(database=str(settings.catalog_path)),
        settings.retention,
        window=settings.partition_window,
        planned=pruned.extend,
        progress=lambda done, total: progress(f"deleted {done} of {total} partitions"),
    )
    by_retention = len(set(doomed).intersection(pruned))
    return Compaction(
        retention=by_retention,
        window=len(doomed) - by_retention,
        left=len(instance.get_dynamic_partitions(PARTITIONS_NAME)),
        size=settings.partition_window,
    )


def collect_garbage(
    *, dry_run: bool = False, grace_s: float = lifecycle.DEFAULT_GRACE_S
) -> lifecycle.Collected:
    """Prune the partitions of revisions retention does not keep, and delete the objects no
    kept revision references (with `dry_run`, only say which)."""

    from loom_dagster.partitions import prune_partitions

    settings = LoomSettings.from_env()
    retention = settings.retention
    prepare_environment(settings)
    store = ObjectStore(settings.object_store_url)
    # Listed before the catalog is held: listing is the slow part, and an object written
    # after the listing is simply not considered.
    objects = lifecycle.list_store(store)
    snapshots = lifecycle.list_snapshots(store)
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        states = catalog.revision_states(con)
        plan = lifecycle.plan_retention(states, retention)
        partitions = prune_partitions(dagster_instance(settings), plan.pruned, dry_run=dry_run)
        collected = lifecycle.collect(
            store, states, plan, grace_s=grace_s, dry_run=dry_run, objects=objects
        )
        unserved = lifecycle.collect_datasets(
            con, store, snapshots, grace_s=grace_s, dry_run=dry_run
        )
    return replace(
        collected, partitions=tuple(partitions), objects=collected.objects + unserved.objects
    )


@dataclass(frozen=True)
class Removal:
    source: str
    documents: int  # retired, or that would be without confirmation
    done: bool
    purged: lifecycle.Collected | None = None


def remove_source(name: str, *, confirmed: bool, purge: bool = False) -> Removal:
    """Retire every document of source `name` (catalog and search) and forget its folder.

    Without `confirmed`, changes nothing when it would retire a document or purge. With
    `purge`, also deletes the source's partitions and the objects no other source's kept
    revision needs.
    """

    from loom_dagster.partitions import prune_partitions

    settings = LoomSettings.from_env()
    retention = settings.retention
    prepare_environment(settings)
    store = ObjectStore(settings.object_store_url)
    objects = lifecycle.list_store(store) if purge and confirmed else []
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        catalog.source_root(con, name)  # an unknown source is an error, not a silent no-op
        seen = _seen_by_sensor(con, name)
        active = catalog.active_documents(con, name) + len(seen)
        if (active or purge) and not confirmed:
            return Removal(name, active, done=False)
        if seen:  # registered now, so they are retired and their partitions dropped below
            source = catalog.get_source(con, name)
            assert source is not None
            pipeline.sync_source(
                con, LexicalIndex(settings.search_dir), source, max_bytes=settings.limits.max_bytes
            )
        # The source row goes last: interrupted anywhere, the command can run again. The
        # connection is held throughout, so no scan sees the source half removed.
        pipeline.retire(
            con,
            LexicalIndex(settings.search_dir),
            name,
            catalog.source_paths(con, name),
            vectors=open_vectors(settings),
        )
        # Its datasets stopped serving with its documents: their snapshots go now.
        pipeline.drop_stale_datasets(con, store)
        states = catalog.revision_states(con)
        own = [s for s in states if s.source == name]
        purged = None
        if purge:
            partitions = prune_partitions(dagster_instance(settings), [s.key for s in own])
            purged = lifecycle.purge(store, states, name, retention, objects=objects)
            purged = replace(purged, partitions=tuple(partitions))
        else:
            # A revision no run has finished can no longer run (its folder is forgotten and its
            # document retired); left as a missing partition, automation would keep trying it
            # and fail the batch it shares with other sources' revisions.
            prune_partitions(dagster_instance(settings), [s.key for s in own if s.status is None])
        catalog.remove_source(con, name)
    return Removal(name, active, done=True, purged=purged)


def _seen_by_sensor(con: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    """Keys of the source's new files that a sensor tick may have given a partition, with no
    record yet (the run that takes a partition registers its revision)."""
    source = catalog.get_source(con, name)
    assert source is not None
    try:
        plan = pipeline.plan_source(con, source)
    except SourceError:  # the folder is gone: nothing in it can be registered any more
        return []
    return sorted(set(plan.keys) - catalog.registered_keys(con, plan.keys))
