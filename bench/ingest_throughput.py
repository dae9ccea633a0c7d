"""A first load of small files: through Dagster and as a plain loop, before and after, on SQLite
and on PostgreSQL, with the events Dagster stores per revision and the bytes written.

Each measurement is its own process (a fresh interpreter, LOOM_HOME, reference extractor service
and Dagster instance) on the same generated folder: the plain loop (the same domain functions as
the assets, with the vector leg as the assets have it), `loom ingest`'s path through Dagster on
SQLite, the same on a PostgreSQL server started here on loopback (fsync on), and, with
`--baseline-checkout`, the Dagster path of another checkout (its own .venv and extractor env), on
SQLite and (unless `--no-postgres`) on a PostgreSQL server of its own.

Bytes written are the process's own (/proc/self/io write_bytes less cancelled_write_bytes: the
object store, catalog, index and SQLite files it wrote), and for PostgreSQL the WAL the server
wrote plus the database's growth. Events are those stored in the runs' event logs.

    LOOM_EXTRACTOR_ENV=/opt/loom/extractor-venv-me .venv/bin/python bench/ingest_throughput.py \\
        --files 1000 --baseline-checkout /work/wt/base --baseline-extractor-env /opt/loom/extractor-venv-base
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import subprocess
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WORDS = (
    "invoice ledger tax account queue worker volume backup retention schema index "
    "partition revision extractor chunk citation heading paragraph"
).split()


def make_folder(root: Path, files: int, seed: int = 7, file_bytes: int = 0) -> Path:
    """`files` notes of ~600 bytes, or with `file_bytes` padded with more paragraphs to that size."""
    rng = random.Random(seed)
    for n in range(files):
        sentences = [" ".join(rng.choice(WORDS) for _ in range(12)) + "." for _ in range(6)]
        text = f"# Note {n}\n\n## Summary\n\n{' '.join(sentences[:3])}\n\n## Details\n\n{' '.join(sentences[3:])}\n"
        section = 0
        while len(text) < file_bytes:
            section += 1
            more = " ".join(" ".join(rng.choice(WORDS) for _ in range(12)) + "." for _ in range(4))
            text += f"\n## Part {section}\n\n{more}\n"
        if file_bytes:
            text = text[:file_bytes]
        path = root / f"group-{n % 20:02d}" / f"note-{n:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def fresh_home(base: Path, name: str) -> Path:
    home = base / name
    os.environ["LOOM_HOME"] = str(home)
    os.environ["DAGSTER_HOME"] = str(home / "dagster")
    return home


def written_bytes() -> int:
    """What this process has written to storage so far, less what it deleted before it was."""
    io = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(io["write_bytes"]) - int(io["cancelled_write_bytes"])


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) if path.exists() else 0


def plain_loop(
    folder: Path, *, vectors: bool = True, phases: dict[str, float] | None = None
) -> float:
    """The loop's seconds; `phases` gets where they went (set-up, scan, store, extract, chunk, publish)."""
    from loom_dagster import api, pipeline
    from loom_dagster.extractor.client import ExtractorClient
    from loom_dagster.extractor.settings import ExtractorSettings
    from loom_dagster.objectstore import ObjectStore
    from loom_dagster.resources.storage import CatalogResource
    from loom_dagster.search.lexical import LexicalIndex
    from loom_dagster.search.vector import open_vectors
    from loom_dagster.settings import LoomSettings

    phases = {} if phases is None else phases
    started = time.perf_counter()
    mark = started

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        phases[name] = phases.get(name, 0.0) + now - mark
        mark = now

    settings = LoomSettings.from_env()
    api.prepare_environment(settings)
    source = api.register_source(settings, folder, name="bench")
    store, index = ObjectStore(settings.object_store_url), LexicalIndex(settings.search_dir)
    catalog_db = CatalogResource(database=str(settings.catalog_path))
    client = ExtractorClient(ExtractorSettings.from_env(os.environ))
    vector_index = open_vectors(settings) if vectors else None
    lap("set-up")
    with catalog_db.connect() as con:
        scan = pipeline.sync_source(con, index, source, vectors=vector_index)
        lap("register and scan")
        for revision in scan.new:
            pipeline.store_original(store, source.root, revision)
            lap("store original")
            extraction = pipeline.extract(store, client, revision)
            lap("extract (service call + artifact)")
            pipeline.make_chunks(store, extraction, revision)
            lap("chunk")
        pipeline.publish(con, index, store, list(scan.new), vectors=vector_index)
        lap("publish (catalog, index, vectors)")
    client.close()
    return time.perf_counter() - started


def through_dagster(folder: Path) -> tuple[float, int]:
    from loom_dagster import api

    # The API's names load on first use (loom_dagster/api/__init__.py): resolve the one timed
    # here before the clock starts, so both sides time the ingest, not the imports.
    ingest_folder = api.ingest_folder
    started = time.perf_counter()
    report = ingest_folder(folder, name="bench")
    elapsed = time.perf_counter() - started
    if not report.conserved or report.count("published") != report.files:
        # What went wrong, before the scratch folder (and the instance) is removed with it.
        others = [o for o in report.outcomes if o.status != "published"]
        kinds = Counter(o.status for o in others)
        details = Counter(o.detail[:160] for o in others).most_common(5)
        raise AssertionError(
            f"not every file published: {report.count('published')} of {report.files}, "
            f"conserved {report.conserved}, others {dict(kinds)}; most common: {details}"
        )
    return elapsed, report.files


def stored_events() -> Counter[str]:
    """Every event the instance's runs stored, by kind."""
    from dagster import DagsterInstance

    instance = DagsterInstance.from_config(os.environ["DAGSTER_HOME"])
    kinds: Counter[str] = Counter()
    for run in instance.get_runs():
        for entry in instance.all_logs(run.run_id):
            kinds[entry.dagster_event_type.value if entry.dagster_event_type else "LOG"] += 1
    return kinds


def worker(mode: str, files: int, scratch: Path) -> dict[str, object]:
    """One measurement, in this process: `plain` or `dagster`."""
    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL

    folder = scratch / "folder"
    with reference_extractor() as service:
        os.environ[ENV_URL], os.environ[ENV_TOKEN] = service.url, service.token
        home = fresh_home(scratch, "home")
        before = written_bytes()
        if mode in ("plain", "plain-lexical"):
            phases: dict[str, float] = {}
            seconds = plain_loop(folder, vectors=mode == "plain", phases=phases)
            result: dict[str, object] = {"seconds": seconds, "phases": phases}
        else:
            seconds, published = through_dagster(folder)
            assert published == files
            kinds = stored_events()
            result = {"seconds": seconds, "events": sum(kinds.values()), "kinds": dict(kinds)}
        result["written"] = written_bytes() - before
        result["dagster_home_bytes"] = folder_bytes(home / "dagster")
    return result


def run_worker(
    python: Path, checkout: Path, mode: str, files: int, scratch: Path, env: dict[str, str]
) -> dict[str, object]:
    """A measurement in a fresh process of `checkout`'s interpreter and code."""
    answer = subprocess.run(
        [str(python), str(Path(__file__).resolve()), "--worker", mode]
        + ["--files", str(files), "--scratch", str(scratch)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if answer.returncode != 0:
        raise SystemExit(f"{mode} in {checkout} failed:\n{answer.stderr[-4000:]}")
    return json.loads(answer.stdout.splitlines()[-1])  # type: ignore[no-any-return]


def postgres_written(url: str) -> tuple[int, int]:
    """The server's WAL position and the database's size, in bytes."""
    import sqlalchemy as db

    engine = db.create_engine(url)
    try:
        with engine.connect() as conn:
            wal = conn.execute(db.text("SELECT pg_current_wal_lsn() - '0/0'::pg_lsn")).scalar()
            size = conn.execute(db.text("SELECT pg_database_size(current_database())")).scalar()
    finally:
        engine.dispose()
    return int(wal or 0), int(size or 0)


def load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--baseline-checkout", type=Path, help="another checkout to run beside")
    parser.add_argument(
        "--baseline-extractor-env", help="LOOM_EXTRACTOR_ENV for the baseline checkout"
    )
    parser.add_argument("--no-postgres", action="store_true", help="skip the PostgreSQL row")
    parser.add_argument("--out", type=Path, default=Path("bench/results/ingest_throughput.json"))
    parser.add_argument(
        "--file-bytes",
        type=int,
        default=0,
        help="pad each file to this size (10,000 x 4096: 40 MB)",
    )
    parser.add_argument(
        "--dagster-first",
        action="store_true",
        help="measure `loom ingest` before the plain loop (a long run's main figure first)",
    )
    parser.add_argument(
        "--scratch-root", type=Path, help="where the folder and homes go (default: the temp dir)"
    )
    parser.add_argument(
        "--vectors",
        action="store_true",
        help="only the plain loop, without and with the vector leg (the default embedder)",
    )
    parser.add_argument(
        "--worker", choices=["plain", "plain-lexical", "dagster"], help=argparse.SUPPRESS
    )
    parser.add_argument("--scratch", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if args.worker:
        print(json.dumps(worker(args.worker, args.files, args.scratch)))
        return

    this_python = ROOT / ".venv" / "bin" / "python"
    rows: dict[str, dict[str, object]] = {}
    if args.scratch_root:
        args.scratch_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(
        prefix="ingest-throughput-", dir=args.scratch_root
    ) as scratch_dir:
        scratch = Path(scratch_dir)
        make_folder(scratch / "folder", args.files, file_bytes=args.file_bytes)

        def measure(name: str, python: Path, checkout: Path, mode: str, **env: str) -> None:
            side = scratch / name.replace(", ", "-").replace(" ", "-")
            side.mkdir()
            (side / "folder").symlink_to(scratch / "folder", target_is_directory=True)
            environment = {k: v for k, v in os.environ.items() if not k.startswith("LOOM_")}
            environment.update({"LOOM_EXTRACTOR_ENV": os.environ.get("LOOM_EXTRACTOR_ENV", "")})
            environment.update(env)
            print(f"  {name} ... (load {load()})", file=sys.stderr, flush=True)
            rows[name] = run_worker(python, checkout, mode, args.files, side, environment)
            rows[name]["load"] = load()

        if args.vectors:
            measure("plain loop, lexical only", this_python, ROOT, "plain-lexical")
            measure("plain loop", this_python, ROOT, "plain")
            without = float(rows["plain loop, lexical only"]["seconds"])  # type: ignore[arg-type]
            with_vectors = float(rows["plain loop"]["seconds"])  # type: ignore[arg-type]
            print(
                f"{args.files} files: plain loop {without:.1f} s without the vector leg, "
                f"{with_vectors:.1f} s with it ({(with_vectors / without - 1) * 100:+.1f}%)"
            )
            return
        if not args.dagster_first:
            measure("plain loop", this_python, ROOT, "plain")
        if args.baseline_checkout:
            base = args.baseline_checkout.resolve()
            measure(
                "dagster, sqlite, before",
                base / ".venv" / "bin" / "python",
                base,
                "dagster",
                LOOM_EXTRACTOR_ENV=args.baseline_extractor_env or "",
                # Its own code first, even where its .venv is another checkout's (an export of
                # a commit beside a shared .venv).
                PYTHONPATH=str(base),
            )
        measure("dagster, sqlite, after", this_python, ROOT, "dagster")
        if args.dagster_first:
            measure("plain loop", this_python, ROOT, "plain")
        if not args.no_postgres:
            sys.path.insert(0, str(ROOT))
            from tests.support.postgres import local_postgres

            sides = [("after", this_python, ROOT, {})]
            if args.baseline_checkout:
                base = args.baseline_checkout.resolve()
                baseline_env = {
                    "LOOM_EXTRACTOR_ENV": args.baseline_extractor_env or "",
                    "PYTHONPATH": str(base),
                }
                sides.insert(0, ("before", base / ".venv" / "bin" / "python", base, baseline_env))
            for side, python, checkout, extra in sides:
                # A server of its own per side: each starts from an empty database and WAL.
                with local_postgres(scratch / f"pg-{side}", durable=True) as url:
                    wal, size = postgres_written(url)
                    name = f"dagster, postgres, {side}"
                    measure(
                        name, python, checkout, "dagster", LOOM_DAGSTER_POSTGRES_URL=url, **extra
                    )
                    wal_after, size_after = postgres_written(url)
                    rows[name]["postgres_written"] = (wal_after - wal) + (size_after - size)

    plain = float(rows["plain loop"]["seconds"])  # type: ignore[arg-type]
    per_1000 = 1000 / args.files
    print(
        f"{args.files} small Markdown files; {platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}"
    )
    print(
        f"{'path':28}{'seconds':>9}{'x loop':>8}{'events/rev':>12}"
        f"{'MB written/1000':>17}{'instance MB':>13}   load"
    )
    for name, row in rows.items():
        seconds = float(row["seconds"])  # type: ignore[arg-type]
        events = row.get("events")
        written = int(row["written"]) + int(row.get("postgres_written", 0))  # type: ignore[call-overload]
        print(
            f"{name:28}{seconds:9.1f}{seconds / plain:8.2f}"
            f"{(int(events) / args.files if events else 0):12.1f}"  # type: ignore[call-overload]
            f"{written * per_1000 / 1e6:17.0f}"
            f"{int(row['dagster_home_bytes']) / 1e6:13.1f}   {row['load']}"  # type: ignore[call-overload]
        )
    for name, row in rows.items():
        if "phases" in row:
            parts = row["phases"].items()  # type: ignore[attr-defined]
            print(
                f"{name}, ms per file: "
                + ", ".join(f"{k} {v * 1000 / args.files:.1f}" for k, v in parts)
            )
        if "kinds" in row:
            kinds = sorted(row["kinds"].items(), key=lambda kv: -kv[1])  # type: ignore[attr-defined]
            print(f"{name}: " + ", ".join(f"{k} {v / args.files:.2f}" for k, v in kinds if v))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"files": args.files, "rows": rows}, indent=2) + "\n")


if __name__ == "__main__":
    main()
