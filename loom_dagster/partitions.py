"""One dynamic partition per source revision; keys are `<path trace>~<hash10>@<sha16>` (sources.py)."""

from collections.abc import Iterable

from dagster import BackfillPolicy, DagsterInstance, DynamicPartitionsDefinition

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
