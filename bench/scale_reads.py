"""Loom's own per-file reads on a large home, this checkout beside a baseline checkout, in the
same run (issue 32, "each under 10 s"): `loom ingest` of the unchanged folder by its quick path
and by its full path, and the `loom_folders` sensor's housekeeping tick, polling (no watcher: the
folder scanned whole) and with `loom watch` running (no scan).

The home is one bench/partition_window.py `--hold` keeps (its settings in WORK/env.json, its
folder WORK/notes); the baseline is another checkout with its own `.venv` (e.g. `git worktree
add` of this branch's base), run on the same home: the catalog and the instance are the same
files, and each checkout's full ingest writes the record its own quick path then compares. Each
round runs, for each checkout in turn (baseline first): the full ingest (the record removed
first), the quick ingest (checked to be the quick path: the record is not rewritten), the polling
tick; then, with `loom watch` started (this checkout's), the watcher tick of each. Every
operation is a process of its own: its wall seconds, its peak RSS (VmHWM) and the 1-minute load,
printed as it ends, with the machine (nproc, load) first, and written as JSON to --out.

    .venv/bin/python bench/scale_reads.py --env WORK/env.json --baseline /work/wt/base-scale
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

STATE = "ingest-state.json"  # api/quick.py's record of the last complete ingest


def child_tick(cursor_file: str | None) -> None:
    """Evaluate loom_folders once with the cursor in `cursor_file` (None: the first tick of a
    home with no watcher, which scans every folder whole), as Dagster does; one JSON line. Run by
    a checkout's own interpreter, so it imports that checkout's Loom."""
    from dagster import DagsterInstance, build_sensor_context

    from loom_dagster.definitions import defs
    from loom_dagster.sensors import loom_folders

    cursor = Path(cursor_file).read_text() if cursor_file else None
    resources = {k: v for k, v in defs.resources.items() if k in ("catalog_db", "loom")}
    with DagsterInstance.get() as instance:
        with build_sensor_context(instance=instance, resources=resources, cursor=cursor) as ctx:
            started = time.perf_counter()
            result = loom_folders(ctx)
            seconds = time.perf_counter() - started
    requests = getattr(result, "dynamic_partitions_requests", None) or []
    print(
        json.dumps(
            {
                "tick_s": round(seconds, 2),
                "runs_requested": len(getattr(result, "run_requests", None) or []),
                "partition_requests": [
                    f"{type(r).__name__}({len(r.partition_keys)})" for r in requests
                ],
                "skip": getattr(result, "skip_reason", None),
            }
        ),
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--env", type=Path, help="WORK/env.json of the held home")
    parser.add_argument("--baseline", type=Path, help="a checkout with its .venv, measured first")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ways", default="full,quick,polling,watcher")
    parser.add_argument("--step-limit-s", type=float, default=900)
    parser.add_argument("--out", default="scale_reads.json")
    parser.add_argument("--child", nargs="*", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        child_tick(args.child[0] if args.child else None)
        return 0
    sys.path.insert(0, str(ROOT))
    from bench.housekeeping_tick import later, watched_cursor
    from bench.partition_ceiling import machine, run_child

    os.environ.update(json.loads(args.env.read_text()))
    work = args.env.parent
    home = Path(os.environ["LOOM_HOME"])
    folder = work / "notes"
    checkouts = {"baseline": args.baseline.resolve(), "this": ROOT}
    ways = args.ways.split(",")
    rows: list[dict[str, Any]] = []
    print(f"machine: {machine()}", flush=True)

    def save() -> None:
        Path(args.out).write_text(json.dumps({"machine": machine(), "rows": rows}, indent=1))

    def measured(name: str, way: str, command: list[str], **extra: Any) -> dict[str, Any]:
        found = run_child(command, args.step_limit_s)
        row = {"checkout": name, "way": way, "load": machine()["load"], **found, **extra}
        rows.append(row)
        print(json.dumps(row), flush=True)
        save()
        return row

    def state_mtime() -> int | None:
        try:
            return (home / STATE).stat().st_mtime_ns
        except FileNotFoundError:
            return None

    tick = [str(Path(__file__).resolve()), "--child"]
    for number in range(args.rounds):
        for name, checkout in checkouts.items():
            loom = str(checkout / ".venv" / "bin" / "loom")
            python = str(checkout / ".venv" / "bin" / "python")
            if "full" in ways:
                (home / STATE).unlink(missing_ok=True)
                measured(name, "full", [loom, "ingest", str(folder)], round=number)
            if "quick" in ways:
                before = state_mtime()
                row = measured(name, "quick", [loom, "ingest", str(folder)], round=number)
                row["quick_path"] = before is not None and state_mtime() == before
                save()
            if "polling" in ways:
                measured(name, "polling tick", [python, *tick], round=number)
    if "watcher" in ways:
        from loom_dagster.pipeline import watching

        log = open(work / "watch.log", "ab")  # noqa: SIM115 - the watcher's, closed below
        watcher = subprocess.Popen(
            [str(ROOT / ".venv" / "bin" / "loom"), "watch"],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=os.environ,
            start_new_session=True,
        )
        try:
            # The tick that adopts the watcher's journal scans the folder whole (once).
            cursor = watched_cursor(home, 300)
            cursor_file = work / "watch-cursor-due.json"
            for number in range(args.rounds):
                for name, checkout in checkouts.items():
                    # Its housekeeping due again, as the tick POLL_S later finds it.
                    cursor_file.write_text(later(cursor, watching.POLL_S + 1))
                    python = str(checkout / ".venv" / "bin" / "python")
                    measured(name, "watcher tick", [python, *tick, str(cursor_file)], round=number)
        finally:
            os.killpg(watcher.pid, signal.SIGTERM)
            watcher.wait(timeout=120)
            log.close()
    save()
    return 0


if __name__ == "__main__":
    sys.exit(main())
