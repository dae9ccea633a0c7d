"""The `live` check of `published`: passed while search serves a revision, a warning once it
was superseded, retired or refused; evaluated in a run by the `published` step and, for the
revisions of deleted files, outside any run (`report_retired`). And a revision no longer served
leaving the partitions (`leave_partitions`), so Overview counts only live documents.
"""

from collections.abc import Collection, Sequence

from dagster import (
    AssetCheckEvaluation,
    AssetCheckSeverity,
    AssetMaterialization,
    AssetRecordsFilter,
    DagsterInstance,
    MetadataValue,
)
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)
from sqlalchemy.exc import IntegrityError

from loom_dagster import catalog
from loom_dagster.assets.specs import LIVE_CHECK, PUBLISHED
from loom_dagster.partitions import prune_partitions


def live_evaluation(
    state: catalog.DocumentRevision,
    target: AssetCheckEvaluationTargetMaterializationData | None = None,
) -> AssetCheckEvaluation:
    """The `live` check of one revision: passed while search serves it, a warning once a newer
    revision superseded it or its file was deleted, so its green `published` reads as history
    (and for a refused one, which never was live)."""
    if state.key == state.live_revision:
        why = None
    elif state.status == catalog.REFUSED:
        why = "refused: never published"
    elif state.document_status == "retired":
        why = "retired: its file was deleted"
    else:
        why = f"superseded by {state.live_revision or 'a newer revision'}"
    return AssetCheckEvaluation(
        asset_key=PUBLISHED,
        check_name=LIVE_CHECK,
        passed=why is None,
        partition=state.key,
        target_materialization_data=target,
        severity=AssetCheckSeverity.WARN,
        description=why,
        metadata={"state": why.split(":")[0].split(" by")[0] if why else "live"},
    )


def no_longer_live(state: catalog.DocumentRevision) -> AssetMaterialization | None:
    """For a revision that was published and is no longer served, a materialization of its
    `published` partition that says so where a user looks first (the partition's latest
    materialization: "retired: its file was deleted" or "superseded by KEY"); the earlier one,
    "published", stays in its history. The caller passes only revisions that were live; None
    for one still live or refused."""
    if state.status == catalog.REFUSED or state.key == state.live_revision:
        return None
    why = live_evaluation(state).description
    return AssetMaterialization(
        PUBLISHED,
        partition=state.key,
        metadata={
            "status": MetadataValue.text(why or "not live"),
            "live": MetadataValue.bool(False),
            "served_revision": MetadataValue.text(
                "none" if state.document_status == "retired" else state.live_revision or "none"
            ),
        },
    )


def not_served(states: Sequence[catalog.DocumentRevision]) -> list[str]:
    """The revisions search will not serve again unless their file comes back: those of a
    deleted file, and one a newer revision superseded. Not one still to run (no outcome yet),
    nor a refused one of a file still served: its failure may be the latest news of it."""
    return [
        s.key
        for s in states
        if s.key != s.live_revision
        and s.status is not None  # a run may be taking it now: its partition must stay
        and (s.document_status == "retired" or s.status in (catalog.PUBLISHED, catalog.SUPERSEDED))
    ]


def leave_partitions(
    instance: DagsterInstance,
    states: Sequence[catalog.DocumentRevision],
    keep: Collection[str] = (),
) -> list[str]:
    """Delete the partitions of the revisions of `states` no longer served, but those in `keep`
    (the run's own, whose key range must stay whole until it ends); returns the keys deleted.

    Dagster counts a partition healthy while it exists and its latest materialization
    succeeded, and has no status for "retired": so a retired revision leaves the partitions.
    Its events stay in the instance as its history (the materialization that says "retired" or
    "superseded by" last), its record in the catalog, and its file's bytes come back as the
    same key (the sensor or `loom ingest` adds it again).
    """
    return prune_partitions(instance, [key for key in not_served(states) if key not in keep])


def report_retired(
    instance: DagsterInstance,
    states: Sequence[catalog.DocumentRevision],
    keep: Collection[str] = (),
) -> int:
    """Record, outside any run, the `live` check of revisions whose file was deleted (a scan
    retires them, not a run), then take their partitions out (`leave_partitions`, all but
    `keep`); returns how many checks it recorded."""
    gone = [s for s in states if s.document_status == "retired" and s.status == catalog.PUBLISHED]
    if not gone:
        leave_partitions(instance, states, keep)
        return 0
    for state in gone:
        said = no_longer_live(state)
        if said is not None:
            instance.report_runless_asset_event(said)
    records = instance.fetch_materializations(
        AssetRecordsFilter(asset_key=PUBLISHED, asset_partitions=[s.key for s in gone]),
        limit=len(gone) * 4,
    ).records
    targets: dict[str, AssetCheckEvaluationTargetMaterializationData] = {}
    for record in reversed(records):  # oldest first: the latest of each partition wins
        if record.partition_key:
            targets[record.partition_key] = AssetCheckEvaluationTargetMaterializationData(
                storage_id=record.storage_id, run_id=record.run_id, timestamp=record.timestamp
            )
    recorded = 0
    for state in gone:
        try:
            instance.report_runless_asset_event(live_evaluation(state, targets.get(state.key)))
        except IntegrityError:
            # Dagster keeps one evaluation made outside a run per check and partition: a
            # revision retired, published again (same bytes) and retired again already has
            # one, and the UI keeps showing the later run's pass for it. The retirement itself
            # is in the catalog and search; failing the command here would lose nothing but
            # would stop it.
            continue
        recorded += 1
    leave_partitions(instance, states, keep)
    return recorded
