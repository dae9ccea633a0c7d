"""Outcomes: what the run of a revision came to (published, refused, superseded), its current
one in `outcomes` and every one in order in `outcome_history`.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import duckdb

PUBLISHED, REFUSED, SUPERSEDED = "published", "refused", "superseded"


# A refusal that says "not now" rather than "never": the next ingest takes the revision up again.
RETRIES_EXHAUSTED = "retries_exhausted"


@dataclass(frozen=True)
class Outcome:
    revision: str
    status: str
    code: str | None = None
    message: str | None = None
    chunk_count: int | None = None


def record_outcome(
    con: duckdb.DuckDBPyConnection,
    outcome: Outcome,
    *,
    run_id: str | None = None,
    artifact_sha256: str | None = None,
) -> None:
    """Set the revision's current outcome and append it to its history."""
    values = [
        outcome.revision,
        outcome.status,
        outcome.code,
        outcome.message,
        artifact_sha256,
        outcome.chunk_count,
        run_id,
    ]
    con.execute(
        "INSERT OR REPLACE INTO outcomes (revision, status, code, message, artifact_sha256, "
        "chunk_count, run_id, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, current_timestamp)",
        values,
    )
    con.execute(
        "INSERT INTO outcome_history (revision, status, code, message, artifact_sha256, "
        "chunk_count, run_id) VALUES (?, ?, ?, ?, ?, ?, ?)",
        values,
    )


def outcomes_for(con: duckdb.DuckDBPyConnection, keys: Iterable[str]) -> dict[str, Outcome]:
    keys = list(keys)
    if not keys:
        return {}
    rows = con.execute(
        "SELECT revision, status, code, message, chunk_count FROM outcomes "
        "WHERE revision IN (SELECT unnest(?))",
        [keys],
    ).fetchall()
    return {row[0]: Outcome(*row) for row in rows}


def _record_outcomes(
    con: duckdb.DuckDBPyConnection,
    recorded: Sequence[tuple[Outcome, str | None]],
    *,
    run_id: str | None,
) -> None:
    """Append each outcome to the history in order, and set each revision's current one to its
    last: two statements."""
    if not recorded:
        return
    numbers = con.execute(
        "SELECT nextval('outcome_seq') FROM generate_series(1, ?)", [len(recorded)]
    ).fetchall()

    def columns(rows: Sequence[tuple[Outcome, str | None]]) -> list[list[object]]:
        return [
            [o.revision for o, _ in rows],
            [o.status for o, _ in rows],
            [o.code for o, _ in rows],
            [o.message for o, _ in rows],
            [sha for _, sha in rows],
            [o.chunk_count for o, _ in rows],
        ]

    con.execute(
        "INSERT INTO outcome_history (seq, revision, status, code, message, artifact_sha256, "
        "chunk_count, run_id) SELECT *, ? FROM (SELECT unnest(?::BIGINT[]), unnest(?::VARCHAR[]), "
        "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
        "unnest(?::INTEGER[])) batch",
        [run_id, sorted(row[0] for row in numbers), *columns(recorded)],
    )
    last = list({o.revision: (o, sha) for o, sha in recorded}.values())
    con.execute(
        "INSERT OR REPLACE INTO outcomes (revision, status, code, message, artifact_sha256, "
        "chunk_count, run_id, recorded_at) SELECT *, ?, current_timestamp FROM (SELECT "
        "unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), unnest(?::VARCHAR[]), "
        "unnest(?::VARCHAR[]), unnest(?::INTEGER[])) batch",
        [run_id, *columns(last)],
    )
