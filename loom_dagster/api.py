"""Loom's Python API: what the `loom` command does, callable from code and tests.

`ingest_folder` drives Dagster for real: it registers the folder, adds a partition per new
revision to the instance under LOOM_HOME, and materializes them in batched runs of the
`ingest` job, so the UI shows the runs, partitions and checks the command made.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb

from loom_dagster import catalog, dagster_dev, lifecycle, parsers, pipeline, quick, runs
from loom_dagster.datasets.model import Dataset
from loom_dagster.display import one_line, printable
from loom_dagster.errors import SourceError
from loom_dagster.extractor.client import ExtractorClient, configured_or_local
from loom_dagster.objectstore import ObjectStore
from loom_dagster.reports import FileOutcome, IngestReport
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.search.legs import Leg
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.search.service import (
    SearchHit,
    default_legs,
    make_filter,
    open_index,
    open_vector_leg,
)
from loom_dagster.search.service import search as search_chunks
from loom_dagster.search.vector import open_vectors
from loom_dagster.settings import LoomSettings
from loom_dagster.sources import (
    OptionRule,
    Revision,
    Source,
    check_option,
    document_id,
    source_name_for,
    validate_source_name,
    validate_tag,
)

if TYPE_CHECKING:
    from dagster import DagsterInstance

    from loom_dagster.query.run import Answer, Ceilings

Progress = Callable[[str], None]


def prepare_environment(settings: LoomSettings) -> None:
    """The home's folders and the Dagster instance's config, made before any work."""
    settings.prepare()


def dagster_instance(settings: LoomSettings) -> DagsterInstance:
    """The instance under settings.dagster_home, found without writing DAGSTER_HOME anywhere."""
    from dagster import DagsterInstance

    return DagsterInstance.from_config(str(settings.dagster_home))


@dataclass(frozen=True)
class Registration:
    source: Source
    created: bool
    moved_from: str | None = None  # the root a `replace` took the name from
    retired: int = 0  # documents of that root retired by the move

    def describe(self) -> str:
        where = printable(self.source.root)
        if self.moved_from is not None:
            return (
                f"source {self.source.name} moved from {printable(self.moved_from)} to {where}: "
                f"{self.retired} documents of the old folder retired"
            )
        return f"{'registered' if self.created else 'updated'} {self.source.name}: {where}"


def register(
    settings: LoomSettings,
    folder: Path,
    *,
    name: str | None = None,
    include: Sequence[str] = ("**/*",),
    options: Sequence[OptionRule] | None = None,
    replace: bool = False,
    tags: Sequence[str] | None = None,
) -> Registration:
    """Register `folder`, found by its resolved root first, so no folder replaces another.

    A root registered before keeps its source (its include globs updated, its options too
    unless `options` is None); a new root is named after its folder, made unique (`notes-2`) if another root has the name. An
    explicit `name` another root has is refused (`source_exists`), unless `replace`: then the
    name moves to this root and the documents of the old one are retired, and said to be.
    A root registered under another name than the one given is refused (`root_registered`).
    `tags` replace the source's tags (None keeps them); the chunks it has in search are
    re-tagged before this returns, so a `--tag` filter finds them at once.
    """
    if not folder.is_dir():
        raise SourceError(
            f"folder {printable(str(folder))} does not exist or is not a folder",
            code="missing_folder",
        )
    root = str(folder.resolve())
    given = None if options is None else tuple(check_option(rule) for rule in options)
    given_tags = None if tags is None else tuple(dict.fromkeys(validate_tag(t) for t in tags))
    if name is not None:
        validate_source_name(name)
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        here = catalog.source_at(con, root)
        if here is not None and name is not None and here.name != name:
            raise SourceError(
                f"folder {printable(root)} is registered as source {here.name!r}; "
                f"use --name {here.name} (or none)",
                code="root_registered",
            )
        chosen = here.name if here is not None else name or _unique_name(con, root)
        taken = catalog.get_source(con, chosen)
        moved_from, retired = None, 0
        if taken is not None and taken.root != root:
            if not replace:
                raise SourceError(
                    f"source {chosen!r} is the folder {printable(taken.root)}; give another "
                    "--name, or --replace to move the name here and retire its documents",
                    code="source_exists",
                )
            moved_from = taken.root
            paths = catalog.live_document_paths(con, chosen)
            retired = len(
                pipeline.retire(
                    con,
                    LexicalIndex(settings.search_dir),
                    chosen,
                    paths,
                    vectors=open_vectors(settings),
                )
            )
        kept = here.options if here is not None else ()
        kept_tags = taken.tags if taken is not None else ()
        source = Source(
            chosen,
            root,
            tuple(include),
            kept if given is None else given,
            kept_tags if given_tags is None else given_tags,
        )
        catalog.upsert_source(con, source)
        if taken is not None and source.tags != taken.tags:
            catalog.unmark_indexed(con, chosen)
            pipeline.reconcile(
                con, LexicalIndex(settings.search_dir), ObjectStore(settings.object_store_url)
            )
    return Registration(source, taken is None, moved_from, retired)


def _unique_name(con: duckdb.DuckDBPyConnection, root: str) -> str:
    base = validate_source_name(source_name_for(Path(root)))
    candidate, number = base, 1
    while catalog.get_source(con, candidate) is not None:
        number += 1
        candidate = f"{base[:60]}-{number}"
    return candidate


def register_source(
    settings: LoomSettings,
    folder: Path,
    *,
    name: str | None = None,
    include: Sequence[str] = ("**/*",),
    options: Sequence[OptionRule] | None = None,
    replace: bool = False,
) -> Source:
    return register(
        settings, folder, name=name, include=include, options=options, replace=replace
    ).source


def ingest_folder(
    folder: Path,
    *,
    name: str | None = None,
    include: Sequence[str] = ("**/*",),
    options: Sequence[OptionRule] | None = None,
    replace: bool = False,
    progress: Progress = lambda _: None,
    settings: LoomSettings | None = None,
    tags: Sequence[str] | None = None,
    reprocess_stale: bool = False,
) -> IngestReport:
    """Register `folder`, then extract, chunk and publish every new revision through Dagster.

    With `reprocess_stale`, also every live revision whose artifact a parser made that its
    format's extractor no longer declares (parsers.py): re-extracted and published again.

    One ingest of a source runs at a time (a second waits, then finds nothing left to do);
    runs a killed ingest left behind are ended first; SIGINT or SIGTERM stops it with
    runs.Interrupted, its run canceled and its slots freed.
    """
    if settings is None:  # every setting, so a bad one stops here, before any work
        settings = LoomSettings.from_env()
    prepare_environment(settings)
    # A `loom ui`'s daemon ingests the home's folders itself: two at once would run files twice.
    dagster_dev.refuse_if_daemon_runs(settings.home, "loom ingest")
    # A missing bucket or refused credentials would fail every file, one retry after another.
    ObjectStore(settings.object_store_url).check()
    # Locked by folder, not by name: the name is settled by the registration, inside the lock.
    with runs.stopped_by_signals(), runs.ingest_lock(settings.home, folder, progress):
        return _ingest(
            settings, folder, name, include, options, replace, progress, tags, reprocess_stale
        )


def _ingest(
    settings: LoomSettings,
    folder: Path,
    name: str | None,
    include: Sequence[str],
    options: Sequence[OptionRule] | None,
    replace: bool,
    progress: Progress,
    tags: Sequence[str] | None = None,
    reprocess_stale: bool = False,
) -> IngestReport:
    from loom_dagster.assets.revisions import report_retired

    # No record of a complete ingest until this one completes (an exception leaves none).
    quick.forget(settings)
    instance = dagster_instance(settings)
    reaped = runs.reap_dead_runs(instance)
    if reaped:
        progress(f"marked {len(reaped)} run(s) of a process that is gone as failed, slots freed")
    registration = register(
        settings, folder, name=name, include=include, options=options, replace=replace, tags=tags
    )
    if registration.moved_from is not None or registration.created:
        progress(registration.describe())
    source = registration.source
    index = LexicalIndex(settings.search_dir)
    catalog_db = CatalogResource(database=str(settings.catalog_path))
    with catalog_db.connect() as con:
        # What a crash between the catalog's commit and the index's left unsearchable.
        repaired = pipeline.reconcile(
            con, index, ObjectStore(settings.object_store_url), vectors=open_vectors(settings)
        )
        if repaired:
            progress(f"search index repaired for {len(repaired)} document(s)")
        scan = pipeline.sync_source(con, index, source)
        # A deleted file's datasets stopped serving with its document; their snapshots go now.
        pipeline.drop_stale_datasets(con, ObjectStore(settings.object_store_url))
        retired = catalog.document_states(
            con, {document_id(source.name, path) for path in scan.deleted}
        )
        # Revisions an earlier run registered but never finished are taken up again.
        todo = catalog.pending_revisions(con, source.name)
    report_retired(instance, retired)
    report = IngestReport(source.name, retired=list(scan.deleted))
    stale = stale_live_revisions(settings, source.name, todo) if reprocess_stale else {}
    todo += [revision for revision, _ in stale.values()]
    waiting = {revision.path for revision in todo}
    report.outcomes.extend(FileOutcome("unchanged", p) for p in scan.unchanged if p not in waiting)
    # Refused by the scan itself (a name that is not UTF-8, a file swapped while it was read);
    # a path with a revision waiting gets that revision's outcome instead.
    report.outcomes.extend(
        FileOutcome("refused", r.path, None, f"{r.code}: {r.message}")
        for r in scan.refused
        if r.path not in waiting
    )
    keys = [revision.key for revision in todo]
    progress(
        f"{source.name}: {len(todo)} to process, {len(scan.unchanged) - len(waiting & set(scan.unchanged))} "
        f"unchanged, {len(scan.deleted)} deleted"
    )
    failed_runs: dict[str, str] = {}
    if keys:
        failed_runs = materialize_in_batches(instance, keys, settings, progress)
    # Superseded and retired revisions leave the partition set, so it stays far below
    # Dagster's 100,000 per asset however often the files change.
    pruned: list[str] = []
    prune_partitions_now(instance, catalog_db, settings.retention, planned=pruned.extend)
    with catalog_db.connect() as con:
        # The runs publish the lexical index; the vectors follow the catalog here.
        pipeline.sync_vectors(con, open_vectors(settings), ObjectStore(settings.object_store_url))
        outcomes = catalog.outcomes_for(con, keys)
        searchable = catalog.searchable(con, keys)
        # What the next ingest finds unchanged, it answers without Dagster (quick.py).
        quick.remember(settings, con, pruned)
    store = ObjectStore(settings.object_store_url)
    for revision in todo:
        outcome = outcomes.get(revision.key)
        if outcome is None:
            report.outcomes.append(
                FileOutcome(
                    "failed",
                    revision.path,
                    revision.key,
                    "no outcome recorded: the run failed: "
                    + failed_runs.get(revision.key, "see the Dagster UI"),
                )
            )
        elif outcome.code == catalog.RETRIES_EXHAUSTED:
            # Not the file's fault, and not an end: the next ingest tries it again. Seed 000's
            # faults table names it failed, so the identity does not hold and the exit is 1.
            report.outcomes.append(
                FileOutcome(
                    "failed", revision.path, revision.key, f"{outcome.code}: {outcome.message}"
                )
            )
        elif outcome.status == catalog.REFUSED:
            report.outcomes.append(
                FileOutcome(
                    "refused", revision.path, revision.key, f"{outcome.code}: {outcome.message}"
                )
            )
        elif outcome.status == catalog.PUBLISHED and revision.key not in searchable:
            # The identity counts what search can find, not what the catalog says.
            report.outcomes.append(
                FileOutcome(
                    "failed",
                    revision.path,
                    revision.key,
                    "published in the catalog but not yet in search: the next ingest repairs it",
                )
            )
        else:
            extraction = pipeline.read_extraction(store, revision.key)
            gaps = (
                f" (incomplete: {extraction.describe_gaps()})"
                if extraction is not None and extraction.incomplete
                else ""
            )
            report.outcomes.append(
                FileOutcome(
                    "published",
                    revision.path,
                    revision.key,
                    f"{outcome.chunk_count} chunks"
                    + (" (superseded)" if outcome.status == catalog.SUPERSEDED else "")
                    + gaps
                    + (
                        f" (reprocessed: {stale[revision.key][1].made_by} -> "
                        f"{stale[revision.key][1].now})"
                        if revision.key in stale
                        else ""
                    ),
                    incomplete=bool(gaps),
                )
            )
    report.outcomes.sort(key=lambda o: o.path)
    return report


def stale_live_revisions(
    settings: LoomSettings, source: str, pending: Sequence[Revision]
) -> dict[str, tuple[Revision, parsers.Staleness]]:
    """The source's live revisions a parser upgrade left stale, as the extractors declare
    their parsers now; a file with a newer revision waiting is left to that revision."""
    with (
        configured_or_local(settings.extractor) as configured,
        ExtractorClient(configured) as client,
    ):
        declared = client.declared_parsers()
    busy = {revision.path for revision in pending}
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        live = [
            catalog.get_revision(con, key)
            for _, owner, path, key in catalog.live_documents(con)
            if owner == source and path not in busy
        ]
    found = parsers.stale_revisions(
        ObjectStore(settings.object_store_url), [r.key for r in live], declared
    )
    return {r.key: (r, found[r.key]) for r in live if r.key in found}


def materialize_in_batches(
    instance: object,
    keys: Sequence[str],
    settings: LoomSettings,
    progress: Progress = lambda _: None,
) -> dict[str, str]:
    """Run the ingest job over `keys`, a run per batch of neighbouring partitions; returns why
    its run failed for each key of a failed run.

    Each run is tagged with this process's identity, so a later ingest can tell the run was
    orphaned if this process dies; SIGINT/SIGTERM (runs.Interrupted) cancels the current run.
    """
    from dagster import DagsterInstance
    from dagster._core.storage.tags import (
        ASSET_PARTITION_RANGE_END_TAG,
        ASSET_PARTITION_RANGE_START_TAG,
    )

    from loom_dagster.definitions import build_definitions
    from loom_dagster.event_log import batched_events
    from loom_dagster.jobs import INGEST_JOB
    from loom_dagster.partitions import PARTITIONS_NAME, contiguous_batches

    assert isinstance(instance, DagsterInstance)
    existing = instance.get_dynamic_partitions(PARTITIONS_NAME)
    instance.add_dynamic_partitions(PARTITIONS_NAME, sorted(set(keys) - set(existing)))
    job = build_definitions(settings).resolve_job_def(INGEST_JOB)
    batches = contiguous_batches(
        instance.get_dynamic_partitions(PARTITIONS_NAME), keys, settings.batch_size
    )
    identity = runs.this_process()
    failed: dict[str, str] = {}

    def run_all() -> None:
        for number, batch in enumerate(batches, start=1):
            progress(f"run {number}/{len(batches)}: {len(batch)} revisions")
            # The run's planned materializations (one per asset and revision) in one write.
            with batched_events(instance):
                result = job.execute_in_process(
                    instance=instance,
                    raise_on_error=False,
                    # The command prints a line per outcome; the run's own log, failures and their
                    # tracebacks included, is in the instance for the UI. Nothing Dagster logs is
                    # something a user of the command can act on, so its console says nothing.
                    run_config={"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}},
                    tags={
                        ASSET_PARTITION_RANGE_START_TAG: batch[0],
                        ASSET_PARTITION_RANGE_END_TAG: batch[-1],
                        runs.PROCESS_TAG: identity.tag(),
                    },
                )
            if not result.success:
                reason = runs.failure_reason(instance, result.run_id)
                failed.update(dict.fromkeys(batch, reason))
                progress(f"run {number}/{len(batches)} failed: {result.run_id}: {reason}")

    def on_stop(interrupted: runs.Interrupted) -> None:
        runs.end_own_runs(instance, identity, f"loom ingest was {interrupted.message}")

    runs.run_stoppably(run_all, on_stop)
    return failed


def sources() -> list[catalog.SourceSummary]:
    """Every registered source with its options, last scan and document counts."""
    return quick.sources()


@dataclass(frozen=True)
class FileHistory:
    source: str
    path: str
    revisions: list[catalog.RevisionHistory]
    # Revisions whose parser is not the one the last run saw declared for their format.
    stale: dict[str, parsers.Staleness] = field(default_factory=dict)


def show(target: str) -> FileHistory:
    """Every revision of one file: `SOURCE:RELPATH`, or a path inside a registered folder."""
    settings = LoomSettings.from_env()
    settings.prepare()
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        source, path = _locate(con, target)
        history = catalog.file_history(con, source, path)
    if not history:
        raise SourceError(
            f"{printable(source)}:{printable(path)} has no registered revision", code="unknown_file"
        )
    stale = parsers.stale_revisions(
        ObjectStore(settings.object_store_url),
        [entry.revision.key for entry in history if entry.status in ("live", catalog.SUPERSEDED)],
        parsers.read_declared(settings.home),
    )
    return FileHistory(source, path, history, stale)


def _locate(con: duckdb.DuckDBPyConnection, target: str) -> tuple[str, str]:
    prefix, colon, rest = target.partition(":")
    if colon and rest and catalog.get_source(con, prefix) is not None:
        return prefix, rest
    absolute = Path(target).absolute()
    # Resolve the folder, not the file: the file may be gone, or a symlink loom never follows.
    folder = absolute.parent.resolve()
    holding = [
        source
        for source in catalog.list_sources(con)
        if folder == Path(source.root) or Path(source.root) in folder.parents
    ]
    if holding:  # folders may nest: the innermost one holds the file
        source = max(holding, key=lambda s: len(s.root))
        return source.name, (folder / absolute.name).relative_to(source.root).as_posix()
    raise SourceError(
        f"{one_line(target)} is in no registered folder and names no SOURCE:PATH",
        code="unknown_file",
    )


def search(
    text: str,
    *,
    limit: int = 10,
    formats: Sequence[str] = (),
    sources: Sequence[str] = (),
    block_types: Sequence[str] = (),
    tags: Sequence[str] = (),
    path_prefix: str = "",
    legs: Sequence[Leg] | None = None,
) -> list[SearchHit]:
    """The fused search (exact keys and BM25, or the `legs` given) over the published chunks,
    filtered inside every leg; a bad request raises service.BadSearch."""
    search_filter = make_filter(
        formats=formats,
        sources=sources,
        block_types=block_types,
        tags=tags,
        path_prefix=path_prefix,
    )
    index = open_index()
    if legs is None:
        legs = default_legs(index, open_vector_leg(index))
    return search_chunks(index, text, search_filter, limit=limit, legs=legs)


# Retention, garbage collection and removing a source ------------------------------------------


def prune_partitions_now(
    instance: object,
    catalog_db: CatalogResource,
    retention: lifecycle.Retention,
    *,
    dry_run: bool = False,
    planned: Callable[[Sequence[str]], None] = lambda _: None,
) -> list[str]:
    """Delete the partitions of revisions retention no longer keeps (ingest calls this);
    `planned` is given every key the plan prunes, deleted now or before."""
    from dagster import DagsterInstance

    from loom_dagster.partitions import prune_partitions

    assert isinstance(instance, DagsterInstance)
    # Under the catalog's connection: no revision is registered (or revived) between the
    # plan and the deletions.
    with catalog_db.connect() as con:
        plan = lifecycle.plan_retention(catalog.revision_states(con), retention)
        doomed = prune_partitions(instance, plan.pruned, dry_run=dry_run)
        planned(plan.pruned)
        return doomed


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
            pipeline.sync_source(con, LexicalIndex(settings.search_dir), source)
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


# Datasets --------------------------------------------------------------------------------------


def datasets() -> list[Dataset]:
    """Every served dataset."""
    from loom_dagster.datasets.catalog import list_served

    settings = LoomSettings.from_env()
    settings.prepare()
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        return list_served(con)


def dataset(id_or_name: str) -> Dataset:
    """The served dataset with this id or name (unknown_dataset when none is served)."""
    from loom_dagster.datasets.catalog import DatasetError, served_dataset

    settings = LoomSettings.from_env()
    settings.prepare()
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        found = served_dataset(con, id_or_name)
    if found is None:
        raise DatasetError(
            f"no served dataset has the id or name {one_line(id_or_name, 200)!r}",
            code="unknown_dataset",
        )
    return found


def approve_dataset(
    id_or_name: str, types: Mapping[str, str], *, revision: str | None = None
) -> Dataset:
    """Approve a served dataset, retyping the columns `types` names (datasets.approve)."""
    from loom_dagster.datasets.approve import approve

    settings = LoomSettings.from_env()
    settings.prepare()
    store = ObjectStore(settings.object_store_url)
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        return approve(con, store, id_or_name, types, revision=revision)


# Queries ---------------------------------------------------------------------------------------


def query(plan: str | bytes | Mapping[str, object], *, ceilings: Ceilings | None = None) -> Answer:
    """Answer a typed plan (seed 000 "Queries") over the served datasets, with its receipt."""
    from loom_dagster.query.catalog import ServedDatasets
    from loom_dagster.query.run import StoreSnapshots
    from loom_dagster.query.service import run_query

    settings = LoomSettings.from_env()
    settings.prepare()
    files = StoreSnapshots(ObjectStore(settings.object_store_url))
    return run_query(plan, ServedDatasets(settings.catalog_path), files, ceilings)


def sql(text: str, *, ceilings: Ceilings | None = None) -> Answer:
    """Answer one allowlisted SELECT over dataset names as tables (`loom sql`)."""
    from loom_dagster.query.catalog import ServedDatasets
    from loom_dagster.query.run import StoreSnapshots
    from loom_dagster.query.service import run_sql

    settings = LoomSettings.from_env()
    settings.prepare()
    files = StoreSnapshots(ObjectStore(settings.object_store_url))
    return run_sql(text, ServedDatasets(settings.catalog_path), files, ceilings)


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
