"""The step that makes `chunks`, `published` and `datasets`: each revision's chunks cut, the
batch made live in the catalog and search with its tables typed as datasets (its small
documents first, each large one after them: pipeline.publication_order), and the `live` and
`typed` checks of each partition."""

from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from dagster import (
    AssetCheckEvaluation,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetMaterialization,
    AssetObservation,
    AssetSpec,
    MetadataValue,
    Output,
    multi_asset,
)
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)

from loom_dagster import catalog, hold, pipeline
from loom_dagster.assets.live import leave_partitions, live_evaluation, no_longer_live
from loom_dagster.assets.metadata import (
    chunk_metadata,
    datasets_facts,
    datasets_metadata,
    revision_facts,
)
from loom_dagster.assets.runtime import check_targets, registered, retried_only_when_retryable
from loom_dagster.assets.specs import (
    ARTIFACT,
    BATCHED,
    CHUNKS,
    DATASETS,
    LIVE_CHECK,
    PACKAGE_VERSION,
    PREFIX,
    PUBLISHED,
    SKIPPABLE,
    TYPED_CHECK,
)
from loom_dagster.assets.versions import latest, version_tags
from loom_dagster.contract.metadata import metadata_text
from loom_dagster.datasets.catalog import datasets_of_revisions
from loom_dagster.datasets.model import Dataset, DatasetState
from loom_dagster.objectstore import ObjectStore
from loom_dagster.partitions import revisions
from loom_dagster.resources.events import EventBatchResource
from loom_dagster.resources.settings import SettingsResource
from loom_dagster.resources.storage import CatalogResource, ObjectStoreResource, SearchIndexResource
from loom_dagster.sources import Revision


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
            skippable=True,  # materialized per revision below, only for those published
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
        found = registered(context, catalog_db)
        extractions = {r.key: pipeline.read_extraction(object_store, r.key) for r, _ in found}
    batch = [revision for revision, _ in found]
    where = {revision.key: (revision, root) for revision, root in found}
    publishing = PUBLISHED in context.selected_asset_keys
    index = search_index.get() if publishing else None
    was_live: set[str | None] = set()
    states: list[catalog.DocumentRevision] = []
    typed: dict[str, list[Dataset]] = {}
    live: set[str] = set()
    # Small documents first, in one commit; each large one after them in a commit of its own,
    # so it never holds the rest of its batch out of search.
    for group in pipeline.publication_order(batch, extractions):
        if CHUNKS in context.selected_asset_keys:
            yield from chunked(context, object_store, loom, group, extractions)
            hold.reached("chunks")
        if index is None:
            continue
        read = latest(context, CHUNKS, [revision.key for revision in group])
        hold.reached("slot")  # the pool's slot held, the catalog not yet open
        with retried_only_when_retryable(retry, context.retry_number):
            documents = {r.document_id for r in group}
            with catalog_db.connect() as con:
                was_live |= {s.live_revision for s in catalog.document_states(con, documents)}
            # It opens the catalog for its statements only, never for its slow work, so the
            # folder sensor, queries and other runs are not held for the whole publish.
            outcomes = pipeline.publish(
                catalog_db.connect,
                index,
                object_store,
                group,
                run_id=run_id,
                vectors=search_index.vectors(),
            )
            with catalog_db.connect() as con:
                states += catalog.document_states(con, documents)
                # Every revision of the batch: one with no table (or refused) passes the check.
                tables = datasets_of_revisions(
                    con, [o.revision for o in outcomes if o.status == catalog.PUBLISHED]
                )
                typed.update({o.revision: tables.get(o.revision, []) for o in outcomes})
                live |= {o.revision for o in outcomes if o.status == catalog.PUBLISHED}
        for outcome in outcomes:
            extraction = extractions.get(outcome.revision) or pipeline.read_extraction(
                object_store, outcome.revision
            )
            facts = (
                revision_facts(*where[outcome.revision], object_store, extraction)
                if outcome.revision in where
                else {}
            )
            facts.update(datasets_facts(typed.get(outcome.revision, [])))
            tags = version_tags(context, PUBLISHED, inputs={CHUNKS: read.get(outcome.revision)})
            yield published_event(outcome, extraction, facts, tags)
    if not publishing:
        return
    yield from datasets_events(context, typed, live)
    # The revisions this batch superseded say so on their own `published` partition.
    for state in states:
        said = no_longer_live(state) if state.key in was_live else None
        if said is not None:
            yield said
    if any(key.name == LIVE_CHECK for key in context.selected_asset_check_keys):
        targets = check_targets(context, PUBLISHED, [state.key for state in states])
        for state in states:
            if state.status is not None:
                yield live_evaluation(state, targets.get(state.key))
        yield Output(None, output_name=f"{PREFIX}__published_{LIVE_CHECK}")
    # Last, once every event naming them is logged: the revisions no longer served leave the
    # partitions, so Overview counts only live documents (live.py, docs/dagster.md).
    leave_partitions(context.instance, states, keep=context.partition_keys)


def chunked(
    context: AssetExecutionContext,
    store: ObjectStore,
    loom: SettingsResource,
    revisions: Sequence[Revision],
    extractions: dict[str, pipeline.Extraction | None],
) -> list[AssetMaterialization]:
    """Cut each revision's chunks (a refused one has none): a materialization of `chunks` per
    revision chunked. A revision cut at its budget has its record, rewritten incomplete, read
    again into `extractions`, so the events after say so."""
    made: list[AssetMaterialization] = []
    artifacts = latest(context, ARTIFACT, [revision.key for revision in revisions])
    with retried_only_when_retryable(loom.retry(), context.retry_number):
        for revision in revisions:
            extraction = extractions.get(revision.key)
            if extraction is None or extraction.refused:
                continue
            cut = pipeline.make_chunks(store, extraction, revision, loom.chunk_limits())
            if len(cut) >= loom.chunk_limits().budget(revision.size):
                extractions[revision.key] = pipeline.read_extraction(store, revision.key)
            made.append(
                AssetMaterialization(
                    CHUNKS,
                    partition=revision.key,
                    metadata=chunk_metadata(revision, cut),
                    tags=version_tags(
                        context, CHUNKS, inputs={ARTIFACT: artifacts.get(revision.key)}
                    ),
                )
            )
    return made


def datasets_events(
    context: AssetExecutionContext,
    typed: Mapping[str, Sequence[Dataset]],
    published: Collection[str],
) -> Iterator[Any]:
    """A materialization of `datasets` per revision published, tables or none (one without
    says "no tables", row count 0: a healthy file, so its partition is green and no backfill
    over it fails), then the check of every revision (passed for one with none, so no
    partition's check reads as never run). A refused revision's stays missing: it failed."""
    if DATASETS not in context.selected_asset_keys:
        return
    artifacts = latest(context, ARTIFACT, list(typed))
    for key, found in typed.items():
        if found or key in published:
            yield AssetMaterialization(
                DATASETS,
                partition=key,
                metadata=datasets_metadata(found),
                tags=version_tags(context, DATASETS, inputs={ARTIFACT: artifacts.get(key)}),
            )
    if any(check.name == TYPED_CHECK for check in context.selected_asset_check_keys):
        targets = check_targets(context, DATASETS, list(typed))
        for key, found in typed.items():
            yield typed_evaluation(key, found, targets.get(key))
        yield Output(None, output_name=f"{PREFIX}__datasets_{TYPED_CHECK}")


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


def published_event(
    outcome: catalog.Outcome,
    extraction: pipeline.Extraction | None,
    facts: Mapping[str, Any] | None = None,
    tags: Mapping[str, str] | None = None,
) -> AssetMaterialization | AssetObservation:
    """A live revision is a materialization of `published`; a refused or superseded one is an
    observation that says so, and leaves the partition unmaterialized. Either carries the
    revision's facts (its file, format, size, time, datasets, links); a materialization, its
    versions (`tags`, versions.py)."""
    metadata: dict[str, Any] = {"status": MetadataValue.text(outcome.status), **(facts or {})}
    if outcome.chunk_count is not None:
        metadata["chunks"] = MetadataValue.int(outcome.chunk_count)
    if outcome.code:
        metadata["code"] = MetadataValue.text(metadata_text(outcome.code))
        metadata["message"] = MetadataValue.text(metadata_text(outcome.message))
    if extraction is not None and extraction.incomplete:
        metadata["incomplete"] = MetadataValue.text(metadata_text(extraction.describe_gaps()))
    if outcome.status == catalog.PUBLISHED:
        return AssetMaterialization(
            PUBLISHED, partition=outcome.revision, metadata=metadata, tags=tags
        )
    return AssetObservation(PUBLISHED, partition=outcome.revision, metadata=metadata)
