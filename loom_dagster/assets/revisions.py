"""The asset graph of one source revision: original -> artifact -> chunks -> published.

Each asset runs for a batch of revisions (a partition key range) and loops over them; the work
for one revision is a function in `loom_dagster.pipeline`. A refused revision is an outcome
recorded for it, never a failure of its batch.
"""

import os
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from dagster import (
    AssetCheckEvaluation,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetKey,
    AssetSpec,
    AutomationCondition,
    Failure,
    MaterializeResult,
    RetryRequested,
    asset,
    multi_asset,
)

from loom_dagster import catalog, hold, pipeline
from loom_dagster.display import bounded
from loom_dagster.errors import LoomError, SourceError
from loom_dagster.partitions import batch_policy, revisions
from loom_dagster.resources.extractor import ExtractorResource
from loom_dagster.resources.storage import (
    CatalogResource,
    ObjectStoreResource,
    SearchIndexResource,
)
from loom_dagster.retries import RetrySettings
from loom_dagster.sources import Revision

GROUP = "loom"
EXTRACTED_CHECK = "extracted"
# The longest string from a document, a path or a service put into a run's metadata.
METADATA_CHARS = 1000

# An unavailable extractor, object store or index fails the step as retryable: the step asks
# Dagster for a retry (RetryRequested) with a growing, jittered delay until the attempts in
# LOOM_RETRY_ATTEMPTS are spent. Refusals are outcomes and never raise.
BATCHED: dict[str, Any] = dict(
    partitions_def=revisions,
    backfill_policy=batch_policy,
)
AUTOMATED: dict[str, Any] = dict(
    automation_condition=AutomationCondition.eager(),
    group_name=GROUP,
)


@contextmanager
def retried_only_when_retryable(retry_number: int = 0) -> Iterator[None]:
    """Retry what may pass on a later attempt, and nothing else.

    An unavailable service is retried with backoff; a defect fails the step at once, since
    running it again would fail the same way.
    """
    retry = RetrySettings.from_env(os.environ)
    try:
        yield
    except (LoomError, OSError) as error:
        if isinstance(error, LoomError) and not error.retryable:
            raise Failure(bounded(str(error), METADATA_CHARS), allow_retries=False) from error
        raise RetryRequested(
            max_retries=retry.retries, seconds_to_wait=retry.delay(retry_number)
        ) from error
    except Exception as error:
        raise Failure(
            bounded(f"{type(error).__name__}: {error}", METADATA_CHARS), allow_retries=False
        ) from error


def registered(
    context: AssetExecutionContext, catalog_db: CatalogResource
) -> list[tuple[Revision, str]]:
    """The batch's revisions with their source folder, read in one short connection."""
    with catalog_db.connect() as con:
        found = []
        for key in context.partition_keys:
            revision = catalog.get_revision(con, key)
            found.append((revision, catalog.source_root(con, revision.source)))
    return found


@asset(
    **BATCHED,
    **AUTOMATED,
    description="The file's bytes, kept verbatim and content-addressed before anything parses them.",
)
def original(
    context: AssetExecutionContext, catalog_db: CatalogResource, store: ObjectStoreResource
) -> MaterializeResult:
    object_store = store.get()
    unreadable = 0
    with retried_only_when_retryable(context.retry_number):
        for revision, root in registered(context, catalog_db):
            try:
                pipeline.store_original(object_store, root, revision)
            except SourceError as error:
                unreadable += 1
                pipeline.refuse(
                    object_store, revision, error.code, error.message, run_id=context.run.run_id
                )
    hold.reached("original")
    return MaterializeResult(
        metadata={"revisions": len(context.partition_keys), "unreadable": unreadable}
    )


@multi_asset(
    specs=[
        AssetSpec(
            "artifact",
            deps=[original],
            description="The extraction artifact, validated against contract v1.",
            **AUTOMATED,
        )
    ],
    check_specs=[
        AssetCheckSpec(
            EXTRACTED_CHECK,
            asset="artifact",
            partitions_def=revisions,
            description="The extractor read the revision (red: refused, with its code and message).",
        )
    ],
    can_subset=True,  # the check's result is logged per partition, not returned per run
    **BATCHED,
)
def artifact(
    context: AssetExecutionContext,
    catalog_db: CatalogResource,
    store: ObjectStoreResource,
    extractor: ExtractorResource,
) -> Iterator[MaterializeResult]:
    object_store = store.get()
    retry = RetrySettings.from_env(os.environ)
    run_id = context.run.run_id
    with retried_only_when_retryable(context.retry_number):
        batch = [revision for revision, _ in registered(context, catalog_db)]
        # Done earlier in this run: refused by the original step, or by an earlier attempt.
        done = {
            r.key: e
            for r in batch
            if (e := pipeline.read_extraction(object_store, r.key)) and e.run_id == run_id
        }
        todo = [r for r in batch if r.key not in done]
        with extractor.client() as client, ThreadPoolExecutor(extractor.concurrency) as pool:
            result = pipeline.extract_batch(
                object_store, client, todo, retry, run_id=run_id, mapper=pool.map
            )
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
    for revision in batch:
        context.log_event(check_evaluation(done[revision.key]))
    yield MaterializeResult(asset_key="artifact", metadata={"revisions": len(batch)})


def check_evaluation(extraction: pipeline.Extraction) -> AssetCheckEvaluation:
    """The `extracted` check of one partition: red with the refusal's code and message."""
    if extraction.refused:
        return AssetCheckEvaluation(
            asset_key=AssetKey("artifact"),
            check_name=EXTRACTED_CHECK,
            passed=False,
            partition=extraction.revision,
            severity=AssetCheckSeverity.ERROR,
            description=bounded(f"{extraction.code}: {extraction.message}", METADATA_CHARS),
            metadata={
                "code": bounded(extraction.code or "", METADATA_CHARS),
                "message": bounded(extraction.message or "", METADATA_CHARS),
            },
        )
    return AssetCheckEvaluation(
        asset_key=AssetKey("artifact"),
        check_name=EXTRACTED_CHECK,
        passed=True,
        partition=extraction.revision,
        metadata={
            "artifact_sha256": extraction.artifact_sha256 or "",
            "parser": f"{extraction.parser} {extraction.parser_version}",
        },
    )


@asset(
    **BATCHED,
    **AUTOMATED,
    deps=["artifact"],
    description="Structural chunks cut from the artifact's blocks, each citing its locator.",
)
def chunks(
    context: AssetExecutionContext, catalog_db: CatalogResource, store: ObjectStoreResource
) -> MaterializeResult:
    object_store = store.get()
    total = 0
    with retried_only_when_retryable(context.retry_number):
        for revision, _ in registered(context, catalog_db):
            extraction = pipeline.read_extraction(object_store, revision.key)
            if extraction is not None and not extraction.refused:
                total += len(pipeline.make_chunks(object_store, extraction, revision))
    hold.reached("chunks")
    return MaterializeResult(metadata={"chunks": total})


@asset(
    **BATCHED,
    **AUTOMATED,
    deps=[chunks],
    pool="loom_catalog",  # DuckDB takes one writing process per file: a pool of size 1
    description="The revision made live in the catalog and search, replacing the one before; "
    "refusals recorded.",
)
def published(
    context: AssetExecutionContext,
    catalog_db: CatalogResource,
    store: ObjectStoreResource,
    search_index: SearchIndexResource,
) -> MaterializeResult:
    object_store, index = store.get(), search_index.get()
    hold.reached("slot")  # the pool's slot held, the catalog not yet open
    with retried_only_when_retryable(context.retry_number):
        batch = [revision for revision, _ in registered(context, catalog_db)]
        with catalog_db.connect() as con:
            outcomes = pipeline.publish(con, index, object_store, batch, run_id=context.run.run_id)
    tally: dict[str, int] = {}
    for outcome in outcomes:
        tally[outcome.status] = tally.get(outcome.status, 0) + 1
    return MaterializeResult(metadata=tally)
