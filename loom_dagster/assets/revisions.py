"""The asset graph of one source revision: original -> artifact -> chunks -> published.

Each asset runs for a batch of revisions (a partition key range) and loops over them; the work
for one revision is a function in `loom_dagster.pipeline`. A refused revision is an outcome
recorded for it, never a failure of its batch.
"""

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
    Backoff,
    Failure,
    Jitter,
    MaterializeResult,
    RetryPolicy,
    asset,
    multi_asset,
)

from loom_dagster import catalog, pipeline
from loom_dagster.errors import LoomError, SourceError
from loom_dagster.partitions import batch_policy, revisions
from loom_dagster.resources.extractor import ExtractorResource
from loom_dagster.resources.storage import (
    CatalogResource,
    ObjectStoreResource,
    SearchIndexResource,
)
from loom_dagster.sources import Revision

GROUP = "loom"
EXTRACTED_CHECK = "extracted"

# An unavailable extractor, object store or index fails the step as retryable: backoff with
# jitter until the attempts are spent. Refusals are outcomes and never raise.
retry_when_unavailable = RetryPolicy(
    max_retries=4, delay=1, backoff=Backoff.EXPONENTIAL, jitter=Jitter.PLUS_MINUS
)

BATCHED: dict[str, Any] = dict(
    partitions_def=revisions,
    backfill_policy=batch_policy,
    retry_policy=retry_when_unavailable,
)
AUTOMATED: dict[str, Any] = dict(
    automation_condition=AutomationCondition.eager(),
    group_name=GROUP,
)


@contextmanager
def retried_only_when_retryable() -> Iterator[None]:
    """Let the RetryPolicy retry what may pass on a later attempt, and nothing else.

    An unavailable service is retried with backoff; a defect fails the step at once, since
    running it again would fail the same way.
    """
    try:
        yield
    except LoomError as error:
        if error.retryable:
            raise
        raise Failure(str(error), allow_retries=False) from error
    except OSError:
        raise
    except Exception as error:
        raise Failure(f"{type(error).__name__}: {error}", allow_retries=False) from error


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
    with retried_only_when_retryable():
        for revision, root in registered(context, catalog_db):
            try:
                pipeline.store_original(object_store, root, revision)
            except SourceError as error:
                unreadable += 1
                pipeline.refuse(
                    object_store, revision, error.code, error.message, run_id=context.run.run_id
                )
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
    with retried_only_when_retryable():
        batch = [revision for revision, _ in registered(context, catalog_db)]
        # Done earlier in this run: refused by the original step, or by an earlier attempt.
        done = {
            r.key: e
            for r in batch
            if (e := pipeline.read_extraction(object_store, r.key))
            and e.run_id == context.run.run_id
        }
        todo = [r for r in batch if r.key not in done]
        with extractor.client() as client, ThreadPoolExecutor(extractor.concurrency) as pool:
            results = pool.map(
                lambda revision: pipeline.extract(
                    object_store, client, revision, run_id=context.run.run_id
                ),
                todo,
            )
            for count, extraction in enumerate(results, start=1):
                done[extraction.revision] = extraction
                if count % 50 == 0:
                    context.log.info(f"extracted {count} of {len(todo)} revisions")
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
            description=f"{extraction.code}: {extraction.message}",
            metadata={"code": extraction.code or "", "message": extraction.message or ""},
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
    with retried_only_when_retryable():
        for revision, _ in registered(context, catalog_db):
            extraction = pipeline.read_extraction(object_store, revision.key)
            if extraction is not None and not extraction.refused:
                total += len(pipeline.make_chunks(object_store, extraction, revision))
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
    with retried_only_when_retryable():
        batch = [revision for revision, _ in registered(context, catalog_db)]
        with catalog_db.connect() as con:
            outcomes = pipeline.publish(con, index, object_store, batch, run_id=context.run.run_id)
    tally: dict[str, int] = {}
    for outcome in outcomes:
        tally[outcome.status] = tally.get(outcome.status, 0) + 1
    return MaterializeResult(metadata=tally)
