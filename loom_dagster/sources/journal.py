"""The change journal: paths a watcher saw change in the watched folders, for the folder sensor
to read after its cursor instead of stat'ing every file of every folder at each tick.

Everything lives under `$LOOM_HOME/watch/`:

- `journal/<generation>-<seq>.log`: append-only segments, one JSON line per change
  (`[kind, time_ns, path]`: kind `c` when the writer closed the file after writing, `w` for
  any other change: created, modified, deleted, moved from or to). A watcher's lines go to
  segments of its own generation (a new one at each start), a segment at a time up to
  SEGMENT_BYTES; it keeps the last KEEP_SEGMENTS of its generation and deletes the rest, and
  the segments of earlier generations. A line is written whole by one `write` to a file opened
  O_APPEND; a reader takes only lines ended by a newline, so a watcher killed mid-line leaves at
  most a torn last line in a segment no one appends to again (its generation is over, and a
  new generation makes the sensor scan every folder once).
- `watcher.json`: the watcher's heartbeat, replaced whole every HEARTBEAT_S: its generation, pid,
  the roots it watches, and when it wrote it. A watcher is alive when its heartbeat is younger
  than ALIVE_S.
- `folders.json`: the roots to watch, written by the folder sensor from the catalog (the watcher
  reads no catalog: a run may hold the DuckDB file).

Plain Python: no Dagster, no watchdog (the watcher itself is `sources/watcher.py`).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

SEGMENT_BYTES = 1 << 20
KEEP_SEGMENTS = 2
HEARTBEAT_S = 1.0
ALIVE_S = 5.0
CLOSED = "c"
CHANGED = "w"


def watch_dir(home: Path) -> Path:
    return home / "watch"


def journal_dir(home: Path) -> Path:
    return watch_dir(home) / "journal"


@dataclass(frozen=True)
class Change:
    """One journal line: a path (absolute) changed; `closed` when its writer closed it after
    writing, at `time_ns` (wall clock)."""

    path: str
    closed: bool
    time_ns: int


@dataclass(frozen=True)
class Position:
    """Where a reader is in a generation's journal: the segment and the byte after the last
    whole line it took."""

    generation: str
    seq: int
    offset: int

    def as_json(self) -> list[str | int]:
        return [self.generation, self.seq, self.offset]

    @classmethod
    def from_json(cls, value: object) -> Position | None:
        if (
            isinstance(value, list)
            and len(value) == 3
            and isinstance(value[0], str)
            and all(isinstance(v, int) for v in value[1:])
        ):
            return cls(value[0], value[1], value[2])
        return None


def _segment(home: Path, generation: str, seq: int) -> Path:
    return journal_dir(home) / f"{generation}-{seq:06}.log"


def _segments(home: Path, generation: str) -> list[int]:
    prefix = f"{generation}-"
    try:
        names = os.listdir(journal_dir(home))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        if name.startswith(prefix) and name.endswith(".log"):
            try:
                found.append(int(name[len(prefix) : -4]))
            except ValueError:
                continue
    return sorted(found)


class JournalWriter:
    """The watcher's side: appends changes to its generation's segments, rotating and deleting
    old segments so the journal stays within (KEEP_SEGMENTS + 1) * SEGMENT_BYTES."""

    def __init__(
        self,
        home: Path,
        generation: str,
        *,
        segment_bytes: int = SEGMENT_BYTES,
        keep: int = KEEP_SEGMENTS,
    ) -> None:
        self.home = home
        self.generation = generation
        self.segment_bytes = segment_bytes
        self.keep = keep
        journal_dir(home).mkdir(parents=True, exist_ok=True, mode=0o700)
        for name in os.listdir(journal_dir(home)):  # earlier generations: over
            if not name.startswith(f"{generation}-"):
                (journal_dir(home) / name).unlink(missing_ok=True)
        existing = _segments(home, generation)
        self.seq = existing[-1] if existing else 0
        self._fd = self._open()

    def _open(self) -> int:
        return os.open(
            _segment(self.home, self.generation, self.seq),
            os.O_WRONLY | os.O_APPEND | os.O_CREAT,
            0o600,
        )

    def append(self, changes: Iterable[Change]) -> None:
        lines = "".join(
            json.dumps([CLOSED if c.closed else CHANGED, c.time_ns, c.path]) + "\n" for c in changes
        )
        if not lines:
            return
        os.write(self._fd, lines.encode("utf-8", "surrogateescape"))
        if os.fstat(self._fd).st_size >= self.segment_bytes:
            self._rotate()

    def _rotate(self) -> None:
        os.close(self._fd)
        self.seq += 1
        self._fd = self._open()
        for seq in _segments(self.home, self.generation):
            if seq <= self.seq - self.keep:
                _segment(self.home, self.generation, seq).unlink(missing_ok=True)

    def position(self) -> Position:
        return Position(self.generation, self.seq, os.fstat(self._fd).st_size)

    def close(self) -> None:
        os.close(self._fd)


def end_of(home: Path, generation: str) -> Position:
    """The position after every line a generation has written so far."""
    segments = _segments(home, generation)
    if not segments:
        return Position(generation, 0, 0)
    last = segments[-1]
    try:
        size = _segment(home, generation, last).stat().st_size
    except FileNotFoundError:
        size = 0
    return Position(generation, last, size)


def read_after(
    home: Path, position: Position, *, max_bytes: int = 4 * SEGMENT_BYTES
) -> tuple[list[Change], Position] | None:
    """The changes journaled after `position`, and the position after them; None when some of
    them are lost (the segment it points into was deleted: the reader fell behind the rotation),
    so the caller must scan every folder. Reads at most about `max_bytes` at a time."""
    changes: list[Change] = []
    seq, offset = position.seq, position.offset
    read = 0
    while read < max_bytes:
        try:
            with open(_segment(home, position.generation, seq), "rb") as handle:
                handle.seek(offset)
                data = handle.read(max_bytes - read)
        except FileNotFoundError:
            if seq == position.seq and (offset > 0 or seq > 0):
                return None  # rotated away before it was read
            break
        whole = data[: data.rfind(b"\n") + 1]
        read += len(whole)
        offset += len(whole)
        changes.extend(_parse(whole))
        if whole != data or _segment(home, position.generation, seq + 1).exists() is False:
            break  # a line still being written, or the newest segment
        seq, offset = seq + 1, 0
    return changes, Position(position.generation, seq, offset)


def _parse(data: bytes) -> Iterable[Change]:
    for line in data.decode("utf-8", "surrogateescape").splitlines():
        try:
            kind, time_ns, path = json.loads(line)
        except ValueError:
            continue  # a torn line of a watcher that died mid-write
        if isinstance(path, str) and isinstance(time_ns, int):
            yield Change(path, kind == CLOSED, time_ns)


# The heartbeat and the folders to watch ----------------------------------------------------


@dataclass(frozen=True)
class Heartbeat:
    generation: str
    pid: int
    roots: tuple[str, ...]
    at: float

    def alive(self, now: float | None = None) -> bool:
        return (time.time() if now is None else now) - self.at < ALIVE_S


def _replace_json(path: Path, value: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(json.dumps(value))
    os.replace(partial, path)


def write_heartbeat(home: Path, beat: Heartbeat) -> None:
    _replace_json(
        watch_dir(home) / "watcher.json",
        {"generation": beat.generation, "pid": beat.pid, "roots": list(beat.roots), "at": beat.at},
    )


def read_heartbeat(home: Path) -> Heartbeat | None:
    try:
        value = json.loads((watch_dir(home) / "watcher.json").read_text())
        return Heartbeat(
            str(value["generation"]),
            int(value["pid"]),
            tuple(str(r) for r in value["roots"]),
            float(value["at"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_folders(home: Path, roots: Sequence[str]) -> bool:
    """Write the roots to watch when they differ from what is there; True if it wrote."""
    wanted = sorted(set(roots))
    if read_folders(home) == wanted:
        return False
    _replace_json(watch_dir(home) / "folders.json", wanted)
    return True


def read_folders(home: Path) -> list[str] | None:
    try:
        value = json.loads((watch_dir(home) / "folders.json").read_text())
    except (OSError, ValueError):
        return None
    return sorted(str(v) for v in value) if isinstance(value, list) else None
