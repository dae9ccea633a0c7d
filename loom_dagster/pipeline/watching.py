"""What a folder sensor tick looks at: the changed paths a watcher journaled since its cursor,
or the whole folder (the polling scan) where no watcher covers it.

A folder is scanned whole when no live watcher watches it (every POLL_S: the fallback for
filesystems with no change notification, or no watcher running), when a watcher of a new
generation starts watching it (what changed before its watch is in no journal), when the
journal lost changes (the reader fell behind its rotation), and every SAFETY_S even when
watched (a kernel queue overflow loses events unsaid). Otherwise a tick looks only at the paths
journaled under it since the cursor, the files it saw not yet settled, and those a capped scan
left: its cost is that of what changed.

The cursor is JSON (`WatchCursor`); a cursor of the earlier form (a folder's resume path by
name) is read as those resume points, nothing else scanned yet. Plain Python, no Dagster.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from loom_dagster.sources import Source
from loom_dagster.sources.journal import (
    Position,
    end_of,
    read_after,
    read_heartbeat,
    write_folders,
)
from loom_dagster.sources.scanning import covered
from loom_dagster.sources.settling import Look

# The polling scan's period, where no watcher covers a folder (what the sensor's tick was).
POLL_S = 30.0
# A watched folder is still scanned whole this often: a safety net for changes a watcher
# missed (an inotify queue overflow is not reported).
SAFETY_S = 600.0
# Files a cursor keeps looking at (unsettled, or left by a capped scan) per folder; the rest
# wait for that folder's next whole scan.
MAX_PENDING = 5000


@dataclass
class WatchCursor:
    """What a tick leaves for the next: per folder, where a capped whole scan stopped
    (`resume`), when it was last scanned whole (`scanned`), its files not yet settled (`looks`)
    and the changed paths a capped look did not reach (`todo`); where it is in the journal
    (`at`) and which roots it has scanned whole under that watcher generation (`watched`); and
    the partitions it added while runs were backlogged, whose run is still to ask for
    (`deferred`)."""

    resume: dict[str, str] = field(default_factory=dict)
    scanned: dict[str, float] = field(default_factory=dict)
    looks: dict[str, dict[str, Look]] = field(default_factory=dict)
    todo: dict[str, list[str]] = field(default_factory=dict)
    at: Position | None = None
    watched: list[str] = field(default_factory=list)
    polled: list[str] = field(default_factory=list)  # folders no watcher covered
    deferred: list[str] = field(default_factory=list)

    def dumps(self) -> str:
        return json.dumps(
            {
                "v": 2,
                "resume": self.resume,
                "scanned": self.scanned,
                "looks": {
                    name: {path: look.as_json() for path, look in looks.items()}
                    for name, looks in self.looks.items()
                    if looks
                },
                "todo": {name: paths for name, paths in self.todo.items() if paths},
                "at": self.at.as_json() if self.at else None,
                "watched": sorted(self.watched),
                "polled": sorted(self.polled),
                "deferred": self.deferred,
            },
            sort_keys=True,
        )

    @classmethod
    def loads(cls, text: str | None) -> WatchCursor:
        value = json.loads(text) if text else {}
        if not isinstance(value, dict):
            return cls()
        if value.get("v") != 2:  # the earlier cursor: {source: resume path}
            return cls(resume={str(k): str(v) for k, v in value.items()})
        looks = {
            str(name): {
                str(path): look
                for path, raw in paths.items()
                if (look := Look.from_json(raw)) is not None
            }
            for name, paths in (value.get("looks") or {}).items()
        }
        return cls(
            resume={str(k): str(v) for k, v in (value.get("resume") or {}).items()},
            scanned={str(k): float(v) for k, v in (value.get("scanned") or {}).items()},
            looks=looks,
            todo={str(k): [str(p) for p in v] for k, v in (value.get("todo") or {}).items()},
            at=Position.from_json(value.get("at")),
            watched=[str(r) for r in value.get("watched") or []],
            polled=[str(r) for r in value.get("polled") or []],
            deferred=[str(k) for k in value.get("deferred") or []],
        )


@dataclass(frozen=True)
class FolderLook:
    """A folder's share of one tick: scanned whole (`only` None) or at these paths."""

    source: Source
    only: frozenset[str] | None
    closed: dict[str, int]


@dataclass(frozen=True)
class TickPlan:
    looks: list[FolderLook]  # the folders with something to look at
    cursor: WatchCursor  # the next cursor, before the scans' own results are put in
    watcher: bool  # a live watcher feeds this tick


def plan_tick(
    home: Path,
    sources: Sequence[Source],
    cursor: WatchCursor,
    now: float,
    *,
    poll_s: float = POLL_S,
    safety_s: float = SAFETY_S,
) -> TickPlan:
    """Which folders this tick scans whole and which paths of the others it looks at. Also
    tells the watcher which roots to watch (`folders.json`)."""
    write_folders(home, [s.root for s in sources if os.path.isabs(s.root)])
    beat = read_heartbeat(home)
    alive = beat is not None and beat.alive(now)
    following = (
        cursor.at is not None and beat is not None and cursor.at.generation == beat.generation
    )
    changes = None
    nxt = WatchCursor(
        resume=dict(cursor.resume),
        scanned=dict(cursor.scanned),
        looks={k: dict(v) for k, v in cursor.looks.items()},
        todo={k: list(v) for k, v in cursor.todo.items()},
        at=cursor.at,
        watched=list(cursor.watched),
        deferred=list(cursor.deferred),
    )
    if alive and beat is not None:
        read = read_after(home, cursor.at) if following and cursor.at is not None else None
        if read is None:
            # A new watcher, or the journal's start lost: from its end now, and every folder
            # it watches scanned whole once (taken before the scans, so nothing falls between).
            nxt.at = end_of(home, beat.generation)
            nxt.watched = []
        else:
            changes, nxt.at = read
    else:
        nxt.at, nxt.watched = None, []
    watched_roots = set(beat.roots) if alive and beat is not None else set()
    per_root: dict[str, dict[str, int | None]] = {}
    for change in changes or []:
        for source in sources:
            relative = _relative(change.path, source.root)
            if relative is not None:
                seen = per_root.setdefault(source.name, {})
                if change.closed:
                    seen[relative] = change.time_ns
                else:
                    seen[relative] = None
                break
    plans: list[FolderLook] = []
    names = {s.name for s in sources} | {""}  # "": when housekeeping last ran
    for store in (nxt.resume, nxt.scanned, nxt.looks, nxt.todo):
        for name in [n for n in store if n not in names]:
            del store[name]
    for source in sources:
        watched = source.root in watched_roots
        since = now - nxt.scanned.get(source.name, 0.0)
        whole = (
            source.name in nxt.resume
            or (watched and source.root not in nxt.watched)
            or since >= (safety_s if watched else poll_s)
        )
        seen = per_root.get(source.name, {})
        closed = {path: ns for path, ns in seen.items() if ns is not None}
        if whole:
            plans.append(FolderLook(source, None, closed))
            if watched and source.root not in nxt.watched:
                nxt.watched.append(source.root)
            continue
        paths = set(seen) | set(nxt.looks.get(source.name, {})) | set(nxt.todo.get(source.name, []))
        if paths:
            plans.append(FolderLook(source, frozenset(paths), closed))
    nxt.watched = [root for root in nxt.watched if root in watched_roots]
    nxt.polled = sorted(s.name for s in sources if s.root not in watched_roots)
    return TickPlan(plans, nxt, alive)


def idle(home: Path, cursor: WatchCursor, now: float, *, housekeeping_s: float) -> bool:
    """Whether a tick has nothing to do, known without opening the catalog: a live watcher of
    the generation the cursor follows has journaled nothing since, every folder was watched at
    the last tick, nothing waits to be looked at again, and no whole scan or housekeeping is
    due. A tick every second then costs two small file reads."""
    if cursor.at is None or cursor.polled or cursor.resume or any(cursor.looks.values()):
        return False
    if any(cursor.todo.values()) or now - cursor.scanned.get("", 0.0) >= housekeeping_s:
        return False
    if any(now - at >= SAFETY_S for name, at in cursor.scanned.items() if name):
        return False
    beat = read_heartbeat(home)
    if beat is None or not beat.alive(now) or beat.generation != cursor.at.generation:
        return False
    return end_of(home, beat.generation) == cursor.at


def _relative(path: str, root: str) -> str | None:
    """`path` relative to `root` (both absolute), or None when it is not under it."""
    if path == root:
        return ""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else None


def settle_looks(
    cursor: WatchCursor, source: str, pending: dict[str, Look], looked: frozenset[str] | None
) -> None:
    """Put a folder's unsettled files in the cursor: after a whole scan (`looked` None) they
    replace what was there; after a look at some paths, they replace those paths' entries."""
    kept = {
        path: look
        for path, look in cursor.looks.get(source, {}).items()
        if looked is not None and not covered(path, looked)
    }
    kept.update(pending)
    if len(kept) > MAX_PENDING:
        kept = dict(sorted(kept.items())[:MAX_PENDING])
    cursor.looks[source] = kept
