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

With `--synthetic N`, each home's folder also holds N files already published before its
command starts: the `--files` real ones through `loom ingest`, then N more grown by
bench/synthetic_home.py (on disk, in the catalog, both search indexes and Dagster's instance;
its docstring says what is synthetic). The drops wait for the folder sensor's first whole scan
of the folder (a tick whose cursor records it), and the bench checks that nothing was queued
by then: the home is consistent, every file known and materialized. With `--polling`, a second
home of this checkout runs the same command with LOOM_WATCHER=0 (no watcher: the sensor's
polling scan alone finds the drops), and the drops alternate between the two.

    .venv/bin/python bench/freshness.py --command watch --synthetic 100000 --polling --drops 20
"""

from __future__ import annotations

import argparse
import hashlib
import json
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
sys.path.insert(0, str(REPO))
LOOM = Path(sys.executable).with_name("loom")
SOURCE = "docs"  # the folder's name, so its source's


def loom(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(LOOM), *args], env=env, capture_output=True, text=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def note_text(name: str, word: str) -> str:
    return f"# {name}\n\nThe keeper logged {word} at the lamp room.\n"


def note(folder: Path, name: str, word: str) -> Path:
    path = folder / name
    path.write_text(note_text(name, word))
    return path


def searchable(env: dict[str, str], word: str) -> bool:
    found = loom(env, "search", word)
    return found.returncode == 0 and word in found.stdout


def stages(env: dict[str, str], name: str, data: bytes) -> dict[str, float]:
    """When the run that took `name` (at these bytes) was created and started, and when its
    `original` and `published` were materialized (absolute times), from the instance."""
    from dagster import AssetKey, AssetRecordsFilter, DagsterInstance

    from loom_dagster.sources.keys import revision_key

    key = revision_key(SOURCE, name, hashlib.sha256(data).hexdigest())
    out: dict[str, float] = {}
    with DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        for label, asset in (
            ("original", ["loom", "original"]),
            ("published", ["loom", "published"]),
        ):
            records = instance.fetch_materializations(
                AssetRecordsFilter(asset_key=AssetKey(asset), asset_partitions=[key]), limit=1
            ).records
            for record in records:
                out[label] = record.timestamp
                if label == "original":
                    run = instance.get_run_record_by_id(record.run_id)
                    if run is not None:
                        out["run created"] = run.create_timestamp.timestamp()
                    out.update(run_events(instance, record.run_id))
    return out


def folder_cursor(env: dict[str, str]) -> dict[str, Any]:
    """The folder sensor's cursor as its last tick left it ({} before its first)."""
    from dagster import DagsterInstance
    from dagster._core.scheduler.instigation import InstigatorType

    with DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        for state in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR):
            if state.name == "loom_folders" and state.instigator_data is not None:
                cursor = getattr(state.instigator_data, "cursor", None)
                return json.loads(cursor) if cursor else {}
    return {}


def runs_since(env: dict[str, str], since: float) -> int:
    """Runs created in the instance after `since` (what the daemon's sensors asked for)."""
    from datetime import UTC, datetime

    from dagster import DagsterInstance, RunsFilter

    with DagsterInstance.from_config(env["DAGSTER_HOME"]) as instance:
        after = datetime.fromtimestamp(since, tz=UTC)
        return len(instance.get_run_records(RunsFilter(created_after=after)))


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
    (None: this one; a folder: an older copy, put first on PYTHONPATH); with `watcher` False,
    LOOM_WATCHER=0 (the polling scan alone); with `synthetic`, that many more files published
    before the command starts (see the module's docstring)."""

    def __init__(
        self,
        label: str,
        command: str,
        files: int,
        source: Path | None,
        *,
        watcher: bool = True,
        synthetic: int = 0,
        reuse: Path | None = None,
    ) -> None:
        self.label = label
        self.command = command
        self.watcher = watcher
        self.synthetic = synthetic
        self.work = reuse or Path(tempfile.mkdtemp(prefix=f"loom-fresh-{label}-"))
        home = self.work / "home"
        self.folder = self.work / SOURCE
        # A reused home keeps its earlier drops: the next ones are new files after them.
        self.first_drop = len(list(self.folder.glob("drop-*.md"))) if reuse else 0
        if reuse is None:
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
        if not watcher:
            self.env["LOOM_WATCHER"] = "0"
        if source is not None:
            self.env["PYTHONPATH"] = str(source)
        self.last_old = f"oldword{label}{files - 1}"
        self.grown: dict[str, float] = {}
        if reuse is None:
            added = loom(self.env, "sources", "add", str(self.folder))
            assert added.returncode == 0, added.stderr
            if synthetic:
                self.grow(files)
        elif synthetic:
            self.last_old = f"synword{label}{synthetic - 1}"
        line = [str(LOOM), command] + (["--port", str(free_port())] if command == "ui" else [])
        self.started = time.time()
        # Its own folder as the working directory: Dagster puts it first on the code's path.
        with open(self.work / "command.log", "wb") as log:
            self.process = subprocess.Popen(
                line, env=self.env, cwd=self.work, stdout=log, stderr=subprocess.STDOUT
            )
        self.rows: list[dict[str, float]] = []
        self.queued_at_start: int | None = None

    def grow(self, files: int) -> None:
        """The real files published by `loom ingest`, then the synthetic ones grown."""
        from bench.synthetic_home import grow_folder

        started = time.perf_counter()
        ingest = loom(self.env, "ingest", str(self.folder))
        assert ingest.returncode == 0, ingest.stdout + ingest.stderr
        self.grown["real files ingested"] = round(time.perf_counter() - started, 1)
        label = self.label

        def text(path: str, n: int) -> tuple[str, str]:
            word = f"oldword{label}0" if n < 0 else f"synword{label}{n}"
            return note_text(path, word), word

        self.grown.update(
            grow_folder(
                self.env,
                SOURCE,
                "old-000000.md",
                self.synthetic,
                text,
                say=lambda line: print(f"{label}: {line}", flush=True),
            )
        )
        self.last_old = f"synword{label}{self.synthetic - 1}"
        # A home grown past the partition window in one go (LOOM_PARTITION_WINDOW) would be
        # brought back within it by the housekeeping ticks, 1,000 partitions a tick, while the
        # drops are timed: a user's home gets there as it grows, or at once with this command.
        started = time.perf_counter()
        compacted = loom(self.env, "partitions", "compact")
        assert compacted.returncode == 0, compacted.stdout + compacted.stderr
        self.grown["partitions compacted"] = round(time.perf_counter() - started, 1)
        print(f"{label}: {compacted.stdout.strip().splitlines()[-1]}", flush=True)

    def ready(self) -> bool:
        """Published, and with a synthetic folder, scanned whole once by the folder sensor."""
        if self.process.poll() is not None:
            raise SystemExit(f"{self.label} ended; see {self.work}/command.log")
        if self.synthetic:
            if folder_cursor(self.env).get("scanned", {}).get(SOURCE, 0) < self.started:
                return False
            if self.queued_at_start is None:
                self.queued_at_start = runs_since(self.env, self.started)
        return searchable(self.env, self.last_old)

    def drop(self, n: int, timeout: float) -> None:
        n += self.first_drop
        word = f"freshword{self.label}{n}x{os.getpid()}"
        name = f"drop-{n:03}.md"
        load = os.getloadavg()[0]
        written = time.time()
        path = note(self.folder, name, word)
        while not searchable(self.env, word):
            if time.time() - written > timeout:
                print(f"{self.label} {name}: not searchable within {timeout:.0f} s")
                return
        found = time.time()
        row = {
            "written": written,
            **stages(self.env, name, path.read_bytes()),
            "searchable": found,
            "load": load,
        }
        self.rows.append(row)
        print(
            f"{self.label:<6} {name}: {found - written:5.1f} s  "
            + "  ".join(f"{k} +{row[k] - written:.1f}" for k in STAGES if k in row)
            + f"  (load {load:.1f})",
            flush=True,
        )

    def stop(self) -> None:
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def summary(self, files: int) -> dict[str, Any]:
        latencies = sorted(r["searchable"] - r["written"] for r in self.rows)
        out: dict[str, Any] = {
            "label": self.label,
            "command": self.command,
            "watcher": self.watcher,
            "files": files + self.synthetic,
            "synthetic": self.synthetic,
            "grown_s": self.grown,
            "queued_at_start": self.queued_at_start,
            "drops": len(latencies),
            "rows": self.rows,
        }
        if not latencies:
            return out
        p = (
            statistics.quantiles(latencies, n=100, method="inclusive")
            if len(latencies) > 1
            else latencies * 99
        )
        loads = [r["load"] for r in self.rows]
        out.update(
            p50=statistics.median(latencies),
            p95=p[94],
            p99=p[98],
            max=latencies[-1],
            load=(min(loads), max(loads)),
        )
        watching = "watcher" if self.watcher else "no watcher (LOOM_WATCHER=0)"
        print(
            f"{self.label}: loom {self.command}, {watching}, {files + self.synthetic} files, "
            f"{len(latencies)} drops: p50 {out['p50']:.1f} s, p95 {out['p95']:.1f} s, "
            f"p99 {out['p99']:.1f} s, max {latencies[-1]:.1f} s "
            f"(load {min(loads):.1f} to {max(loads):.1f})"
        )
        if self.synthetic:
            print(f"  runs queued by the time of the first whole scan: {self.queued_at_start}")
        medians = {}
        for stage in (*STAGES, "searchable"):
            values = [r[stage] - r["written"] for r in self.rows if stage in r]
            if values:
                medians[stage] = statistics.median(values)
                print(f"  {stage:<12} median +{medians[stage]:.1f} s after the write")
        out["stage_medians"] = medians
        print(f"  work folder: {self.work}")
        return out


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
    parser.add_argument(
        "--synthetic",
        type=int,
        default=0,
        help="files published before the command starts, beside --files (bench/synthetic_home.py)",
    )
    parser.add_argument(
        "--polling",
        action="store_true",
        help="a second home of this checkout with LOOM_WATCHER=0 (the polling scan alone)",
    )
    parser.add_argument("--ready-timeout", type=float, default=900.0)
    parser.add_argument(
        "--reuse",
        type=Path,
        nargs="+",
        default=[],
        help="the work folders an earlier run of the same options left, one per home in order "
        "(this, then poll): their homes are started again as they are, and the drops go on",
    )
    parser.add_argument("--out", type=Path, help="the summaries and every drop, as JSON")
    args = parser.parse_args()

    print(f"nproc {os.cpu_count()}, load average {os.getloadavg()}", flush=True)
    reuse = [*args.reuse, None, None]
    stacks = [
        Stack("this", args.command, args.files, None, synthetic=args.synthetic, reuse=reuse[0])
    ]
    if args.polling:
        stacks.append(
            Stack(
                "poll",
                args.command,
                args.files,
                None,
                watcher=False,
                synthetic=args.synthetic,
                reuse=reuse[1],
            )
        )
    if args.baseline:
        stacks.insert(
            0, Stack("base", "ui", args.files, args.baseline.resolve(), synthetic=args.synthetic)
        )
    try:
        deadline = time.time() + args.ready_timeout
        for stack in stacks:
            while not stack.ready():
                if time.time() > deadline:
                    raise SystemExit(f"{stack.label}: not ready; see {stack.work}/command.log")
                time.sleep(1.0)
            print(
                f"{stack.label}: ready {time.time() - stack.started:.0f} s after its start"
                + (f", {stack.queued_at_start} runs queued" if stack.synthetic else ""),
                flush=True,
            )
        for n in range(args.drops):
            for stack in stacks:
                stack.drop(n, args.timeout)
                time.sleep(args.gap)
    finally:
        for stack in stacks:
            stack.stop()
    print(f"nproc {os.cpu_count()}, load average {os.getloadavg()}")
    summaries = [stack.summary(args.files) for stack in stacks]
    if args.out:
        machine = {
            "nproc": os.cpu_count(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        }
        args.out.write_text(json.dumps({"machine": machine, "stacks": summaries}, indent=1))


if __name__ == "__main__":
    main()
