"""A file's history: every revision registered for its path, with every outcome each had
(`loom history`).
"""

from __future__ import annotations

from dataclasses import dataclass

import duckdb

from loom_dagster.catalog.outcomes import PUBLISHED
from loom_dagster.catalog.revisions import _REVISION_COLUMNS
from loom_dagster.catalog.schema import _clock
from loom_dagster.sources import Revision


@dataclass(frozen=True)
class RecordedOutcome:
    """One row of a revision's outcome history."""

    status: str
    code: str | None
    message: str | None
    chunk_count: int | None
    run_id: str | None
    recorded_at: str


@dataclass(frozen=True)
class RevisionHistory:
    """A revision of one file, newest registration last, with every outcome it had."""

    revision: Revision
    registered_at: str
    live: bool
    retired: bool  # its document is retired (the file was deleted)
    outcomes: tuple[RecordedOutcome, ...]

    @property
    def status(self) -> str:
        """`live` for the served revision, `retired` for the last one served of a deleted
        file, else its latest outcome's status, `pending` before any."""
        if self.live:
            return "live"
        latest = self.outcomes[-1].status if self.outcomes else "pending"
        return "retired" if self.retired and latest == PUBLISHED else latest


def file_history(con: duckdb.DuckDBPyConnection, source: str, path: str) -> list[RevisionHistory]:
    """Every revision registered for `path` of `source`, oldest first, with its outcomes."""
    rows = con.execute(
        f"""
        SELECT {", ".join("r." + c.strip() for c in _REVISION_COLUMNS.split(","))},
            r.registered_at,
            coalesce(d.live_revision = r.key, false), coalesce(d.status = 'retired', false)
        FROM revisions r LEFT JOIN documents d ON d.document_id = r.document_id
        WHERE r.source = ? AND r.path = ? ORDER BY r.seq
        """,
        [source, path],
    ).fetchall()
    history: list[RevisionHistory] = []
    for row in rows:
        revision = Revision(*row[:10])
        recorded = con.execute(
            "SELECT status, code, message, chunk_count, run_id, recorded_at FROM outcome_history "
            "WHERE revision = ? ORDER BY seq",
            [revision.key],
        ).fetchall()
        history.append(
            RevisionHistory(
                revision,
                str(_clock(row[10])),
                bool(row[11]),
                bool(row[12]),
                tuple(
                    RecordedOutcome(r[0], r[1], r[2], r[3], r[4], str(_clock(r[5])))
                    for r in recorded
                ),
            )
        )
    return history
