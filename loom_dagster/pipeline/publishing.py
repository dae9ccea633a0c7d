"""Making revisions live: the commits a batch is published in (`publication_order`), the
catalog switch with their datasets, the search index after it (`publish`), the repair of an index the catalog is ahead of (`reconcile`, `sync_vectors`), and
the retirement of deleted files' documents (`retire`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

import duckdb

from loom_dagster import catalog, hold
from loom_dagster.chunking import Chunk
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
from loom_dagster.errors import SourceError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.pipeline.records import Extraction, read_chunks, read_extraction
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex
from loom_dagster.search.vector import VectorIndex
from loom_dagster.sources import Revision, gone_from

# A document whose artifact is larger (about a thousand chunks of text: a second or two of
# chunking, indexing and embedding) is published after the rest of its batch, on its own.
LARGE_ARTIFACT_BYTES = 1024 * 1024


def publication_order(
    revisions: Sequence[Revision], extractions: Mapping[str, Extraction | None]
) -> list[list[Revision]]:
    """The batch as the commits it is published in, in order, so that one large document never
    holds the other files of its batch out of search: first every document whose artifacts are
    all at most LARGE_ARTIFACT_BYTES (refused ones too), together in one commit, as a batch
    always was; then each larger document in a commit of its own, the smallest first. A
    document's revisions stay in one commit, in their order, so the later one supersedes the
    earlier there as in a batch of one commit.
    """
    cost: dict[str, int] = {}
    for revision in revisions:
        extraction = extractions.get(revision.key)
        size = extraction.artifact_bytes if extraction is not None else 0
        cost[revision.document_id] = max(cost.get(revision.document_id, 0), size)
    small = [r for r in revisions if cost[r.document_id] <= LARGE_ARTIFACT_BYTES]
    large: dict[str, list[Revision]] = {}
    for revision in revisions:
        if cost[revision.document_id] > LARGE_ARTIFACT_BYTES:
            large.setdefault(revision.document_id, []).append(revision)
    ordered = sorted(large.values(), key=lambda group: cost[group[0].document_id])
    return [group for group in (small, *ordered) if group]


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
    roots = {source.name: source.root for source in catalog.list_sources(con)}
    prepared = [_unless_gone(_prepared(store, revision), roots) for revision in revisions]
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


def _unless_gone(
    item: tuple[Revision, Extraction, list[Chunk]], roots: Mapping[str, str]
) -> tuple[Revision, Extraction, list[Chunk]]:
    """A revision whose file was deleted since its run read it is refused `source_gone`, not
    made live for the next scan to retire (nor made live again once a scan retired it)."""
    revision, extraction, _ = item
    root = roots.get(revision.source)  # a source removed since: its documents are retired
    if extraction.refused or root is None or not gone_from(root, revision.path):
        return item
    message = f"{revision.path} was deleted before its run published it"
    return revision, replace(extraction, status="refused", code="source_gone", message=message), []


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
