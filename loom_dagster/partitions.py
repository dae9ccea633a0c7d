"""One dynamic partition per source revision; keys are `<document id>@<sha16>` (see sources.py)."""

from dagster import BackfillPolicy, DynamicPartitionsDefinition

PARTITIONS_NAME = "revisions"
revisions = DynamicPartitionsDefinition(name=PARTITIONS_NAME)

# Many revisions to a run: a run costs seconds to start, so a first load of thousands of files
# must be a few runs, each looping over its partition keys.
MAX_REVISIONS_PER_RUN = 200
batch_policy = BackfillPolicy.multi_run(max_partitions_per_run=MAX_REVISIONS_PER_RUN)
