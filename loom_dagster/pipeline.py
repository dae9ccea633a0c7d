"""The steps one source revision goes through, as plain functions.

original -> artifact -> chunks -> published. The Dagster assets call these for each partition
of a batch; the benchmark's plain loop calls the same functions with no Dagster around them.
Each step writes its result to the object store under `revisions/<key>/`, so the next step
(perhaps in another process) reads it from there.
"""

from __future__ import annotations

import hashlib
import io
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Protocol

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from loom_dagster import catalog, hold
from loom_dagster.chunking import Chunk, chunk_artifact
from loom_dagster.contract.artifact import Artifact
from loom_dagster.contract.validate import parse_artifact
from loom_dagster.datasets.build import build_datasets
from loom_dagster.datasets.catalog import (
    forget_snapshots,
    served_dataset,
    stale_snapshots,
    write_dataset,
)
from loom_dagster.datasets.model import Dataset
from loom_dagster.datasets.snapshots import delete_snapshots
from loom_dagster.display import bounded, printable
from loom_dagster.errors import ExtractionFailed, LoomError, SourceError
from loom_dagster.objectstore import ObjectStore, StoreError
from loom_dagster.retries import RetrySettings
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex
from loom_dagster.search.vector import VectorIndex
from loom_dagster.sources import (
    Revision,
    ScanResult,
    Source,
    document_id,
    open_checked,
    read_all,
    scan,
)

EXTRACTION = "extraction.json"
# The failed units an extraction record names (the artifact holds them all).
MAX_FAILED_UNITS = 20
CHUNKS = "chunks.parquet"


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


@dataclass(frozen=True)
class Extraction:
    """What the extractor made of a revision: an artifact, or a coded refusal."""

    revision: str
    status: str  # "extracted" or "refused"
    artifact_sha256: str | None = None
    format: str | None = None
    parser: str | None = None
    parser_version: str | None = None
    code: str | None = None
    message: str | None = None
    run_id: str | None = None
    # The artifact's coverage: whether every unit of the file was read, and the ones that were
    # not ("page 2: needs_ocr"); an incomplete artifact is published, and said to be.
    complete: bool = True
    failed_units: tuple[str, ...] = ()
    coverage: str = ""  # "2 of 3 pages"
    # "parser version" its service declared for the format when it extracted: a revision is
    # stale once the service declares another (loom_dagster/parsers.py).
    declared: str | None = None

    @property
    def refused(self) -> bool:
        return self.status == "refused"

    @property
    def incomplete(self) -> bool:
        return not self.refused and not self.complete

    def describe_gaps(self, limit: int = 200) -> str:
        """The units not read, in one bounded line: `page 2: needs_ocr; page 3: ...`."""
        return bounded("; ".join(self.failed_units) or "coverage incomplete", limit)


def store_original(store: ObjectStore, root: str, revision: Revision) -> None:
    """Keep the file's bytes verbatim, addressed by their SHA-256, before anything parses them.

    One open (`open_checked`: no symlink followed, the device, inode and size the scan saw)
    and the bytes read, hashed and stored from that descriptor. The mtime is not compared: a
    touch with the same bytes is the same revision, and any other change fails the hash.
    """
    with open_checked(
        root, revision.path, device=revision.device, inode=revision.inode, size=revision.size
    ) as fd:
        data = read_all(fd, revision.size)
    if hashlib.sha256(data).hexdigest() != revision.sha256:
        raise SourceError(
            f"{printable(revision.path)} changed after it was registered; the next scan registers it again",
            code="source_changed",
        )
    store.put_original(data)


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
    sha = store.put_artifact(artifact.canonical_bytes())
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


def read_extraction(store: ObjectStore, revision: str) -> Extraction | None:
    try:  # one read, not a look then a read: each is a round trip on S3
        record = store.get_json(store.revision_key(revision, EXTRACTION))
    except StoreError as error:
        if error.code == "not_found":
            return None
        raise
    record["failed_units"] = tuple(record.get("failed_units", ()))
    return Extraction(**record)


def load_artifact(store: ObjectStore, extraction: Extraction, revision: Revision) -> Artifact:
    assert extraction.artifact_sha256 and extraction.format
    raw = store.get_artifact_bytes(extraction.artifact_sha256)
    # Stored artifacts were validated before they were written; reading them back through the
    # same check keeps one way of turning JSON into an Artifact.
    return parse_artifact(raw, expected_format=extraction.format, original_size=revision.size)


def make_chunks(store: ObjectStore, extraction: Extraction, revision: Revision) -> list[Chunk]:
    artifact = load_artifact(store, extraction, revision)
    chunks = chunk_artifact(artifact, revision=revision.key)
    store.put(store.revision_key(revision.key, CHUNKS), chunks_to_parquet(chunks))
    return chunks


def read_chunks(store: ObjectStore, revision: str) -> list[Chunk]:
    return chunks_from_parquet(store.get(store.revision_key(revision, CHUNKS)))


def publish(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    store: ObjectStore,
    revisions: Sequence[Revision],
    *,
    run_id: str | None = None,
    vectors: VectorIndex | None = None,
) -> list[catalog.Outcome]:
    """Make each revision live, or record why it is not; the revision it replaces is retired.

    Only a revision whose every step succeeded reaches the catalog as published; a refused one
    leaves the earlier revision serving. The batch is one catalog transaction of a few
    statements (catalog.publish_batch: all of it or none), after each served revision's datasets
    were written; the search index takes the batch in one commit after it, and then one
    statement marks the batch as indexed. A crash anywhere between leaves documents whose mark differs from their live
    revision, which `reconcile` (run first here, and by every ingest) repairs from the stored
    chunks; publishing the same revisions again changes nothing in the catalog.

    With `vectors`, the batch's vectors are swapped in after the lexical commit and before the
    mark, so a crash or an embedder failure between them is repaired by the next reconcile.
    """
    reconcile(con, index, store, vectors=vectors)
    live: dict[str, list[IndexedChunk]] = {}
    published: dict[str, str] = {}
    tags = catalog.source_tags(con, {revision.source for revision in revisions})
    prepared = [_prepared(store, revision) for revision in revisions]
    # Datasets are written before the switch, for the revisions that will be served.
    superseded = catalog.superseded_in_order(
        con, [revision for revision, extraction, _ in prepared if not extraction.refused]
    )
    for revision, extraction, _ in prepared:
        if not extraction.refused and revision.key not in superseded:
            publish_datasets(con, store, extraction, revision)
    # The switch: every revision of the batch in one catalog transaction.
    done = catalog.publish_batch(con, [_entry(*item) for item in prepared], run_id=run_id)
    outcomes = [result.outcome for result in done]
    for (revision, extraction, chunks), outcome in zip(prepared, outcomes, strict=True):
        if outcome.status == catalog.PUBLISHED:
            published[revision.document_id] = revision.key
            live[revision.document_id] = indexed_chunks(
                revision, chunks, tags[revision.source], extraction
            )
    drop_stale_datasets(con, store)
    hold.reached("published")
    index.publish_many(live)
    if vectors is not None:
        vectors.publish_many(live)
    hold.reached("index")
    catalog.mark_indexed(con, published)
    return outcomes


def reconcile(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    store: ObjectStore,
    *,
    vectors: VectorIndex | None = None,
) -> dict[str, str | None]:
    """Make the index hold each document's live revision (nothing for a retired one), as the
    catalog says, rebuilding from the stored chunk files; returns what it repaired.

    The catalog commits first, so it is the record; a document whose index mark differs was
    cut off between the two commits (or published before the mark existed). An empty index
    while documents are live was made afresh (its folder removed, as an index of an older
    schema must be): every live document is written to it again.
    """
    if index.count() == 0:
        catalog.unmark_indexed(con)
    if vectors is not None:
        sync_vectors(con, vectors, store)
    differing = catalog.unindexed(con)
    if not differing:
        return {}
    live: dict[str, list[IndexedChunk]] = {}
    gone: list[str] = []
    revisions = catalog.revisions_of(
        con, [key for _, key in differing if key is not None], strict=True
    )
    tags = catalog.source_tags(con, {revision.source for revision in revisions.values()})
    for document, key in differing:
        if key is None:
            gone.append(document)
            continue
        revision = revisions[key]
        live[document] = indexed_chunks(
            revision, read_chunks(store, key), tags[revision.source], read_extraction(store, key)
        )
    index.publish_many(live)
    for document in gone:
        index.retire(document)
    repaired = dict(differing)
    catalog.mark_indexed(con, repaired)
    return repaired


def indexed_chunks(
    revision: Revision,
    chunks: Sequence[Chunk],
    tags: Sequence[str],
    extraction: Extraction | None,
) -> list[IndexedChunk]:
    """A revision's chunks as the index holds them: with its source's tags, and the units its
    file was not read in, so a hit says so without another read."""
    gaps = extraction.describe_gaps() if extraction is not None and extraction.incomplete else ""
    return [
        IndexedChunk.of(
            chunk,
            document_id=revision.document_id,
            source=revision.source,
            path=revision.path,
            tags=tags,
            incomplete=gaps,
        )
        for chunk in chunks
    ]


def _prepared(store: ObjectStore, revision: Revision) -> tuple[Revision, Extraction, list[Chunk]]:
    """A revision's extraction and chunks as its earlier steps stored them (none if refused)."""
    extraction = read_extraction(store, revision.key)
    if extraction is None:
        raise SourceError(f"{revision.key} has no extraction yet", code="not_extracted")
    if extraction.refused:
        return revision, extraction, []
    assert extraction.artifact_sha256
    return revision, extraction, read_chunks(store, revision.key)


def _entry(
    revision: Revision, extraction: Extraction, chunks: Sequence[Chunk]
) -> catalog.Publication | catalog.Outcome:
    if extraction.refused:
        return catalog.Outcome(revision.key, catalog.REFUSED, extraction.code, extraction.message)
    assert extraction.artifact_sha256
    return catalog.Publication(revision, len(chunks), extraction.artifact_sha256)


def publish_datasets(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, extraction: Extraction, revision: Revision
) -> list[Dataset]:
    """Type the artifact's tables and write their snapshots, then their catalog rows, before the
    switch: nothing serves them until the documents row names `revision`."""
    assert extraction.artifact_sha256 and extraction.format
    raw = store.get_artifact_bytes(extraction.artifact_sha256)
    # The canonical JSON names `tables` only when there are any (inside a string its quotes
    # would be escaped): a document without one is not parsed again in the catalog's pool.
    if b'"tables":' not in raw:
        return []
    artifact = parse_artifact(raw, expected_format=extraction.format, original_size=revision.size)
    if not artifact.tables:
        return []
    built = build_datasets(store, artifact, revision, lambda dataset: served_dataset(con, dataset))
    with catalog.transaction(con):
        replaced = [key for dataset in built if (key := write_dataset(con, dataset))]
    delete_snapshots(store, replaced)
    return built


def drop_stale_datasets(con: duckdb.DuckDBPyConnection, store: ObjectStore) -> list[str]:
    """After a switch: forget the dataset rows no revision will serve again (superseded, retired),
    then delete their snapshots. A crash between leaves files no row names, which gc collects."""
    stale = stale_snapshots(con)
    if stale:
        forget_snapshots(con, stale)
        delete_snapshots(store, stale)
    return stale


def retire(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    source: str,
    paths: Sequence[str],
    *,
    vectors: VectorIndex | None = None,
) -> list[str]:
    """Retire the documents of deleted files from the catalog and from search."""
    documents = catalog.retire_paths(con, source, paths)
    for document in documents:
        index.retire(document)
    if vectors is not None and documents:
        vectors.publish_many({}, retire=documents)
    catalog.mark_indexed(con, dict.fromkeys(documents))
    return documents


def sync_vectors(
    con: duckdb.DuckDBPyConnection, vectors: VectorIndex, store: ObjectStore
) -> dict[str, str | None]:
    """Make the vector index hold each live document's revision and nothing else, as the
    catalog says, from the stored chunk files; returns what it changed.

    The vector index keeps its own record of the revision each document was embedded as, so
    this repairs whatever the index missed: a crash or an embedder failure after the lexical
    commit, a path that retired documents without it, or a change of embedder (whose index
    starts empty and is filled here).
    """
    have = vectors.live_revisions()
    live = {doc: (source, path, key) for doc, source, path, key in catalog.live_documents(con)}
    stale = {doc: entry for doc, entry in live.items() if have.get(doc) != entry[2]}
    gone = [doc for doc in have if doc not in live]
    if not stale and not gone:
        return {}
    documents = {
        doc: [
            IndexedChunk.of(c, document_id=doc, source=source, path=path)
            for c in read_chunks(store, key)
        ]
        for doc, (source, path, key) in stale.items()
    }
    vectors.publish_many(documents, retire=gone)
    return {**{doc: entry[2] for doc, entry in stale.items()}, **dict.fromkeys(gone)}


# Chunks as Parquet: a row is Chunk.record() ----------------------------------------------

_CHUNK_SCHEMA = pa.schema(
    [
        ("ordinal", pa.int32()),
        ("text", pa.string()),
        ("block_ids", pa.list_(pa.string())),
        ("block_type", pa.string()),
        ("section_path", pa.list_(pa.string())),
        ("locator", pa.string()),
        ("keys", pa.list_(pa.string())),
        ("revision", pa.string()),
        ("format", pa.string()),
        ("names", pa.list_(pa.string())),
    ]
)


def chunks_to_parquet(chunks: list[Chunk]) -> bytes:
    table = pa.Table.from_pylist([chunk.record() for chunk in chunks], schema=_CHUNK_SCHEMA)
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def chunks_from_parquet(data: bytes) -> list[Chunk]:
    return [Chunk.from_record(row) for row in pq.read_table(io.BytesIO(data)).to_pylist()]


# A file modified this recently may still be being written: scans that watch folders (the
# sensor's, and a run registering what a sensor saw) leave it for later.
SETTLE_S = 2.0


def scan_source(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    *,
    settle_s: float = 0.0,
    max_hashed: int | None = None,
    resume_after: str | None = None,
) -> ScanResult:
    """What changed in a folder since the catalog last recorded it. Writes nothing."""
    return scan(
        source,
        catalog.known_files(con, source.name),
        settle_s=settle_s,
        max_hashed=max_hashed,
        resume_after=resume_after,
    )


def apply_scan(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    source: Source,
    result: ScanResult,
    *,
    vectors: VectorIndex | None = None,
) -> ScanResult:
    """Register a scan's new revisions, record its moved files' identity, retire its deleted
    files; returns the scan with the keys that must run again."""
    came_back = catalog.register_revisions(con, result.new)
    # A revision refused because its file was rewritten (same bytes, another inode) runs again.
    again = set(catalog.refresh_identity(con, result.moved))
    retire(con, index, source.name, result.deleted, vectors=vectors)
    catalog.mark_synced(con, source.name)
    return replace(
        result,
        new=result.new + tuple(r for r in result.moved if r.key in again),
        rerun=tuple(sorted(set(came_back) | again)),
    )


def sync_source(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    source: Source,
    *,
    settle_s: float = 0.0,
    max_hashed: int | None = None,
    resume_after: str | None = None,
    vectors: VectorIndex | None = None,
) -> ScanResult:
    """Register what changed in a folder since the last scan, and retire what was deleted."""
    result = scan_source(
        con, source, settle_s=settle_s, max_hashed=max_hashed, resume_after=resume_after
    )
    return apply_scan(con, index, source, result, vectors=vectors)


@dataclass(frozen=True)
class FolderPlan:
    """What a scan of one folder found that runs must apply, computed without a write: the
    sensor's view (its evaluation changes nothing, so a preview or a lost tick loses nothing)."""

    scan: ScanResult
    keys: tuple[str, ...]  # a partition for each: every new revision, and each to run again
    again: tuple[str, ...]  # registered before and to run again: asked for by name
    sync: bool  # deleted files to retire or identities to record: a run of the sync job


def plan_source(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    *,
    settle_s: float = 0.0,
    max_hashed: int | None = None,
    resume_after: str | None = None,
) -> FolderPlan:
    result = scan_source(
        con, source, settle_s=settle_s, max_hashed=max_hashed, resume_after=resume_after
    )
    new = [r.key for r in result.new]
    moved = [r.key for r in result.moved]
    # A new key with a record is a file back to bytes it had (an edit undone, a file deleted
    # and written again): its partition may hold a materialization, so it is asked for by
    # name. A moved file refused as replaced runs again too; either way the run's first step
    # registers it (register_for_run).
    again = catalog.registered_keys(con, new) | (
        catalog.needs_registration(con, moved) & set(moved)
    )
    return FolderPlan(
        result,
        tuple(sorted(set(new) | again)),
        tuple(sorted(again)),
        sync=bool(result.deleted) or any(key not in again for key in moved),
    )


def sync_folders(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    sources: Iterable[Source],
    *,
    settle_s: float = SETTLE_S,
    vectors: VectorIndex | None = None,
) -> list[str]:
    """Apply a scan of each folder (register, record identities, retire); returns the ids of
    the documents it retired. A folder that is gone is skipped: its files are not deleted,
    they are out of reach (`loom sources remove` retires them)."""
    retired: list[str] = []
    for source in sources:
        try:
            result = sync_source(con, index, source, settle_s=settle_s, vectors=vectors)
        except SourceError as error:
            if error.code != "missing_folder":
                raise
            continue
        retired += [document_id(source.name, path) for path in result.deleted]
    return retired


def register_for_run(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    keys: Sequence[str],
    *,
    settle_s: float = SETTLE_S,
) -> list[str]:
    """Register the revisions of a run's partitions that no scan has registered yet (the
    sensor computes keys and writes nothing), re-scanning the folders that may hold them; a
    key whose file changed again since stays unregistered. Returns the ids of the documents
    those scans retired. With every key registered already (`loom ingest`), one query."""
    need = catalog.needs_registration(con, keys)
    if not need:
        return []
    known = catalog.registered_keys(con, need)
    if need - known:  # a key names no source: any folder may hold it
        sources = catalog.list_sources(con)
    else:
        names = sorted({revision.source for revision in catalog.revisions_of(con, known).values()})
        sources = [s for s in catalog.list_sources(con) if s.name in names]
    return sync_folders(con, index, sources, settle_s=settle_s)
