"""The `original` asset: each revision's bytes kept verbatim and content-addressed, after the
run registered the revisions its sensor only computed keys for."""

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import duckdb
from dagster import (
    AssetExecutionContext,
    AssetMaterialization,
    Failure,
    MetadataValue,
    Output,
    asset,
)
from dagster._core.errors import DagsterInvalidInvocationError
from dagster._core.types.dagster_type import Nothing

from loom_dagster import catalog, hold, pipeline
from loom_dagster.assets.live import report_retired
from loom_dagster.assets.metadata import UNREGISTERED, original_metadata
from loom_dagster.assets.runtime import registered, retried_only_when_retryable
from loom_dagster.assets.specs import BATCHED, ORIGINAL, PACKAGE_VERSION, ROOT
from loom_dagster.assets.versions import UNREGISTERED_VERSION, logged_per_partition, version_tags
from loom_dagster.contract.metadata import metadata_text
from loom_dagster.errors import SourceError
from loom_dagster.partitions import PARTITION_TAG, RANGE_END_TAG, RANGE_START_TAG, paths_of
from loom_dagster.resources.events import EventBatchResource
from loom_dagster.resources.settings import SettingsResource
from loom_dagster.resources.storage import CatalogResource, ObjectStoreResource, SearchIndexResource
from loom_dagster.sources import document_digest, key_document_digest


@asset(
    key=ORIGINAL,
    **BATCHED,
    **ROOT,
    kinds={"python"},
    code_version=PACKAGE_VERSION,
    description="The file's bytes, kept verbatim and content-addressed before anything parses them.",
    # Materialized below, one event per partition with its own data version (versions.py).
    dagster_type=Nothing,
)
def original(
    context: AssetExecutionContext,
    catalog_db: CatalogResource,
    store: ObjectStoreResource,
    search_index: SearchIndexResource,
    loom: SettingsResource,
    event_batches: EventBatchResource,
) -> Iterator[AssetMaterialization | Output[None]]:
    object_store = store.get()
    # "Add a partition" in the UI takes any string: a key no scan could have made fails the run
    # at once, naming it, before anything is read or written.
    keys = requested_keys(context)
    refuse_unknown([k for k in keys if key_document_digest(k) is None])
    named = paths_of(context.run.tags)
    with retried_only_when_retryable(loom.retry(), context.retry_number):
        # The sensor only computed these keys: their revisions are registered here, from the
        # files as a scan finds them now (nothing to do for `loom ingest`, which registered).
        with catalog_db.connect() as con:
            retired = pipeline.register_for_run(
                con,
                search_index.get(),
                keys,
                max_bytes=loom.max_input_bytes,
                guard=loom.retire_guard(),
                only=named,
            )
            states = catalog.document_states(con, retired) if retired else []
            unknown = unknown_keys(con, keys, named)
        report_retired(context.instance, states, keep=keys)
    # A well-formed key whose file no registered folder holds, nor ever held: a run of only such
    # keys has nothing to do, and fails naming them. Beside real keys one reads `unregistered`
    # (as a file's that changed again does), so their run stays green.
    if len(unknown) == len(keys):
        refuse_unknown(unknown)
    elif unknown:
        more = f" (and {len(unknown) - 1} more)" if len(unknown) > 1 else ""
        context.log.warning(
            f"no registered folder holds the file of {unknown[0]!r}{more}: it reads unregistered"
        )
    with retried_only_when_retryable(loom.retry(), context.retry_number):
        batch = registered(context, catalog_db)
        facts: dict[str, Mapping[str, Any]] = dict.fromkeys(context.partition_keys, UNREGISTERED)
        # Its data version is the file's content hash: the same bytes stored again change
        # nothing downstream.
        versions = dict.fromkeys(context.partition_keys, UNREGISTERED_VERSION)
        for revision, root in batch:
            metadata = original_metadata(revision, root, object_store)
            try:
                pipeline.store_original(
                    object_store, root, revision, max_bytes=loom.max_input_bytes
                )
            except SourceError as error:
                metadata["unreadable"] = MetadataValue.text(metadata_text(str(error)))
                pipeline.refuse(
                    object_store, revision, error.code, error.message, run_id=context.run.run_id
                )
            facts[revision.key] = metadata
            versions[revision.key] = revision.sha256
    hold.reached("original")
    for key, facts_of_key in facts.items():
        yield AssetMaterialization(
            ORIGINAL,
            partition=key,
            metadata=facts_of_key,
            tags=version_tags(context, ORIGINAL, data_version=versions[key]),
        )
    yield logged_per_partition()


def requested_keys(context: AssetExecutionContext) -> list[str]:
    """The run's partition keys; those its tags name when a key is no longer a partition (the
    folder sensor deletes a made-up key it finds, which may be before its run starts)."""
    try:
        return list(context.partition_keys)
    except DagsterInvalidInvocationError:
        tags = context.run.tags
        named = [tags.get(PARTITION_TAG), tags.get(RANGE_START_TAG), tags.get(RANGE_END_TAG)]
        return sorted({key for key in named if key})


def unknown_keys(
    con: duckdb.DuckDBPyConnection,
    keys: Sequence[str],
    named: Mapping[str, Sequence[str]] | None = None,
) -> list[str]:
    """The keys with no registered revision whose file the catalog never knew, nor the run's
    tags name (`named`, the files its sensor saw, by folder): a key made up. Not a file that
    changed again before its run, which the run's scan leaves for later (its new bytes are
    another partition, and the key reads `unregistered`): the catalog knows its document, or,
    for a file new to it, the sensor that made the key named the file."""
    held = catalog.registered_keys(con, keys)
    missing = [key for key in keys if key not in held]
    digests = {key: key_document_digest(key) or "" for key in missing}
    known = catalog.known_document_digests(con, set(digests.values()))
    known |= {
        document_digest(source, path) for source, paths in (named or {}).items() for path in paths
    }
    return [key for key in missing if digests[key] not in known]


def refuse_unknown(keys: Sequence[str]) -> None:
    if keys:
        more = f" (and {len(keys) - 1} more)" if len(keys) > 1 else ""
        raise Failure(
            metadata_text(
                f"no file of a registered folder has the revision key {keys[0]!r}{more}: "
                "a partition runs only for a key the folder sensor or `loom ingest` made"
            ),
            allow_retries=False,
        )
