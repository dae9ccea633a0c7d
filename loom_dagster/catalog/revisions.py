"""The revision registry: each scanned state of a file, registered once (in batches, one
transaction each), with what a scan and a run read of it: the known files of a source, the
revisions still to run, a revision by key.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

import duckdb

from loom_dagster import hold
from loom_dagster.catalog.bulk import as_table
from loom_dagster.catalog.errors import CatalogError
from loom_dagster.catalog.outcomes import RETRIES_EXHAUSTED
from loom_dagster.catalog.transactions import _lock, atomic
from loom_dagster.sources import FileState, KnownFiles, Revision

# The columns of a Revision, in its fields' order.
_REVISION_COLUMNS = "key, document_id, source, path, size, mtime_ns, sha256, device, inode, options"


def _newest_known(where: str = "") -> str:
    """The newest registered state of each path of a source (the first parameter) whose document
    is not retired, in FileState's columns after the path; `where` adds conditions on `r`."""
    return f"""
        SELECT DISTINCT ON (r.path) r.path, r.size, r.mtime_ns, r.sha256,
            coalesce(r.device, 0) AS device, coalesce(r.inode, 0) AS inode,
            coalesce(r.options, '{{}}') AS options, r.key FROM revisions r
        LEFT JOIN documents d ON d.document_id = r.document_id
        WHERE r.source = ? AND coalesce(d.status, 'pending') <> 'retired'{where}
        ORDER BY r.path, r.seq DESC
    """


# `_newest_known()` for a whole source (its parameters: the source, twice): the newest of each
# path found by a join with each path's highest seq, which a large folder reads in about half
# the time of DISTINCT ON's sort of every revision.
_NEWEST_OF_SOURCE = """
    SELECT r.path, r.size, r.mtime_ns, r.sha256, coalesce(r.device, 0) AS device,
        coalesce(r.inode, 0) AS inode, coalesce(r.options, '{}') AS options, r.key
    FROM revisions r
    JOIN (SELECT path, max(seq) AS seq FROM revisions WHERE source = ? GROUP BY path) newest
        ON newest.path = r.path AND newest.seq = r.seq
    LEFT JOIN documents d ON d.document_id = r.document_id
    WHERE r.source = ? AND coalesce(d.status, 'pending') <> 'retired'
"""


def known_files(
    con: duckdb.DuckDBPyConnection, source: str, under: Collection[str] | None = None
) -> dict[str, FileState]:
    """The newest registered state of each path whose document is not retired; with `under`,
    of those paths and the paths under them only (a look at what a watcher saw change reads
    what it looks at, not the folder's every file)."""
    where = ""
    values: list[object] = [source]
    if under is not None:
        paths = sorted(set(under))
        if not paths:
            return {}
        where = (
            " AND (r.path IN (SELECT unnest(?)) OR "
            + " OR ".join(["starts_with(r.path, ?)"] * len(paths))
            + ")"
        )
        values += [paths, *(path + "/" for path in paths)]
    rows = con.execute(_newest_known(where), values).fetchall()
    # A row is a FileState but for its first column: a million of them are made at C speed.
    make = FileState._make
    return {row[0]: make(row[1:]) for row in rows}


class _KnownInCatalog:
    """A source's known files in the embedded catalog, compared there (sources.KnownFiles): the
    scan's files go to DuckDB as columns, and only the rows that differ come back."""

    def __init__(self, con: duckdb.DuckDBPyConnection, source: str) -> None:
        self.con = con
        self.source = source

    def __len__(self) -> int:
        row = self.con.execute(
            f"SELECT count(*) FROM ({_NEWEST_OF_SOURCE})", [self.source, self.source]
        ).fetchone()
        return int(row[0]) if row else 0

    def compare(
        self, found: Sequence[tuple[str, int, int, int, int]], options: str | Sequence[str]
    ) -> tuple[dict[str, FileState | None], list[str]]:
        columns: list[Sequence[object]] = [*zip(*found, strict=True)] or [[]] * 5
        if not isinstance(options, str):
            columns.append(options)
        # A device or an inode number is unsigned (an overlay's inodes use the high bits).
        kinds = ("VARCHAR", "BIGINT", "BIGINT", "UBIGINT", "UBIGINT", "VARCHAR")
        names = ("path", "size", "mtime_ns", "device", "inode", "options")
        table = [
            (name, kind, column) for name, kind, column in zip(names, kinds, columns, strict=False)
        ]
        with as_table(self.con, table) as (scanned, values):
            rows = self.con.execute(
                f"""
                SELECT coalesce(s.path, k.path), s.path IS NULL, k.path IS NULL, k.size,
                    k.mtime_ns, k.sha256, k.device, k.inode, k.options, k.key
                FROM ({_NEWEST_OF_SOURCE}) k FULL OUTER JOIN {scanned} s ON s.path = k.path
                WHERE s.path IS NULL OR k.path IS NULL OR NOT (
                    k.size = s.size AND k.mtime_ns = s.mtime_ns AND k.inode IN (0, s.inode)
                    AND k.device IN (0, s.device)
                    AND k.options = {"?" if isinstance(options, str) else "s.options"})
                """,
                [self.source, self.source, *values]
                + ([options] if isinstance(options, str) else []),
            ).fetchall()
        differing: dict[str, FileState | None] = {}
        missing: list[str] = []
        for path, not_found, unknown, *state in rows:
            if not_found:
                missing.append(path)
            else:
                differing[path] = None if unknown else FileState._make(state)
        return differing, missing


def known_files_in(
    con: duckdb.DuckDBPyConnection, source: str
) -> KnownFiles | dict[str, FileState]:
    """What a scan of the whole folder compares with (sources.scan's `known`): the embedded
    catalog compares the scan's files itself; another backend gives known_files."""
    if isinstance(con, duckdb.DuckDBPyConnection):
        return _KnownInCatalog(con, source)
    return known_files(con, source)


def live_document_paths(con: duckdb.DuckDBPyConnection, source: str) -> list[str]:
    """Paths of the source's documents that are not retired (live, or registered, pending)."""
    return sorted(known_files(con, source))


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


def known_document_digests(con: duckdb.DuckDBPyConnection, digests: Iterable[str]) -> set[str]:
    """Which of `digests` (of a source and path, as a revision key carries them) name a
    document some revision was registered for."""
    digests = list(digests)
    if not digests:
        return set()
    rows = con.execute(
        "SELECT DISTINCT split_part(document_id, '~', -1) AS digest FROM revisions"
        " WHERE split_part(document_id, '~', -1) IN (SELECT unnest(?))",
        [digests],
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
    whose attempts were spent on an unavailable service (retries_exhausted), which may pass now.

    Found from the revisions waiting (no outcome, or retries_exhausted), then kept if each is its
    path's newest: the newest of every path of the folder is not made (a sort of every revision,
    each housekeeping tick), and only the waiting paths' revisions are compared."""
    rows = con.execute(
        f"""
        WITH waiting AS (
            SELECT r.* FROM revisions r LEFT JOIN outcomes o ON o.revision = r.key
            WHERE r.source = ? AND (o.revision IS NULL OR o.code = ?)
        ), newest AS (
            SELECT n.path, max(n.seq) AS seq FROM revisions n
            WHERE n.source = ? AND n.path IN (SELECT path FROM waiting) GROUP BY n.path
        )
        SELECT {", ".join("w." + c for c in _REVISION_COLUMNS.split(", "))}
        FROM waiting w JOIN newest ON newest.path = w.path AND newest.seq = w.seq
        LEFT JOIN documents d ON d.document_id = w.document_id
        WHERE coalesce(d.status, 'pending') <> 'retired'
        ORDER BY w.path
        """,
        [source, RETRIES_EXHAUSTED, source],
    ).fetchall()
    return [Revision(*row) for row in rows]


def get_revision(con: duckdb.DuckDBPyConnection, key: str) -> Revision:
    row = con.execute(f"SELECT {_REVISION_COLUMNS} FROM revisions WHERE key = ?", [key]).fetchone()
    if row is None:
        raise CatalogError(f"revision {key} is not registered", code="unknown_revision")
    return Revision(*row)


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
