"""The steps one source revision goes through, as plain functions.

original -> artifact -> chunks -> published. The Dagster assets call these for each partition
of a batch; the benchmark's plain loop calls the same functions with no Dagster around them.
Each step writes its result to the object store under `revisions/<key>/`, so the next step
(perhaps in another process) reads it from there.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Protocol

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from loom_dagster import catalog
from loom_dagster.chunking import Chunk, chunk_artifact
from loom_dagster.contract.artifact import Artifact, Locator
from loom_dagster.contract.validate import parse_artifact
from loom_dagster.display import printable
from loom_dagster.errors import ExtractionFailed, SourceError
from loom_dagster.objectstore import ObjectStore
from loom_dagster.search.lexical import IndexedChunk, LexicalIndex
from loom_dagster.sources import Revision, ScanResult, Source, open_checked, read_all, scan

EXTRACTION = "extraction.json"
CHUNKS = "chunks.parquet"


class Extractor(Protocol):
    """What the pipeline needs of an extractor client (resources/extractor.py has the real one)."""

    def extract(
        self,
        data: bytes,
        *,
        name: str,
        declared_format: str | None = None,
        options: Mapping[str, str] | None = None,
    ) -> Artifact: ...


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

    @property
    def refused(self) -> bool:
        return self.status == "refused"


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
    data = store.get_original(revision.sha256)
    declared_format, options = revision.extraction_options()
    try:
        artifact = client.extract(
            data, name=revision.path, declared_format=declared_format, options=options
        )
    except ExtractionFailed as refusal:
        return refuse(store, revision, refusal.code, refusal.message, run_id=run_id)
    sha = store.put_artifact(artifact.canonical_bytes())
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
        ),
    )


def read_extraction(store: ObjectStore, revision: str) -> Extraction | None:
    key = store.revision_key(revision, EXTRACTION)
    if not store.exists(key):
        return None
    return Extraction(**store.get_json(key))


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
) -> list[catalog.Outcome]:
    """Make each revision live, or record why it is not; the revision it replaces is retired.

    Only a revision whose every step succeeded reaches the catalog as published; a refused one
    leaves the earlier revision serving. Each revision is one catalog transaction; the search
    index takes the batch in one commit after them (a retry of a step that stopped between the
    two publishes the same revisions again, which changes nothing in the catalog).
    """
    outcomes: list[catalog.Outcome] = []
    live: dict[str, list[IndexedChunk]] = {}
    for revision in revisions:
        outcome, chunks = _publish_in_catalog(con, store, revision, run_id=run_id)
        outcomes.append(outcome)
        if outcome.status == catalog.PUBLISHED:
            live[revision.document_id] = [
                IndexedChunk.of(
                    c, document_id=revision.document_id, source=revision.source, path=revision.path
                )
                for c in chunks
            ]
    index.publish_many(live)
    return outcomes


def _publish_in_catalog(
    con: duckdb.DuckDBPyConnection, store: ObjectStore, revision: Revision, *, run_id: str | None
) -> tuple[catalog.Outcome, list[Chunk]]:
    extraction = read_extraction(store, revision.key)
    if extraction is None:
        raise SourceError(f"{revision.key} has no extraction yet", code="not_extracted")
    if extraction.refused:
        outcome = catalog.Outcome(
            revision.key, catalog.REFUSED, extraction.code, extraction.message
        )
        catalog.record_outcome(con, outcome, run_id=run_id)
        return outcome, []
    chunks = read_chunks(store, revision.key)
    assert extraction.artifact_sha256
    catalog.publish_revision(
        con, revision, chunks, artifact_sha256=extraction.artifact_sha256, run_id=run_id
    )
    return catalog.outcomes_for(con, [revision.key])[revision.key], chunks


def retire(
    con: duckdb.DuckDBPyConnection, index: LexicalIndex, source: str, paths: Sequence[str]
) -> list[str]:
    """Retire the documents of deleted files from the catalog and from search."""
    documents = catalog.retire_paths(con, source, paths)
    for document in documents:
        index.retire(document)
    return documents


# Chunks as Parquet ---------------------------------------------------------------------------

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
    ]
)


def chunks_to_parquet(chunks: list[Chunk]) -> bytes:
    rows = [
        {
            "ordinal": c.ordinal,
            "text": c.text,
            "block_ids": list(c.block_ids),
            "block_type": c.block_type,
            "section_path": list(c.section_path),
            "locator": json.dumps(c.locator.to_dict(), sort_keys=True),
            "keys": list(c.keys),
            "revision": c.revision,
            "format": c.format,
        }
        for c in chunks
    ]
    sink = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=_CHUNK_SCHEMA), sink)
    return sink.getvalue()


def chunks_from_parquet(data: bytes) -> list[Chunk]:
    rows = pq.read_table(io.BytesIO(data)).to_pylist()
    return [
        Chunk(
            ordinal=r["ordinal"],
            text=r["text"],
            block_ids=tuple(r["block_ids"]),
            block_type=r["block_type"],
            section_path=tuple(r["section_path"]),
            locator=Locator(**json.loads(r["locator"])),
            keys=tuple(r["keys"]),
            revision=r["revision"],
            format=r["format"],
        )
        for r in rows
    ]


def sync_source(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    source: Source,
    *,
    settle_s: float = 0.0,
    max_hashed: int | None = None,
    resume_after: str | None = None,
) -> ScanResult:
    """Register what changed in a folder since the last scan, and retire what was deleted."""
    result = scan(
        source,
        catalog.known_files(con, source.name),
        settle_s=settle_s,
        max_hashed=max_hashed,
        resume_after=resume_after,
    )
    catalog.register_revisions(con, result.new)
    # A revision refused because its file was rewritten (same bytes, another inode) runs again.
    again = set(catalog.refresh_identity(con, result.moved))
    retire(con, index, source.name, result.deleted)
    catalog.mark_synced(con, source.name)
    if again:
        result = replace(result, new=result.new + tuple(r for r in result.moved if r.key in again))
    return result
