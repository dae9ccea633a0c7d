"""The `loom_folders` sensor's housekeeping tick on a large home, profiled: where its seconds go,
both ways a home ticks.

- *polling*: no watcher runs, so the tick scans every file of every folder (what
  bench/partition_window.py's "tick" row measures);
- *watcher*: `loom watch` runs (docs/operations.md "Watching folders"), so a tick reads the
  watcher's journal and, every `watching.POLL_S`, does the housekeeping (waiting revisions,
  retention, the partition window, idle partitions) with no folder scanned: what a home of a
  million files ticks every 30 s. The bench starts `loom watch` (or uses one a run with
  `--keep-watcher` left), lets a first tick adopt its journal (that tick scans whole, once per
  watcher: its cursor is kept in WORK/watch-cursor.json), then evaluates the tick that comes
  `POLL_S` later (the cursor's housekeeping time moved back by that much; nothing changed).

Each tick is evaluated as Dagster evaluates it (`build_sensor_context` with the instance and the
code location's resources) under cProfile, `--repeat` times; it prints each tick's seconds and,
for the last, the cumulative seconds of the reads that grow with the home (the catalog's and
Dagster's), with the machine (nproc, load) first. The home is one bench/partition_window.py
`--hold` keeps: its settings are in WORK/env.json.

    .venv/bin/python bench/housekeeping_tick.py --env /tmp/work/env.json --out tick.json
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.partition_ceiling import BIN, machine  # noqa: E402

# What the tick reads that grows with revisions, partitions or files (by function name).
PARTS = (
    "plan_tick",
    "plan_source",
    "scan",
    "known_files",
    "waiting_in",
    "waiting_paths",
    "pending_revisions",
    "revision_states",
    "plan_retention",
    "get_dynamic_partitions",
    "has_dynamic_partition",
    "registered_keys",
    "known_document_digests",
    "orphans",
    "held_partitions",
    "beyond_partition_window",
    "runs_holding",
    "get_materialized_partitions",
    "materialized_among",
    "run_requests",
    "waiting_events",
    "backlogged",
)


def evaluate(cursor: str | None) -> tuple[float, Any, pstats.Stats]:
    """One evaluation of loom_folders with `cursor`: its seconds, its result, its profile."""
    from dagster import DagsterInstance, build_sensor_context

    from loom_dagster.definitions import defs
    from loom_dagster.sensors import loom_folders

    resources = {k: v for k, v in defs.resources.items() if k in ("catalog_db", "loom")}
    with DagsterInstance.get() as instance:
        with build_sensor_context(instance=instance, resources=resources, cursor=cursor) as ctx:
            profile = cProfile.Profile()
            started = time.perf_counter()
            profile.enable()
            result = loom_folders(ctx)
            profile.disable()
            seconds = time.perf_counter() - started
    return seconds, result, pstats.Stats(profile)


def parts(stats: pstats.Stats) -> dict[str, float]:
    """Cumulative seconds per function of PARTS (summed over the functions of that name)."""
    found: dict[str, float] = {}
    for (_, _, name), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        if name in PARTS:
            found[name] = round(found.get(name, 0.0) + cumulative, 2)
    return {name: found[name] for name in PARTS if name in found}


def summary(seconds: float, result: Any) -> dict[str, Any]:
    requests = getattr(result, "dynamic_partitions_requests", None) or []
    return {
        "tick_s": round(seconds, 2),
        "runs_requested": len(getattr(result, "run_requests", None) or []),
        "partition_requests": [f"{type(r).__name__}({len(r.partition_keys)})" for r in requests],
        "skip": getattr(result, "skip_reason", None),
    }


def ticks(kind: str, cursor: str | None, repeat: int, out: list[dict[str, Any]]) -> None:
    for n in range(repeat):
        seconds, result, stats = evaluate(cursor)
        row = {"tick": kind, "n": n, "load": machine()["load"], **summary(seconds, result)}
        if n == repeat - 1:
            row["parts_s"] = parts(stats)
        out.append(row)
        print(json.dumps(row), flush=True)


def watched_cursor(home: Path, timeout_s: float) -> str:
    """The cursor of a tick that adopted the live watcher's journal (and so scanned whole)."""
    from loom_dagster import catalog
    from loom_dagster.pipeline import watching
    from loom_dagster.settings import LoomSettings
    from loom_dagster.sources.journal import read_heartbeat, write_folders

    with catalog.connect(LoomSettings.from_env().catalog_path) as con:
        roots = [s.root for s in catalog.list_sources(con)]
    write_folders(home, roots)  # what a tick tells the watcher to watch
    deadline = time.monotonic() + timeout_s
    while True:
        beat = read_heartbeat(home)
        if beat is not None and beat.alive(time.time()) and set(roots) <= set(beat.roots):
            break
        if time.monotonic() > deadline:
            raise RuntimeError("loom watch did not start watching")
        time.sleep(1)
    _, result, _ = evaluate(None)  # adopts the watcher's generation: a whole scan
    cursor = watching.WatchCursor.loads(result.cursor)
    assert cursor.at is not None and cursor.watched, "the tick did not follow the watcher"
    return cursor.dumps()


def watcher_alive(home: Path) -> bool:
    from loom_dagster.sources.journal import read_heartbeat

    beat = read_heartbeat(home)
    return beat is not None and beat.alive(time.time())


def later(cursor: str, seconds: float) -> str:
    """`cursor` as the tick `seconds` later finds it: its housekeeping due again."""
    from loom_dagster.pipeline import watching

    moved = watching.WatchCursor.loads(cursor)
    moved.scanned = {name: at - seconds for name, at in moved.scanned.items()}
    return moved.dumps()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", type=Path, required=True, help="WORK/env.json of the held home")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--ways", default="polling,watcher")
    parser.add_argument("--out", default="housekeeping_tick.json")
    parser.add_argument(
        "--keep-watcher",
        action="store_true",
        help="leave the watcher running (its pid in WORK/watch.pid) for a later run, which "
        "reuses it and its adopted cursor instead of scanning the folder whole again",
    )
    args = parser.parse_args(argv)
    os.environ.update(json.loads(args.env.read_text()))
    print(f"machine: {machine()}", flush=True)
    rows: list[dict[str, Any]] = []
    ways = args.ways.split(",")
    if "polling" in ways:
        ticks("polling", None, args.repeat, rows)
    if "watcher" in ways:
        from loom_dagster.pipeline import watching

        home = Path(os.environ["LOOM_HOME"])
        watcher, log = None, None
        if not watcher_alive(home):  # one left running (--keep-watcher) is used as it is
            log = open(args.env.parent / "watch.log", "ab")  # noqa: SIM115 - the watcher's
            watcher = subprocess.Popen(
                [str(BIN / "loom"), "watch"], stdout=log, stderr=subprocess.STDOUT, env=os.environ
            )
            (args.env.parent / "watch.pid").write_text(str(watcher.pid))
        try:
            # The adopting tick scans the folder whole: once per watcher, its cursor kept.
            saved = args.env.parent / "watch-cursor.json"
            if watcher is None and saved.exists():
                cursor = saved.read_text()
            else:
                cursor = watched_cursor(home, 300)
                saved.write_text(cursor)
            ticks("watcher", later(cursor, watching.POLL_S + 1), args.repeat, rows)
        finally:
            if watcher is not None and not args.keep_watcher:
                watcher.terminate()
                watcher.wait(timeout=60)
            if log is not None:
                log.close()
    Path(args.out).write_text(json.dumps({"machine": machine(), "ticks": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
