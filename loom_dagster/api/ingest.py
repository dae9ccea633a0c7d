"""`ingest_folder`: register a folder, then extract, chunk and publish every new revision in
batched runs of the `ingest` job, and report each file's outcome."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from loom_dagster import catalog, dagster_dev, pipeline, runs
from loom_dagster.api import quick
from loom_dagster.api.cleanup import prune_partitions_now
from loom_dagster.api.home import dagster_instance, prepare_environment
from loom_dagster.api.registration import register
from loom_dagster.api.reports import FileOutcome, IngestReport
from loom_dagster.extractor.client import ExtractorClient, configured_or_local
from loom_dagster.objectstore import ObjectStore
from loom_dagster.pipeline import parsers
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.search.vector import open_vectors
from loom_dagster.settings import LoomSettings
from loom_dagster.sources import OptionRule, Revision, document_id

Progress = Callable[[str], None]


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
    confirm_retire: bool = False,
) -> IngestReport:
    """Register `folder`, then extract, chunk and publish every new revision through Dagster.

    With `reprocess_stale`, also every live revision whose artifact a parser made that its
    format's extractor no longer declares (pipeline/parsers.py): re-extracted and published again.
    Deletions the retire guard holds (settings.retire_guard) stay live unless `confirm_retire`.

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
            settings,
            folder,
            name,
            include,
            options,
            replace,
            progress,
            tags,
            reprocess_stale,
            confirm_retire,
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
    confirm_retire: bool = False,
) -> IngestReport:
    from loom_dagster.assets import report_retired

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
        scan = pipeline.sync_source(
            con,
            index,
            source,
            max_bytes=settings.limits.max_bytes,
            guard=settings.retire_guard,
            confirm_retire=confirm_retire,
        )
        # A deleted file's datasets stopped serving with its document; their snapshots go now.
        pipeline.drop_stale_datasets(con, ObjectStore(settings.object_store_url))
        retired = catalog.document_states(
            con, {document_id(source.name, path) for path in scan.deleted}
        )
        # Revisions an earlier run registered but never finished are taken up again.
        todo = catalog.pending_revisions(con, source.name)
    report_retired(instance, retired)
    report = IngestReport(source.name, retired=list(scan.deleted), held=list(scan.held))
    if scan.held:
        report.held_line = pipeline.held_line(source.name, scan)
        progress(report.held_line)
    # Not taken, each with its reason: a symlink, a FIFO, a folder that cannot be read.
    report.outcomes.extend(
        FileOutcome("skipped", s.path, None, f"{s.code}: {s.message}") for s in scan.skipped
    )
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
    # Dagster's 100,000 per asset however often the files change; and past the partition
    # window, the settled revisions' partitions added first.
    pruned: list[str] = []
    prune_partitions_now(
        instance,
        catalog_db,
        settings.retention,
        window=settings.partition_window,
        planned=pruned.extend,
    )
    with catalog_db.connect() as con:
        # The runs publish the lexical index; the vectors follow the catalog here. With nothing
        # run or retired since reconcile synced them, they match it already: a second read of
        # every live document (a million) would find nothing to do.
        if keys or scan.deleted:
            pipeline.sync_vectors(
                con, open_vectors(settings), ObjectStore(settings.object_store_url)
            )
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
