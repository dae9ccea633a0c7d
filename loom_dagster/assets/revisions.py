"""The asset graph of one source revision: original -> artifact -> chunks -> published.

Each step runs for a batch of revisions (a partition key range) and loops over them; the work
for one revision is a function in `loom_dagster.pipeline`. A refused revision is an outcome
recorded for it, never a failure of its batch.

What the UI shows is per revision, never the batch's sum: `original` and `artifact` add each
partition's own metadata to the materialization Dagster makes for it
(`context.add_asset_metadata(..., partition_key=...)`), then log the `extracted` and `complete`
checks of each partition against that materialization. `chunks` and `published` are one step
whose outputs Dagster does not materialize on its own (skippable specs): it logs an
`AssetMaterialization` for exactly the partitions it chunked and made live, so a refused
revision has none, and records an `AssetObservation` on `published` for a refused or superseded
one, saying which.
"""

import os
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from dagster import (
    AssetCheckEvaluation,
    AssetCheckKey,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetMaterialization,
    AssetObservation,
    AssetRecordsFilter,
    AssetsDefinition,
    AssetSpec,
    AutomationCondition,
    DagsterInstance,
    Failure,
    MaterializeResult,
    MetadataValue,
    Output,
    RetryRequested,
    TableColumn,
    TableSchema,
    asset,
    multi_asset,
)
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)
from dagster._core.events import DagsterEventType
from sqlalchemy.exc import IntegrityError

from loom_dagster import catalog, hold, parsers, pipeline
from loom_dagster.chunking import Chunk
from loom_dagster.contract.metadata import metadata_text
from loom_dagster.datasets.catalog import datasets_of_revisions
from loom_dagster.datasets.model import Dataset, DatasetState
from loom_dagster.errors import LoomError, SourceError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.partitions import AFTER_UPSTREAM, PARTITIONS_NAME, batch_policy, revisions
from loom_dagster.resources.events import EventBatchResource
from loom_dagster.resources.extractor import ExtractorResource
from loom_dagster.resources.settings import SettingsResource
from loom_dagster.resources.storage import (
    CatalogResource,
    ObjectStoreResource,
    SearchIndexResource,
)
from loom_dagster.retries import RetrySettings
from loom_dagster.sources import Revision

GROUP = "loom"
PREFIX = "loom"  # every asset key starts with it, so `chunks` meets no other location's
ORIGINAL, ARTIFACT, CHUNKS, PUBLISHED = (
    AssetKey([PREFIX, name]) for name in ("original", "artifact", "chunks", "published")
)
DATASETS = AssetKey([PREFIX, "datasets"])
TYPED_CHECK = "typed"
EXTRACTED_CHECK = "extracted"
COMPLETE_CHECK = "complete"
CURRENT_CHECK = "current_parser"
LIVE_CHECK = "live"
# The checks a run of the ingest job (and automation) evaluates for each partition it takes;
# `current_parser` is recorded only where it has news (a parser upgrade, a re-extraction).
RUN_CHECKS = (
    AssetCheckKey(ARTIFACT, EXTRACTED_CHECK),
    AssetCheckKey(ARTIFACT, COMPLETE_CHECK),
    AssetCheckKey(PUBLISHED, LIVE_CHECK),
    AssetCheckKey(DATASETS, TYPED_CHECK),
)
OWNERS = ["team:loom"]
PREVIEW_CHARS = 300
try:
    PACKAGE_VERSION = version("loom-dagster")
except PackageNotFoundError:  # run from a checkout that was never installed
    PACKAGE_VERSION = "0+unknown"
# Bumped with the artifact's shape or the contract: a new code version marks every partition
# of `artifact` stale in the UI, and whatever is downstream of it.
ARTIFACT_CODE_VERSION = f"contract-v1+loom-{PACKAGE_VERSION}"
# The longest string from a document, a path or a service put into a run's metadata.
METADATA_CHARS = 1000
# A revision's datasets shown in the UI, each with at most this many of its columns.
MAX_SCHEMAS, MAX_SCHEMA_COLUMNS = 20, 200
# A partition whose key no scan could register in its run: the file changed (or went) between
# the sensor's scan and the run; its new bytes, if any, are another partition.
UNREGISTERED = {
    "status": MetadataValue.text("unregistered"),
    "why": MetadataValue.text("the file changed or was deleted before this run could read it"),
}

# An unavailable extractor, object store or index fails the step as retryable: the step asks
# Dagster for a retry (RetryRequested) with a growing, jittered delay until the attempts in
# LOOM_RETRY_ATTEMPTS are spent. Refusals are outcomes and never raise.
BATCHED: dict[str, Any] = dict(
    partitions_def=revisions,
    backfill_policy=batch_policy,
    # Each step's events are written a batch at a time (event_log.py), in every run
    # whoever launched it; bound here, so no caller has to provide it.
    resource_defs={"event_batches": EventBatchResource()},
)
AUTOMATED: dict[str, Any] = dict(
    automation_condition=AutomationCondition.eager(),
    group_name=GROUP,
    owners=OWNERS,
    tags={"domain": "documents"},
)
# The sensor asks for each revision's first run: see partitions.AFTER_UPSTREAM.
ROOT = {**AUTOMATED, "automation_condition": None}
SKIPPABLE = {**AUTOMATED, "automation_condition": AFTER_UPSTREAM}


@contextmanager
def retried_only_when_retryable(retry: RetrySettings, retry_number: int = 0) -> Iterator[None]:
    """Retry what may pass on a later attempt, and nothing else.

    An unavailable service is retried with backoff; a defect fails the step at once, since
    running it again would fail the same way.
    """
    try:
        yield
    except (LoomError, OSError) as error:
        if isinstance(error, LoomError) and not error.retryable:
            raise Failure(metadata_text(error, METADATA_CHARS), allow_retries=False) from error
        raise RetryRequested(
            max_retries=retry.retries, seconds_to_wait=retry.delay(retry_number)
        ) from error
    except Exception as error:
        raise Failure(
            metadata_text(f"{type(error).__name__}: {error}", METADATA_CHARS), allow_retries=False
        ) from error


def registered(
    context: AssetExecutionContext, catalog_db: CatalogResource
) -> list[tuple[Revision, str]]:
    """The batch's registered revisions with their source folder, read in one short
    connection. A key with no record (its file changed again between the sensor's scan and
    the run: the new bytes are another partition) has nothing to run."""
    with catalog_db.connect() as con:  # two queries for the batch, whatever its size
        found = catalog.revisions_of(con, context.partition_keys)
        roots = catalog.source_roots(con, {revision.source for revision in found.values()})
    return [(revision, roots[revision.source]) for revision in found.values()]


def report_retired(instance: DagsterInstance, states: Sequence[catalog.DocumentRevision]) -> int:
    """Record, outside any run, the `live` check of revisions whose file was deleted (a scan
    retires them, not a run); returns how many it recorded."""
    gone = [s for s in states if s.document_status == "retired" and s.status == catalog.PUBLISHED]
    if not gone:
        return 0
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=PUBLISHED, asset_partitions=[s.key for s in gone]),
        limit=len(gone) * 4,
    ).records
    targets: dict[str, AssetCheckEvaluationTargetMaterializationData] = {}
    for record in reversed(records):  # oldest first: the latest of each partition wins
        if record.partition_key:
            targets[record.partition_key] = AssetCheckEvaluationTargetMaterializationData(
                storage_id=record.storage_id, run_id=record.run_id, timestamp=record.timestamp
            )
    recorded = 0
    for state in gone:
        try:
            instance.report_runless_asset_event(live_evaluation(state, targets.get(state.key)))
        except IntegrityError:
            # Dagster keeps one evaluation made outside a run per check and partition: a
            # revision retired, published again (same bytes) and retired again already has
            # one, and the UI keeps showing the later run's pass for it. The retirement itself
            # is in the catalog and search; failing the command here would lose nothing but
            # would stop it.
            continue
        recorded += 1
    return recorded


def add_partition_metadata(
    context: AssetExecutionContext, asset_key: AssetKey, facts: Mapping[str, Mapping[str, Any]]
) -> None:
    """Each partition's own metadata, merged by Dagster into that partition's materialization.

    Dagster checks every `add_asset_metadata(partition_key=...)` against the run's key range by
    reading the instance's dynamic partitions anew: a query listing every partition and two for
    the range's ends, per call (30 ms a call at 200 partitions on SQLite, and growing with the
    partition count). No partition is added or deleted while this step adds metadata, so for the
    loop the instance answers those two questions from one read.
    """
    instance = context.instance
    keys = instance.get_dynamic_partitions(PARTITIONS_NAME)
    known = set(keys)

    def get_dynamic_partitions(partitions_def_name: str) -> Sequence[str]:
        if partitions_def_name == PARTITIONS_NAME:
            return keys
        return DagsterInstance.get_dynamic_partitions(instance, partitions_def_name)

    def has_dynamic_partition(partitions_def_name: str, partition_key: str) -> bool:
        if partitions_def_name == PARTITIONS_NAME:
            return partition_key in known
        return DagsterInstance.has_dynamic_partition(instance, partitions_def_name, partition_key)

    setattr(instance, "get_dynamic_partitions", get_dynamic_partitions)  # noqa: B010
    setattr(instance, "has_dynamic_partition", has_dynamic_partition)  # noqa: B010
    try:
        for key, metadata in facts.items():
            context.add_asset_metadata(metadata, asset_key=asset_key, partition_key=key)
    finally:
        del instance.get_dynamic_partitions
        del instance.has_dynamic_partition


def original_metadata(revision: Revision, root: str, store: ObjectStore) -> dict[str, Any]:
    """What one revision is: where it came from, its bytes and where the copy is kept."""
    return {
        "source": MetadataValue.text(metadata_text(revision.source)),
        "path": MetadataValue.path(metadata_text(os.path.join(root, revision.path))),
        "sha256": MetadataValue.text(revision.sha256),
        "size": MetadataValue.int(revision.size),
        "stored_at": MetadataValue.text(
            metadata_text(store.url.rstrip("/") + "/" + store.original_key(revision.sha256))
        ),
    }


def extraction_metadata(extraction: pipeline.Extraction) -> dict[str, Any]:
    """The extractor's answer for one revision: its artifact and coverage, or its refusal."""
    if extraction.refused:
        return {
            "status": MetadataValue.text("refused"),
            "code": MetadataValue.text(metadata_text(extraction.code)),
            "message": MetadataValue.text(metadata_text(extraction.message)),
        }
    return {
        "status": MetadataValue.text("extracted" if extraction.complete else "incomplete"),
        "format": MetadataValue.text(metadata_text(extraction.format)),
        "parser": MetadataValue.text(
            metadata_text(f"{extraction.parser} {extraction.parser_version}")
        ),
        "artifact_sha256": MetadataValue.text(metadata_text(extraction.artifact_sha256)),
        "coverage": MetadataValue.text(metadata_text(extraction.coverage)),
        "complete": MetadataValue.bool(extraction.complete),
        "failed_units": MetadataValue.text(
            metadata_text("; ".join(extraction.failed_units) or "none")
        ),
    }


def chunk_metadata(revision: Revision, chunks: Sequence[Chunk]) -> dict[str, Any]:
    first = chunks[0].text if chunks else ""
    return {
        "path": MetadataValue.text(metadata_text(f"{revision.source}:{revision.path}")),
        "chunks": MetadataValue.int(len(chunks)),
        "preview": MetadataValue.md(
            "> " + metadata_text(first, PREVIEW_CHARS).replace("`", "'") if first else "(empty)"
        ),
    }


def _targets(
    context: AssetExecutionContext, asset_key: AssetKey, keys: Sequence[str]
) -> dict[str, AssetCheckEvaluationTargetMaterializationData]:
    """The materialization of each partition a check judges: the one this run just made.

    A check evaluation that names no materialization counts as not run against the current
    one, and the check's partitions would all read "Missing".
    """
    storage = context.instance.event_log_storage.get_latest_storage_id_by_partition(
        asset_key, DagsterEventType.ASSET_MATERIALIZATION, set(keys)
    )
    now = time.time()
    return {
        key: AssetCheckEvaluationTargetMaterializationData(
            storage_id=storage_id, run_id=context.run.run_id, timestamp=now
        )
        for key, storage_id in storage.items()
    }


@asset(
    key=ORIGINAL,
    **BATCHED,
    **ROOT,
    kinds={"python"},
    code_version=PACKAGE_VERSION,
    description="The file's bytes, kept verbatim and content-addressed before anything parses them.",
)
def original(
    context: AssetExecutionContext,
    catalog_db: CatalogResource,
    store: ObjectStoreResource,
    search_index: SearchIndexResource,
    loom: SettingsResource,
    event_batches: EventBatchResource,
) -> MaterializeResult:
    object_store = store.get()
    with retried_only_when_retryable(loom.retry(), context.retry_number):
        # The sensor only computed these keys: their revisions are registered here, from the
        # files as a scan finds them now (nothing to do for `loom ingest`, which registered).
        with catalog_db.connect() as con:
            retired = pipeline.register_for_run(con, search_index.get(), context.partition_keys)
            states = catalog.document_states(con, retired) if retired else []
        report_retired(context.instance, states)
        batch = registered(context, catalog_db)
        facts: dict[str, Mapping[str, Any]] = dict.fromkeys(context.partition_keys, UNREGISTERED)
        for revision, root in batch:
            metadata = original_metadata(revision, root, object_store)
            try:
                pipeline.store_original(object_store, root, revision)
            except SourceError as error:
                metadata["unreadable"] = MetadataValue.text(metadata_text(str(error)))
                pipeline.refuse(
                    object_store, revision, error.code, error.message, run_id=context.run.run_id
                )
            facts[revision.key] = metadata
    add_partition_metadata(context, ORIGINAL, facts)
    hold.reached("original")
    return MaterializeResult()


def artifact_asset(strict: bool = False) -> AssetsDefinition:
    """The `artifact` step; `strict` (LOOM_STRICT, read with the settings when the definitions
    load) makes `extracted` and `complete` blocking errors, so a refused or incomplete revision
    fails its run."""

    @multi_asset(
        specs=[
            AssetSpec(
                ARTIFACT,
                deps=[ORIGINAL],
                description="The extraction artifact, validated against contract v1.",
                kinds={"json"},
                code_version=ARTIFACT_CODE_VERSION,
                **AUTOMATED,
            )
        ],
        check_specs=[
            AssetCheckSpec(
                EXTRACTED_CHECK,
                asset=ARTIFACT,
                partitions_def=revisions,
                blocking=strict,
                description="The extractor read the revision (red: refused, with its code and message).",
            ),
            AssetCheckSpec(
                COMPLETE_CHECK,
                asset=ARTIFACT,
                partitions_def=revisions,
                blocking=strict,
                description="The artifact covers the whole file (warning: the units it could not "
                "read, e.g. a PDF page that needs OCR; the rest is published).",
            ),
            AssetCheckSpec(
                CURRENT_CHECK,
                asset=ARTIFACT,
                partitions_def=revisions,
                description="The artifact was made by the parser its format's extractor declares "
                "now (warning: stale after a parser upgrade; `loom ingest --reprocess-stale`).",
            ),
        ],
        can_subset=True,
        **BATCHED,
    )
    def artifact(
        context: AssetExecutionContext,
        catalog_db: CatalogResource,
        store: ObjectStoreResource,
        extractor: ExtractorResource,
        loom: SettingsResource,
        event_batches: EventBatchResource,
    ) -> Iterator[Any]:
        object_store = store.get()
        retry = loom.retry()
        run_id = context.run.run_id
        with retried_only_when_retryable(retry, context.retry_number):
            batch = [revision for revision, _ in registered(context, catalog_db)]
            earlier = {r.key: pipeline.read_extraction(object_store, r.key) for r in batch}
            # Done earlier in this run: refused by the original step, or by an earlier attempt.
            done = {k: e for k, e in earlier.items() if e is not None and e.run_id == run_id}
            todo = [r for r in batch if r.key not in done]
            with extractor.client() as client, ThreadPoolExecutor(extractor.concurrency) as pool:
                result = pipeline.extract_batch(
                    object_store, client, todo, retry, run_id=run_id, mapper=pool.map
                )
                declared = {f: p for f, p in client.declared_parsers().items() if p is not None}
            for extraction in result.extracted:
                done[extraction.revision] = extraction
            if result.unavailable and not result.extracted and context.retry_number < retry.retries:
                # Not one file got through: the service (or store) is down, which a later attempt
                # of the whole step may find back.
                raise next(iter(result.unavailable.values()))
            for revision in todo:
                if revision.key in result.unavailable:
                    done[revision.key] = pipeline.exhausted(
                        object_store, revision, result.unavailable[revision.key], run_id=run_id
                    )
            context.log.info(
                f"extracted {len(result.extracted)} of {len(todo)} revisions; "
                f"{len(result.unavailable)} spent their retries"
            )
        hold.reached("artifact")
        facts: dict[str, Mapping[str, Any]] = dict.fromkeys(context.partition_keys, UNREGISTERED)
        facts |= {r.key: extraction_metadata(done[r.key]) for r in batch}
        add_partition_metadata(context, ARTIFACT, facts)
        yield MaterializeResult(asset_key=ARTIFACT)
        selected = {key.name for key in context.selected_asset_check_keys}
        targets = _targets(context, ARTIFACT, [r.key for r in batch])
        for revision in batch:
            extraction, target = done[revision.key], targets.get(revision.key)
            if EXTRACTED_CHECK in selected:
                yield extracted_evaluation(extraction, target, strict=strict)
            if COMPLETE_CHECK in selected:
                yield complete_evaluation(extraction, target, strict=strict)
            if CURRENT_CHECK in selected:  # asked for by name (the UI): every partition
                yield current_evaluation(extraction, declared, target)
            elif was_stale(earlier[revision.key], extraction):
                # The runs of the ingest job leave the check out (a pass for every fresh
                # extraction says nothing and costs an event per file): it is recorded where
                # it has news, here for a revision an earlier parser made, now current.
                yield current_evaluation(extraction, declared, target)
        if declared and loom.home:
            yield from stale_on_change(catalog_db, object_store, loom.home, declared)
        # The checks' results are per partition, which no AssetCheckResult of a range can say;
        # these outputs only tell Dagster they were given.
        for name in sorted(selected):
            yield Output(None, output_name=f"{PREFIX}__artifact_{name}")

    return artifact


artifact = artifact_asset()


def was_stale(before: pipeline.Extraction | None, now: pipeline.Extraction) -> bool:
    """Whether this run re-extracted a revision another parser had made."""
    return (
        before is not None
        and before is not now
        and not before.refused
        and parsers.made_by(before) != parsers.made_by(now)
    )


def current_evaluation(
    extraction: pipeline.Extraction,
    declared: parsers.Declared,
    target: AssetCheckEvaluationTargetMaterializationData | None = None,
) -> AssetCheckEvaluation:
    """The `current_parser` check of one partition: a warning once its format's extractor
    declares another parser than the one that made the artifact."""
    stale = parsers.staleness(extraction, declared)
    return AssetCheckEvaluation(
        asset_key=ARTIFACT,
        check_name=CURRENT_CHECK,
        passed=stale is None,
        partition=extraction.revision,
        target_materialization_data=target,
        severity=AssetCheckSeverity.WARN,
        description=None
        if stale is None
        else metadata_text(f"stale: made by {stale.made_by}, the extractor now has {stale.now}"),
        metadata={
            "made_by": metadata_text("-" if extraction.refused else parsers.made_by(extraction))
        },
    )


def stale_on_change(
    catalog_db: CatalogResource, store: ObjectStore, home: str, declared: dict[str, str]
) -> Iterator[AssetCheckEvaluation]:
    """When the extractor declares other parsers than the last run saw, a warning on the
    `current_parser` check of every revision they made stale, logged by this run though those
    partitions are not in it (Dagster keeps one runless evaluation per check and partition, so
    a second upgrade could not be recorded outside a run). Nothing while nothing changed."""
    folder = Path(home)
    before = parsers.read_declared(folder)
    if not parsers.record_declared(folder, before | declared) or not before:
        return
    with catalog_db.connect() as con:
        keys = [s.key for s in catalog.revision_states(con) if s.artifact_sha256]
    for key in parsers.stale_revisions(store, keys, before | declared):
        extraction = pipeline.read_extraction(store, key)
        assert extraction is not None
        yield current_evaluation(extraction, declared)


def extracted_evaluation(
    extraction: pipeline.Extraction,
    target: AssetCheckEvaluationTargetMaterializationData | None = None,
    *,
    strict: bool = False,
) -> AssetCheckEvaluation:
    """The `extracted` check of one partition: red with the refusal's code and message."""
    if extraction.refused:
        return AssetCheckEvaluation(
            asset_key=ARTIFACT,
            check_name=EXTRACTED_CHECK,
            passed=False,
            partition=extraction.revision,
            target_materialization_data=target,
            severity=AssetCheckSeverity.ERROR,
            blocking=strict,
            description=metadata_text(f"{extraction.code}: {extraction.message}", METADATA_CHARS),
            metadata={
                "code": metadata_text(extraction.code),
                "message": metadata_text(extraction.message),
            },
        )
    return AssetCheckEvaluation(
        asset_key=ARTIFACT,
        check_name=EXTRACTED_CHECK,
        passed=True,
        partition=extraction.revision,
        target_materialization_data=target,
        metadata={
            "artifact_sha256": metadata_text(extraction.artifact_sha256),
            "parser": metadata_text(f"{extraction.parser} {extraction.parser_version}"),
        },
    )


def complete_evaluation(
    extraction: pipeline.Extraction,
    target: AssetCheckEvaluationTargetMaterializationData | None = None,
    *,
    strict: bool = False,
) -> AssetCheckEvaluation:
    """The `complete` check of one partition: a warning naming the units the artifact lacks.

    A refused revision has no artifact to judge: it fails `extracted`, and fails here too, so
    the check never reads "Passed" for a file nothing was read from.
    """
    gaps = "refused: nothing was read" if extraction.refused else extraction.describe_gaps()
    passed = not extraction.refused and extraction.complete
    return AssetCheckEvaluation(
        asset_key=ARTIFACT,
        check_name=COMPLETE_CHECK,
        passed=passed,
        partition=extraction.revision,
        target_materialization_data=target,
        # In strict mode an incomplete file is an error, and blocks its batch.
        severity=AssetCheckSeverity.ERROR if strict else AssetCheckSeverity.WARN,
        blocking=strict,
        description=None if passed else metadata_text(gaps),
        metadata={"coverage": metadata_text(extraction.coverage or "-")}
        | ({} if passed else {"failed_units": metadata_text(gaps)}),
    )


@multi_asset(
    specs=[
        AssetSpec(
            CHUNKS,
            deps=[ARTIFACT],
            description="Structural chunks cut from the artifact's blocks, each citing its locator.",
            kinds={"parquet"},
            code_version=PACKAGE_VERSION,
            skippable=True,  # materialized per revision below, only for those it chunked
            **SKIPPABLE,
        ),
        AssetSpec(
            PUBLISHED,
            deps=[CHUNKS],
            description="The revision made live in the catalog and search, replacing the one "
            "before; refusals recorded.",
            kinds={"duckdb", "tantivy"},
            code_version=PACKAGE_VERSION,
            skippable=True,  # materialized per revision below, only for those made live
            **SKIPPABLE,
        ),
        AssetSpec(
            DATASETS,
            deps=[ARTIFACT],
            description="The revision's tables as typed datasets (one Parquet snapshot each), "
            "switched with its chunks: served while the revision is live.",
            kinds={"parquet", "duckdb"},
            code_version=PACKAGE_VERSION,
            skippable=True,  # materialized per revision below, only for those with tables
            **SKIPPABLE,
        ),
    ],
    check_specs=[
        AssetCheckSpec(
            LIVE_CHECK,
            asset=PUBLISHED,
            partitions_def=revisions,
            description="The revision is the one search serves (warning: superseded by a newer "
            "revision of its file, or retired with its deleted file).",
        ),
        AssetCheckSpec(
            TYPED_CHECK,
            asset=DATASETS,
            partitions_def=revisions,
            description="Every row of the revision's tables is typed and every schema settled "
            "(warning: a dataset needs clarification; error: rows were rejected).",
        ),
    ],
    can_subset=True,
    pool="loom_catalog",  # DuckDB takes one writing process per file: a pool of size 1
    **BATCHED,
)
def published(
    context: AssetExecutionContext,
    catalog_db: CatalogResource,
    store: ObjectStoreResource,
    search_index: SearchIndexResource,
    loom: SettingsResource,
    event_batches: EventBatchResource,
) -> Iterator[Any]:
    object_store = store.get()
    run_id = context.run.run_id
    retry = loom.retry()
    with retried_only_when_retryable(retry, context.retry_number):
        batch = [revision for revision, _ in registered(context, catalog_db)]
    extractions: dict[str, pipeline.Extraction | None] = {}
    if CHUNKS in context.selected_asset_keys:
        made: list[AssetMaterialization] = []
        with retried_only_when_retryable(retry, context.retry_number):
            for revision in batch:
                extraction = pipeline.read_extraction(object_store, revision.key)
                extractions[revision.key] = extraction
                if extraction is None or extraction.refused:
                    continue
                cut = pipeline.make_chunks(object_store, extraction, revision)
                made.append(
                    AssetMaterialization(
                        CHUNKS, partition=revision.key, metadata=chunk_metadata(revision, cut)
                    )
                )
        yield from made
        hold.reached("chunks")
    if PUBLISHED not in context.selected_asset_keys:
        return
    index = search_index.get()
    hold.reached("slot")  # the pool's slot held, the catalog not yet open
    with retried_only_when_retryable(retry, context.retry_number):
        with catalog_db.connect() as con:
            outcomes = pipeline.publish(
                con, index, object_store, batch, run_id=run_id, vectors=search_index.vectors()
            )
            states = catalog.document_states(con, {r.document_id for r in batch})
            # Every revision of the batch: one with no table (or refused) passes the check.
            tables = datasets_of_revisions(
                con, [o.revision for o in outcomes if o.status == catalog.PUBLISHED]
            )
            typed = {o.revision: tables.get(o.revision, []) for o in outcomes}
    for outcome in outcomes:
        extraction = extractions.get(outcome.revision) or pipeline.read_extraction(
            object_store, outcome.revision
        )
        yield published_event(outcome, extraction)
    yield from datasets_events(context, typed)
    if any(key.name == LIVE_CHECK for key in context.selected_asset_check_keys):
        targets = _targets(context, PUBLISHED, [state.key for state in states])
        for state in states:
            if state.status is not None:
                yield live_evaluation(state, targets.get(state.key))
        yield Output(None, output_name=f"{PREFIX}__published_{LIVE_CHECK}")


def datasets_events(
    context: AssetExecutionContext, typed: Mapping[str, Sequence[Dataset]]
) -> Iterator[Any]:
    """A materialization of `datasets` per revision that published tables, then the check of
    every revision (passed for one with none, so no partition's check reads as never run)."""
    if DATASETS not in context.selected_asset_keys:
        return
    for key, found in typed.items():
        if found:
            yield AssetMaterialization(DATASETS, partition=key, metadata=datasets_metadata(found))
    if any(check.name == TYPED_CHECK for check in context.selected_asset_check_keys):
        targets = _targets(context, DATASETS, list(typed))
        for key, found in typed.items():
            yield typed_evaluation(key, found, targets.get(key))
        yield Output(None, output_name=f"{PREFIX}__datasets_{TYPED_CHECK}")


def datasets_metadata(found: Sequence[Dataset]) -> dict[str, Any]:
    """What the UI shows of a revision's datasets: a schema each, rows stored and rejected,
    the state of each and whether each kept its whole table."""
    metadata: dict[str, Any] = {
        "datasets": MetadataValue.int(len(found)),
        "rows_stored": MetadataValue.int(sum(d.rows_stored for d in found)),
        "rows_rejected": MetadataValue.int(sum(d.rows_rejected for d in found)),
        "state": MetadataValue.text(
            metadata_text("; ".join(f"{d.name}: {d.state.value}" for d in found))
        ),
        "complete": MetadataValue.bool(all(d.complete for d in found)),
    }
    for number, dataset in enumerate(found[:MAX_SCHEMAS], 1):
        columns = [
            TableColumn(metadata_text(c.name, 200), c.type.value)
            for c in dataset.schema.columns[:MAX_SCHEMA_COLUMNS]
        ]
        metadata[f"schema {number}"] = MetadataValue.table_schema(TableSchema(columns=columns))
        metadata[f"dataset {number}"] = MetadataValue.text(
            metadata_text(
                f"{dataset.dataset_id} {dataset.name}: {dataset.rows_stored} rows stored, "
                f"{dataset.rows_rejected} rejected, {dataset.state.value}, "
                f"{'complete' if dataset.complete else 'incomplete'}"
            )
        )
    return metadata


def typed_evaluation(
    key: str,
    found: Sequence[Dataset],
    target: AssetCheckEvaluationTargetMaterializationData | None = None,
) -> AssetCheckEvaluation:
    """Passed when every row was typed and no schema asks a question; an error when rows were
    rejected, a warning while a dataset needs clarification."""
    rejected = sum(d.rows_rejected for d in found)
    unclear = [d for d in found if d.state is DatasetState.NEEDS_CLARIFICATION]
    why: list[str] = []
    if rejected:
        why.append(f"{rejected} rows rejected")
    if unclear:
        why.append(f"{len(unclear)} datasets need clarification: {unclear[0].questions[0]}")
    return AssetCheckEvaluation(
        asset_key=DATASETS,
        check_name=TYPED_CHECK,
        passed=not why,
        partition=key,
        target_materialization_data=target,
        severity=AssetCheckSeverity.ERROR if rejected else AssetCheckSeverity.WARN,
        description=metadata_text("; ".join(why)) if why else None,
        metadata={
            "datasets": len(found),
            "rows_rejected": rejected,
            "needs_clarification": len(unclear),
        },
    )


def live_evaluation(
    state: catalog.DocumentRevision,
    target: AssetCheckEvaluationTargetMaterializationData | None = None,
) -> AssetCheckEvaluation:
    """The `live` check of one revision: passed while search serves it, a warning once a newer
    revision superseded it or its file was deleted, so its green `published` reads as history
    (and for a refused one, which never was live)."""
    if state.key == state.live_revision:
        why = None
    elif state.status == catalog.REFUSED:
        why = "refused: never published"
    elif state.document_status == "retired":
        why = "retired: its file was deleted"
    else:
        why = f"superseded by {state.live_revision or 'a newer revision'}"
    return AssetCheckEvaluation(
        asset_key=PUBLISHED,
        check_name=LIVE_CHECK,
        passed=why is None,
        partition=state.key,
        target_materialization_data=target,
        severity=AssetCheckSeverity.WARN,
        description=why,
        metadata={"state": why.split(":")[0].split(" by")[0] if why else "live"},
    )


def published_event(
    outcome: catalog.Outcome, extraction: pipeline.Extraction | None
) -> AssetMaterialization | AssetObservation:
    """A live revision is a materialization of `published`; a refused or superseded one is an
    observation that says so, and leaves the partition unmaterialized."""
    metadata: dict[str, Any] = {"status": MetadataValue.text(outcome.status)}
    if outcome.chunk_count is not None:
        metadata["chunks"] = MetadataValue.int(outcome.chunk_count)
    if outcome.code:
        metadata["code"] = MetadataValue.text(metadata_text(outcome.code))
        metadata["message"] = MetadataValue.text(metadata_text(outcome.message))
    if extraction is not None and extraction.incomplete:
        metadata["incomplete"] = MetadataValue.text(metadata_text(extraction.describe_gaps()))
    if outcome.status == catalog.PUBLISHED:
        return AssetMaterialization(PUBLISHED, partition=outcome.revision, metadata=metadata)
    return AssetObservation(PUBLISHED, partition=outcome.revision, metadata=metadata)
