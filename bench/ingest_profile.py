"""Where a first load's time goes through Dagster: `loom ingest`'s path under cProfile.

The runs execute in the profiled thread (the worker thread `loom ingest` uses for signals is
left out here, so one profile sees the whole run), on a fresh LOOM_HOME and reference extractor,
over the folder bench/ingest_throughput.py generates. Prints the inclusive seconds of each phase
(the same domain functions the plain loop calls, and Dagster's own work around them) per
revision, the bytes this process wrote, then the functions with the most time of their own.

    LOOM_EXTRACTOR_ENV=/opt/loom/extractor-venv-me nice .venv/bin/python bench/ingest_profile.py \\
        --files 200 [--file-bytes 4096] [--scratch-root DIR] [--dump out.prof]

With `--into HOME FOLDER` (a home whose registered FOLDER is published already, e.g. one
bench/freshness.py --synthetic grew: its work folder holds `home` and `docs`), one new small
file is written into FOLDER and `loom ingest FOLDER` of it is profiled instead: what one file's
run costs on a large home, phase by phase (the same steps a run the folder sensor asks for runs).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ingest_throughput import fresh_home, load, make_folder, written_bytes  # noqa: E402

# (label, module path suffix, function name): inclusive time of each, summed over its entries.
PHASES = [
    ("whole ingest", "loom_dagster/api/ingest.py", "ingest_folder"),
    ("register and scan (catalog)", "loom_dagster/api/registration.py", "register"),
    (
        "runs (execute_in_process)",
        "dagster/_core/definitions/job_definition.py",
        "execute_in_process",
    ),
    (
        "  run creation (create_run, planned events)",
        "dagster/_core/instance/runs/run_domain.py",
        "create_run",
    ),
    ("  store original", "loom_dagster/pipeline/steps.py", "store_original"),
    (
        "  extract (the batch, in the pool's threads)",
        "loom_dagster/pipeline/steps.py",
        "extract_batch",
    ),
    ("  chunk", "loom_dagster/pipeline/steps.py", "make_chunks"),
    ("  read extraction back", "loom_dagster/pipeline/records.py", "read_extraction"),
    ("  publish (catalog, index)", "loom_dagster/pipeline/publishing.py", "publish"),
    ("  upstream versions read", "loom_dagster/assets/versions.py", "latest"),
    ("  check targets (storage ids)", "loom_dagster/assets/runtime.py", "check_targets"),
    (
        "  events: handle_new_event (all)",
        "dagster/_core/instance/methods/event_methods.py",
        "handle_new_event",
    ),
    (
        "  events: stored (SQLite storage's store_event)",
        "event_log/sqlite/sqlite_event_log.py",
        "store_event",
    ),
    (
        "    events: schema questions (has_table)",
        "event_log/sqlite/sqlite_event_log.py",
        "has_table",
    ),
    ("    events: batched writes (flush)", "loom_dagster/event_log.py", "flush"),
    ("    events: serialize", "dagster_shared/serdes/serdes.py", "serialize_value"),
    ("    events: sqlite commit", "~", "<method 'commit' of 'sqlite3.Connection' objects>"),
    ("    events: sqlite execute", "~", "<method 'execute' of 'sqlite3.Cursor' objects>"),
    ("    reconcile (index marks, vectors)", "loom_dagster/pipeline/publishing.py", "reconcile"),
    ("      unindexed documents (catalog)", "loom_dagster/catalog/marks.py", "unindexed"),
    ("    lexical index commit", "loom_dagster/search/lexical.py", "publish_many"),
    ("    vector generation written", "loom_dagster/search/vector.py", "publish_many"),
    ("    marked as written (catalog)", "loom_dagster/catalog/marks.py", "mark_written"),
    ("  partitions left (leave_partitions)", "loom_dagster/assets/live.py", "leave_partitions"),
    (
        "vectors in sync (sync_vectors, all calls)",
        "loom_dagster/pipeline/publishing.py",
        "sync_vectors",
    ),
    ("prune partitions", "loom_dagster/api/cleanup.py", "prune_partitions_now"),
]


def phase_seconds(stats: pstats.Stats) -> dict[str, float]:
    found = dict.fromkeys((label for label, _, _ in PHASES), 0.0)
    for (path, _, name), (_, _, _, cumulative, _) in stats.stats.items():  # type: ignore[attr-defined]
        for label, suffix, function in PHASES:
            if name == function and path.replace("\\", "/").endswith(suffix):
                found[label] += cumulative
    return found


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--file-bytes", type=int, default=0)
    parser.add_argument("--scratch-root", type=Path)
    parser.add_argument("--dump", type=Path, help="write the raw profile here (pstats format)")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--into", nargs=2, type=Path, metavar=("HOME", "FOLDER"))
    args = parser.parse_args()
    warnings.filterwarnings("ignore")

    from loom_dagster import api, runs
    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL

    # The runs in this thread, so the profile holds them (no signal handling is needed here).
    runs.run_stoppably = lambda work, on_stop: work()  # type: ignore[assignment]
    if args.scratch_root:
        args.scratch_root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="ingest-profile-", dir=args.scratch_root) as scratch:
        if args.into:
            home, folder = (path.resolve() for path in args.into)
            fresh_home(home.parent, home.name)
            name = f"profiled-{int(time.time())}.md"
            (folder / name).write_text(f"# {name}\n\nThe keeper logged profiledword at the lamp.\n")
            os.utime(folder / name, (time.time() - 60, time.time() - 60))
            args.files = 1
        else:
            folder = make_folder(Path(scratch) / "folder", args.files, file_bytes=args.file_bytes)
        with reference_extractor() as service:
            os.environ[ENV_URL], os.environ[ENV_TOKEN] = service.url, service.token
            if not args.into:
                fresh_home(Path(scratch), "home")
            profile = cProfile.Profile()
            before, started = written_bytes(), time.perf_counter()
            profile.enable()
            report = api.ingest_folder(folder, name=None if args.into else "bench")
            profile.disable()
            seconds, written = time.perf_counter() - started, written_bytes() - before
    assert report.count("published") == args.files, f"not every file published: {report}"
    if args.dump:
        profile.dump_stats(str(args.dump))
    stats = pstats.Stats(profile)
    print(
        f"{args.files} files through loom ingest: {seconds:.1f} s wall ({seconds * 1000 / args.files:.1f} ms "
        f"a file, profiled), {written / args.files / 1000:.0f} kB written a file, load {load()}"
    )
    print(f"{'phase (inclusive)':48}{'s':>8}{'ms/file':>9}")
    for label, value in phase_seconds(stats).items():
        print(f"{label:48}{value:8.1f}{value * 1000 / args.files:9.1f}")
    print()
    stats.sort_stats("tottime").print_stats(args.top)


if __name__ == "__main__":
    main()
