"""The catalog's tables (SCHEMA), put in place on every connection, and the migration of a file
from before index marks; with the embedded catalog's index id and how its timestamps print.
"""

from __future__ import annotations

from datetime import datetime

import duckdb

from loom_dagster.catalog.postgres import PostgresCatalog
from loom_dagster.catalog.transactions import atomic

SCHEMA = """
CREATE SEQUENCE IF NOT EXISTS revision_seq;
CREATE TABLE IF NOT EXISTS sources (
    name VARCHAR PRIMARY KEY, root VARCHAR NOT NULL, include VARCHAR NOT NULL,
    registered_at TIMESTAMP DEFAULT current_timestamp
);
CREATE TABLE IF NOT EXISTS revisions (
    key VARCHAR PRIMARY KEY, seq BIGINT NOT NULL DEFAULT nextval('revision_seq'),
    document_id VARCHAR NOT NULL, source VARCHAR NOT NULL, path VARCHAR NOT NULL,
    size BIGINT NOT NULL, mtime_ns BIGINT NOT NULL, sha256 VARCHAR NOT NULL,
    registered_at TIMESTAMP DEFAULT current_timestamp
);
CREATE TABLE IF NOT EXISTS documents (
    document_id VARCHAR PRIMARY KEY, source VARCHAR NOT NULL, path VARCHAR NOT NULL,
    live_revision VARCHAR, status VARCHAR NOT NULL, updated_at TIMESTAMP DEFAULT current_timestamp
);
CREATE TABLE IF NOT EXISTS outcomes (
    revision VARCHAR PRIMARY KEY, status VARCHAR NOT NULL, code VARCHAR, message VARCHAR,
    artifact_sha256 VARCHAR, chunk_count INTEGER, run_id VARCHAR,
    recorded_at TIMESTAMP DEFAULT current_timestamp
);
-- Every outcome ever recorded, in order: `outcomes` holds a revision's current one, this its
-- history (a superseded revision keeps the run that published it).
CREATE SEQUENCE IF NOT EXISTS outcome_seq;
CREATE TABLE IF NOT EXISTS outcome_history (
    seq BIGINT NOT NULL DEFAULT nextval('outcome_seq'), revision VARCHAR NOT NULL,
    status VARCHAR NOT NULL, code VARCHAR, message VARCHAR, artifact_sha256 VARCHAR,
    chunk_count INTEGER, run_id VARCHAR, recorded_at TIMESTAMP DEFAULT current_timestamp
);
ALTER TABLE sources ADD COLUMN IF NOT EXISTS options VARCHAR DEFAULT '[]';
ALTER TABLE sources ADD COLUMN IF NOT EXISTS last_sync TIMESTAMP;
ALTER TABLE revisions ADD COLUMN IF NOT EXISTS device BIGINT DEFAULT 0;
ALTER TABLE revisions ADD COLUMN IF NOT EXISTS inode BIGINT DEFAULT 0;
ALTER TABLE revisions ADD COLUMN IF NOT EXISTS options VARCHAR DEFAULT '{}';
-- A revision's chunks live in its chunks.parquet and in the search index, and their number in
-- its outcome; a catalog that still holds the copy earlier versions wrote loses it here.
DROP TABLE IF EXISTS chunks;
-- The revision a search index is known to hold for the document (no row: none). Publishing
-- commits the catalog, then the index, then this mark; a document whose mark differs from its
-- live revision is repaired from its stored chunks (pipeline.reconcile). Keyed by the index:
-- homes sharing a PostgreSQL catalog each have their own index (the embedded file's is 'local').
CREATE TABLE IF NOT EXISTS index_marks (
    index_id VARCHAR NOT NULL, document_id VARCHAR NOT NULL, revision VARCHAR NOT NULL,
    PRIMARY KEY (index_id, document_id)
);
-- A typed dataset of one revision of one document (loom_dagster.datasets.catalog): served while
-- its document's live revision is `revision`, by the Parquet snapshot `snapshot_key`.
CREATE TABLE IF NOT EXISTS datasets (
    dataset_id VARCHAR NOT NULL, revision VARCHAR NOT NULL, source VARCHAR NOT NULL,
    path VARCHAR NOT NULL, table_id VARCHAR NOT NULL, name VARCHAR NOT NULL,
    schema VARCHAR NOT NULL, state VARCHAR NOT NULL, questions VARCHAR NOT NULL,
    rows_stored BIGINT NOT NULL, rows_rejected BIGINT NOT NULL, rejects VARCHAR NOT NULL,
    complete BOOLEAN NOT NULL, incomplete_reasons VARCHAR NOT NULL,
    snapshot VARCHAR NOT NULL, snapshot_key VARCHAR NOT NULL,
    written_at TIMESTAMP DEFAULT current_timestamp, PRIMARY KEY (dataset_id, revision)
);
-- A source's tags (a JSON list); the search index carries them on every chunk of the source.
ALTER TABLE sources ADD COLUMN IF NOT EXISTS tags VARCHAR DEFAULT '[]';
"""


# The index marks of the embedded catalog, which has one index (its home's).
LOCAL_INDEX = "local"


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    if isinstance(con, PostgresCatalog):
        con.apply_schema(SCHEMA)  # a catalog there never had the marks on `documents`
    else:
        con.execute(SCHEMA)
        _migrate(con)


def _migrate(con: duckdb.DuckDBPyConnection) -> None:
    """A catalog file from before index_marks kept its one index's marks on `documents`: move
    them. (pragma_table_info: a tenth of information_schema's cost, paid on every connection.)"""
    old = con.execute(
        "SELECT count(*) FROM pragma_table_info('documents') WHERE name = 'indexed_revision'"
    ).fetchone()
    if not old or not old[0]:
        return
    with atomic(con):
        con.execute(
            "INSERT INTO index_marks (index_id, document_id, revision) SELECT ?, document_id, "
            "indexed_revision FROM documents WHERE indexed_revision IS NOT NULL "
            "ON CONFLICT DO NOTHING",
            [LOCAL_INDEX],
        )
        con.execute("ALTER TABLE documents DROP COLUMN indexed_revision")


def _clock(moment: datetime | None) -> str | None:
    """A catalog timestamp to the second, as the catalog's readers print it."""
    return None if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S")
