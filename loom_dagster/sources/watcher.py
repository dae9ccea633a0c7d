"""The watcher: a process beside Dagster's daemon that journals what changes in the watched
folders (inotify on Linux, through watchdog), so the folder sensor looks only at changed paths.

`python -m loom_dagster.sources.watcher HOME` (started by `loom ui` and `loom watch`): it reads
the roots to watch from `HOME/watch/folders.json` (the sensor writes it), watches each
recursively, and every FLUSH_S appends the paths that changed to its generation's journal
(journal.py), each once per flush, with whether its writer closed it. Its heartbeat names the
roots it watches: a root it could not watch (gone, over the system's inotify limit) is left
out, and the sensor scans that one by polling. It ends on SIGTERM or SIGINT, or when its parent
(the `loom` process that started it) is gone. Plain Python: no Dagster.

Events are lost in one known way: a kernel queue overflow (IN_Q_OVERFLOW), which watchdog does
not report; the sensor's periodic full scan catches what such a loss hid.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
import uuid
from pathlib import Path
from types import FrameType
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler

from loom_dagster.sources.journal import (
    HEARTBEAT_S,
    Change,
    Heartbeat,
    JournalWriter,
    read_folders,
    write_heartbeat,
)

FLUSH_S = 0.2
# Closed files remembered for a rename that may follow.
MAX_CLOSED = 10000
# An open, a read, a close without writing: no change (and the sensor's own hashing).
IGNORED = frozenset({"opened", "closed_no_write"})


class Collector(FileSystemEventHandler):
    """watchdog's handler: remembers each changed path once until the next flush."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._changes: dict[str, Change] = {}
        # Files closed after writing and not changed since (path -> when): a file renamed
        # after its writer closed it (an editor's save by rename) is whole under its new name.
        self._closed: dict[str, int] = {}

    def dispatch(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        # A folder's own "modified" says an entry in it changed: the entry has its event.
        if kind in IGNORED or (event.is_directory and kind == "modified"):
            return
        now = time.time_ns()
        source = os.fsdecode(event.src_path)
        with self._lock:
            if kind == "closed":
                self._closed[source] = now
                self._note(Change(source, True, now))
            elif kind == "moved":
                target = os.fsdecode(event.dest_path)
                closed = self._closed.pop(source, None)
                self._note(Change(source, False, now))
                if closed is not None:
                    self._closed[target] = closed
                self._note(Change(target, closed is not None, closed or now))
            else:
                self._closed.pop(source, None)
                self._note(Change(source, False, now))
            while len(self._closed) > MAX_CLOSED:
                self._closed.pop(next(iter(self._closed)))

    def _note(self, change: Change) -> None:
        self._changes.pop(change.path, None)  # kept in the order of their last change
        self._changes[change.path] = change

    def take(self) -> list[Change]:
        with self._lock:
            changes, self._changes = list(self._changes.values()), {}
        return changes


def run(home: Path, *, parent: int | None = None) -> int:
    from watchdog.observers import Observer

    generation = f"{int(time.time())}-{uuid.uuid4().hex[:8]}"
    writer = JournalWriter(home, generation)
    collector = Collector()
    observer = Observer()
    observer.start()
    watches: dict[str, Any] = {}
    stop = threading.Event()

    def on_signal(_signum: int, _frame: FrameType | None) -> None:
        stop.set()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)
    last_beat = 0.0
    try:
        while not stop.is_set():
            wanted = read_folders(home)
            if wanted is not None:
                for root in sorted(set(watches) - set(wanted)):
                    observer.unschedule(watches.pop(root))
                for root in wanted:
                    if root in watches or not os.path.isdir(root):
                        continue
                    try:
                        watches[root] = observer.schedule(collector, root, recursive=True)
                    except OSError as error:  # e.g. over fs.inotify.max_user_watches
                        print(f"loom watcher: cannot watch {root}: {error}", file=sys.stderr)
            # A root removed since it was scheduled is no longer watched.
            for root in [r for r in watches if not os.path.isdir(r)]:
                try:
                    observer.unschedule(watches.pop(root))
                except (KeyError, OSError):
                    pass
            writer.append(collector.take())
            now = time.time()
            if now - last_beat >= HEARTBEAT_S:
                write_heartbeat(
                    home, Heartbeat(generation, os.getpid(), tuple(sorted(watches)), now)
                )
                last_beat = now
            if parent is not None and os.getppid() != parent:
                break  # whoever started it is gone
            stop.wait(FLUSH_S)
    finally:
        observer.stop()
        observer.join(timeout=5)
        writer.append(collector.take())
        writer.close()
        (home / "watch" / "watcher.json").unlink(missing_ok=True)
    return 0


def command(home: Path) -> list[str]:
    """The watcher's command line for `home`, tied to the process that runs it."""
    return [sys.executable, "-m", "loom_dagster.sources.watcher", str(home), str(os.getpid())]


if __name__ == "__main__":
    sys.exit(run(Path(sys.argv[1]), parent=int(sys.argv[2]) if len(sys.argv) > 2 else None))
