"""The records the steps leave for each other under `revisions/<key>/` in the object store: a
revision's extraction (`Extraction`, read back by `read_extraction`), its artifact read back
(`load_artifact`) and its chunks as Parquet (`read_chunks`)."""

from __future__ import annotations

import io
import threading
from collections import OrderedDict
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.parquet as pq

from loom_dagster.chunking import Chunk
from loom_dagster.contract.artifact import Artifact
from loom_dagster.contract.validate import parse_artifact
from loom_dagster.display import bounded
from loom_dagster.objectstore import ObjectStore, StoreError
from loom_dagster.sources import Revision

EXTRACTION = "extraction.json"
CHUNKS = "chunks.parquet"


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
    # stale once the service declares another (loom_dagster/pipeline/parsers.py).
    declared: str | None = None
    # The artifact's size in bytes (its canonical JSON): what chunking and indexing it will
    # cost, known before it is read (0 in a record written before it was kept).
    artifact_bytes: int = 0

    @property
    def refused(self) -> bool:
        return self.status == "refused"

    @property
    def incomplete(self) -> bool:
        return not self.refused and not self.complete

    def describe_gaps(self, limit: int = 200) -> str:
        """The units not read, in one bounded line: `page 2: needs_ocr; page 3: ...`."""
        return bounded("; ".join(self.failed_units) or "coverage incomplete", limit)


def read_extraction(store: ObjectStore, revision: str) -> Extraction | None:
    try:  # one read, not a look then a read: each is a round trip on S3
        record = store.get_json(store.revision_key(revision, EXTRACTION))
    except StoreError as error:
        if error.code == "not_found":
            return None
        raise
    record["failed_units"] = tuple(record.get("failed_units", ()))
    return Extraction(**record)


# The publishing step reads a revision's artifact twice (its chunks are cut from it, its tables
# typed from it), and parsing a large one is most of either: 2 s each for a 100,000-row CSV, with
# the catalog's one publishing slot held. A stored artifact is named by its SHA-256, so the last
# few parsed are kept by name; an Artifact is frozen, so sharing one is safe.
_PARSED_KEPT = 2
_parsed: OrderedDict[tuple[str, str, int], Artifact] = OrderedDict()
_parsed_lock = threading.Lock()


def load_artifact(store: ObjectStore, extraction: Extraction, revision: Revision) -> Artifact:
    assert extraction.artifact_sha256 and extraction.format
    name = (extraction.artifact_sha256, extraction.format, revision.size)
    with _parsed_lock:
        if name in _parsed:
            _parsed.move_to_end(name)
            return _parsed[name]
    raw = store.get_artifact_bytes(extraction.artifact_sha256)
    # Stored artifacts were validated before they were written; reading them back through the
    # same check keeps one way of turning JSON into an Artifact.
    artifact = parse_artifact(raw, expected_format=extraction.format, original_size=revision.size)
    with _parsed_lock:
        _parsed[name] = artifact
        while len(_parsed) > _PARSED_KEPT:
            _parsed.popitem(last=False)
    return artifact


def read_chunks(store: ObjectStore, revision: str) -> list[Chunk]:
    return chunks_from_parquet(store.get(store.revision_key(revision, CHUNKS)))


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
