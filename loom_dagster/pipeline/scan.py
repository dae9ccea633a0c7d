"""A folder's scan read and applied: what changed since the catalog last recorded it
(`scan_source`, `plan_source`), its new revisions registered and its deleted files retired
(`apply_scan`, `sync_source`, `sync_folders`), and a run's partitions registered
(`register_for_run`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

import duckdb

from loom_dagster import catalog
from loom_dagster.errors import SourceError
from loom_dagster.lifecycle import RetireGuard
from loom_dagster.pipeline.publishing import retire
from loom_dagster.search.lexical import LexicalIndex
from loom_dagster.search.vector import VectorIndex
from loom_dagster.sources import ScanResult, Source, document_id, scan
from loom_dagster.sources.settling import Settle

# A file modified this recently may still be being written: scans that watch folders (the
# sensor's, and a run registering what a sensor saw) leave it for later.
SETTLE_S = 2.0
# Mass retirement is held unless a caller passes its own guard (or None: never held).
DEFAULT_GUARD = RetireGuard()


def scan_source(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    *,
    settle_s: float = 0.0,
    max_hashed: int | None = None,
    resume_after: str | None = None,
    max_bytes: int | None = None,
    guard: RetireGuard | None = DEFAULT_GUARD,
    confirm_retire: bool = False,
    only: Collection[str] | None = None,
    settle: Settle | None = None,
) -> ScanResult:
    """What changed in a folder since the catalog last recorded it (at the paths `only`
    names, with `settle`'s rule: see `sources.scan`). Writes nothing. A file
    over `max_bytes` (the extractor's input limit) is refused `too_large` unread. Deletions
    the `guard` holds (every document of the folder, or too large a share) are moved from
    `deleted` to `held` unless `confirm_retire`: nothing retires them, and the scan says why."""
    known = (
        catalog.known_files_in(con, source.name)
        if only is None
        else catalog.known_files(con, source.name, under=only)
    )
    result = scan(
        source,
        known,
        settle_s=settle_s,
        max_hashed=max_hashed,
        resume_after=resume_after,
        max_bytes=max_bytes,
        only=only,
        settle=settle,
    )
    if guard is None or confirm_retire or not result.deleted:
        return result
    # The guard weighs the deletions against the whole folder, not the paths looked at.
    total = len(known) if only is None else len(catalog.known_files(con, source.name))
    why = guard.holds(len(result.deleted), total)
    if why is None:
        return result
    return replace(result, deleted=(), held=result.deleted, held_why=why)


def apply_scan(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    source: Source,
    result: ScanResult,
    *,
    vectors: VectorIndex | None = None,
    whole: bool = True,
) -> ScanResult:
    """Register a scan's new revisions, record its moved files' identity, retire its deleted
    files; returns the scan with the keys that must run again. A scan of some paths only
    (`whole` False) does not count as the folder's sync."""
    came_back = catalog.register_revisions(con, result.new)
    # A revision refused because its file was rewritten (same bytes, another inode) runs again.
    again = set(catalog.refresh_identity(con, result.moved))
    retire(con, index, source.name, result.deleted, vectors=vectors)
    if whole:
        catalog.mark_synced(con, source.name)
    return replace(
        result,
        new=result.new + tuple(r for r in result.moved if r.key in again),
        rerun=tuple(sorted(set(came_back) | again)),
    )


def sync_source(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    source: Source,
    *,
    settle_s: float = 0.0,
    max_hashed: int | None = None,
    resume_after: str | None = None,
    vectors: VectorIndex | None = None,
    max_bytes: int | None = None,
    guard: RetireGuard | None = DEFAULT_GUARD,
    confirm_retire: bool = False,
    needed: Collection[str] | None = None,
    only: Collection[str] | None = None,
) -> ScanResult:
    """Register what changed in a folder since the last scan, and retire what was deleted
    (unless the guard holds it: see scan_source). With `needed` (a run's keys), a file
    modified within `settle_s` is registered when its bytes are those of a needed key (the
    sensor found it settled, e.g. closed by its writer), and left for later otherwise."""
    result = scan_source(
        con,
        source,
        settle_s=settle_s if needed is None else 0.0,
        max_hashed=max_hashed,
        resume_after=resume_after,
        max_bytes=max_bytes,
        guard=guard,
        confirm_retire=confirm_retire,
        only=only,
    )
    if needed is not None:
        now = time.time()
        young = [r for r in result.new if r.key not in needed and now - r.mtime_ns / 1e9 < settle_s]
        result = replace(
            result,
            new=tuple(r for r in result.new if r not in young),
            unsettled=result.unsettled + tuple(r.path for r in young),
        )
    return apply_scan(con, index, source, result, vectors=vectors, whole=only is None)


@dataclass(frozen=True)
class FolderPlan:
    """What a scan of one folder found that runs must apply, computed without a write: the
    sensor's view (its evaluation changes nothing, so a preview or a lost tick loses nothing)."""

    scan: ScanResult
    keys: tuple[str, ...]  # a partition for each: every new revision, and each to run again
    again: tuple[str, ...]  # registered before and to run again: asked for by name
    sync: bool  # deleted files to retire or identities to record: a run of the sync job


def plan_source(
    con: duckdb.DuckDBPyConnection,
    source: Source,
    *,
    settle_s: float = 0.0,
    max_hashed: int | None = None,
    resume_after: str | None = None,
    max_bytes: int | None = None,
    guard: RetireGuard | None = DEFAULT_GUARD,
    only: Collection[str] | None = None,
    settle: Settle | None = None,
) -> FolderPlan:
    result = scan_source(
        con,
        source,
        settle_s=settle_s,
        max_hashed=max_hashed,
        resume_after=resume_after,
        max_bytes=max_bytes,
        guard=guard,
        only=only,
        settle=settle,
    )
    new = [r.key for r in result.new]
    moved = [r.key for r in result.moved]
    # A new key with a record is a file back to bytes it had (an edit undone, a file deleted
    # and written again): its partition may hold a materialization, so it is asked for by
    # name. A moved file refused as replaced runs again too; either way the run's first step
    # registers it (register_for_run).
    again = catalog.registered_keys(con, new) | (
        catalog.needs_registration(con, moved) & set(moved)
    )
    return FolderPlan(
        result,
        tuple(sorted(set(new) | again)),
        tuple(sorted(again)),
        sync=bool(result.deleted) or any(key not in again for key in moved),
    )


def sync_folders(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    sources: Iterable[Source],
    *,
    settle_s: float = SETTLE_S,
    vectors: VectorIndex | None = None,
    max_bytes: int | None = None,
    guard: RetireGuard | None = DEFAULT_GUARD,
    say: Callable[[str], None] = lambda _: None,
    needed: Collection[str] | None = None,
    only: Mapping[str, Collection[str]] | None = None,
) -> list[str]:
    """Apply a scan of each folder (register, record identities, retire); returns the ids of
    the documents it retired. A folder that is gone or cannot be read is skipped, in a line
    to `say`: its files are not deleted, they are out of reach (`loom sources remove`
    retires them). Deletions the guard holds are not retired, and said so."""
    retired: list[str] = []
    for source in sources:
        try:
            result = sync_source(
                con,
                index,
                source,
                settle_s=settle_s,
                vectors=vectors,
                max_bytes=max_bytes,
                guard=guard,
                needed=needed,
                only=None if only is None else only.get(source.name, ()),
            )
        except SourceError as error:
            if error.code not in ("missing_folder", "unreadable_folder"):
                raise
            say(f"{source.name}: {error.code}: {error.message}")
            continue
        if result.held:
            say(held_line(source.name, result))
        retired += [document_id(source.name, path) for path in result.deleted]
    return retired


def register_for_run(
    con: duckdb.DuckDBPyConnection,
    index: LexicalIndex,
    keys: Sequence[str],
    *,
    settle_s: float = SETTLE_S,
    max_bytes: int | None = None,
    guard: RetireGuard | None = DEFAULT_GUARD,
    only: Mapping[str, Collection[str]] | None = None,
) -> list[str]:
    """Register the revisions of a run's partitions that no scan has registered yet (the
    sensor computes keys and writes nothing), re-scanning the folders that may hold them, or
    only the paths `only` names by folder (the sensor's PATHS_TAG); a key whose file changed
    again since stays unregistered. Returns the ids of the documents those scans retired. With
    every key registered already (`loom ingest`), one query."""
    need = catalog.needs_registration(con, keys)
    if not need:
        return []
    if only is not None:
        sources = [s for s in catalog.list_sources(con) if s.name in only]
        return sync_folders(
            con,
            index,
            sources,
            settle_s=settle_s,
            max_bytes=max_bytes,
            guard=guard,
            needed=need,
            only=only,
        )
    known = catalog.registered_keys(con, need)
    if need - known:  # a key names no source: any folder may hold it
        sources = catalog.list_sources(con)
    else:
        names = sorted({revision.source for revision in catalog.revisions_of(con, known).values()})
        sources = [s for s in catalog.list_sources(con) if s.name in names]
    return sync_folders(
        con, index, sources, settle_s=settle_s, max_bytes=max_bytes, guard=guard, needed=need
    )


def held_line(source: str, result: ScanResult) -> str:
    """The one line that says a scan's deletions are held, and how to confirm them."""
    return (
        f"{source}: retirement held: {result.held_why}; {len(result.held)} document(s) stay "
        "live until `loom ingest --confirm-retire` (or the files come back)"
    )
