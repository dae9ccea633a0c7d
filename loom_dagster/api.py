"""Loom's Python API: what the `loom` command does, callable from code and tests.

`ingest_folder` drives Dagster for real: it registers the folder, adds a partition per new
revision to the instance under LOOM_HOME, and materializes them in batched runs of the
`ingest` job, so the UI shows the runs, partitions and checks the command made.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from loom_dagster import catalog, lifecycle, pipeline
from loom_dagster.errors import ExtractorUnavailable, SourceError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.resources.extractor import ExtractorClient, ExtractorSettings, configured_or_local
from loom_dagster.resources.storage import CatalogResource
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
    """Register `folder`, then extract, chunk and publish every new revision through Dagster."""
    from dagster import DagsterInstance

    settings = LoomSettings.from_env()
    ExtractorSettings.from_env(os.environ)  # a bad setting stops here, before any work
    lifecycle.Retention.from_env()
    prepare_environment(settings)
    source = register_source(settings, folder, name=name, include=include)
    index = LexicalIndex(settings.search_dir)
    catalog_db = CatalogResource(database=str(settings.catalog_path))
    with catalog_db.connect() as con:
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
        materialize_in_batches(DagsterInstance.get(), keys, settings.batch_size, progress)
    # Superseded and retired revisions leave the partition set, so it stays far below
    # Dagster's 100,000 per asset however often the files change.
    prune_partitions_now(DagsterInstance.get(), catalog_db)
    with catalog_db.connect() as con:
        outcomes = catalog.outcomes_for(con, keys)
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
    """Run the ingest job over `keys`, a run per batch of neighbouring partitions."""
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
    for number, batch in enumerate(batches, start=1):
        progress(f"run {number}/{len(batches)}: {len(batch)} revisions")
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
            },
        )
        if not result.success:
            progress(f"run {number}/{len(batches)} failed: {result.run_id} (see the Dagster UI)")


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


@dataclass(frozen=True)
class FormatsAnswer:
    """Each format's availability, and each configured extractor that could not be read."""

    states: dict[str, str]  # format -> available, unavailable or unknown
    unreadable: list[ExtractorUnavailable]

    @property
    def known(self) -> bool:
        """Whether any format's state was learnt (not every service was unreadable)."""
        return any(state != "unknown" for state in self.states.values())


def formats() -> FormatsAnswer:
    configured = ExtractorSettings.from_env(os.environ)
    with configured_or_local(configured) as settings, ExtractorClient(settings) as client:
        states = client.available_formats()
        # With no media type given, a format goes to exactly one service (url_for), so an
        # unknown format names the service that could not be read.
        unknown = {settings.url_for(fmt) for fmt, state in states.items() if state == "unknown"}
    return FormatsAnswer(
        states,
        [
            ExtractorUnavailable(
                f"the extractor at {url} cannot be read: it is unreachable, refused the token,"
                " or did not answer GET /v1/capabilities as contract v1"
            )
            for url in sorted(url for url in unknown if url is not None)
        ],
    )


# Retention, garbage collection and removing a source ------------------------------------------


def prune_partitions_now(
    instance: object, catalog_db: CatalogResource, *, dry_run: bool = False
) -> list[str]:
    """Delete the partitions of revisions retention no longer keeps (ingest calls this)."""
    from dagster import DagsterInstance

    from loom_dagster.partitions import prune_partitions

    assert isinstance(instance, DagsterInstance)
    retention = lifecycle.Retention.from_env()
    # Under the catalog's connection: no revision is registered (or revived) between the
    # plan and the deletions.
    with catalog_db.connect() as con:
        plan = lifecycle.plan_retention(catalog.revision_states(con), retention)
        return prune_partitions(instance, plan.pruned, dry_run=dry_run)


def collect_garbage(
    *, dry_run: bool = False, grace_s: float = lifecycle.DEFAULT_GRACE_S
) -> lifecycle.Collected:
    """Prune the partitions of revisions retention does not keep, and delete the objects no
    kept revision references (with `dry_run`, only say which)."""
    from dagster import DagsterInstance

    from loom_dagster.partitions import prune_partitions

    settings = LoomSettings.from_env()
    retention = lifecycle.Retention.from_env()
    prepare_environment(settings)
    store = ObjectStore(settings.object_store_url)
    # Listed before the catalog is held: listing is the slow part, and an object written
    # after the listing is simply not considered.
    objects = lifecycle.list_store(store)
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        states = catalog.revision_states(con)
        plan = lifecycle.plan_retention(states, retention)
        partitions = prune_partitions(DagsterInstance.get(), plan.pruned, dry_run=dry_run)
        collected = lifecycle.collect(
            store, states, plan, grace_s=grace_s, dry_run=dry_run, objects=objects
        )
    return replace(collected, partitions=tuple(partitions))


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
    from dagster import DagsterInstance

    from loom_dagster.partitions import prune_partitions

    settings = LoomSettings.from_env()
    retention = lifecycle.Retention.from_env()
    prepare_environment(settings)
    store = ObjectStore(settings.object_store_url)
    objects = lifecycle.list_store(store) if purge and confirmed else []
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        catalog.source_root(con, name)  # an unknown source is an error, not a silent no-op
        active = catalog.active_documents(con, name)
        if (active or purge) and not confirmed:
            return Removal(name, active, done=False)
        # The source row goes last: interrupted anywhere, the command can run again. The
        # connection is held throughout, so no scan sees the source half removed.
        pipeline.retire(
            con, LexicalIndex(settings.search_dir), name, catalog.source_paths(con, name)
        )
        states = catalog.revision_states(con)
        own = [s for s in states if s.source == name]
        purged = None
        if purge:
            partitions = prune_partitions(DagsterInstance.get(), [s.key for s in own])
            purged = lifecycle.purge(store, states, name, retention, objects=objects)
            purged = replace(purged, partitions=tuple(partitions))
        else:
            # A revision no run has finished can no longer run (its folder is forgotten and its
            # document retired); left as a missing partition, automation would keep trying it
            # and fail the batch it shares with other sources' revisions.
            prune_partitions(DagsterInstance.get(), [s.key for s in own if s.status is None])
        catalog.remove_source(con, name)
    return Removal(name, active, done=True, purged=purged)
