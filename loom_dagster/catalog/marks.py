"""The search index marks: which revision of each document a search index is known to hold,
per index (`index_marks`), so reconcile repairs what differs from the live revision.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import duckdb

from loom_dagster.catalog.postgres import PostgresCatalog
from loom_dagster.catalog.schema import LOCAL_INDEX


def _index(con: duckdb.DuckDBPyConnection) -> str:
    """Whose index marks this connection reads and writes."""
    return con.index_id if isinstance(con, PostgresCatalog) else LOCAL_INDEX


def unindexed(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str | None]]:
    """(document_id, live revision or None) of each document the index may not match.

    One indexed comparison: cheap when nothing differs, which is the common case.
    """
    return [
        (str(document), live)
        for document, live in con.execute(
            "SELECT d.document_id, d.live_revision FROM documents d "
            "LEFT JOIN index_marks m ON m.index_id = ? AND m.document_id = d.document_id "
            "WHERE d.live_revision IS DISTINCT FROM m.revision ORDER BY d.document_id",
            [_index(con)],
        ).fetchall()
    ]


def mark_indexed(con: duckdb.DuckDBPyConnection, indexed: Mapping[str, str | None]) -> None:
    """Record that the index holds `revision` (None: nothing) for each document.

    A mark is set only to what is still live, so a publish that overtook this one keeps its
    document unmarked until the index holds it too.
    """
    if not indexed:
        return
    held = {document: revision for document, revision in indexed.items() if revision is not None}
    empty = [document for document, revision in indexed.items() if revision is None]
    index = _index(con)
    # Two statements, no transaction: a mark is a hint reconcile checks, and a crash between
    # them leaves a document unmarked, which it repairs.
    if held:
        con.execute(
            "INSERT INTO index_marks (index_id, document_id, revision) "
            "SELECT ?, m.document_id, m.revision FROM "
            "(SELECT unnest(?) AS document_id, unnest(?) AS revision) m "
            "JOIN documents d ON d.document_id = m.document_id "
            "AND d.live_revision = m.revision "
            "ON CONFLICT (index_id, document_id) DO UPDATE SET revision = excluded.revision",
            [index, list(held), list(held.values())],
        )
    if empty:
        con.execute(
            "DELETE FROM index_marks WHERE index_id = ? AND document_id IN "
            "(SELECT document_id FROM documents WHERE live_revision IS NULL "
            "AND document_id IN (SELECT unnest(?)))",
            [index, empty],
        )


def mark_written(con: duckdb.DuckDBPyConnection, written: Mapping[str, str]) -> list[str]:
    """Record that the index holds `revision` for each document, as a publish that wrote it with
    the catalog closed knows; returns the documents whose live revision is no longer the one
    written (retired by a scan, or switched again, since the switch).

    Unlike `mark_indexed`, the mark is set whatever is live: it says what the index holds, so
    a document the catalog moved on from is listed by `unindexed` (its mark differs from its
    live revision, None for a retired one) and `reconcile` repairs it. A mark that errs can only
    ask for a repair, never hide one.
    """
    if not written:
        return []
    con.execute(
        "INSERT INTO index_marks (index_id, document_id, revision) "
        "SELECT ?, m.document_id, m.revision FROM "
        "(SELECT unnest(?) AS document_id, unnest(?) AS revision) m "
        "ON CONFLICT (index_id, document_id) DO UPDATE SET revision = excluded.revision",
        [_index(con), list(written), list(written.values())],
    )
    rows = con.execute(
        "SELECT m.document_id FROM (SELECT unnest(?) AS document_id, unnest(?) AS revision) m "
        "LEFT JOIN documents d ON d.document_id = m.document_id "
        "WHERE d.live_revision IS DISTINCT FROM m.revision ORDER BY 1",
        [list(written), list(written.values())],
    ).fetchall()
    return [str(row[0]) for row in rows]


def unmark_indexed(con: duckdb.DuckDBPyConnection, source: str | None = None) -> None:
    """Forget that the index holds the source's documents (None: every source's), so
    `pipeline.reconcile` writes them again: their chunks carry the source's tags, which
    changed, or the index was made afresh."""
    con.execute(
        "DELETE FROM index_marks WHERE index_id = ? AND document_id IN (SELECT document_id "
        "FROM documents WHERE live_revision IS NOT NULL AND (? IS NULL OR source = ?))",
        [_index(con), source, source],
    )


def searchable(con: duckdb.DuckDBPyConnection, keys: Iterable[str]) -> set[str]:
    """Which of `keys` are live revisions the search index is known to hold."""
    keys = list(keys)
    if not keys:
        return set()
    rows = con.execute(
        "SELECT d.live_revision FROM documents d JOIN index_marks m ON m.index_id = ? "
        "AND m.document_id = d.document_id AND m.revision = d.live_revision "
        "WHERE d.live_revision IN (SELECT unnest(?))",
        [_index(con), keys],
    ).fetchall()
    return {row[0] for row in rows}
