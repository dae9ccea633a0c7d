"""The `artifact` asset and its checks: each revision sent to its extractor, its artifact or
refusal recorded, and the `extracted`, `complete` and `current_parser` checks of each partition."""

from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from dagster import (
    AssetCheckEvaluation,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetMaterialization,
    AssetsDefinition,
    AssetSpec,
    Failure,
    Output,
    multi_asset,
)
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluationTargetMaterializationData,
)

from loom_dagster import catalog, hold, pipeline
from loom_dagster.assets.metadata import (
    METADATA_CHARS,
    UNREGISTERED,
    extraction_metadata,
)
from loom_dagster.assets.runtime import check_targets, registered, retried_only_when_retryable
from loom_dagster.assets.specs import (
    ARTIFACT,
    ARTIFACT_CODE_VERSION,
    AUTOMATED,
    BATCHED,
    COMPLETE_CHECK,
    CURRENT_CHECK,
    EXTRACTED_CHECK,
    ORIGINAL,
    PREFIX,
)
from loom_dagster.assets.versions import (
    UNREGISTERED_VERSION,
    latest,
    logged_per_partition,
    version_tags,
)
from loom_dagster.contract.metadata import metadata_text
from loom_dagster.objectstore import ObjectStore
from loom_dagster.partitions import revisions
from loom_dagster.pipeline import parsers
from loom_dagster.resources.events import EventBatchResource
from loom_dagster.resources.extractor import ExtractorResource
from loom_dagster.resources.settings import SettingsResource
from loom_dagster.resources.storage import CatalogResource, ObjectStoreResource
from loom_dagster.sources import Revision


def artifact_asset(strict: bool = False) -> AssetsDefinition:
    """The `artifact` step; `strict` (LOOM_STRICT, read with the settings when the definitions
    load) makes `extracted` and `complete` blocking errors, so a refused or incomplete revision
    fails its run."""

    @multi_asset(
        specs=[
            AssetSpec(
                ARTIFACT,
                deps=[ORIGINAL],
                description="The extraction artifact, validated against contract v1.",
                kinds={"json"},
                code_version=ARTIFACT_CODE_VERSION,
                **AUTOMATED,
            )
        ],
        check_specs=[
            AssetCheckSpec(
                EXTRACTED_CHECK,
                asset=ARTIFACT,
                partitions_def=revisions,
                blocking=strict,
                description="The extractor read the revision (red: refused, with its code and message).",
            ),
            AssetCheckSpec(
                COMPLETE_CHECK,
                asset=ARTIFACT,
                partitions_def=revisions,
                blocking=strict,
                description="The artifact covers the whole file (warning: the units it could not "
                "read, e.g. a PDF page that needs OCR; the rest is published).",
            ),
            AssetCheckSpec(
                CURRENT_CHECK,
                asset=ARTIFACT,
                partitions_def=revisions,
                description="The artifact was made by the parser its format's extractor declares "
                "now (warning: stale after a parser upgrade; `loom ingest --reprocess-stale`).",
            ),
        ],
        can_subset=True,
        **BATCHED,
    )
    def artifact(
        context: AssetExecutionContext,
        catalog_db: CatalogResource,
        store: ObjectStoreResource,
        extractor: ExtractorResource,
        loom: SettingsResource,
        event_batches: EventBatchResource,
    ) -> Iterator[Any]:
        object_store = store.get()
        retry = loom.retry()
        run_id = context.run.run_id
        with retried_only_when_retryable(retry, context.retry_number):
            batch = [revision for revision, _ in registered(context, catalog_db)]
            earlier = {r.key: pipeline.read_extraction(object_store, r.key) for r in batch}
            # Done earlier in this run: refused by the original step, or by an earlier attempt.
            done = {k: e for k, e in earlier.items() if e is not None and e.run_id == run_id}
            todo = [r for r in batch if r.key not in done]
            with extractor.client() as client, ThreadPoolExecutor(extractor.concurrency) as pool:
                result = pipeline.extract_batch(
                    object_store, client, todo, retry, run_id=run_id, mapper=pool.map
                )
                declared = {f: p for f, p in client.declared_parsers().items() if p is not None}
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
        facts: dict[str, Mapping[str, Any]] = dict.fromkeys(context.partition_keys, UNREGISTERED)
        facts |= {r.key: extraction_metadata(done[r.key]) for r in batch}
        originals = latest(context, ORIGINAL, context.partition_keys)
        for key, facts_of_key in facts.items():
            made = done.get(key)
            yield AssetMaterialization(
                ARTIFACT,
                partition=key,
                metadata=facts_of_key,
                tags=version_tags(
                    context,
                    ARTIFACT,
                    data_version=UNREGISTERED_VERSION if made is None else artifact_version(made),
                    inputs={ORIGINAL: originals.get(key)},
                ),
            )
        yield logged_per_partition(f"{PREFIX}__artifact")
        selected = {key.name for key in context.selected_asset_check_keys}
        targets = check_targets(context, ARTIFACT, [r.key for r in batch])
        blocked: list[str] = []
        for revision in batch:
            extraction, target = done[revision.key], targets.get(revision.key)
            if EXTRACTED_CHECK in selected:
                yield (evaluation := extracted_evaluation(extraction, target, strict=strict))
                blocked += blocking_failure(revision, evaluation)
            if COMPLETE_CHECK in selected:
                yield (evaluation := complete_evaluation(extraction, target, strict=strict))
                if not extraction.refused:  # a refusal is named once, by `extracted`
                    blocked += blocking_failure(revision, evaluation)
            if CURRENT_CHECK in selected:  # asked for by name (the UI): every partition
                yield current_evaluation(extraction, declared, target)
            elif was_stale(earlier[revision.key], extraction):
                # The runs of the ingest job leave the check out (a pass for every fresh
                # extraction says nothing and costs an event per file): it is recorded where
                # it has news, here for a revision an earlier parser made, now current.
                yield current_evaluation(extraction, declared, target)
        if declared and loom.home:
            yield from stale_on_change(catalog_db, object_store, loom.home, declared)
        # The checks' results are per partition, which no AssetCheckResult of a range can say;
        # these outputs only tell Dagster they were given.
        for name in sorted(selected):
            yield Output(None, output_name=f"{PREFIX}__artifact_{name}")
        if blocked:
            # Dagster's own failure for a blocking check names the asset and the check only;
            # this one, raised first, names each file (with LOOM_STRICT=1).
            raise Failure(
                metadata_text(
                    f"strict: {len(blocked)} file(s) failed a blocking asset check: "
                    + "; ".join(blocked),
                    METADATA_CHARS,
                ),
                metadata={"files": metadata_text("; ".join(blocked), METADATA_CHARS)},
                allow_retries=False,
            )

    return artifact


artifact = artifact_asset()


def artifact_version(extraction: pipeline.Extraction) -> str:
    """A partition's data version: its artifact's SHA-256 (the hash of its canonical bytes), so a
    re-extraction that makes the same artifact changes nothing downstream; for a refusal, its
    code (a refused revision has nothing downstream)."""
    if extraction.refused or not extraction.artifact_sha256:
        return f"refused:{extraction.code}"
    return extraction.artifact_sha256


def blocking_failure(revision: Revision, evaluation: AssetCheckEvaluation) -> list[str]:
    """The file a failed blocking check stops its run for, as `SOURCE:PATH (check: why)`."""
    if evaluation.passed or not evaluation.blocking:
        return []
    return [
        f"{revision.source}:{revision.path} ({evaluation.check_name}: {evaluation.description})"
    ]


def was_stale(before: pipeline.Extraction | None, now: pipeline.Extraction) -> bool:
    """Whether this run re-extracted a revision another parser had made."""
    return (
        before is not None
        and before is not now
        and not before.refused
        and parsers.made_by(before) != parsers.made_by(now)
    )


def current_evaluation(
    extraction: pipeline.Extraction,
    declared: parsers.Declared,
    target: AssetCheckEvaluationTargetMaterializationData | None = None,
) -> AssetCheckEvaluation:
    """The `current_parser` check of one partition: a warning once its format's extractor
    declares another parser than the one that made the artifact."""
    stale = parsers.staleness(extraction, declared)
    return AssetCheckEvaluation(
        asset_key=ARTIFACT,
        check_name=CURRENT_CHECK,
        passed=stale is None,
        partition=extraction.revision,
        target_materialization_data=target,
        severity=AssetCheckSeverity.WARN,
        description=None
        if stale is None
        else metadata_text(f"stale: made by {stale.made_by}, the extractor now has {stale.now}"),
        metadata={
            "made_by": metadata_text("-" if extraction.refused else parsers.made_by(extraction))
        },
    )


def stale_on_change(
    catalog_db: CatalogResource, store: ObjectStore, home: str, declared: dict[str, str]
) -> Iterator[AssetCheckEvaluation]:
    """When the extractor declares other parsers than the last run saw, a warning on the
    `current_parser` check of every revision they made stale, logged by this run though those
    partitions are not in it (Dagster keeps one runless evaluation per check and partition, so
    a second upgrade could not be recorded outside a run). Nothing while nothing changed."""
    folder = Path(home)
    before = parsers.read_declared(folder)
    if not parsers.record_declared(folder, before | declared) or not before:
        return
    with catalog_db.connect() as con:
        keys = [s.key for s in catalog.revision_states(con) if s.artifact_sha256]
    for key in parsers.stale_revisions(store, keys, before | declared):
        extraction = pipeline.read_extraction(store, key)
        assert extraction is not None
        yield current_evaluation(extraction, declared)


def extracted_evaluation(
    extraction: pipeline.Extraction,
    target: AssetCheckEvaluationTargetMaterializationData | None = None,
    *,
    strict: bool = False,
) -> AssetCheckEvaluation:
    """The `extracted` check of one partition: red with the refusal's code and message."""
    if extraction.refused:
        return AssetCheckEvaluation(
            asset_key=ARTIFACT,
            check_name=EXTRACTED_CHECK,
            passed=False,
            partition=extraction.revision,
            target_materialization_data=target,
            severity=AssetCheckSeverity.ERROR,
            blocking=strict,
            description=metadata_text(f"{extraction.code}: {extraction.message}", METADATA_CHARS),
            metadata={
                "code": metadata_text(extraction.code),
                "message": metadata_text(extraction.message),
            },
        )
    return AssetCheckEvaluation(
        asset_key=ARTIFACT,
        check_name=EXTRACTED_CHECK,
        passed=True,
        partition=extraction.revision,
        target_materialization_data=target,
        metadata={
            "artifact_sha256": metadata_text(extraction.artifact_sha256),
            "parser": metadata_text(f"{extraction.parser} {extraction.parser_version}"),
        },
    )


def complete_evaluation(
    extraction: pipeline.Extraction,
    target: AssetCheckEvaluationTargetMaterializationData | None = None,
    *,
    strict: bool = False,
) -> AssetCheckEvaluation:
    """The `complete` check of one partition: a warning naming the units the artifact lacks.

    A refused revision has no artifact to judge: it fails `extracted`, and fails here too, so
    the check never reads "Passed" for a file nothing was read from.
    """
    gaps = "refused: nothing was read" if extraction.refused else extraction.describe_gaps()
    passed = not extraction.refused and extraction.complete
    return AssetCheckEvaluation(
        asset_key=ARTIFACT,
        check_name=COMPLETE_CHECK,
        passed=passed,
        partition=extraction.revision,
        target_materialization_data=target,
        # In strict mode an incomplete file is an error, and blocks its batch.
        severity=AssetCheckSeverity.ERROR if strict else AssetCheckSeverity.WARN,
        blocking=strict,
        description=None if passed else metadata_text(gaps),
        metadata={"coverage": metadata_text(extraction.coverage or "-")}
        | ({} if passed else {"failed_units": metadata_text(gaps)}),
    )
