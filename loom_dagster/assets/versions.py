"""The data and code versions each partition's materialization carries, so that Dagster's
staleness ("Unsynced" on a partition's page, the instance's stale-status resolver) finds every
partition downstream of one whose content changed, and only those.

Dagster computes staleness per partition from tags on each materialization: its data version
(`dagster/data_version`), the code version it was made with (`dagster/code_version`) and, per
upstream asset, the data version it read and a pointer to that upstream event
(`dagster/input_data_version/<key>`, `dagster/input_event_pointer/<key>`). A partition is stale
when its asset's code version changed, or when its upstream partition has a newer
materialization, after the pointer, whose data version differs from the one before it. Dagster
writes these tags itself only on the materializations it derives from a step's output, and then
with one data version for every partition of a run's key range (a hash of the whole range's
inputs): a batch step would mark a partition stale whenever its neighbours changed. So each step
here logs its own materialization per partition with the tags Dagster would write for a run of
that one partition, and then yields its output with the mark Dagster's own observable source
assets use for the same reason (`logged_per_partition`): the output still tells the run that the
step is done, so the next step runs, and Dagster derives no event from it.

- `original`: the file's SHA-256 (its content hash), given;
- `artifact`: the artifact's SHA-256 (its canonical bytes), given; a refusal's code for a
  refused revision;
- `chunks`, `published`, `datasets`: derived as Dagster derives one (a hash of the code version
  and the inputs' data versions), so an artifact re-made with the same bytes changes nothing
  downstream.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from dagster import AssetExecutionContext, AssetKey, DagsterEventType, DataVersion, Output
from dagster._core.definitions.data_version import (
    CODE_VERSION_TAG,
    DATA_VERSION_IS_USER_PROVIDED_TAG,
    DATA_VERSION_TAG,
    DEFAULT_DATA_VERSION,
    NULL_EVENT_POINTER,
    compute_logical_data_version,
    get_input_data_version_tag,
    get_input_event_pointer_tag,
)
from dagster._core.definitions.source_asset import SYSTEM_METADATA_KEY_SOURCE_ASSET_OBSERVATION
from dagster._core.storage.tags import BACKFILL_ID_TAG

# The data version of a partition whose key no scan could register in its run: it holds nothing.
UNREGISTERED_VERSION = "unregistered"


@dataclass(frozen=True)
class Seen:
    """An upstream partition as a step read it: its latest materialization and data version."""

    storage_id: int
    data_version: str


def latest(
    context: AssetExecutionContext, asset_key: AssetKey, keys: Sequence[str]
) -> dict[str, Seen]:
    """The latest materialization of each of `keys` of `asset_key`, read in two queries."""
    storage = context.instance.event_log_storage
    kind = DagsterEventType.ASSET_MATERIALIZATION
    ids = storage.get_latest_storage_id_by_partition(asset_key, kind, set(keys))
    tags = storage.get_latest_tags_by_partition(
        asset_key, kind, [DATA_VERSION_TAG], asset_partitions=list(ids)
    )
    return {
        key: Seen(
            storage_id,
            # A materialization from before versions were recorded counts as Dagster counts it.
            tags.get(key, {}).get(DATA_VERSION_TAG, DEFAULT_DATA_VERSION.value),
        )
        for key, storage_id in ids.items()
    }


def code_version(context: AssetExecutionContext, asset_key: AssetKey) -> str:
    """The asset's code version as the definitions give it (the run's id for none, as Dagster)."""
    return context.job_def.asset_layer.get(asset_key).code_version or context.run.run_id


def version_tags(
    context: AssetExecutionContext,
    asset_key: AssetKey,
    *,
    data_version: str | None = None,
    inputs: Mapping[AssetKey, Seen | None] | None = None,
) -> dict[str, str]:
    """The tags of one partition's materialization of `asset_key`: its code version, the inputs
    it read, and its data version, given (`data_version`) or else derived from the inputs'."""
    code = code_version(context, asset_key)
    tags = {CODE_VERSION_TAG: code}
    read: dict[AssetKey, DataVersion] = {}
    for key, seen in (inputs or {}).items():
        read[key] = DataVersion(seen.data_version if seen else DEFAULT_DATA_VERSION.value)
        tags[get_input_data_version_tag(key)] = read[key].value
        tags[get_input_event_pointer_tag(key)] = (
            str(seen.storage_id) if seen else NULL_EVENT_POINTER
        )
    if data_version is None:
        tags[DATA_VERSION_TAG] = compute_logical_data_version(code, read).value
    else:
        tags[DATA_VERSION_TAG] = data_version
        tags[DATA_VERSION_IS_USER_PROVIDED_TAG] = "true"
    backfill = context.run.tags.get(BACKFILL_ID_TAG)
    if backfill:  # as on the materializations Dagster derives from an output
        tags[BACKFILL_ID_TAG] = backfill
    return tags


def logged_per_partition(output_name: str = "result") -> Output[None]:
    """The step's output once it has logged each partition's materialization itself.

    An output not yielded skips every step after it; one yielded plainly makes Dagster log a
    materialization of each partition of the range with one data version for all. Dagster's
    observable source assets, which log one data version per partition the same way, return
    their output with this metadata key, which tells the step to derive no event from it.
    """
    return Output(
        None, output_name=output_name, metadata={SYSTEM_METADATA_KEY_SOURCE_ASSET_OBSERVATION: True}
    )
