"""One dynamic partition per source revision; keys are `<path trace>~<hash10>@<sha16>` (sources.py)."""

from collections.abc import Iterable, Mapping, Sequence

from dagster import BackfillPolicy, DagsterInstance, DynamicPartitionsDefinition
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_END_TAG as RANGE_END_TAG,
)
from dagster._core.storage.tags import (
    ASSET_PARTITION_RANGE_START_TAG as RANGE_START_TAG,
)
from dagster._core.storage.tags import PARTITION_NAME_TAG as PARTITION_TAG

PARTITIONS_NAME = "revisions"
revisions = DynamicPartitionsDefinition(name=PARTITIONS_NAME)

# Many revisions to a run: a run costs seconds to start, so a first load of thousands of files
# must be a few runs, each looping over its partition keys.
MAX_REVISIONS_PER_RUN = 200
batch_policy = BackfillPolicy.multi_run(max_partitions_per_run=MAX_REVISIONS_PER_RUN)


def prune_partitions(
    instance: DagsterInstance, keys: Iterable[str], *, dry_run: bool = False
) -> list[str]:
    """Delete from the instance the partitions of `keys` it still has; returns those keys.

    The revisions' catalog records stay: a pruned partition is history, not a loss.
    """
    doomed = sorted(set(instance.get_dynamic_partitions(PARTITIONS_NAME)).intersection(keys))
    if not dry_run:
        for key in doomed:
            instance.delete_dynamic_partition(PARTITIONS_NAME, key)
    return doomed


def contiguous_batches(ordered: Sequence[str], keys: Iterable[str], size: int) -> list[list[str]]:
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


def keys_of_runs(ordered: Sequence[str], runs_tags: Iterable[Mapping[str, str]]) -> list[list[str]]:
    """The revision partitions each run takes, read from its tags: one partition, or a key
    range in the partition order; none for a run of no partition or of a range that is gone."""
    position = {key: i for i, key in enumerate(ordered)}
    found: list[list[str]] = []
    for tags in runs_tags:
        if PARTITION_TAG in tags:
            found.append([tags[PARTITION_TAG]])
            continue
        first = position.get(tags.get(RANGE_START_TAG, ""))
        last = position.get(tags.get(RANGE_END_TAG, ""))
        found.append([] if first is None or last is None else list(ordered[first : last + 1]))
    return found
