"""The catalog: sources, the revision registry, documents and their live revision, outcomes.

Plain functions over a DuckDB connection, so the Dagster shell, the sensor and the command line
share one way to read and write it. DuckDB takes one writing process per file: callers keep
connections short, and the publishing step runs in a Dagster pool of size 1.

With `LOOM_CATALOG_URL=postgresql://...` the same functions run on PostgreSQL, so workers on
several machines publish into one catalog (catalog_postgres.PostgresCatalog adapts the SQL,
which is written here once, in DuckDB's spelling). Writers of the same documents serialise on
`_lock`; the search index marks are per index (`index_marks`), since each home has its own.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import duckdb

from loom_dagster import hold
from loom_dagster.catalog_postgres import PostgresCatalog, catalog_url, index_id_of
from loom_dagster.chunking import Chunk
from loom_dagster.errors import LoomError
from loom_dagster.sources import FileState, OptionRule, Revision, Source

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

PUBLISHED, REFUSED, SUPERSEDED = "published", "refused", "superseded"
# A refusal that says "not now" rather than "never": the next ingest takes the revision up again.
RETRIES_EXHAUSTED = "retries_exhausted"


class CatalogError(LoomError):
    code = "catalog"


class CatalogUnavailable(CatalogError):
    """The catalog server cannot be reached or went away; the step can be tried again."""

    code = "catalog_unavailable"
    retryable = True


class CatalogRefused(CatalogError):
    """The catalog server refused the login (credentials, role, database): a setting to fix."""

    code = "catalog_refused"


@dataclass(frozen=True)
class Outcome:
    revision: str
    status: str
    code: str | None = None
    message: str | None = None
    chunk_count: int | None = None


# The index marks of the embedded catalog, which has one index (its home's).
LOCAL_INDEX = "local"


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """All of the block's writes, or none of them."""
    if isinstance(con, PostgresCatalog) and con.in_transaction:
        raise CatalogError("a transaction is already open", code="catalog")
    con.execute("BEGIN TRANSACTION")
    with _committed_or_rolled_back(con):
        yield


@contextmanager
def atomic(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """All of the block's writes, or none of them: its own transaction, or the caller's when
    one is open already (DuckDB has no nested transactions)."""
    if isinstance(con, PostgresCatalog) and con.in_transaction:
        yield
        return
    try:
        con.execute("BEGIN TRANSACTION")
    except duckdb.TransactionException:
        yield  # inside the caller's transaction, which commits or rolls back the whole
        return
    with _committed_or_rolled_back(con):
        yield


@contextmanager
def _committed_or_rolled_back(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


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


def _index(con: duckdb.DuckDBPyConnection) -> str:
    """Whose index marks this connection reads and writes."""
    return con.index_id if isinstance(con, PostgresCatalog) else LOCAL_INDEX


def _lock(con: duckdb.DuckDBPyConnection, documents: Iterable[str]) -> None:
    """Serialise writers of the same documents until the transaction ends. The embedded file
    has one writing process, so only a shared catalog takes these locks."""
    if isinstance(con, PostgresCatalog):
        con.lock(sorted(set(documents)))


def open_shared(url: str, home: str | os.PathLike[str]) -> duckdb.DuckDBPyConnection:
    """A connection to the PostgreSQL catalog at `url`, for the home whose search index it
    marks, with the schema in place. It speaks the subset of DuckDB's connection the catalog's
    functions use (execute, fetchone, fetchall, close), hence the type it is given."""
    from typing import cast

    con = PostgresCatalog(url, index_id=index_id_of(Path(home)))
    try:
        ensure_schema(cast(duckdb.DuckDBPyConnection, con))
    except BaseException:
        con.close()
        raise
    return cast(duckdb.DuckDBPyConnection, con)


@contextmanager
def connect(
    path: str | os.PathLike[str], *, retries: int = 10
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to the catalog file with its schema in place, for a command that runs no
    Dagster (resources/storage.py's CatalogResource is the same for the code location).

    DuckDB takes one process per file: while another holds it, the connection is tried again
    after 0.1 s, 0.2 s, 0.4 s, ... up to `retries` times (as DuckDBResource does), so a short
    write elsewhere is a wait here; the last refusal is raised.

    With LOOM_CATALOG_URL set, the catalog is that PostgreSQL database instead, and `path`
    names the home whose search index the connection marks (the file is not opened).
    """
    url = catalog_url()
    if url is not None:
        shared = open_shared(url, Path(path).parent)
        try:
            yield shared
        finally:
            shared.close()
        return
    attempt = 0
    while True:
        try:
            con = duckdb.connect(str(path))
            break
        except duckdb.IOException:
            if attempt >= retries:
                raise
            time.sleep(0.1 * 2**attempt)
            attempt += 1
    try:
        ensure_schema(con)
        yield con
    finally:
        con.close()


# Sources ------------------------------------------------------------------------------------

_SOURCE_COLUMNS = "name, root, include, options, tags"
# The columns of a Revision, in its fields' order.
_REVISION_COLUMNS = "key, document_id, source, path, size, mtime_ns, sha256, device, inode, options"


def _source(row: Sequence[object]) -> Source:
    name, root, include, options, tags = row
    rules = tuple(OptionRule(*rule) for rule in json.loads(str(options or "[]")))
    return Source(
        str(name),
        str(root),
        tuple(json.loads(str(include))),
        rules,
        tuple(json.loads(str(tags or "[]"))),
    )


def upsert_source(con: duckdb.DuckDBPyConnection, source: Source) -> None:
    """Write the source under its name. Whether a name may take a root is the caller's rule
    (api.register_source): this only writes."""
    con.execute(
        "INSERT INTO sources (name, root, include, options, tags) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (name) DO UPDATE SET root = excluded.root, include = excluded.include, "
        "options = excluded.options, tags = excluded.tags",
        [
            source.name,
            source.root,
            json.dumps(list(source.include)),
            json.dumps([[r.glob, r.name, r.value] for r in source.options]),
            json.dumps(list(source.tags)),
        ],
    )


def list_sources(con: duckdb.DuckDBPyConnection) -> list[Source]:
    rows = con.execute(f"SELECT {_SOURCE_COLUMNS} FROM sources ORDER BY name").fetchall()
    return [_source(row) for row in rows]


def get_source(con: duckdb.DuckDBPyConnection, name: str) -> Source | None:
    row = con.execute(f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE name = ?", [name]).fetchone()
    return None if row is None else _source(row)


def source_at(con: duckdb.DuckDBPyConnection, root: str) -> Source | None:
    """The source registered for this (resolved) root, if any."""
    row = con.execute(
        f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE root = ? ORDER BY name LIMIT 1", [root]
    ).fetchone()
    return None if row is None else _source(row)


def mark_synced(con: duckdb.DuckDBPyConnection, name: str) -> None:
    con.execute("UPDATE sources SET last_sync = current_timestamp WHERE name = ?", [name])


@dataclass(frozen=True)
class SourceSummary:
    source: Source
    last_sync: str | None  # the catalog clock, to the second; None before a first scan
    live: int
    retired: int
    pending: int  # registered documents with no live revision yet, or refused


def source_summaries(con: duckdb.DuckDBPyConnection) -> list[SourceSummary]:
    rows = con.execute(
        f"""
        SELECT {_SOURCE_COLUMNS}, s.last_sync,
            (SELECT count(*) FROM documents d WHERE d.source = s.name AND d.status = 'live'),
            (SELECT count(*) FROM documents d WHERE d.source = s.name AND d.status = 'retired'),
            (SELECT count(DISTINCT r.document_id) FROM revisions r
             LEFT JOIN documents d ON d.document_id = r.document_id
             WHERE r.source = s.name AND d.document_id IS NULL)
        FROM sources s ORDER BY s.name
        """
    ).fetchall()
    return [
        SourceSummary(_source(row[:5]), _clock(row[5]), int(row[6]), int(row[7]), int(row[8]))
        for row in rows
    ]


def _clock(moment: datetime | None) -> str | None:
    """A catalog timestamp to the second, as the catalog's readers print it."""
    return None if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S")


def live_document_paths(con: duckdb.DuckDBPyConnection, source: str) -> list[str]:
    """Paths of the source's documents that are not retired (live, or registered, pending)."""
    return sorted(known_files(con, source))


# The revision registry ----------------------------------------------------------------------


def known_files(con: duckdb.DuckDBPyConnection, source: str) -> dict[str, FileState]:
    """The newest registered state of each path whose document is not retired."""
    rows = con.execute(
        """
        SELECT DISTINCT ON (r.path) r.path, r.size, r.mtime_ns, r.sha256, r.device, r.inode,
            r.options FROM revisions r
        LEFT JOIN documents d ON d.document_id = r.document_id
        WHERE r.source = ? AND coalesce(d.status, 'pending') <> 'retired'
        ORDER BY r.path, r.seq DESC
        """,
        [source],
    ).fetchall()
    return {
        path: FileState(size, mtime_ns, sha, device or 0, inode or 0, options or "{}")
        for path, size, mtime_ns, sha, device, inode, options in rows
    }


def _revision_values(revision: Revision) -> list[object]:
    return [
        revision.key,
        revision.document_id,
        revision.source,
        revision.path,
        revision.size,
        revision.mtime_ns,
        revision.sha256,
        revision.device,
        revision.inode,
        revision.options,
    ]


def register_revisions(con: duckdb.DuckDBPyConnection, revisions: Sequence[Revision]) -> list[str]:
    """Add new revisions; returns the keys registered before that must run again.

    A key registered before, under a newer revision of its path, is the file coming back to
    bytes and options it had (options set back, an edit undone): it becomes its path's newest
    revision again, with the file's identity as scanned now, and runs again (its earlier
    outcomes stay in the history). A key that is already its path's newest keeps its record
    (two scans registering one change), unless its document was retired: a file deleted and
    written again with the same bytes runs again.

    The batch is one transaction of a few statements, whatever its size (a folder's first scan
    is thousands of rows): it is registered whole or, if anything fails or the process dies
    midway, not at all. Revisions are taken in order, as if one by one: a later revision of a
    path is newer than an earlier one of the batch.
    """
    batch: dict[str, Revision] = {}
    for revision in revisions:  # a key given twice: its first occurrence, as one by one
        batch.setdefault(revision.key, revision)
    if not batch:
        return []
    ordered = list(batch.values())
    with atomic(con):
        _lock(con, (r.document_id for r in ordered))
        # Each key's record, and whether its path has a newer one, as the catalog holds them.
        known = {
            key: bool(older)
            for key, older in con.execute(
                """
                SELECT r.key, r.seq < (SELECT max(n.seq) FROM revisions n
                                       WHERE n.source = r.source AND n.path = r.path)
                FROM revisions r WHERE r.key IN (SELECT unnest(?))
                """,
                [list(batch)],
            ).fetchall()
        }
        revived = {
            row[0]
            for row in con.execute(
                "UPDATE documents SET status = 'pending' WHERE document_id IN (SELECT unnest(?)) "
                "AND status = 'retired' AND live_revision IS NULL RETURNING document_id",
                [sorted({r.document_id for r in ordered})],
            ).fetchall()
        }
        hold.reached("registering")
        inserted: list[Revision] = []
        moved: list[Revision] = []  # registered before, and to run again
        renumbered: list[str] = []  # keys given a new seq, in the batch's order
        renewed: set[tuple[str, str]] = set()  # paths given a newer revision by this batch
        claimed: set[str] = set()  # documents whose revival a revision of the batch took
        for revision in ordered:
            path = (revision.source, revision.path)
            revives = revision.document_id in revived and revision.document_id not in claimed
            if revives:
                claimed.add(revision.document_id)
            if revision.key not in known:
                inserted.append(revision)
                renumbered.append(revision.key)
                renewed.add(path)
                continue
            newer_exists = known[revision.key] or path in renewed
            if newer_exists:
                renumbered.append(revision.key)
                renewed.add(path)
            if newer_exists or revives:
                moved.append(revision)
        # Sequence numbers taken in the batch's order, as one by one would have.
        numbers = con.execute(
            "SELECT nextval('revision_seq') FROM generate_series(1, ?)", [len(renumbered)]
        ).fetchall()
        numbered = dict(zip(renumbered, sorted(row[0] for row in numbers), strict=True))
        if inserted:
            columns = [
                list(column) for column in zip(*map(_revision_values, inserted), strict=True)
            ]
            con.execute(
                f"INSERT INTO revisions (seq, {_REVISION_COLUMNS}) SELECT * FROM ("
                f"SELECT unnest(?::BIGINT[]), {', '.join(['unnest(?)'] * len(columns))}) batch",
                [[numbered[r.key] for r in inserted], *columns],
            )
        if moved:
            _set_identity(con, moved, seqs=[numbered.get(r.key) for r in moved])
            con.execute(
                "DELETE FROM outcomes WHERE revision IN (SELECT unnest(?))",
                [[r.key for r in moved]],
            )
    return [r.key for r in moved]


def _set_identity(
    con: duckdb.DuckDBPyConnection,
    revisions: Sequence[Revision],
    *,
    seqs: Sequence[int | None] | None = None,
) -> None:
    """Record each revision's file identity as scanned now (and a new seq where one is given),
    in one statement."""
    con.execute(
        "UPDATE revisions SET seq = coalesce(m.seq, revisions.seq), size = m.size, "
        "mtime_ns = m.mtime_ns, device = m.device, inode = m.inode FROM (SELECT unnest(?) AS key, "
        "unnest(?::BIGINT[]) AS seq, unnest(?::BIGINT[]) AS size, unnest(?::BIGINT[]) AS mtime_ns, "
        "unnest(?::BIGINT[]) AS device, unnest(?::BIGINT[]) AS inode) m "
        "WHERE revisions.key = m.key",
        [
            [r.key for r in revisions],
            list(seqs) if seqs is not None else [None] * len(revisions),
            [r.size for r in revisions],
            [r.mtime_ns for r in revisions],
            [r.device for r in revisions],
            [r.inode for r in revisions],
        ],
    )


def refresh_identity(con: duckdb.DuckDBPyConnection, revisions: Sequence[Revision]) -> list[str]:
    """The file of a registered revision is another inode with the same bytes (rewritten, copied
    over): record the identity it has now, so reading it is not refused as a swap. A revision a
    read refused as changed or gone for that reason runs again; returns those keys, in order.
    One transaction for the batch."""
    if not revisions:
        return []
    with atomic(con):
        _set_identity(con, revisions)
        cleared = {
            row[0]
            for row in con.execute(
                "DELETE FROM outcomes WHERE revision IN (SELECT unnest(?)) AND status = 'refused' "
                "AND code IN ('source_changed', 'source_gone') RETURNING revision",
                [[r.key for r in revisions]],
            ).fetchall()
        }
    return list(dict.fromkeys(r.key for r in revisions if r.key in cleared))


def registered_keys(con: duckdb.DuckDBPyConnection, keys: Iterable[str]) -> set[str]:
    """Which of `keys` have a revision record."""
    keys = list(keys)
    if not keys:
        return set()
    rows = con.execute(
        "SELECT key FROM revisions WHERE key IN (SELECT unnest(?))", [keys]
    ).fetchall()
    return {row[0] for row in rows}


# A revision refused for one of these reasons runs again once a scan finds its bytes at its
# path under another identity (the codes refresh_identity clears).
IDENTITY_REFUSALS = ("source_changed", "source_gone")


def needs_registration(con: duckdb.DuckDBPyConnection, keys: Iterable[str]) -> set[str]:
    """Which of `keys` a scan must (re-)register before a run can take them: no record yet,
    or a record register_revisions or refresh_identity would change (not its path's newest,
    its document retired with nothing live, or refused because its file was replaced). Read
    only: the sensor decides with it, the run's first step applies it."""
    keys = list(keys)
    if not keys:
        return set()
    rows = con.execute(
        """
        SELECT k.key FROM (SELECT unnest(?) AS key) k
        LEFT JOIN revisions r ON r.key = k.key
        LEFT JOIN documents d ON d.document_id = r.document_id
        LEFT JOIN outcomes o ON o.revision = r.key
        WHERE r.key IS NULL
           OR r.seq < (SELECT max(seq) FROM revisions n WHERE n.source = r.source AND n.path = r.path)
           OR (d.status = 'retired' AND d.live_revision IS NULL)
           OR (o.status = 'refused' AND o.code IN (SELECT unnest(?)))
        """,
        [keys, list(IDENTITY_REFUSALS)],
    ).fetchall()
    return {row[0] for row in rows}


def pending_revisions(con: duckdb.DuckDBPyConnection, source: str) -> list[Revision]:
    """The newest revision of each path with no outcome yet (its run failed or never ran), or
    whose attempts were spent on an unavailable service (retries_exhausted), which may pass now."""
    rows = con.execute(
        """
        SELECT latest.key, latest.document_id, latest.source, latest.path, latest.size,
               latest.mtime_ns, latest.sha256, latest.device, latest.inode, latest.options
        FROM (
            SELECT DISTINCT ON (r.path) r.* FROM revisions r WHERE r.source = ?
            ORDER BY r.path, r.seq DESC
        ) latest
        LEFT JOIN documents d ON d.document_id = latest.document_id
        WHERE coalesce(d.status, 'pending') <> 'retired'
          AND NOT EXISTS (
              SELECT 1 FROM outcomes o
              WHERE o.revision = latest.key AND coalesce(o.code, '') <> ?
          )
        ORDER BY latest.path
        """,
        [source, RETRIES_EXHAUSTED],
    ).fetchall()
    return [Revision(*row) for row in rows]


def get_revision(con: duckdb.DuckDBPyConnection, key: str) -> Revision:
    row = con.execute(f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE key = ?", [key]).fetchone()
    if row is None:
        raise CatalogError(f"revision {key} is not registered", code="unknown_revision")
    return Revision(*row)


def source_root(con: duckdb.DuckDBPyConnection, source: str) -> str:
    row = con.execute("SELECT root FROM sources WHERE name = ?", [source]).fetchone()
    if row is None:
        raise CatalogError(f"source {source} is not registered", code="unknown_source")
    return str(row[0])


def revisions_of(
    con: duckdb.DuckDBPyConnection, keys: Iterable[str], *, strict: bool = False
) -> dict[str, Revision]:
    """The registered revisions among `keys`, by key in their order, in one query: what
    `get_revision` answers for each. A key with no record is left out, or with `strict` is
    unknown_revision."""
    keys = list(dict.fromkeys(keys))
    if not keys:
        return {}
    rows = con.execute(
        f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE key IN (SELECT unnest(?))", [keys]
    ).fetchall()
    found = {row[0]: Revision(*row) for row in rows}
    if strict and len(found) < len(keys):
        missing = next(key for key in keys if key not in found)
        raise CatalogError(f"revision {missing} is not registered", code="unknown_revision")
    return {key: found[key] for key in keys if key in found}


def source_roots(con: duckdb.DuckDBPyConnection, sources: Iterable[str]) -> dict[str, str]:
    """The folder of each of `sources`, in one query; unknown_source for one not registered."""
    names = sorted(set(sources))
    if not names:
        return {}
    rows = con.execute(
        "SELECT name, root FROM sources WHERE name IN (SELECT unnest(?))", [names]
    ).fetchall()
    roots = {str(name): str(root) for name, root in rows}
    for name in names:
        if name not in roots:
            raise CatalogError(f"source {name} is not registered", code="unknown_source")
    return roots


# Outcomes and publishing --------------------------------------------------------------------


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


def newer_revision_is_live(con: duckdb.DuckDBPyConnection, revision: Revision) -> bool:
    """True when the document already serves a revision registered after this one."""
    row = con.execute(
        """
        SELECT live.seq > this.seq FROM documents d
        JOIN revisions live ON live.key = d.live_revision
        JOIN revisions this ON this.key = ?
        WHERE d.document_id = ?
        """,
        [revision.key, revision.document_id],
    ).fetchone()
    return bool(row and row[0])


def publish_revision(
    con: duckdb.DuckDBPyConnection,
    revision: Revision,
    chunks: Sequence[Chunk],
    *,
    artifact_sha256: str,
    run_id: str | None = None,
) -> str | None:
    """Make `revision` its document's live revision, in one transaction.

    Returns the revision it replaced, or None; `chunks` are counted in the outcome (they are
    stored in the revision's chunks.parquet and in search, not here). A revision older
    than the one already live is recorded as superseded and changes nothing.
    """
    [done] = publish_batch(
        con, [Publication(revision, len(chunks), artifact_sha256)], run_id=run_id
    )
    return done.replaced


@dataclass(frozen=True)
class Publication:
    """A revision whose every step succeeded, to be made live."""

    revision: Revision
    chunk_count: int
    artifact_sha256: str


@dataclass(frozen=True)
class Published:
    """What publishing one entry of a batch came to: its outcome, and the revision it took
    the document's place of (None: none, or it was superseded or refused)."""

    outcome: Outcome
    replaced: str | None = None


def _seqs(con: duckdb.DuckDBPyConnection, keys: Iterable[str]) -> dict[str, int]:
    rows = con.execute(
        "SELECT key, seq FROM revisions WHERE key IN (SELECT unnest(?))", [sorted(set(keys))]
    ).fetchall()
    return {str(key): int(seq) for key, seq in rows}


def _live_of(
    con: duckdb.DuckDBPyConnection, documents: Iterable[str]
) -> dict[str, tuple[str, int]]:
    """Each document's live revision and its seq, for those that have one."""
    rows = con.execute(
        "SELECT d.document_id, d.live_revision, r.seq FROM documents d "
        "JOIN revisions r ON r.key = d.live_revision "
        "WHERE d.document_id IN (SELECT unnest(?))",
        [sorted(set(documents))],
    ).fetchall()
    return {str(document): (str(key), int(seq)) for document, key, seq in rows}


def superseded_in_order(con: duckdb.DuckDBPyConnection, revisions: Sequence[Revision]) -> set[str]:
    """Which of `revisions`, published in this order, would find a newer revision of their
    document live (the live one now, or one published before them in the order). Reads only."""
    seqs = _seqs(con, (r.key for r in revisions))
    live = _live_of(con, (r.document_id for r in revisions))
    superseded: set[str] = set()
    for revision in revisions:
        current = live.get(revision.document_id)
        if current is not None and current[1] > seqs[revision.key]:
            superseded.add(revision.key)
        else:
            live[revision.document_id] = (revision.key, seqs[revision.key])
    return superseded


def publish_batch(
    con: duckdb.DuckDBPyConnection,
    entries: Sequence[Publication | Outcome],
    *,
    run_id: str | None = None,
) -> list[Published]:
    """Publish each `Publication` and record each refusal (an `Outcome`), in this order and in
    one transaction of a few statements, whatever the batch's size; one result per entry.

    As one by one: a revision older than its document's live one (live before the batch, or
    published earlier in it) is recorded as superseded and changes nothing; one that takes a
    document's place records the one it replaced as superseded. All of it, or (a failure,
    the process killed) none of it.
    """
    if not entries:
        return []
    publications = [e for e in entries if isinstance(e, Publication)]
    with atomic(con):
        _lock(con, (p.revision.document_id for p in publications))
        seqs = _seqs(con, (p.revision.key for p in publications))
        live = _live_of(con, (p.revision.document_id for p in publications))
        missing = [p.revision.key for p in publications if p.revision.key not in seqs]
        if missing:
            raise CatalogError(f"revision {missing[0]} is not registered", code="unknown_revision")
        results: list[Published] = []
        recorded: list[tuple[Outcome, str | None]] = []  # (outcome, artifact sha256), in order
        switched: dict[str, Revision] = {}  # document -> the revision it serves after the batch
        for entry in entries:
            if isinstance(entry, Outcome):
                recorded.append((entry, None))
                results.append(Published(entry))
                continue
            revision = entry.revision
            current = live.get(revision.document_id)
            if current is not None and current[1] > seqs[revision.key]:
                outcome = Outcome(revision.key, SUPERSEDED, chunk_count=entry.chunk_count)
                recorded.append((outcome, entry.artifact_sha256))
                results.append(Published(outcome))
                continue
            replaced = current[0] if current is not None and current[0] != revision.key else None
            live[revision.document_id] = (revision.key, seqs[revision.key])
            switched[revision.document_id] = revision
            if replaced:
                recorded.append((Outcome(replaced, SUPERSEDED), None))
            outcome = Outcome(revision.key, PUBLISHED, chunk_count=entry.chunk_count)
            recorded.append((outcome, entry.artifact_sha256))
            results.append(Published(outcome, replaced))
        if switched:
            serving = list(switched.values())
            con.execute(
                "INSERT INTO documents (document_id, source, path, live_revision, status) "
                "SELECT *, 'live' FROM (SELECT unnest(?), unnest(?), unnest(?), unnest(?)) batch "
                "ON CONFLICT (document_id) DO UPDATE SET "
                "live_revision = excluded.live_revision, status = 'live', updated_at = now()",
                [
                    [r.document_id for r in serving],
                    [r.source for r in serving],
                    [r.path for r in serving],
                    [r.key for r in serving],
                ],
            )
        hold.reached("switching")  # a test kills the process here: the batch is not committed
        _record_outcomes(con, recorded, run_id=run_id)
    return results


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


def retire_paths(con: duckdb.DuckDBPyConnection, source: str, paths: Sequence[str]) -> list[str]:
    """Retire the documents of deleted files; returns their document ids."""
    if not paths:
        return []
    with transaction(con):
        rows = con.execute(
            "SELECT DISTINCT document_id FROM revisions WHERE source = ? AND path IN (SELECT unnest(?))",
            [source, list(paths)],
        ).fetchall()
        ids = [row[0] for row in rows]
        _lock(con, ids)
        for document in ids:
            con.execute(
                "INSERT INTO documents (document_id, source, path, live_revision, status) "
                "SELECT document_id, source, path, NULL, 'retired' FROM revisions "
                "WHERE document_id = ? LIMIT 1 ON CONFLICT (document_id) DO UPDATE SET "
                "live_revision = NULL, status = 'retired', updated_at = now()",
                [document],
            )
    return ids


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


def source_tags(
    con: duckdb.DuckDBPyConnection, sources: Iterable[str]
) -> dict[str, tuple[str, ...]]:
    """The tags of each of `sources` (a source not registered has none)."""
    names = sorted(set(sources))
    if not names:
        return {}
    rows = con.execute(
        "SELECT name, tags FROM sources WHERE name IN (SELECT unnest(?))", [names]
    ).fetchall()
    found = {str(name): tuple(json.loads(str(tags or "[]"))) for name, tags in rows}
    return {name: found.get(name, ()) for name in names}


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


def live_documents(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str, str, str]]:
    """(document_id, source, path, live revision) of every live document."""
    return [
        tuple(row)
        for row in con.execute(  # type: ignore[misc]
            "SELECT document_id, source, path, live_revision FROM documents "
            "WHERE status = 'live' AND live_revision IS NOT NULL ORDER BY source, path"
        ).fetchall()
    ]


def counts(con: duckdb.DuckDBPyConnection) -> Mapping[str, int]:
    """Live documents, and the chunks their live revisions published (what search holds)."""
    row = con.execute(
        "SELECT count(*), coalesce(sum(o.chunk_count), 0) FROM documents d "
        "LEFT JOIN outcomes o ON o.revision = d.live_revision WHERE d.status = 'live'"
    ).fetchone()
    assert row is not None
    return {"live_documents": int(row[0]), "chunks": int(row[1])}


# Retention and removal ----------------------------------------------------------------------
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


def revision_states(
    con: duckdb.DuckDBPyConnection, *, source: str | None = None
) -> list[RevisionState]:
    """Every registered revision (or those of one source), newest first within a document."""
    rows = con.execute(
        """
        SELECT r.key, r.document_id, r.source, r.sha256, r.seq,
               extract(epoch FROM current_timestamp::TIMESTAMP) - extract(epoch FROM r.registered_at),
               coalesce(d.live_revision = r.key, false), o.status, o.artifact_sha256
        FROM revisions r
        LEFT JOIN documents d ON d.document_id = r.document_id
        LEFT JOIN outcomes o ON o.revision = r.key
        WHERE ? IS NULL OR r.source = ?
        ORDER BY r.document_id, r.seq DESC
        """,
        [source, source],
    ).fetchall()
    return [
        RevisionState(row[0], row[1], row[2], row[3], row[4], float(row[5]), *row[6:])
        for row in rows
    ]


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
