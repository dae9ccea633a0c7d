"""`loom sql` as a whole process, answered by the home's resident process or in its own (issue 39).

Builds a served dataset (bench/query_speed.py's: 100,000 rows by 10 columns by default) in a
fresh Loom home, then times, interleaved round by round so the machine's load falls on every
column alike:

- resident: `loom sql SELECT ...` with LOOM_SEARCH_RESIDENT=on, answered by the home's resident
  (started before timing, and checked to have answered every call);
- in-process: the same command with LOOM_SEARCH_RESIDENT=off (as every call was before);
- python: `python -c pass`, the floor of any process.

The statement groups the 100,000 rows by host (50 groups). The seed's level for a query is
p95 1,000 ms and p99 1,500 ms.

    .venv/bin/python bench/sql_resident.py [--rows 100000] [--runs 30]

Prints a table with the machine and its load, and writes bench/results/sql_resident.json
(not committed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from query_speed import percentile, serve  # noqa: E402

from loom_dagster.search.resident import ResidentClient  # noqa: E402
from loom_dagster.settings import LoomSettings  # noqa: E402

RESULTS = HERE / "results" / "sql_resident.json"
STATEMENT = 'SELECT host, sum(bytes) AS total FROM "usage.csv#t0" GROUP BY host ORDER BY host'
LOOM = [sys.executable, "-m", "loom_dagster.cli"]


def timed(command: list[str], env: dict[str, str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    took = (time.perf_counter() - started) * 1000
    if done.returncode != 0:
        raise SystemExit(f"{command[-1]!r} failed: {done.stderr}")
    return took, done.stdout


def load() -> list[str]:
    with open("/proc/loadavg") as loadavg:
        return loadavg.read().split()[:3]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loom-sql-resident-") as home:
        os.environ["LOOM_HOME"] = home
        os.environ.pop("LOOM_OBJECT_STORE_URL", None)
        settings = LoomSettings.from_env()
        settings.prepare()
        serve(settings, args.rows)
        base = {**os.environ, "PYTHONPATH": str(HERE.parent), "LOOM_EMBEDDER": "ngram"}
        on = {**base, "LOOM_SEARCH_RESIDENT": "on", "LOOM_SEARCH_RESIDENT_IDLE": "600"}
        off = {**base, "LOOM_SEARCH_RESIDENT": "off"}
        client = ResidentClient(on)
        try:
            _, first = timed([*LOOM, "sql", STATEMENT], on)  # in-process; starts the resident
            deadline = time.monotonic() + 120
            while client.status() is None:
                if time.monotonic() > deadline:
                    raise SystemExit("the resident did not start")
                time.sleep(0.1)
            columns = {
                "resident": ([*LOOM, "sql", STATEMENT], on),
                "in-process": ([*LOOM, "sql", STATEMENT], off),
                "python -c pass": ([sys.executable, "-c", "pass"], base),
            }
            for command, env in columns.values():  # warm the page cache
                timed(command, env)
            state = client.status() or {}
            before = int(state.get("queries", 0))
            times: dict[str, list[float]] = {name: [] for name in columns}
            load_before = load()
            for _ in range(args.runs):
                for name, (command, env) in columns.items():
                    took, out = timed(command, env)
                    if command[-1] == STATEMENT:
                        assert out == first, f"{name} answered otherwise"
                    times[name].append(took)
            load_after = load()
            answered = int((client.status() or {}).get("queries", 0)) - before
            assert answered == args.runs, f"the resident answered {answered} calls"
        finally:
            client.stop()
    summary = {
        name: {
            "p50_ms": round(statistics.median(values), 1),
            "p95_ms": round(percentile(values, 0.95), 1),
            "max_ms": round(max(values), 1),
        }
        for name, values in times.items()
    }
    report = {
        "machine": {
            "platform": platform.platform(),
            "nproc": os.cpu_count(),
            "python": platform.python_version(),
            "load_before": load_before,
            "load_after": load_after,
        },
        "rows": args.rows,
        "runs": args.runs,
        "statement": STATEMENT,
        "results": summary,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"`loom sql` over {args.rows:,} rows, {args.runs} calls each, interleaved; "
        f"nproc {os.cpu_count()}, load {' '.join(load_before)} -> {' '.join(load_after)}"
    )
    print(f"{'':16} {'p50 ms':>8} {'p95 ms':>8} {'max ms':>8}")
    for name, values in summary.items():
        print(f"{name:16} {values['p50_ms']:8.1f} {values['p95_ms']:8.1f} {values['max_ms']:8.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
