"""Freshness: a small file dropped in a watched folder, from its write to the first `loom
search` that finds it, under Dagster's daemon as a user runs it (`loom ui` or `loom watch`).

A fresh home gets a folder of `--files` tiny Markdown files, registered with `loom sources add`;
the command starts and publishes them; then `--drops` files are written one at a time, each
with a word no other file has, and `loom search WORD` runs back to back until it finds it. The
time reported is the end of that search (so it includes one `loom search`, about a second).

Each drop is split into its stages from the instance's records: the run that took it created
(the sensor's tick asked for it), started (the run launcher's process is up), `original`
materialized (code loaded, first step done), `published` materialized (the run's last asset),
and searchable.

    .venv/bin/python bench/freshness.py --command ui --drops 10
    .venv/bin/python bench/freshness.py --command watch --drops 10
"""

from __future__ import annotations

import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
LOOM = Path(sys.executable).with_name("loom")


def loom(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LOOM), *args], env=env, capture_output=True, text=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def note(folder: Path, name: str, word: str) -> Path:
    path = folder / name
    path.write_text(f"# {name}\n\nThe keeper logged {word} at the lamp room.\n")
    return path


def searchable(env: dict[str, str], word: str) -> bool:
    found = loom(env, "search", word)
    return found.returncode == 0 and word in found.stdout


def stages(env: dict[str, str], name: str) -> dict[str, float]:
    """When the run that took `name` was created and started, and when its `original` and
    `published` were materialized (absolute times), from the instance."""
    os.environ["DAGSTER_HOME"] = env["DAGSTER_HOME"]
    from dagster import AssetKey, AssetRecordsFilter, DagsterInstance

    from loom_dagster.sources.keys import document_id

    digest = "~" + document_id("docs", name).rsplit("~", 1)[1] + "@"
    out: dict[str, float] = {}
    with DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        for label, asset in (("original", ["loom", "original"]), ("published", ["loom", "published"])):
            records = instance.fetch_materializations(
                AssetRecordsFilter(asset_key=AssetKey(asset)), limit=50
            ).records
            for record in records:
                if digest in (record.partition_key or ""):
                    out[label] = record.timestamp
                    if label == "original":
                        run = instance.get_run_record_by_id(record.run_id)
                        if run is not None:
                            out["run created"] = run.create_timestamp.timestamp()
                            if run.start_time:
                                out["run started"] = run.start_time
                    break
    return out


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the command is stopped too
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--command", choices=("ui", "watch"), default="ui")
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--drops", type=int, default=10)
    parser.add_argument("--gap", type=float, default=3.0, help="seconds between two drops")
    parser.add_argument("--timeout", type=float, default=180.0)
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="loom-fresh-"))
    home = work / "home"
    folder = work / "docs"
    folder.mkdir()
    for n in range(args.files):
        note(folder, f"old-{n:06}.md", f"oldword{n}")
    past = time.time() - 120
    for path in folder.iterdir():
        os.utime(path, (past, past))
    env = {
        **os.environ,
        "LOOM_HOME": str(home),
        "DAGSTER_HOME": str(home / "dagster"),
        "LOOM_EMBEDDER": os.environ.get("LOOM_EMBEDDER", "ngram"),
    }
    added = loom(env, "sources", "add", str(folder))
    assert added.returncode == 0, added.stderr
    command = [str(LOOM), args.command]
    if args.command == "ui":
        command += ["--port", str(free_port())]
    log = open(work / "command.log", "wb")
    started = time.time()
    process = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.time() + args.timeout * 2
        last = f"oldword{args.files - 1}"
        while not searchable(env, last):
            if time.time() > deadline or process.poll() is not None:
                raise SystemExit(f"the first files were not published; see {work}/command.log")
            time.sleep(1.0)
        print(f"first {args.files} files published {time.time() - started:.1f} s after start")
        rows: list[dict[str, float]] = []
        for n in range(args.drops):
            word = f"freshword{n}x{os.getpid()}"
            name = f"drop-{n:03}.md"
            written = time.time()
            note(folder, name, word)
            while not searchable(env, word):
                if time.time() - written > args.timeout:
                    print(f"{name}: not searchable within {args.timeout:.0f} s")
                    break
            found = time.time()
            row = {"written": written, **stages(env, name), "searchable": found}
            rows.append(row)
            print(
                f"{name}: {found - written:5.1f} s  "
                + "  ".join(
                    f"{k} +{row[k] - written:.1f}"
                    for k in ("run created", "run started", "original", "published")
                    if k in row
                ),
                flush=True,
            )
            time.sleep(args.gap)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
    latencies = sorted(r["searchable"] - r["written"] for r in rows)
    if latencies:
        p = statistics.quantiles(latencies, n=100, method="inclusive") if len(latencies) > 1 else latencies * 99
        print(
            f"loom {args.command}, {args.files} files, {len(latencies)} drops, nproc {os.cpu_count()}, "
            f"load {os.getloadavg()[0]:.1f}: p50 {statistics.median(latencies):.1f} s, "
            f"p95 {p[94]:.1f} s, max {latencies[-1]:.1f} s"
        )
        for stage in ("run created", "run started", "original", "published"):
            values = [r[stage] - r["written"] for r in rows if stage in r]
            if values:
                print(f"  {stage:<12} median +{statistics.median(values):.1f} s after the write")
    print(f"work folder: {work}")


if __name__ == "__main__":
    main()
