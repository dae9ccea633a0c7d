"""What the steps share at run time: a failure retried only when a later attempt may pass, the
batch's registered revisions, and the materializations a check evaluation judges."""

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

from dagster import AssetExecutionContext, AssetKey, Failure, RetryRequested
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)
from dagster._core.events import DagsterEventType

from loom_dagster import catalog
from loom_dagster.assets.metadata import METADATA_CHARS
from loom_dagster.contract.metadata import metadata_text
from loom_dagster.errors import LoomError
from loom_dagster.resources.storage import CatalogResource
from loom_dagster.retries import RetrySettings
from loom_dagster.sources import Revision


# An unavailable extractor, object store or index fails the step as retryable: the step asks
# Dagster for a retry (RetryRequested) with a growing, jittered delay until the attempts in
# LOOM_RETRY_ATTEMPTS are spent. Refusals are outcomes and never raise.
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


def check_targets(
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
