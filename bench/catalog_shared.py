"""Publishing into the catalog from one and from two workers: the embedded DuckDB file against
the catalog's tables in PostgreSQL (issue 18.3).

The workload is the catalog's share of a publish, as a run's steps do it: for each batch of B
new revisions, open the catalog, register the batch, publish it (catalog.publish_batch) and mark
it indexed, close. Each worker is its own process with its own source (a machine of its own, as
far as the catalog can tell); two workers start together on one start line and publish N/2
revisions each. On DuckDB both open the same file, so one waits while the other holds it
(catalog.connect's retries); on PostgreSQL (a server on loopback started here, fsync on) both
hold connections at once. Wall time is from the start line to the last worker's end.

DuckLake was the other candidate; its extension does not load into this project's DuckDB
(see docs/scale.md), so it is not measured.

    .venv/bin/python bench/catalog_shared.py [--revisions 4000] [--batch 50]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# One worker: prints one JSON line (seconds from the start line, batches, connection waits).
WORKER = r"""
import json, sys, time
from pathlib import Path
from loom_dagster import catalog
from loom_dagster.sources import Revision, Source, document_id, revision_key
name, n, batch, go, home = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]), Path(sys.argv[5])
path = home / "catalog.duckdb"
revisions = []
for i in range(n):
    sha = f"{i:064x}"
    p = f"dir/note-{i:06d}.md"
    revisions.append(Revision(revision_key(name, p, sha), document_id(name, p), name, p, 10, 1, sha))
while not go.exists():
    time.sleep(0.005)
started = time.perf_counter()
with catalog.connect(path) as con:
    catalog.upsert_source(con, Source(name, f"/data/{name}"))
for at in range(0, n, batch):
    part = revisions[at:at + batch]
    with catalog.connect(path, retries=20) as con:
        catalog.register_revisions(con, part)
        done = catalog.publish_batch(con, [catalog.Publication(r, 1, "0" * 64) for r in part])
        catalog.mark_indexed(con, {r.document_id: r.key for r in part})
    assert all(d.outcome.status == "published" for d in done)
print(json.dumps({"seconds": time.perf_counter() - started}))
"""


def run(backend: str, workers: int, revisions: int, batch: int, url: str | None) -> float:
    """Seconds for `workers` processes to publish `revisions` in all into a fresh catalog."""
    with tempfile.TemporaryDirectory(prefix="loom-catalog-bench-") as scratch:
        work = Path(scratch)
        go = work / "go"
        home = work / "home"  # one file for every worker on DuckDB, as two steps on one machine
        home.mkdir()
        env = {**os.environ, "PYTHONPATH": str(ROOT)}
        env.pop("LOOM_CATALOG_URL", None)
        if backend == "postgres":
            assert url is not None
            env["LOOM_CATALOG_URL"] = fresh_database(url)
        procs = []
        for w in range(workers):
            own = home if backend == "duckdb" else work / f"home-{w}"
            own.mkdir(exist_ok=True)
            procs.append(
                subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        WORKER,
                        f"w{w}",
                        str(revisions // workers),
                        str(batch),
                        str(go),
                        str(own),
                    ],
                    env=env,
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
            )
        time.sleep(3)  # past their imports
        go.touch()
        started = time.perf_counter()
        for proc in procs:
            out, err = proc.communicate()
            if proc.returncode != 0:
                raise SystemExit(f"{backend} worker failed: {err[-2000:]}")
            json.loads(out.strip().splitlines()[-1])
        return time.perf_counter() - started


_databases = iter(range(1_000_000))


def fresh_database(url: str) -> str:
    import psycopg2

    dsn = url.replace("postgresql+psycopg2://", "postgresql://")
    name = f"bench{next(_databases)}"
    admin = psycopg2.connect(dsn)
    admin.autocommit = True
    admin.cursor().execute(f"CREATE DATABASE {name}")
    admin.close()
    return dsn.rsplit("/", 1)[0] + f"/{name}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--revisions", type=int, default=4000)
    parser.add_argument("--batch", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    from tests.support.postgres import local_postgres

    rows = []
    with tempfile.TemporaryDirectory(prefix="loom-catalog-bench-pg-") as pg_root:
        with local_postgres(Path(pg_root), durable=True) as url:
            for _ in range(args.rounds):
                for backend in ("duckdb", "postgres"):
                    for workers in (1, 2):
                        load = os.getloadavg()[0]
                        seconds = run(backend, workers, args.revisions, args.batch, url)
                        rows.append((backend, workers, seconds, load))
    print(
        f"{args.revisions} revisions in batches of {args.batch}; "
        f"{platform.machine()}, nproc {os.cpu_count()}"
    )
    print(f"{'catalog':<10} {'workers':>7} {'seconds':>8} {'revisions/s':>12} {'load':>5}")
    for backend, workers, seconds, load in rows:
        print(
            f"{backend:<10} {workers:>7} {seconds:>8.2f} {args.revisions / seconds:>12.0f} "
            f"{load:>5.1f}"
        )


if __name__ == "__main__":
    main()
