"""Loom's Python API: what the `loom` command does, callable from code and tests.

`ingest_folder` drives Dagster for real: it registers the folder, adds a partition per new
revision to the instance under LOOM_HOME, and materializes them in batched runs of the
`ingest` job, so the UI shows the runs, partitions and checks the command made.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from loom_dagster import catalog, pipeline, runs
from loom_dagster.errors import SourceError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.resources.extractor import (
    ExtractorClient,
    ExtractorSettings,
    ServiceLimits,
    configured_or_local,
)
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.retries import RetrySettings
from loom_dagster.search.lexical import Hit, LexicalIndex
from loom_dagster.settings import LoomSettings
from loom_dagster.sources import Source, source_name_for, validate_source_name

Progress = Callable[[str], None]


@dataclass(frozen=True)
class FileOutcome:
    status: str  # published, refused, unchanged, failed
    path: str
    revision: str | None = None
    detail: str = ""


@dataclass
class IngestReport:
    source: str
    outcomes: list[FileOutcome] = field(default_factory=list)
    retired: list[str] = field(default_factory=list)

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def files(self) -> int:
        return len(self.outcomes)

    @property
    def conserved(self) -> bool:
        """files = published + refused + unchanged: every file ends in exactly one of them."""
        return self.files == self.count("published") + self.count("refused") + self.count(
            "unchanged"
        )


def prepare_environment(settings: LoomSettings) -> None:
    """DAGSTER_HOME lives under LOOM_HOME, so the UI sees what the command line did."""
    settings.prepare()
    os.environ.setdefault("DAGSTER_HOME", str(settings.dagster_home))


def register_source(
    settings: LoomSettings,
    folder: Path,
    *,
    name: str | None = None,
    include: Sequence[str] = ("**/*",),
) -> Source:
    if not folder.is_dir():
        raise SourceError(
            f"folder {folder} does not exist or is not a folder", code="missing_folder"
        )
    source = Source(
        validate_source_name(name or source_name_for(folder.resolve())),
        str(folder.resolve()),
        tuple(include),
    )
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        catalog.upsert_source(con, source)
    return source


def ingest_folder(
    folder: Path,
    *,
    name: str | None = None,
    include: Sequence[str] = ("**/*",),
    progress: Progress = lambda _: None,
) -> IngestReport:
    """Register `folder`, then extract, chunk and publish every new revision through Dagster.

    One ingest of a source runs at a time (a second waits, then finds nothing left to do);
    runs a killed ingest left behind are ended first; SIGINT or SIGTERM stops it with
    runs.Interrupted, its run canceled and its slots freed.
    """
    settings = LoomSettings.from_env()
    ExtractorSettings.from_env(os.environ)  # a bad setting stops here, before any work
    RetrySettings.from_env(os.environ)
    ServiceLimits.from_env(os.environ)
    prepare_environment(settings)
    source_name = validate_source_name(name or source_name_for(folder.resolve()))
    with runs.stopped_by_signals(), runs.ingest_lock(settings.home, source_name, progress):
        return _ingest(settings, folder, source_name, include, progress)


def _ingest(
    settings: LoomSettings,
    folder: Path,
    name: str,
    include: Sequence[str],
    progress: Progress,
) -> IngestReport:
    from dagster import DagsterInstance

    instance = DagsterInstance.get()
    reaped = runs.reap_dead_runs(instance)
    if reaped:
        progress(f"marked {len(reaped)} run(s) of a process that is gone as failed, slots freed")
    source = register_source(settings, folder, name=name, include=include)
    index = LexicalIndex(settings.search_dir)
    catalog_db = CatalogResource(database=str(settings.catalog_path))
    with catalog_db.connect() as con:
        # What a crash between the catalog's commit and the index's left unsearchable.
        repaired = pipeline.reconcile(con, index, ObjectStore(settings.object_store_url))
        if repaired:
            progress(f"search index repaired for {len(repaired)} document(s)")
        scan = pipeline.sync_source(con, index, source)
        # Revisions an earlier run registered but never finished are taken up again.
        todo = catalog.pending_revisions(con, source.name)
    report = IngestReport(source.name, retired=list(scan.deleted))
    waiting = {revision.path for revision in todo}
    report.outcomes.extend(FileOutcome("unchanged", p) for p in scan.unchanged if p not in waiting)
    keys = [revision.key for revision in todo]
    progress(
        f"{source.name}: {len(todo)} to process, {len(scan.unchanged) - len(waiting & set(scan.unchanged))} "
        f"unchanged, {len(scan.deleted)} deleted"
    )
    if keys:
        materialize_in_batches(instance, keys, settings.batch_size, progress)
    with catalog_db.connect() as con:
        outcomes = catalog.outcomes_for(con, keys)
        searchable = catalog.searchable(con, keys)
    for revision in todo:
        outcome = outcomes.get(revision.key)
        if outcome is None:
            report.outcomes.append(
                FileOutcome(
                    "failed",
                    revision.path,
                    revision.key,
                    "no outcome recorded: the run failed (see the Dagster UI)",
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
            report.outcomes.append(
                FileOutcome(
                    "published",
                    revision.path,
                    revision.key,
                    f"{outcome.chunk_count} chunks"
                    + (" (superseded)" if outcome.status == catalog.SUPERSEDED else ""),
                )
            )
    report.outcomes.sort(key=lambda o: o.path)
    return report


def materialize_in_batches(
    instance: object, keys: Sequence[str], batch_size: int, progress: Progress = lambda _: None
) -> None:
    """Run the ingest job over `keys`, a run per batch of neighbouring partitions.

    Each run is tagged with this process's identity, so a later ingest can tell the run was
    orphaned if this process dies; SIGINT/SIGTERM (runs.Interrupted) cancels the current run.
    """
    from dagster import DagsterInstance
    from dagster._core.storage.tags import (
        ASSET_PARTITION_RANGE_END_TAG,
        ASSET_PARTITION_RANGE_START_TAG,
    )

    from loom_dagster.definitions import build_definitions
    from loom_dagster.jobs import INGEST_JOB
    from loom_dagster.partitions import PARTITIONS_NAME

    assert isinstance(instance, DagsterInstance)
    existing = instance.get_dynamic_partitions(PARTITIONS_NAME)
    instance.add_dynamic_partitions(PARTITIONS_NAME, sorted(set(keys) - set(existing)))
    job = build_definitions(LoomSettings.from_env()).resolve_job_def(INGEST_JOB)
    batches = contiguous_batches(instance.get_dynamic_partitions(PARTITIONS_NAME), keys, batch_size)
    identity = runs.this_process()

    def run_all() -> None:
        for number, batch in enumerate(batches, start=1):
            progress(f"run {number}/{len(batches)}: {len(batch)} revisions")
            result = job.execute_in_process(
                instance=instance,
                raise_on_error=False,
                # The command prints a line per outcome; the run's own log is in the UI.
                run_config={"loggers": {"console": {"config": {"log_level": "ERROR"}}}},
                tags={
                    ASSET_PARTITION_RANGE_START_TAG: batch[0],
                    ASSET_PARTITION_RANGE_END_TAG: batch[-1],
                    runs.PROCESS_TAG: identity.tag(),
                },
            )
            if not result.success:
                progress(
                    f"run {number}/{len(batches)} failed: {result.run_id} (see the Dagster UI)"
                )

    def on_stop(interrupted: runs.Interrupted) -> None:
        runs.end_own_runs(instance, identity, f"loom ingest was {interrupted.message}")

    runs.run_stoppably(run_all, on_stop)


def contiguous_batches(ordered: Sequence[str], keys: Sequence[str], size: int) -> list[list[str]]:
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


def search(
    text: str, *, limit: int = 10, formats: Sequence[str] = (), sources: Sequence[str] = ()
) -> list[Hit]:
    settings = LoomSettings.from_env()
    settings.prepare()
    return LexicalIndex(settings.search_dir).search(
        text, limit=limit, formats=formats, sources=sources
    )


def formats() -> dict[str, str]:
    configured = ExtractorSettings.from_env(os.environ)
    with configured_or_local(configured) as settings, ExtractorClient(settings) as client:
        return client.available_formats()
