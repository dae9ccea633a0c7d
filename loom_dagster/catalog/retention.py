"""Retention and removal: what loom_dagster.lifecycle reads to decide what is kept, and the
removal of a source.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass

import duckdb

from loom_dagster.catalog.outcomes import PUBLISHED

# Read by loom_dagster.lifecycle, which decides what is kept; nothing here deletes a revision's
# record: pruned revisions stay as the history.


@dataclass(frozen=True)
class RevisionState:
    """What retention needs to know of one registered revision."""

    key: str
    document_id: str
    source: str
    sha256: str
    seq: int
    age_s: float  # seconds since it was registered
    live: bool
    status: str | None  # its outcome; None while no run has finished it
    artifact_sha256: str | None

    @property
    def settled(self) -> bool:
        """Published and live: nothing is left to run or to show of it but its facts, which
        the catalog holds (the partition window may take its partition)."""
        return self.live and self.status == PUBLISHED


def revision_states(
    con: duckdb.DuckDBPyConnection,
    *,
    source: str | None = None,
    documents_of: Collection[str] | None = None,
    more_than: int | None = None,
) -> list[RevisionState]:
    """Every registered revision (or those of one source), newest first within a document; with
    `documents_of` (revision keys), every revision of the documents those keys are revisions of
    and no other: all of a document's revisions, as retention ranks them. With `more_than`, only
    those of the documents with more than that many revisions (all of each one's)."""
    where = "WHERE (? IS NULL OR r.source = ?)"
    values: list[object] = [source, source]
    if documents_of is not None:
        where += (
            " AND r.document_id IN "
            "(SELECT document_id FROM revisions WHERE key IN (SELECT unnest(?)))"
        )
        values.append(sorted(documents_of))
    if more_than is not None:
        where += (
            " AND r.document_id IN "
            "(SELECT document_id FROM revisions GROUP BY document_id HAVING count(*) > ?)"
        )
        values.append(more_than)
    rows = con.execute(
        f"""
        SELECT r.key, r.document_id, r.source, r.sha256, r.seq,
               extract(epoch FROM current_timestamp::TIMESTAMP) - extract(epoch FROM r.registered_at),
               coalesce(d.live_revision = r.key, false), o.status, o.artifact_sha256
        FROM revisions r
        LEFT JOIN documents d ON d.document_id = r.document_id
        LEFT JOIN outcomes o ON o.revision = r.key
        {where}
        ORDER BY r.document_id, r.seq DESC
        """,
        values,
    ).fetchall()
    return [
        RevisionState(row[0], row[1], row[2], row[3], row[4], float(row[5]), *row[6:])
        for row in rows
    ]


def settled_among(con: duckdb.DuckDBPyConnection, keys: Iterable[str]) -> set[str]:
    """Which of `keys` are settled (RevisionState.settled), read from the revisions of their
    documents only, as the housekeeping tick reads them."""
    wanted = set(keys)
    if not wanted:
        return set()
    return {
        state.key
        for state in revision_states(con, documents_of=wanted)
        if state.key in wanted and state.settled
    }


@dataclass(frozen=True)
class DocumentRevision:
    """One revision of a document, beside the document's live revision and state."""

    key: str
    status: str | None  # its own outcome
    live_revision: str | None
    document_status: str | None  # live, retired, or None while nothing was published


def document_states(
    con: duckdb.DuckDBPyConnection, documents: Iterable[str]
) -> list[DocumentRevision]:
    """Every revision of `documents`, with what each document serves now."""
    rows = con.execute(
        """
        SELECT r.key, o.status, d.live_revision, d.status
        FROM revisions r
        LEFT JOIN documents d ON d.document_id = r.document_id
        LEFT JOIN outcomes o ON o.revision = r.key
        WHERE r.document_id IN (SELECT unnest(?))
        ORDER BY r.key
        """,
        [sorted(documents)],
    ).fetchall()
    return [DocumentRevision(*row) for row in rows]


def active_documents(con: duckdb.DuckDBPyConnection, source: str) -> int:
    """How many of the source's documents are not retired (live, or registered and pending)."""
    row = con.execute(
        """
        SELECT count(DISTINCT r.document_id) FROM revisions r
        LEFT JOIN documents d ON d.document_id = r.document_id
        WHERE r.source = ? AND coalesce(d.status, 'pending') <> 'retired'
        """,
        [source],
    ).fetchone()
    assert row is not None
    return int(row[0])


def source_paths(con: duckdb.DuckDBPyConnection, source: str) -> list[str]:
    """Every path the source ever registered."""
    rows = con.execute(
        "SELECT DISTINCT path FROM revisions WHERE source = ? ORDER BY path", [source]
    ).fetchall()
    return [row[0] for row in rows]


def remove_source(con: duckdb.DuckDBPyConnection, source: str) -> None:
    """Forget the source's folder, so no scan reads it again; its revisions' records stay."""
    con.execute("DELETE FROM sources WHERE name = ?", [source])
