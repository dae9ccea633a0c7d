"""What the asset graph is made of, shared by its steps: the asset keys (all under the `loom/`
prefix), the names of their checks, the checks every run evaluates, the group, owners and code
versions, and the arguments every step is defined with (a batch of revisions, automation)."""

from importlib.metadata import PackageNotFoundError, version
from typing import Any

from dagster import AssetCheckKey, AssetKey, AutomationCondition

from loom_dagster.partitions import AFTER_UPSTREAM, batch_policy, revisions
from loom_dagster.resources.events import EventBatchResource

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
try:
    PACKAGE_VERSION = version("loom-dagster")
except PackageNotFoundError:  # run from a checkout that was never installed
    PACKAGE_VERSION = "0+unknown"
# Bumped with the artifact's shape or the contract: a new code version marks every partition
# of `artifact` stale in the UI, and whatever is downstream of it.
ARTIFACT_CODE_VERSION = f"contract-v1+loom-{PACKAGE_VERSION}"

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
ROOT: dict[str, Any] = {**AUTOMATED, "automation_condition": None}
SKIPPABLE: dict[str, Any] = {**AUTOMATED, "automation_condition": AFTER_UPSTREAM}
