"""When a changed file is whole enough to take: the settle rule, with no fixed wait per file.

A file may be half-written when a scan sees it. It is taken (`Settle.ready`) when any of:

- its writer closed it after its last write: the watcher journaled a close (inotify's
  IN_CLOSE_WRITE) at or after the file's mtime;
- its size and mtime held between two looks at least `hold_s` apart (the previous look is kept
  by the caller, e.g. in the sensor's cursor);
- its mtime is `quiet_s` old or more (the rule of a scan with no earlier look: the polling scan).

Otherwise it is looked at again later, and this look is what the next one compares with.
Plain Python, no Dagster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# Two looks this far apart with the same size and mtime: the writer has paused at least this long.
HOLD_S = 1.0
# A file untouched this long is taken at its first look (what SETTLE_S always was).
QUIET_S = 2.0


@dataclass(frozen=True)
class Look:
    size: int
    mtime_ns: int
    at: float  # when it was looked at (wall clock, seconds)

    def as_json(self) -> list[float]:
        return [self.size, self.mtime_ns, self.at]

    @classmethod
    def from_json(cls, value: object) -> Look | None:
        if isinstance(value, list) and len(value) == 3:
            try:
                return cls(int(value[0]), int(value[1]), float(value[2]))
            except (TypeError, ValueError):
                return None
        return None


@dataclass
class Settle:
    """The rule over one scan: `looks` from earlier scans and `closed` (path -> when its writer
    last closed it, ns) in; `pending` (the looks of files not ready yet) out, for the next scan."""

    looks: Mapping[str, Look]
    closed: Mapping[str, int]
    hold_s: float = HOLD_S
    quiet_s: float = QUIET_S

    def __post_init__(self) -> None:
        self.pending: dict[str, Look] = {}

    def ready(self, path: str, size: int, mtime_ns: int, now: float) -> bool:
        if now - mtime_ns / 1e9 >= self.quiet_s:
            return True
        closed_ns = self.closed.get(path)
        if closed_ns is not None and closed_ns >= mtime_ns:
            return True
        before = self.looks.get(path)
        if (
            before is not None
            and (before.size, before.mtime_ns) == (size, mtime_ns)
            and now - before.at >= self.hold_s
        ):
            return True
        # The first look at this state (or one too recent) is the one the next compares with.
        keep = (
            before
            if before is not None and (before.size, before.mtime_ns) == (size, mtime_ns)
            else None
        )
        self.pending[path] = keep or Look(size, mtime_ns, now)
        return False
