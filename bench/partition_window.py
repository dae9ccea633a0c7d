"""The partition window (issue 32 part 2) measured: one SQLite home of `--revisions` published
revisions, first with no window (every revision a partition), then, in the same run, with
`loom partitions compact` applying `--window`, the same operations again.

The home: `--real-files` notes ingested by `loom ingest`, then the rest grown as published files
by bench/synthetic_home.py's `grow_folder` (real files on disk, registered, published in the
catalog, in the lexical and vector indexes, each a partition with the materializations a real
run of a template file stored): every revision is settled, as a large home's are, so the window
can take any of them. The operations are bench/partition_ceiling.py's `measure`: the folder
sensor's tick with nothing changed (a housekeeping tick: the whole folder scanned), the UI's
PartitionHealthQuery and partitionStats over HTTP, a one-file backfill (submitted through
GraphQL, then the backfill daemon's pass to its run), `loom ingest` with nothing changed (quick
and full path), `loom gc --dry-run`. With the window, the backfill's file is one whose partition
left it: its partition is added back first (the UI's "Add partition"), and that is timed too.

    .venv/bin/python bench/partition_window.py --revisions 200000 --window 50000
    .venv/bin/python bench/partition_window.py --backend postgres --revisions 1000000 \
        --window-only --hold --work DIR

`--backend postgres` puts the Dagster instance on a PostgreSQL server started on loopback
(tests/support/postgres.py; the catalog stays in DuckDB, as bench/partition_ceiling.py measured).
`--window-only` skips the no-window pass. `--hold` keeps the home and its server after measuring,
for further measurements (WORK/env.json), until WORK/release exists. `--build-only` builds the
home, compacts it to the window and holds it without measuring (for bench/scale_reads.py and
bench/housekeeping_tick.py). `--skip-indexes` grows no search index (synthetic_home.grow_folder
`indexes=False`): for profiling the scan and the catalog's reads only, since search and the full
ingest's vector sync read the indexes.

Prints a line per measurement with the load, the machine (nproc, load, date) first, and writes
them as JSON to --out; `bench/partition_ceiling.py --table OUT` prints the two tables.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.partition_ceiling import (  # noqa: E402
    ASSET_KEYS,
    BIN,
    RESULTS,
    graphql,
    machine,
    measure,
    record,
    run_child,
    webserver,
)

SOURCE = "notes"
TEMPLATE = "real-0000.md"


def note(path: str, n: int) -> tuple[str, str]:
    """A note's text and the one word only it holds (n < 0: the template's)."""
    word = "templateword" if n < 0 else f"windowword{n}"
    return f"# {path}\n\nThe keeper logged {word} at the lamp room.\n", word


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--revisions", type=int, default=200_000)
    parser.add_argument("--window", type=int, default=50_000)
    parser.add_argument("--real-files", type=int, default=200)
    parser.add_argument("--step-limit-s", type=float, default=900)
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument(
        "--window-only", action="store_true", help="measure only with the window (no first pass)"
    )
    parser.add_argument(
        "--hold",
        action="store_true",
        help="keep the home (and its PostgreSQL) after measuring, its settings in WORK/env.json, "
        "until WORK/release exists",
    )
    parser.add_argument(
        "--build-only",
        action="store_true",
        help="build, compact to the window and hold the home (implies --hold); measure nothing",
    )
    parser.add_argument(
        "--skip-indexes",
        action="store_true",
        help="grow no search index (the scan's and the catalog's reads only: see the docstring)",
    )
    parser.add_argument(
        "--index-chunk",
        type=int,
        default=20_000,
        help="documents published to the search indexes at once while growing",
    )
    parser.add_argument("--work", type=Path, default=None, help="a folder for the home")
    parser.add_argument("--out", default="partition_window.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="loom-window-") as scratch:
        work = (args.work or Path(scratch)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        os.environ.pop("LOOM_DAGSTER_POSTGRES_URL", None)
        with contextlib.ExitStack() as stack:
            if args.backend == "postgres":
                from tests.support.postgres import local_postgres

                # The Dagster instance on PostgreSQL, the catalog in DuckDB: as
                # bench/partition_ceiling.py measured the no-window figures.
                url = stack.enter_context(local_postgres(work / "pg"))
                os.environ["LOOM_DAGSTER_POSTGRES_URL"] = url
            return measure_home(args, work)
    return 0


def measure_home(args: argparse.Namespace, work: Path) -> int:
    """Grow the home under `work` and measure it, as the module's docstring says."""
    from dagster import DagsterInstance

    from bench.synthetic_home import grow_folder
    from loom_dagster.partitions import PARTITIONS_NAME

    backend = args.backend
    home = work / "home"
    args.folder = work / SOURCE
    args.folder.mkdir(parents=True, exist_ok=True)
    os.environ.update(
        LOOM_HOME=str(home),
        DAGSTER_HOME=str(home / "dagster"),
        # The seed's n-gram embedder: growing embeds every synthetic chunk.
        LOOM_EMBEDDER=os.environ.get("LOOM_EMBEDDER", "ngram"),
        LOOM_PARTITION_WINDOW="0",  # the home as made before the window
    )
    print(f"machine: {machine()}", flush=True)

    def save() -> None:
        Path(args.out).write_text(json.dumps({"machine": machine(), "results": RESULTS}, indent=1))

    for n in range(args.real_files):
        path = TEMPLATE if n == 0 else f"real-{n:04d}.md"
        (args.folder / path).write_text(note(path, -1 if n == 0 else n + 10**7)[0])
    first = run_child([str(BIN / "loom"), "ingest", str(args.folder), "--name", SOURCE], 3600)
    record(backend, 0, f"loom ingest (first load of {args.real_files} real files)", **first)
    if first["exit"] != 0:
        return 1
    grown = grow_folder(
        dict(os.environ),
        SOURCE,
        TEMPLATE,
        args.revisions - args.real_files,
        note,
        say=lambda line: print(f"grow: {line}", flush=True),
        indexes=not args.skip_indexes,
        index_chunk=args.index_chunk,
    )
    record(backend, args.revisions, "grown", **grown)
    save()
    with DagsterInstance.get() as instance:
        real = sorted(k for k in instance.get_dynamic_partitions(PARTITIONS_NAME))
    real_key = next(k for k in real if k.startswith("real-0001.md"))
    label = f"{backend}, window {args.window}"
    # Once untimed: the ingest record the growing made stale is written again, so the
    # quick path below is the quick path in both columns.
    if args.skip_indexes:
        # The full ingest would find the synthetic documents missing from the vector index and
        # fail to rebuild them (they have no stored chunks): the record a complete ingest leaves
        # is written directly, so the quick path is the quick path.
        remember_ingest()
    else:
        warm = run_child([str(BIN / "loom"), "ingest", str(args.folder)], args.step_limit_s)
        record(backend, args.revisions, "loom ingest (after growing, untimed)", **warm)
    if args.build_only:
        os.environ["LOOM_PARTITION_WINDOW"] = str(args.window)
        compact = run_child([str(BIN / "loom"), "partitions", "compact"], args.step_limit_s)
        record(label, args.revisions, "loom partitions compact", **compact)
        save()
        hold(work)
        return 0
    with webserver(work / "webserver.log") as (url, pid):
        _, data = graphql(url, ASSET_KEYS, {}, 600)
        assets = [n["assetKey"]["path"] for n in data["assetNodes"] if n["isPartitioned"]]
        if not args.window_only:
            measure(f"{backend}, no window", args.revisions, args, url, pid, real_key, assets)
            save()
        os.environ["LOOM_PARTITION_WINDOW"] = str(args.window)
        compact = run_child([str(BIN / "loom"), "partitions", "compact"], args.step_limit_s)
        record(label, args.revisions, "loom partitions compact", **compact)
        with DagsterInstance.get() as instance:
            gone = not instance.has_dynamic_partition(PARTITIONS_NAME, real_key)
            started = time.perf_counter()
            instance.add_dynamic_partitions(PARTITIONS_NAME, [real_key])  # "Add partition"
            added = time.perf_counter() - started
            left = len(instance.get_dynamic_partitions(PARTITIONS_NAME))
        record(
            label,
            args.revisions,
            "add the file's partition back",
            s=round(added, 3),
            was_past_window=gone,
            partitions=left,
        )
        measure(label, args.revisions, args, url, pid, real_key, assets)
        save()
    if args.hold:
        hold(work)
    return 0


def remember_ingest() -> None:
    """Write the record of a complete ingest (api/quick.py) for the home as it is."""
    from loom_dagster.api import quick
    from loom_dagster.resources.storage import CatalogResource
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env()
    with CatalogResource(database=str(settings.catalog_path)).connect() as con:
        quick.remember(settings, con, quick.pruned_now(settings, con))


def hold(work: Path) -> None:
    """Keep the home (and the server it uses) for later measurements until WORK/release."""
    keep = ("LOOM_HOME", "DAGSTER_HOME", "LOOM_EMBEDDER", "LOOM_PARTITION_WINDOW")
    env = {k: os.environ[k] for k in (*keep, "LOOM_DAGSTER_POSTGRES_URL") if k in os.environ}
    (work / "env.json").write_text(json.dumps(env, indent=1))
    print(f"holding: settings in {work / 'env.json'}; touch {work / 'release'} to end", flush=True)
    while not (work / "release").exists():
        time.sleep(5)


if __name__ == "__main__":
    sys.exit(main())
