"""The metadata each partition carries in the UI, per revision and never the batch's sum: the
original's bytes and copy, the extractor's answer, the chunks cut, the datasets typed; each step
logs it on its own materialization of each partition (with its versions: versions.py)."""

import os
import shlex
from collections.abc import Sequence
from typing import Any

from dagster import (
    MetadataValue,
    TableColumn,
    TableSchema,
)

from loom_dagster import pipeline
from loom_dagster.chunking import Chunk
from loom_dagster.contract.metadata import metadata_text
from loom_dagster.datasets.model import Dataset
from loom_dagster.objectstore import ObjectStore
from loom_dagster.sources import Revision

PREVIEW_CHARS = 300
# The longest string from a document, a path or a service put into a run's metadata.
METADATA_CHARS = 1000
# A revision's datasets shown in the UI, each with at most this many of its columns.
MAX_SCHEMAS, MAX_SCHEMA_COLUMNS = 20, 200
# A partition whose key no scan could register in its run: the file changed (or went) between
# the sensor's scan and the run; its new bytes, if any, are another partition.
UNREGISTERED = {
    "status": MetadataValue.text("unregistered"),
    "why": MetadataValue.text("the file changed or was deleted before this run could read it"),
}


def original_metadata(revision: Revision, root: str, store: ObjectStore) -> dict[str, Any]:
    """What one revision is: where it came from, its bytes and where the copy is kept."""
    return {
        "source": MetadataValue.text(metadata_text(revision.source)),
        "path": MetadataValue.path(metadata_text(os.path.join(root, revision.path))),
        "sha256": MetadataValue.text(revision.sha256),
        "size": MetadataValue.int(revision.size),
        "stored_at": MetadataValue.text(
            metadata_text(store.url.rstrip("/") + "/" + store.original_key(revision.sha256))
        ),
    }


def extraction_metadata(extraction: pipeline.Extraction) -> dict[str, Any]:
    """The extractor's answer for one revision: its artifact and coverage, or its refusal."""
    if extraction.refused:
        return {
            "status": MetadataValue.text("refused"),
            "code": MetadataValue.text(metadata_text(extraction.code)),
            "message": MetadataValue.text(metadata_text(extraction.message)),
        }
    return {
        "status": MetadataValue.text("extracted" if extraction.complete else "incomplete"),
        "format": MetadataValue.text(metadata_text(extraction.format)),
        "parser": MetadataValue.text(
            metadata_text(f"{extraction.parser} {extraction.parser_version}")
        ),
        "artifact_sha256": MetadataValue.text(metadata_text(extraction.artifact_sha256)),
        "coverage": MetadataValue.text(metadata_text(extraction.coverage)),
        "complete": MetadataValue.bool(extraction.complete),
        "failed_units": MetadataValue.text(
            metadata_text("; ".join(extraction.failed_units) or "none")
        ),
    }


def chunk_metadata(revision: Revision, chunks: Sequence[Chunk]) -> dict[str, Any]:
    first = chunks[0].text if chunks else ""
    return {
        "path": MetadataValue.text(metadata_text(f"{revision.source}:{revision.path}")),
        "chunks": MetadataValue.int(len(chunks)),
        "dagster/row_count": MetadataValue.int(len(chunks)),
        "preview": MetadataValue.md(
            "> " + metadata_text(first, PREVIEW_CHARS).replace("`", "'") if first else "(empty)"
        ),
    }


def datasets_metadata(found: Sequence[Dataset]) -> dict[str, Any]:
    """What the UI shows of a revision's datasets: a schema each, rows stored and rejected,
    the state of each and whether each kept its whole table."""
    if not found:
        return {
            "status": MetadataValue.text("no tables"),
            "datasets": MetadataValue.int(0),
            "dagster/row_count": MetadataValue.int(0),
        }
    metadata: dict[str, Any] = {
        "status": MetadataValue.text("typed"),
        "datasets": MetadataValue.int(len(found)),
        "dagster/row_count": MetadataValue.int(sum(d.rows_stored for d in found)),
        "rows_stored": MetadataValue.int(sum(d.rows_stored for d in found)),
        "rows_rejected": MetadataValue.int(sum(d.rows_rejected for d in found)),
        "state": MetadataValue.text(
            metadata_text("; ".join(f"{d.name}: {d.state.value}" for d in found))
        ),
        "complete": MetadataValue.bool(all(d.complete for d in found)),
    }
    if len(found) == 1:  # Dagster's standard key holds one schema: the only table's
        metadata["dagster/column_schema"] = MetadataValue.table_schema(
            TableSchema(columns=schema_columns(found[0]))
        )
    for number, dataset in enumerate(found[:MAX_SCHEMAS], 1):
        metadata[f"schema {number}"] = MetadataValue.table_schema(
            TableSchema(columns=schema_columns(dataset))
        )
        metadata[f"dataset {number}"] = MetadataValue.text(
            metadata_text(
                f"{dataset.dataset_id} {dataset.name}: {dataset.rows_stored} rows stored, "
                f"{dataset.rows_rejected} rejected, {dataset.state.value}, "
                f"{'complete' if dataset.complete else 'incomplete'}"
            )
        )
    return metadata


def schema_columns(dataset: Dataset) -> list[TableColumn]:
    return [
        TableColumn(metadata_text(c.name, 200), c.type.value)
        for c in dataset.schema.columns[:MAX_SCHEMA_COLUMNS]
    ]


def revision_facts(
    revision: Revision, root: str, store: ObjectStore, extraction: pipeline.Extraction | None
) -> dict[str, Any]:
    """What a published partition's page says of its file: path, format, size, revision and
    its time, and links to open the original, the artifact and `loom show` for it."""
    base = store.url.rstrip("/") + "/"
    facts: dict[str, Any] = {
        "path": MetadataValue.path(metadata_text(os.path.join(root, revision.path))),
        "source": MetadataValue.text(metadata_text(revision.source)),
        "size": MetadataValue.int(revision.size),
        "revision": MetadataValue.text(revision.sha256[:16]),
        "modified": MetadataValue.timestamp(revision.mtime_ns / 1e9),
        "original": MetadataValue.url(base + store.original_key(revision.sha256)),
        "loom show": MetadataValue.text(
            metadata_text(f"loom show {shlex.quote(f'{revision.source}:{revision.path}')}")
        ),
        "dagster/uri": MetadataValue.text(base + store.original_key(revision.sha256)),
    }
    if extraction is not None and extraction.format:
        facts["format"] = MetadataValue.text(metadata_text(extraction.format))
    if extraction is not None and extraction.artifact_sha256:
        facts["artifact"] = MetadataValue.url(base + store.artifact_key(extraction.artifact_sha256))
    return facts


def datasets_facts(found: Sequence[Dataset]) -> dict[str, Any]:
    """A revision's tables in a line: how many, each with its rows stored."""
    if not found:
        return {"tables": MetadataValue.text("no tables")}
    return {
        "tables": MetadataValue.text(
            metadata_text("; ".join(f"{d.name}: {d.rows_stored} rows" for d in found))
        ),
        "datasets": MetadataValue.int(len(found)),
    }
