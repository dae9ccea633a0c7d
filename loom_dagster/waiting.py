"""Revisions that wait for a run, per watched folder, and for how long (issue 38, part 2).

A revision waits from when its file got its bytes in the folder (the file's ctime, which a copy
that keeps an older mtime does not hide), or from the folder's registration if that came later,
until a run records its outcome: the new files a scan sees that no run has registered yet, and
the registered revisions with no outcome (a run that failed or never came, or whose attempts an
unavailable extractor spent). `loom sources list` prints it; the `loom_folders` sensor turns the
`waiting` check of `loom/original` red, naming the file, once one has waited past WAIT_BOUND_S.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from loom_dagster import catalog
from loom_dagster.display import printable
from loom_dagster.errors import SourceError
from loom_dagster.settings import LoomSettings
from loom_dagster.sources import Revision, Skipped, Source, scan

# The folder sensor asks for a revision's run at its first tick (30 s) and again RETRY_AFTER_S
# (300 s) after a run that did not finish it; past this, something is wrong.
WAIT_BOUND_S = 900.0


@dataclass(frozen=True)
class Waiting:
    """What waits for a run in one folder: how many revisions, and the one waiting longest;
    and what the same scan passed over, each with why (symlinks, FIFOs, unreadable folders)."""

    source: str
    count: int = 0
    oldest_path: str | None = None
    oldest_s: float = 0.0
    skipped: tuple[Skipped, ...] = ()

    @property
    def late(self) -> bool:
        return self.count > 0 and self.oldest_s > WAIT_BOUND_S

    def describe(self) -> str:
        if not self.count:
            return "none"
        return (
            f"{self.count} revision{'s' if self.count != 1 else ''} wait for a run, the oldest "
            f"{printable(self.oldest_path or '?')} for {duration(self.oldest_s)}"
        )

    def alarm(self) -> str:
        return (
            f"{self.source}: {printable(self.oldest_path or '?')} has waited "
            f"{duration(self.oldest_s)} for a run (more than {duration(WAIT_BOUND_S)}); "
            f"{self.count} revision{'s' if self.count != 1 else ''} of the folder wait"
        )


def duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 2 * 3600:
        return f"{seconds // 60} min"
    if seconds < 2 * 86400:
        return f"{seconds // 3600} h"
    return f"{seconds // 86400} days"


def waiting_in(
    con: Any,
    source: Source,
    paths: Iterable[str],
    *,
    now: float | None = None,
) -> Waiting:
    """How long the revisions of `paths` (files of `source` that wait) have waited at `now`."""
    now = time.time() if now is None else now
    since_registered = registered_at(con, source.name, now)
    oldest: tuple[float, str] | None = None
    count = 0
    for path in sorted(set(paths)):
        count += 1
        try:
            changed = os.lstat(Path(source.root) / path).st_ctime
        except OSError:
            continue  # gone: the sync run retires it, nothing waits for it
        waited = now - max(changed, since_registered)
        if oldest is None or waited > oldest[0]:
            oldest = (waited, path)
    if oldest is None:
        return Waiting(source.name, count)
    return Waiting(source.name, count, oldest[1], max(0.0, oldest[0]))


def waiting_paths(new: Iterable[str], pending: Iterable[Revision]) -> set[str]:
    """The paths of a folder that wait: `new` (a scan's new files, unregistered) and those of
    `pending` (its registered revisions with no outcome, catalog.pending_revisions)."""
    return set(new) | {r.path for r in pending}


def scan_waiting(con: Any, source: Source, *, now: float | None = None) -> Waiting:
    """Scan the folder (hashing only what changed) and say what waits in it."""
    try:  # the sensor's scan (pipeline.plan_source), without loading the pipeline
        found = scan(source, catalog.known_files_in(con, source.name))
    except SourceError:  # the folder is gone: nothing in it can be run
        return Waiting(source.name)
    registered = catalog.registered_keys(con, [r.key for r in found.new])
    new = [r.path for r in found.new if r.key not in registered]
    pending = catalog.pending_revisions(con, source.name)
    waiting = waiting_in(con, source, waiting_paths(new, pending), now=now)
    return replace(waiting, skipped=found.skipped)


def registered_at(con: Any, source: str, now: float) -> float:
    """When the source was registered, as a time.time() value (0 when unknown): the catalog's
    clock read against its own now, so its time zone does not matter."""
    row = con.execute(
        "SELECT registered_at, current_timestamp::TIMESTAMP FROM sources WHERE name = ?",
        [source],
    ).fetchone()
    if row is None or not isinstance(row[0], datetime) or not isinstance(row[1], datetime):
        return 0.0
    return now - (row[1] - row[0]).total_seconds()


def waiting_by_source(settings: LoomSettings | None = None) -> dict[str, Waiting]:
    """What waits in each registered folder, read from the catalog and a scan (no Dagster)."""
    settings = settings or LoomSettings.from_env()
    settings.prepare()
    with catalog.connect(settings.catalog_path) as con:
        return {s.name: scan_waiting(con, s) for s in catalog.list_sources(con)}
