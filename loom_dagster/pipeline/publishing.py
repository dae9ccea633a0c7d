"""Making revisions live: the commits a batch is published in (`publication_order`), the
catalog switch with their datasets, the search index after it (`publish`), the repair of an index the catalog is ahead of (`reconcile`, `sync_vectors`), and
the retirement of deleted files' documents (`retire`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace

import duckdb

from loom_dagster import catalog, hold
from loom_dagster.chunking import Chunk
from loom_dagster.datasets.build import build_datasets
from loom_dagster.datasets.catalog import (
    forget_snapshots,
    served_at,
    stale_snapshots,
    write_dataset,
)
from loom_dagster.datasets.model import Dataset
from loom_dagster.datasets.snapshots import delete_snapshots
from loom_dagster.errors import SourceError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.pipeline.records import Extraction, load_artifact, read_chunks, read_extraction
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


# Opening the catalog for a few statements and closing it after: CatalogResource.connect, or
# functools.partial(catalog.connect, path); `held` makes one of a connection already open.
Opener = Callable[[], AbstractContextManager[duckdb.DuckDBPyConnection]]


def held(con: duckdb.DuckDBPyConnection) -> Opener:
    """An open connection as an Opener: every opening uses it and none closes it, for a caller
    that holds the catalog throughout anyway (a test, a worker's own publishing loop)."""
    return lambda: nullcontext(con)


def publish(
    catalog_db: Opener | duckdb.DuckDBPyConnection,
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
    statements (catalog.publish_batch: all of it or none) with the rows of each served
    revision's datasets; the search index takes the batch in one commit after it, and then the
    batch is marked as indexed. A crash anywhere between leaves documents whose mark
    differs from their live revision, which `reconcile` (run first here, and by every ingest)
    repairs from the stored chunks; publishing the same revisions again changes nothing in the
    catalog. With `vectors`, the batch's vectors are swapped in after the lexical commit and
    before the mark, so a crash or an embedder failure between them is repaired likewise.

    The catalog is open only for its statements (`catalog_db` opens it; a connection is held
    throughout instead): DuckDB lets one process open its file at a time, and the folder
    sensor's tick, a query and every other run wait while it is. So it is opened three times,
    briefly: to read (reconcile, the sources, what each revision supersedes, the datasets each
    document serves now), to switch, and to mark. Everything slow happens with it closed:
    reading the extractions and chunks, typing the tables and writing their snapshots (the slow
    half of the datasets; only their rows are written in the switch), the lexical commit and
    the embeddings. This was chosen over a copy of the catalog swapped in for readers, or over
    bounding the work a step publishes at once, because it keeps one catalog and one record
    and shortens the hold for every reader and writer alike (a PostgreSQL catalog,
    LOOM_CATALOG_URL, goes through the same code: shorter transactions there too).

    What the closed gaps admit, each checked where the catalog is open again: a dataset
    approved between the read and the switch changed the types the revision must carry over,
    so the switch reads what its document serves again and retypes a revision whose served
    snapshots changed (under the catalog: rare); a file retired by a scan between the switch
    and the mark was written to the index after its retirement, so the mark records what the
    index holds (`catalog.mark_written`) and such a document is reconciled at once.
    """
    opened = catalog_db if callable(catalog_db) else held(catalog_db)
    read = [_prepared(store, revision) for revision in revisions]
    tabled = {revision.key for revision, extraction, _ in read if _has_tables(store, extraction)}
    with opened() as con:
        reconcile(con, index, store, vectors=vectors)
        tags = catalog.source_tags(con, {revision.source for revision in revisions})
        roots = {source.name: source.root for source in catalog.list_sources(con)}
        prepared = [_unless_gone(item, roots) for item in read]
        superseded = catalog.superseded_in_order(
            con, [revision for revision, extraction, _ in prepared if not extraction.refused]
        )
        # Datasets only for the revisions that will be served.
        to_type = [
            (revision, extraction)
            for revision, extraction, _ in prepared
            if not extraction.refused and revision.key not in superseded and revision.key in tabled
        ]
        basis = {r.key: served_at(con, r.source, r.path) for r, _ in to_type}
    typed = {r.key: type_datasets(store, e, r, basis[r.key]) for r, e in to_type}
    unused: list[str] = []  # snapshots typed again at the switch, or replaced by its rows
    with opened() as con:
        try:
            # The switch: every revision of the batch, and the rows of their datasets.
            with catalog.transaction(con):
                for revision, extraction in to_type:
                    now = served_at(con, revision.source, revision.path)
                    if _snapshots(now) != _snapshots(basis[revision.key]):
                        unused += [dataset.snapshot_key for dataset in typed[revision.key]]
                        typed[revision.key] = type_datasets(store, extraction, revision, now)
                    unused += [
                        key
                        for dataset in typed[revision.key]
                        if (key := write_dataset(con, dataset))
                    ]
                done = catalog.publish_batch(
                    con, [_entry(*item) for item in prepared], run_id=run_id
                )
        except BaseException:
            # Nothing names the snapshots typed for this batch: gone with it.
            delete_snapshots(
                store, [d.snapshot_key for datasets in typed.values() for d in datasets]
            )
            raise
        unused += forget_stale_datasets(con)
    delete_snapshots(store, unused)
    outcomes = [result.outcome for result in done]
    live: dict[str, list[IndexedChunk]] = {}
    published: dict[str, str] = {}
    for (revision, extraction, chunks), outcome in zip(prepared, outcomes, strict=True):
        if outcome.status == catalog.PUBLISHED:
            published[revision.document_id] = revision.key
            live[revision.document_id] = indexed_chunks(
                revision, chunks, tags[revision.source], extraction
            )
    hold.reached("published")  # switched, the catalog closed, the index not yet written
    index.publish_many(live)
    if vectors is not None:
        vectors.publish_many(live)
    hold.reached("index")
    with opened() as con:
        if catalog.mark_written(con, published):
            reconcile(con, index, store, vectors=vectors)
    return outcomes


def _snapshots(served: Mapping[str, Dataset]) -> dict[str, str]:
    return {dataset_id: dataset.snapshot for dataset_id, dataset in served.items()}


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


def _has_tables(store: ObjectStore, extraction: Extraction) -> bool:
    """Whether the artifact of an extracted revision may hold tables."""
    if extraction.refused:
        return False
    assert extraction.artifact_sha256
    raw = store.get_artifact_bytes(extraction.artifact_sha256)
    # The canonical JSON names `tables` only when there are any (inside a string its quotes
    # would be escaped): a document without one is not parsed again.
    return b'"tables":' in raw


def type_datasets(
    store: ObjectStore,
    extraction: Extraction,
    revision: Revision,
    served: Mapping[str, Dataset],
) -> list[Dataset]:
    """Type the artifact's tables and write their snapshots, no catalog open: the slow half of
    a revision's datasets. `served` is what its document serves now, by dataset id (an
    approved dataset's types carry over); the rows are the caller's to write at the switch."""
    artifact = load_artifact(store, extraction, revision)
    if not artifact.tables:
        return []
    return build_datasets(store, artifact, revision, served.get)


def forget_stale_datasets(con: duckdb.DuckDBPyConnection) -> list[str]:
    """After a switch: forget the dataset rows no revision will serve again (superseded,
    retired); returns their snapshot keys, for the caller to delete once the catalog is closed."""
    stale = stale_snapshots(con)
    if stale:
        forget_snapshots(con, stale)
    return stale


def drop_stale_datasets(con: duckdb.DuckDBPyConnection, store: ObjectStore) -> list[str]:
    """After a switch: forget the dataset rows no revision will serve again (superseded, retired),
    then delete their snapshots. A crash between leaves files no row names, which gc collects."""
    stale = forget_stale_datasets(con)
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
    stale, gone = catalog.live_unlike(con, vectors.live_revisions())
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
