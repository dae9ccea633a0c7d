"""The steps that make a revision's records: its original kept (`store_original`), its artifact
extracted or its refusal recorded (`extract`, `extract_batch`, `refuse`, `exhausted`), and its
chunks cut (`make_chunks`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Protocol

from loom_dagster import catalog
from loom_dagster.chunking import Chunk, ChunkLimits, chunk_within
from loom_dagster.contract.artifact import Artifact
from loom_dagster.display import bounded, printable
from loom_dagster.errors import ExtractionFailed, LoomError, SourceError
from loom_dagster.objectstore import ObjectStore, StoreError
from loom_dagster.pipeline.records import (
    CHUNKS,
    EXTRACTION,
    Extraction,
    chunks_to_parquet,
    load_artifact,
)
from loom_dagster.retries import RetrySettings
from loom_dagster.sources import Revision, blocks_as_scanned, open_checked, too_large_message

# The failed units an extraction record names (the artifact holds them all).
MAX_FAILED_UNITS = 20


class Extractor(Protocol):
    """What the pipeline needs of an extractor client (extractor/client.py has the real one)."""

    def extract(
        self,
        data: bytes,
        *,
        name: str,
        declared_format: str | None = None,
        options: Mapping[str, str] | None = None,
    ) -> Artifact: ...

    def declared_parser(self, fmt: str) -> str | None: ...


def store_original(
    store: ObjectStore, root: str, revision: Revision, *, max_bytes: int | None = None
) -> None:
    """Keep the file's bytes verbatim, addressed by their SHA-256, before anything parses them.

    A revision larger than `max_bytes` (the extractor's input limit) is refused `too_large`
    from its recorded size, before the file is opened. Otherwise one open (`open_checked`: no
    symlink followed, the device, inode and size the scan saw) and the bytes streamed from
    that descriptor into the store a block at a time, hashed on the way: memory stays bounded
    whatever the size, and bytes that do not hash to the revision's SHA-256 are discarded,
    never kept. The mtime is not compared: a touch with the same bytes is the same revision,
    and any other change fails the hash.
    """
    if max_bytes is not None and revision.size > max_bytes:
        raise SourceError(too_large_message(revision.size, max_bytes), code="too_large")
    with open_checked(
        root, revision.path, device=revision.device, inode=revision.inode, size=revision.size
    ) as fd:
        stored = store.put_original_stream(blocks_as_scanned(fd, revision.size), revision.sha256)
    if not stored:
        raise SourceError(
            f"{printable(revision.path)} changed after it was registered; the next scan registers it again",
            code="source_changed",
        )


def refuse(
    store: ObjectStore, revision: Revision, code: str, message: str, *, run_id: str | None = None
) -> Extraction:
    """Record a revision that will not be published, with its code, where the next step reads it."""
    return _record(
        store, Extraction(revision.key, "refused", code=code, message=message, run_id=run_id)
    )


def _record(store: ObjectStore, extraction: Extraction) -> Extraction:
    store.put_json(store.revision_key(extraction.revision, EXTRACTION), asdict(extraction))
    return extraction


def extract(
    store: ObjectStore, client: Extractor, revision: Revision, *, run_id: str | None = None
) -> Extraction:
    """Send the original to its extractor. A refusal is an outcome; unavailability raises."""
    try:
        data = store.get_original(revision.sha256)
    except StoreError as error:
        if error.code != "not_found":
            raise
        # Stored by the original step and gone since: trying again cannot bring it back.
        return refuse(
            store,
            revision,
            "original_gone",
            f"the original of {revision.path} is gone from the object store",
            run_id=run_id,
        )
    declared_format, options = revision.extraction_options()
    try:
        artifact = client.extract(
            data, name=revision.path, declared_format=declared_format, options=options
        )
    except ExtractionFailed as refusal:
        return refuse(store, revision, refusal.code, refusal.message, run_id=run_id)
    canonical = artifact.canonical_bytes()
    sha = store.put_artifact(canonical)
    coverage = artifact.coverage
    return _record(
        store,
        Extraction(
            revision.key,
            "extracted",
            artifact_sha256=sha,
            format=artifact.format,
            parser=artifact.parser,
            parser_version=artifact.parser_version,
            run_id=run_id,
            complete=coverage.complete,
            failed_units=tuple(
                bounded(f"{f.unit}: {f.reason}", 200) for f in coverage.failed[:MAX_FAILED_UNITS]
            )
            + tuple(bounded(f"lost: {lost}", 200) for lost in coverage.lost[:MAX_FAILED_UNITS]),
            coverage=f"{coverage.extracted} of {coverage.total} {coverage.unit}",
            declared=client.declared_parser(artifact.format),
            artifact_bytes=len(canonical),
        ),
    )


Mapper = Callable[
    [Callable[[Revision], "Extraction | LoomError"], Sequence[Revision]],
    Iterable["Extraction | LoomError"],
]


@dataclass(frozen=True)
class BatchExtraction:
    """What a batch came to: an extraction per revision that got one, and the revisions the
    service or the store could not take however often they were tried, with the last reason."""

    extracted: list[Extraction]
    unavailable: dict[str, LoomError]


def extract_batch(
    store: ObjectStore,
    client: Extractor,
    revisions: Sequence[Revision],
    retry: RetrySettings,
    *,
    run_id: str | None = None,
    mapper: Mapper = lambda f, items: map(f, items),
    sleep: Callable[[float], None] = time.sleep,
) -> BatchExtraction:
    """Extract each revision; one the service or the store could not take right now is tried
    again after a growing delay, up to `retry.retries` times, while the others go on.

    `mapper` runs the calls (a thread pool's map bounds how many are in flight at once).
    """
    extracted: list[Extraction] = []
    last: dict[str, LoomError] = {}
    remaining = list(revisions)
    for attempt in range(retry.retries + 1):
        if attempt:
            sleep(retry.delay(attempt - 1))
        results = mapper(lambda r: _try_extract(store, client, r, run_id), remaining)
        still = []
        for revision, result in zip(remaining, results, strict=True):
            if isinstance(result, Extraction):
                extracted.append(result)
            else:
                last[revision.key] = result
                still.append(revision)
        remaining = still
        if not remaining:
            break
    return BatchExtraction(extracted, {r.key: last[r.key] for r in remaining})


def _try_extract(
    store: ObjectStore, client: Extractor, revision: Revision, run_id: str | None
) -> Extraction | LoomError:
    try:
        return extract(store, client, revision, run_id=run_id)
    except LoomError as error:
        if not error.retryable:
            raise
        return error


def exhausted(
    store: ObjectStore, revision: Revision, error: LoomError, *, run_id: str | None = None
) -> Extraction:
    """Record a revision whose tries were all spent on an unavailable service or store."""
    return refuse(
        store,
        revision,
        catalog.RETRIES_EXHAUSTED,
        bounded(f"every try failed; the last: {error}", 1000),
        run_id=run_id,
    )


def make_chunks(
    store: ObjectStore,
    extraction: Extraction,
    revision: Revision,
    limits: ChunkLimits | None = None,
) -> list[Chunk]:
    """Cut the revision's chunks, at most its budget of them (`ChunkLimits`): an artifact of any
    size, from any extractor, indexes in bounded time. A cut is announced where an extractor's
    own losses are: the extraction record is rewritten incomplete, naming the text past the
    last chunk as a failed unit (`resource_limit`), so `loom ingest`, the published event and
    every hit of the revision say so."""
    artifact = load_artifact(store, extraction, revision)
    cut = chunk_within(artifact, revision=revision.key, original_size=revision.size, limits=limits)
    store.put(store.revision_key(revision.key, CHUNKS), chunks_to_parquet(cut.chunks))
    loss = cut.loss()
    if loss is not None and loss not in extraction.failed_units:
        _record(
            store,
            replace(extraction, complete=False, failed_units=(loss, *extraction.failed_units)),
        )
    return cut.chunks
