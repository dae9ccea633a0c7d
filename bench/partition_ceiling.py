"""The partition ceiling (issue 32, part 1): what a Dagster instance holding N revision partitions
costs Loom, measured on a real instance, SQLite and PostgreSQL (a server started on loopback).
Over 500 lines: one bench with the entry points of its own child processes and its docs table.

Per backend, a fresh home ingests a folder of real tiny files through `loom ingest` (the
baseline: size 0 synthetic partitions); then synthetic revisions are added in steps to each of
`--sizes`, and at every size it measures, each but the first in a process of its own (its peak
RSS its VmHWM, polled):

- `add 1k`: one `instance.add_dynamic_partitions` call of 1,000 keys at that size, and the
  cumulative seconds of all such calls to reach it;
- `sensor`: one evaluation of `loom_folders`, as Dagster calls it (build_sensor_context with the
  instance and the code location's own resources), with nothing changed; its parts
  get_dynamic_partitions and get_materialized_partitions(ORIGINAL) timed apart;
- `webserver`: `dagster-webserver` on the workspace, the UI's own PartitionHealthQuery (the
  partitions tab and the asset page's health bar, its text copied from the UI's bundle) and
  `assetNodeOrError { partitionStats }` (the asset page's counts) over HTTP; the webserver's
  peak RSS (VmHWM);
- `backfill`: a one-partition backfill of every revision asset of one real file, submitted
  through GraphQL `launchPartitionBackfill`; then one backfill-daemon pass
  (`execute_backfill_iteration`, in a process of its own with the workspace) until its run is
  created, and that run's end;
- `ingest`: `loom ingest FOLDER` of the real folder, nothing changed;
- `gc`: `loom gc --dry-run`;
- the instance's size on disk (SQLite files) or in PostgreSQL (pg_database_size).

What is synthetic: each synthetic revision is a catalog row (table `revisions`, key made by
`sources.revision_key` for `synthetic/<n>.txt` of a source `synthetic` whose folder does not
exist, so the sensor warns and skips it instead of scanning a million files), with no document
or outcome rows (a live document would need stored chunks and vectors), its partition in the
instance, and one ASSET_MATERIALIZATION event of loom/original for it inserted directly into the
event log's table (a copy of a real event with its partition replaced), so that the partition is
"materialized" as a real home's are. Nothing else of a real run (no run, no other asset's events).

    .venv/bin/python bench/partition_ceiling.py --sizes 10000,50000,200000 --backends sqlite,postgres

A size whose growing step takes longer than --step-limit-s stops that backend there. Prints a
line per measurement (with the load average) and writes all of them as JSON to --out.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
BIN = Path(sys.executable).parent
SYNTHETIC = "synthetic"
SYNTHETIC_MARK = ".txt__part-"  # in every synthetic key (sources.keys.path_trace)
CHUNK = 20_000  # synthetic catalog rows and events written at once
ORIGINAL_PATH = ["loom", "original"]

# The UI's own query for the partitions tab and the asset page's partition health bar
# (dagster_webserver's bundle, query PartitionHealthQuery, dagster 1.13).
PARTITION_HEALTH = """
query PartitionHealthQuery($assetKey: AssetKeyInput!) {
  assetNodeOrError(assetKey: $assetKey) {
    ... on AssetNode {
      id
      partitionKeysByDimension { name type partitionKeys }
      assetPartitionStatuses {
        ... on TimePartitionStatuses { ranges { status startTime endTime startKey endKey } }
        ... on DefaultPartitionStatuses {
          materializedPartitions materializingPartitions failedPartitions
        }
      }
    }
  }
}
"""
PARTITION_STATS = """
query AssetPartitionStats($assetKey: AssetKeyInput!) {
  assetNodeOrError(assetKey: $assetKey) {
    ... on AssetNode { id partitionStats { numMaterialized numMaterializing numPartitions numFailed } }
  }
}
"""
ASSET_KEYS = "query { assetNodes { assetKey { path } isPartitioned } }"
LAUNCH_BACKFILL = """
mutation LaunchPartitionBackfill($backfillParams: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $backfillParams) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on PythonError { message }
  }
}
"""


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def machine() -> dict[str, Any]:
    return {
        "nproc": os.cpu_count(),
        "load": load(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
    }


RESULTS: list[dict[str, Any]] = []


def record(backend: str, size: int, what: str, **values: Any) -> None:
    row = {"backend": backend, "size": size, "what": what, "load": load(), **values}
    RESULTS.append(row)
    shown = " ".join(f"{k}={v}" for k, v in values.items())
    print(f"[{backend} {size:>8}] {what}: {shown} (load {row['load']})", flush=True)


def run_child(command: list[str], timeout_s: float) -> dict[str, Any]:
    """Run `command`; its wall seconds, exit status, peak RSS (MB) and its last stdout line.

    The peak is the child's VmHWM, read while it runs: wait4's ru_maxrss is no use here, Linux
    carries the forking parent's high-water mark over exec into the child's.
    """
    started = time.perf_counter()
    peak = 0
    with tempfile.TemporaryFile() as out:
        child = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=os.environ)
        deadline = time.monotonic() + timeout_s
        timed_out = False
        while child.poll() is None:
            peak = max(peak, peak_rss_mb(child.pid))
            if time.monotonic() > deadline:
                child.kill()
                child.wait()
                timed_out = True
                break
            time.sleep(0.05)
        seconds = time.perf_counter() - started
        out.seek(0)
        text = out.read().decode(errors="replace")
    lines = [line for line in text.splitlines() if line.strip()]
    # A child of this script ends with one JSON line; the code server's log may follow it.
    lines = [line for line in lines if line.startswith("{")] or lines
    return {
        "s": round(seconds, 2),
        "exit": child.returncode,
        "timed_out": timed_out,
        "rss_mb": peak,
        "last": lines[-1][:300] if lines else "",
    }


# The synthetic revisions ------------------------------------------------------------------------


def synthetic_rows(start: int, stop: int) -> list[tuple[str, str, str, str]]:
    from loom_dagster.sources.keys import document_id, revision_key

    rows = []
    for n in range(start, stop):
        path = f"part-{n // 1000:04d}/note-{n:07d}.txt"  # its key holds SYNTHETIC_MARK
        sha = hashlib.sha256(path.encode()).hexdigest()
        rows.append((revision_key(SYNTHETIC, path, sha), document_id(SYNTHETIC, path), path, sha))
    return rows


def add_catalog_rows(catalog_path: Path, rows: list[tuple[str, str, str, str]]) -> None:
    from loom_dagster import catalog
    from loom_dagster.resources.storage import CatalogResource
    from loom_dagster.sources.model import Source

    with CatalogResource(database=str(catalog_path)).connect() as con:
        if catalog.get_source(con, SYNTHETIC) is None:
            missing = str(catalog_path.parent / "synthetic-folder-absent")
            catalog.upsert_source(con, Source(SYNTHETIC, missing))
        con.execute(
            "INSERT INTO revisions (key, document_id, source, path, size, mtime_ns, sha256) "
            "SELECT unnest(?), unnest(?), ?, unnest(?), 100, 0, unnest(?)",
            [
                [r[0] for r in rows],
                [r[1] for r in rows],
                SYNTHETIC,
                [r[2] for r in rows],
                [r[3] for r in rows],
            ],
        )


# The measurements ---------------------------------------------------------------------------------


def child_sensor() -> None:
    """Evaluate loom_folders once, as Dagster does; print one JSON line."""
    from dagster import DagsterInstance, build_sensor_context

    from loom_dagster.assets import ORIGINAL
    from loom_dagster.definitions import defs
    from loom_dagster.partitions import PARTITIONS_NAME
    from loom_dagster.sensors import loom_folders

    with DagsterInstance.get() as instance:
        resources = {k: v for k, v in defs.resources.items() if k in ("catalog_db", "loom")}
        started = time.perf_counter()
        partitions = len(instance.get_dynamic_partitions(PARTITIONS_NAME))
        listed = time.perf_counter()
        materialized = len(instance.get_materialized_partitions(ORIGINAL))
        read = time.perf_counter()
        with build_sensor_context(instance=instance, resources=resources) as context:
            result = loom_folders(context)
        done = time.perf_counter()
        runs = len(getattr(result, "run_requests", None) or [])
        requests = getattr(result, "dynamic_partitions_requests", None) or []
        print(
            json.dumps(
                {
                    "tick_s": round(done - read, 2),
                    "get_dynamic_partitions_s": round(listed - started, 2),
                    "get_materialized_partitions_s": round(read - listed, 2),
                    "partitions": partitions,
                    "materialized": materialized,
                    "runs_requested": runs,
                    "partition_requests": len(requests),
                    "result": type(result).__name__,
                }
            ),
            flush=True,
        )


def child_backfill(backfill_id: str) -> None:
    """Backfill-daemon passes until the backfill's run is created (at most 5)."""
    import logging

    from dagster import DagsterInstance, RunsFilter
    from dagster._core.execution.backfill import BulkActionStatus
    from dagster._core.workspace.context import WorkspaceProcessContext
    from dagster._core.workspace.load_target import WorkspaceFileTarget
    from dagster._daemon.backfill import execute_backfill_iteration

    logger = logging.getLogger("bench.backfill")
    with DagsterInstance.get() as instance:
        target = WorkspaceFileTarget(paths=[str(ROOT / "workspace.yaml")])
        with WorkspaceProcessContext(instance, target) as context:
            context.create_request_context()  # the code server is up before the clock starts
            started = time.perf_counter()
            passes, created = 0, None
            tags = {"dagster/backfill": backfill_id}
            while passes < 5 and created is None:
                passes += 1
                for _ in execute_backfill_iteration(context, logger):
                    pass
                ids = instance.get_run_ids(RunsFilter(tags=tags))
                if ids:
                    created = time.perf_counter() - started
            # Loom's instance queues runs (Dagster's default coordinator): the backfill's run is
            # created QUEUED. It and the backfill are canceled, so later sizes start clean.
            statuses = [
                r.dagster_run.status.value for r in instance.get_run_records(RunsFilter(tags=tags))
            ]
            for record in instance.get_run_records(RunsFilter(tags=tags)):
                if not record.dagster_run.is_finished:
                    instance.report_run_canceled(record.dagster_run)
            backfill = instance.get_backfill(backfill_id)
            if backfill is not None:
                instance.update_backfill(backfill.with_status(BulkActionStatus.CANCELED))
        print(
            json.dumps(
                {
                    "daemon_passes": passes,
                    "to_run_created_s": None if created is None else round(created, 2),
                    "run_status": ",".join(statuses),
                }
            ),
            flush=True,
        )


def graphql(url: str, query: str, variables: dict[str, Any], timeout_s: float) -> tuple[float, Any]:
    import httpx

    started = time.perf_counter()
    response = httpx.post(url, json={"query": query, "variables": variables}, timeout=timeout_s)
    seconds = time.perf_counter() - started
    response.raise_for_status()
    body = response.json()
    if body.get("errors"):
        raise RuntimeError(json.dumps(body["errors"])[:500])
    return seconds, body["data"]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def webserver(log: Path) -> Iterator[tuple[str, int]]:
    import httpx

    port = free_port()
    command = [str(BIN / "dagster-webserver"), "-w", str(ROOT / "workspace.yaml")]
    command += ["-h", "127.0.0.1", "-p", str(port)]
    with open(log, "ab") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, env=os.environ)
    try:
        deadline = time.monotonic() + 300
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/server_info", timeout=5).is_success:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"dagster-webserver did not start; see {log}")
            time.sleep(1)
        yield f"http://127.0.0.1:{port}/graphql", server.pid
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def peak_rss_mb(pid: int) -> int:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:  # it ended meanwhile
        return 0
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return 0


def storage_size(settings: Any) -> str:
    if settings.dagster_postgres_url:
        import sqlalchemy as db

        engine = db.create_engine(settings.dagster_postgres_url)
        with engine.connect() as conn:
            size = conn.execute(db.text("SELECT pg_database_size(current_database())")).scalar()
        engine.dispose()
        return f"postgres {int(size or 0) / 1e6:.0f} MB"
    files = [p for p in settings.dagster_home.rglob("*.db*") if p.is_file()]
    index = [p for p in files if p.name.startswith("index.db")]
    return (
        f"sqlite {sum(p.stat().st_size for p in files) / 1e6:.0f} MB in {len(files)} files, "
        f"index.db {sum(p.stat().st_size for p in index) / 1e6:.0f} MB"
    )


def measure(
    backend: str,
    size: int,
    args: argparse.Namespace,
    url: str,
    web_pid: int,
    real_key: str,
    assets: list[list[str]],
) -> None:
    from loom_dagster.settings import LoomSettings

    me = [sys.executable, str(Path(__file__).resolve())]
    sensor = run_child([*me, "--child", "sensor"], args.step_limit_s)
    record(
        backend,
        size,
        "sensor",
        rss_mb=sensor["rss_mb"],
        exit=sensor["exit"],
        process_s=sensor["s"],
        out=sensor["last"],
    )
    for name, query in (
        ("PartitionHealthQuery", PARTITION_HEALTH),
        ("partitionStats", PARTITION_STATS),
    ):
        try:
            seconds, _ = graphql(
                url, query, {"assetKey": {"path": ORIGINAL_PATH}}, args.step_limit_s
            )
            record(
                backend,
                size,
                f"webserver {name}",
                s=round(seconds, 2),
                webserver_peak_rss_mb=peak_rss_mb(web_pid),
            )
        except Exception as error:  # a timeout or a server error is the measurement
            record(backend, size, f"webserver {name}", error=repr(error)[:300])
    try:
        seconds, data = graphql(
            url,
            LAUNCH_BACKFILL,
            {
                "backfillParams": {
                    "partitionNames": [real_key],
                    "assetSelection": [{"path": p} for p in assets],
                    "fromFailure": False,
                }
            },
            args.step_limit_s,
        )
        launched = data["launchPartitionBackfill"]
        record(
            backend,
            size,
            "backfill submit",
            s=round(seconds, 2),
            result=launched.get("backfillId") or launched,
        )
        if launched.get("backfillId"):
            daemon = run_child(
                [*me, "--child", "backfill", launched["backfillId"]], args.step_limit_s
            )
            record(
                backend,
                size,
                "backfill daemon",
                rss_mb=daemon["rss_mb"],
                process_s=daemon["s"],
                out=daemon["last"],
            )
    except Exception as error:
        record(backend, size, "backfill submit", error=repr(error)[:300])
    loom = str(BIN / "loom")
    ingest = run_child([loom, "ingest", str(args.folder)], args.step_limit_s)
    record(backend, size, "loom ingest (nothing changed)", **ingest)
    # Without the record of the last complete ingest, the full path: Dagster's instance read,
    # the partitions listed for pruning, the catalog's retention plan.
    (Path(os.environ["LOOM_HOME"]) / "ingest-state.json").unlink(missing_ok=True)
    full = run_child([loom, "ingest", str(args.folder)], args.step_limit_s)
    record(backend, size, "loom ingest (nothing changed, full path)", **full)
    gc = run_child([loom, "gc", "--dry-run"], args.step_limit_s)
    record(backend, size, "loom gc --dry-run", **gc)
    record(backend, size, "instance size", storage=storage_size(LoomSettings.from_env()))


@contextmanager
def backend_env(backend: str, work: Path) -> Iterator[None]:
    home = work / backend
    os.environ["LOOM_HOME"] = str(home)
    os.environ["DAGSTER_HOME"] = str(home / "dagster")
    os.environ.pop("LOOM_DAGSTER_POSTGRES_URL", None)
    if backend == "sqlite":
        yield
        return
    from tests.support.postgres import local_postgres

    with local_postgres(work / "pg") as url:
        os.environ["LOOM_DAGSTER_POSTGRES_URL"] = url
        try:
            yield
        finally:
            os.environ.pop("LOOM_DAGSTER_POSTGRES_URL", None)


def run_backend(backend: str, args: argparse.Namespace) -> None:
    from dagster import DagsterInstance

    from bench.ingest_throughput import make_folder
    from bench.synthetic_home import add_events, add_partitions, materializations
    from loom_dagster.partitions import PARTITIONS_NAME
    from loom_dagster.settings import LoomSettings

    with backend_env(backend, args.work):
        settings = LoomSettings.from_env()
        # --resume: a SQLite home an earlier run of this bench left in --work, grown further.
        resumed = args.resume and settings.catalog_path.exists()
        if not resumed:
            if not args.folder.exists():
                make_folder(args.folder, args.real_files)
            first = run_child([str(BIN / "loom"), "ingest", str(args.folder)], 3600)
            record(backend, 0, f"loom ingest (first load of {args.real_files} real files)", **first)
            if first["exit"] != 0:
                return
        with DagsterInstance.get() as instance:
            keys = instance.get_dynamic_partitions(PARTITIONS_NAME)
            real = sorted(key for key in keys if SYNTHETIC_MARK not in key)
            [template] = materializations(instance, asset=ORIGINAL_PATH)
        with webserver(args.work / f"webserver-{backend}.log") as (url, pid):
            _, data = graphql(url, ASSET_KEYS, {}, 600)
            assets = [n["assetKey"]["path"] for n in data["assetNodes"] if n["isPartitioned"]]
            if not resumed and not args.skip_baseline:
                measure(backend, 0, args, url, pid, real[0], assets)
            have, adding_s = len(keys) - len(real), 0.0
            for size in args.sizes:
                step_started = time.perf_counter()
                last_batch = 0.0
                stopped = False
                with DagsterInstance.get() as instance:
                    while have < size:
                        # Synthetic rows a chunk at a time; partitions 1,000 a call, as timed.
                        rows = synthetic_rows(have, min(size, have + CHUNK))
                        keys = [r[0] for r in rows]
                        calls = add_partitions(instance, PARTITIONS_NAME, keys)
                        last_batch = calls[-1]
                        adding_s += sum(calls)
                        add_events(instance, template, keys)
                        add_catalog_rows(settings.catalog_path, rows)
                        have += len(rows)
                        if time.perf_counter() - step_started > args.step_limit_s:
                            stopped = True
                            break
                record(
                    backend,
                    have,
                    "add partitions",
                    last_batch_of_1000_s=round(last_batch, 3),
                    cumulative_add_s=round(adding_s, 1),
                    step_with_synthetic_rows_s=round(time.perf_counter() - step_started, 1),
                )
                if stopped:
                    record(
                        backend,
                        have,
                        "stopped",
                        reason=f"growing to {size} took over {args.step_limit_s} s",
                    )
                    break
                measure(backend, have, args, url, pid, real[0], assets)
                Path(args.out).write_text(
                    json.dumps({"machine": machine(), "results": RESULTS}, indent=1)
                )


# The table docs/scale.md shows: an operation per row, a size per column, each cell its
# seconds (and peak RSS where a process of its own ran it) with the 1-minute load beside it.
TABLE_ROWS = (
    ("add partitions", "add 1,000 partitions (one call); all calls so far", "last_batch_of_1000_s"),
    ("sensor", "`loom_folders` tick, nothing changed", "tick_s"),
    ("webserver PartitionHealthQuery", "UI PartitionHealthQuery (partitions tab)", "s"),
    ("webserver partitionStats", "UI `partitionStats` (asset page counts)", "s"),
    ("backfill submit", "one-file backfill: `launchPartitionBackfill`", "s"),
    ("backfill daemon", "one-file backfill: daemon pass to its run created", "to_run_created_s"),
    ("loom ingest (nothing changed)", "`loom ingest`, nothing changed (quick path)", "s"),
    ("loom ingest (nothing changed, full path)", "`loom ingest`, nothing changed, full path", "s"),
    ("loom gc --dry-run", "`loom gc --dry-run`", "s"),
    ("instance size", "instance storage", "storage"),
    ("loom ingest (first load of 200 real files)", "`loom ingest`, first load of 200 files", "s"),
)


def cell(row: dict[str, Any], field: str) -> str:
    if "error" in row:
        return f"error: {row['error'][:60]}"
    values = dict(row)
    if isinstance(values.get("out"), str) and values["out"].startswith("{"):
        values.update(json.loads(values["out"]))
    value = values.get(field)
    if field == "storage":
        return str(value).split(" in ")[0]
    text = f"{value} s" if value is not None else "n/a"
    if row["what"] == "add partitions":
        text += f"; {values['cumulative_add_s']} s"
    if values.get("timed_out"):
        text = f"timed out ({values['s']} s)"
    if values.get("rss_mb"):
        text += f", {values['rss_mb']} MB"
    if values.get("webserver_peak_rss_mb"):
        text += f", webserver {values['webserver_peak_rss_mb']} MB"
    return f"{text} ({row['load'].split()[0]})"


def missing(
    found: dict[tuple[str, int, str], dict[str, Any]], backend: str, size: int, what: str
) -> str:
    if (backend, size, "stopped") in found:
        return "stopped: growing took too long"
    # Nothing is added at size 0, nor by a --resume run at the size it starts from; the first
    # load is at size 0 only.
    once = what == "add partitions" or what.startswith("loom ingest (first load")
    return "—" if size == 0 or once else "not reached"


def table(paths: list[str]) -> str:
    """A table per backend: an operation per row, a size per column (later files win)."""
    rows = [r for p in paths for r in json.loads(Path(p).read_text())["results"]]
    # A --resume run starts at a size already reached: its "add partitions" there added none.
    rows = [r for r in rows if r.get("last_batch_of_1000_s") != 0.0]
    found = {(r["backend"], r["size"], r["what"]): r for r in rows}
    out = []
    for backend in sorted({r["backend"] for r in rows}, key=lambda b: b != "sqlite"):
        measured = {what for what, _, _ in TABLE_ROWS} | {"stopped"}
        sizes = sorted(
            {r["size"] for r in rows if r["backend"] == backend and r["what"] in measured}
        )
        out += [
            f"**{backend}**",
            "",
            "| Operation | " + " | ".join(f"{s:,}" for s in sizes) + " |",
            "|---" * (len(sizes) + 1) + "|",
        ]
        for what, label, field in TABLE_ROWS:
            cells = [found.get((backend, s, what)) for s in sizes]
            shown = [
                cell(c, field) if c else missing(found, backend, size, what)
                for c, size in zip(cells, sizes, strict=True)
            ]
            out.append(f"| {label} | " + " | ".join(shown) + " |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,50000,200000")
    parser.add_argument("--backends", default="sqlite,postgres")
    parser.add_argument("--real-files", type=int, default=300)
    parser.add_argument("--step-limit-s", type=float, default=600)
    parser.add_argument("--work", type=Path, default=None, help="a folder for the homes")
    parser.add_argument("--out", default="partition_ceiling.json")
    parser.add_argument("--skip-baseline", action="store_true", help="measure nothing at size 0")
    parser.add_argument("--resume", action="store_true", help="grow the homes left in --work")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    parser.add_argument("--table", nargs="+", help="print the Markdown table of these JSON files")
    args = parser.parse_args(argv)
    if args.table:
        print(table(args.table))
        return 0
    if args.child:
        if args.child[0] == "sensor":
            child_sensor()
        else:
            child_backfill(args.child[1])
        return 0
    args.sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="loom-ceiling-") as scratch:
        args.work = (args.work or Path(scratch)).resolve()
        args.work.mkdir(parents=True, exist_ok=True)
        args.folder = args.work / "real-folder"
        print(f"machine: {machine()}", flush=True)
        for backend in args.backends.split(","):
            run_backend(backend, args)
    Path(args.out).write_text(json.dumps({"machine": machine(), "results": RESULTS}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
