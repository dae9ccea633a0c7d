"""Catalog writes in bulk: registering a folder's new revisions, and a `loom_folders` tick.

Two measures, each run for this checkout and (with `--baseline-checkout`) for another one in
the same run, interleaved round by round so the machine's load falls on both alike:

- register: `catalog.register_revisions` of N new revisions (a folder's first scan, already
  walked and hashed) into a fresh DuckDB catalog, and the same N again (a re-registration,
  which changes nothing);
- tick: one evaluation of the `loom_folders` sensor over a registered folder holding M new
  files (walk, stat, hash and the catalog reads), beside the scan alone (`sources.scan`), and
  the registration the tick leaves to the first step of the run it asks for
  (`pipeline.register_for_run` of its keys: the folder scanned again, then registered).

Each measure runs in a fresh process of its checkout (`python -c WORKER` with the checkout on
PYTHONPATH and its own .venv), so one checkout's imports never serve the other.

    .venv/bin/python bench/catalog_writes.py --baseline-checkout /work/wt/base
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# Run in the measured checkout: prints one JSON line of seconds.
WORKER = r"""
import json, os, sys, time, warnings
from pathlib import Path
warnings.filterwarnings("ignore")
what, n, work = sys.argv[1], int(sys.argv[2]), Path(sys.argv[3])
os.environ["LOOM_HOME"] = str(work / "home")
os.environ["DAGSTER_HOME"] = str(work / "home" / "dagster")
os.environ["LOOM_EMBEDDER"] = "ngram"
folder = work / "docs"
folder.mkdir(parents=True, exist_ok=True)
for i in range(n):
    path = folder / f"group-{i % 20:02d}" / f"note-{i:05d}.md"
    path.parent.mkdir(exist_ok=True)
    path.write_text(f"# Note {i}\n\nsome words of note {i}\n")
old = time.time() - 60  # settled: a tick leaves files of the last seconds for later
for path in folder.rglob("*.md"):
    os.utime(path, (old, old))
import duckdb
from loom_dagster import catalog
from loom_dagster.sources import Source, scan
source = Source("bench", str(folder.resolve()))
if what == "register":
    found = scan(source, {})
    con = duckdb.connect(str(work / "catalog.duckdb"))
    catalog.ensure_schema(con)
    catalog.upsert_source(con, source)
    started = time.perf_counter()
    catalog.register_revisions(con, found.new)
    first = time.perf_counter() - started
    started = time.perf_counter()
    catalog.register_revisions(con, found.new)
    again = time.perf_counter() - started
    rows = con.execute("SELECT count(*) FROM revisions").fetchone()[0]
    assert rows == n, rows
    print(json.dumps({"first": first, "again": again}))
else:
    from dagster import DagsterInstance, build_sensor_context
    from loom_dagster import api
    from loom_dagster.definitions import build_definitions
    from loom_dagster.resources.storage import CatalogResource
    from loom_dagster.sensors import loom_folders
    from loom_dagster.settings import LoomSettings
    settings = LoomSettings.from_env()
    api.prepare_environment(settings)
    api.register_source(settings, folder, name="bench")
    defs = build_definitions(settings)
    resources = {
        "catalog_db": CatalogResource(database=str(settings.catalog_path)),
        "loom": defs.resources["loom"],
    }
    instance = DagsterInstance.from_config(str(settings.dagster_home))
    started = time.perf_counter()
    scan(source, {})
    walk = time.perf_counter() - started
    started = time.perf_counter()
    result = loom_folders(build_sensor_context(instance=instance, resources=resources))
    tick = time.perf_counter() - started
    keys = [k for r in result.dynamic_partitions_requests for k in (r.partition_keys or [])]
    assert len(keys) == n, len(keys)
    # The tick writes nothing: the first step of the run that takes these partitions registers
    # them (pipeline.register_for_run: a scan of the folder, then the registration).
    from loom_dagster import pipeline
    from loom_dagster.search.lexical import LexicalIndex
    with resources["catalog_db"].connect() as con:
        started = time.perf_counter()
        pipeline.register_for_run(con, LexicalIndex(settings.search_dir), keys)
        registered = time.perf_counter() - started
        rows = con.execute("SELECT count(*) FROM revisions").fetchone()[0]
    assert rows == n, rows
    print(json.dumps({"tick": tick, "scan": walk, "run's registration": registered,
                      "tick + run's registration": tick + registered}))
"""


def measure(checkout: Path, what: str, n: int) -> dict[str, float]:
    python = checkout / ".venv" / "bin" / "python"
    with tempfile.TemporaryDirectory(prefix="catalog-writes-") as work:
        done = subprocess.run(
            [str(python), "-c", WORKER, what, str(n), work],
            cwd=checkout,
            env={**os.environ, "PYTHONPATH": str(checkout)},
            capture_output=True,
            text=True,
            check=False,
        )
    if done.returncode:
        raise SystemExit(f"{checkout} {what} failed:\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline-checkout", type=Path, help="the checkout to measure beside")
    parser.add_argument("--register", type=int, default=10_000, help="revisions to register")
    parser.add_argument("--tick", type=int, default=2_000, help="new files a tick finds")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    checkouts = {"after": ROOT}
    if args.baseline_checkout:
        checkouts["before"] = args.baseline_checkout.resolve()
    figures: dict[tuple[str, str], list[float]] = {}
    for _ in range(args.rounds):
        for label, checkout in checkouts.items():  # interleaved: each round measures both
            for what, n in (("register", args.register), ("tick", args.tick)):
                for name, seconds in measure(checkout, what, n).items():
                    figures.setdefault((label, f"{what} {n}: {name}"), []).append(seconds)
    print(f"nproc {os.cpu_count()}, load {os.getloadavg()[0]:.2f}, {platform.python_version()}")
    print(f"| measure | {' | '.join(f'{label} (median s)' for label in checkouts)} |")
    print(f"|---|{'---|' * len(checkouts)}")
    for measure_name in dict.fromkeys(name for _, name in figures):
        cells = [
            f"{statistics.median(figures[(label, measure_name)]):.3f}"
            if (label, measure_name) in figures
            else "-"
            for label in checkouts
        ]
        print(f"| {measure_name} | {' | '.join(cells)} |")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
