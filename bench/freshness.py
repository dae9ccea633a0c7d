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

With `--baseline DIR` (a copy of an older checkout), that checkout's `loom ui` runs at the same
time on a home of its own and the drops alternate between the two, so both see the same load.

    git archive main | tar -x -C /tmp/loom-main
    .venv/bin/python bench/freshness.py --baseline /tmp/loom-main --drops 10
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
from typing import Any

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
        for label, asset in (
            ("original", ["loom", "original"]),
            ("published", ["loom", "published"]),
        ):
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
                        out.update(run_events(instance, record.run_id))
                    break
    return out


# The run's own record of its start, in order: the queue let it go, the launcher handed it to
# the code server, the run's process began, its first step began.
RUN_EVENTS = {
    "RUN_DEQUEUED": "dequeued",
    "RUN_STARTING": "launched",
    "RUN_START": "run started",
    "STEP_START": "first step",
}
STAGES = (
    "run created",
    "dequeued",
    "launched",
    "run started",
    "first step",
    "original",
    "published",
)


def run_events(instance: Any, run_id: str) -> dict[str, float]:
    found: dict[str, float] = {}
    for entry in instance.all_logs(run_id):
        event = entry.dagster_event
        label = RUN_EVENTS.get(event.event_type.name) if event is not None else None
        if label and label not in found:
            found[label] = entry.timestamp
    return found


class Stack:
    """A home, its folder, and `loom COMMAND` running on it, from the checkout at `source`
    (None: this one; a folder: an older copy, put first on PYTHONPATH)."""

    def __init__(self, label: str, command: str, files: int, source: Path | None) -> None:
        self.label = label
        self.work = Path(tempfile.mkdtemp(prefix=f"loom-fresh-{label}-"))
        home = self.work / "home"
        self.folder = self.work / "docs"
        self.folder.mkdir()
        for n in range(files):
            note(self.folder, f"old-{n:06}.md", f"oldword{label}{n}")
        past = time.time() - 120
        for path in self.folder.iterdir():
            os.utime(path, (past, past))
        self.env = {
            **os.environ,
            "LOOM_HOME": str(home),
            "DAGSTER_HOME": str(home / "dagster"),
            "LOOM_EMBEDDER": os.environ.get("LOOM_EMBEDDER", "ngram"),
        }
        if source is not None:
            self.env["PYTHONPATH"] = str(source)
        added = loom(self.env, "sources", "add", str(self.folder))
        assert added.returncode == 0, added.stderr
        line = [str(LOOM), command] + (["--port", str(free_port())] if command == "ui" else [])
        self.started = time.time()
        # Its own folder as the working directory: Dagster puts it first on the code's path.
        with open(self.work / "command.log", "wb") as log:
            self.process = subprocess.Popen(
                line, env=self.env, cwd=self.work, stdout=log, stderr=subprocess.STDOUT
            )
        self.last_old = f"oldword{label}{files - 1}"
        self.rows: list[dict[str, float]] = []

    def ready(self) -> bool:
        if self.process.poll() is not None:
            raise SystemExit(f"{self.label} ended; see {self.work}/command.log")
        return searchable(self.env, self.last_old)

    def drop(self, n: int, timeout: float) -> None:
        word = f"freshword{self.label}{n}x{os.getpid()}"
        name = f"drop-{n:03}.md"
        written = time.time()
        note(self.folder, name, word)
        while not searchable(self.env, word):
            if time.time() - written > timeout:
                print(f"{self.label} {name}: not searchable within {timeout:.0f} s")
                return
        found = time.time()
        row = {"written": written, **stages(self.env, name), "searchable": found}
        self.rows.append(row)
        print(
            f"{self.label:<6} {name}: {found - written:5.1f} s  "
            + "  ".join(f"{k} +{row[k] - written:.1f}" for k in STAGES if k in row),
            flush=True,
        )

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def summary(self, command: str, files: int) -> None:
        latencies = sorted(r["searchable"] - r["written"] for r in self.rows)
        if not latencies:
            return
        p = (
            statistics.quantiles(latencies, n=100, method="inclusive")
            if len(latencies) > 1
            else latencies * 99
        )
        print(
            f"{self.label}: loom {command}, {files} files, {len(latencies)} drops: "
            f"p50 {statistics.median(latencies):.1f} s, p95 {p[94]:.1f} s, "
            f"p99 {p[98]:.1f} s, max {latencies[-1]:.1f} s"
        )
        for stage in STAGES:
            values = [r[stage] - r["written"] for r in self.rows if stage in r]
            if values:
                print(f"  {stage:<12} median +{statistics.median(values):.1f} s after the write")
        print(f"  work folder: {self.work}")


def main() -> None:
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the commands are stopped too
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--command", choices=("ui", "watch"), default="ui")
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--drops", type=int, default=10)
    parser.add_argument("--gap", type=float, default=3.0, help="seconds between two drops")
    parser.add_argument("--timeout", type=float, default=180.0)
    parser.add_argument(
        "--baseline",
        type=Path,
        help="a copy of an older checkout (`git archive main | tar -x -C DIR`): its `loom ui` runs "
        "beside this one's, on a home of its own, the drops alternating between the two",
    )
    args = parser.parse_args()

    stacks = [Stack("this", args.command, args.files, None)]
    if args.baseline:
        stacks.insert(0, Stack("base", "ui", args.files, args.baseline.resolve()))
    try:
        deadline = time.time() + args.timeout * 2
        for stack in stacks:
            while not stack.ready():
                if time.time() > deadline:
                    raise SystemExit(f"{stack.label}: the first files were not published")
                time.sleep(1.0)
            print(f"{stack.label}: first {args.files} files published")
        for n in range(args.drops):
            for stack in stacks:
                stack.drop(n, args.timeout)
                time.sleep(args.gap)
    finally:
        for stack in stacks:
            stack.stop()
    print(f"nproc {os.cpu_count()}, load average {os.getloadavg()}")
    for stack in stacks:
        stack.summary("ui" if stack.label == "base" else args.command, args.files)


if __name__ == "__main__":
    main()
