"""A mixed load in the seed's manner (issue 39), judged by the levels of bench/load_levels.py.
Over 500 lines: one bench, its load, its Dagster readings and its report read best together.

Calls arrive at a set rate whether or not earlier ones answered (open loop); the bench reports
p50, p95 and p99 per operation, errors and refusals, and exits non-zero past a level.

On a fresh LOOM_HOME it registers a folder (`loom sources add`), fills it with --files tiny
Markdown files and a small CSV (the dataset the queries read) and publishes them (`loom ingest`,
the pre-published folder). Then, in one run:

1. idle: the searches and queries alone for --idle seconds, no ingest running (the baseline);
2. load: Dagster's daemon started as a user starts it (`start_ingest`: the folder sensor and
   automation launch the runs), and at once the same searches and queries plus small files
   written into the watched folder at their rate; a 200-page PDF and a 100,000-row CSV are
   dropped at a fifth of the run;
3. --burst N (optional): N files dropped at once, the searches and queries kept running until
   every one is searchable or --burst-wait passes.

The operations: `search (resident)`, the home's resident searcher over its socket as `loom
search` asks it; `search (serve HTTP)`, `query (serve HTTP)` and `sql (serve HTTP)`, a `loom serve
--http` process's JSON API; `sql (loom sql)`, the command itself. A call's latency counts from
when it was due, so a call held up behind earlier ones counts the wait. A refusal is a 429 or 503
(serve), or the resident not answering (`loom search` would then search in its own process).

For each small file: the time from its write to the first search that finds it (probes, in
batches of pending files' unique words, under `incoming/`), split into stages read from the
Dagster instance after the run: seen (the start of the folder sensor's tick that added its
partition), partition added (that tick's end), run queued (the run's creation), run started,
original, extracted (loom/artifact's materialization), published (loom/published's), searchable.
The run queue's depth (queued and started runs) is sampled every second.

    nice .venv/bin/python bench/load.py [--duration 120] [--idle 60] [--files 1000]
        [--rate search_resident=5 --rate file=2 ...] [--burst 1000] [--out FILE]

Prints a Markdown table and writes JSON (bench/results/load.json by default, not committed).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import random
import secrets
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.load_levels import LEVELS, MEASURE_LEVEL  # noqa: E402
from bench.serving import serving  # noqa: E402

LOOM = str(Path(sys.executable).with_name("loom"))
RESULTS = REPO / "bench" / "results" / "load.json"
DEFAULT_RATES = {
    "search (resident)": 2.0,
    "search (serve HTTP)": 1.0,
    "query (serve HTTP)": 0.5,
    "sql (serve HTTP)": 0.5,
    # Each call is a new Python process: on 2 cores a higher rate is itself the load.
    "sql (loom sql)": 0.05,
    "file": 2.0,
}
RATE_NAMES = {
    "search_resident": "search (resident)",
    "search_http": "search (serve HTTP)",
    "query_http": "query (serve HTTP)",
    "sql_http": "sql (serve HTTP)",
    "sql_cli": "sql (loom sql)",
    "file": "file",
}
WORDS = (
    "lighthouse keeper harbour tide ledger engine valve pressure boiler signal lantern rope "
    "anchor vessel cargo manifest storm beacon pier crane quay gauge fuel relay turbine "
    "compass chart sextant hull deck mast sail rudder keel bilge galley cabin bridge"
).split()
STAGES = (
    "seen",
    "partition added",
    "run queued",
    "run started",
    "original",
    "extracted",
    "published",
    "searchable",
)
INCOMING = "incoming"
PROBE_BATCH = 20
PROBE_EVERY_S = 0.5


def ms_percentiles(samples: list[float]) -> dict[str, float | None]:
    """p50/p95/p99 in milliseconds of samples in seconds (nearest rank)."""
    if not samples:
        return {"p50_ms": None, "p95_ms": None, "p99_ms": None}
    ordered = sorted(samples)

    def at(share: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000, 1)

    return {"p50_ms": at(0.50), "p95_ms": at(0.95), "p99_ms": at(0.99)}


@dataclass
class Tally:
    """One operation's calls in one phase."""

    samples: list[float] = field(default_factory=list)
    errors: int = 0
    refused: int = 0
    first_error: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, seconds: float, outcome: str, detail: str = "") -> None:
        with self.lock:
            self.samples.append(seconds)
            if outcome == "error":
                self.errors += 1
                self.first_error = self.first_error or detail[:300]
            elif outcome == "refused":
                self.refused += 1

    def summary(self) -> dict[str, Any]:
        return {
            "calls": len(self.samples),
            **ms_percentiles(self.samples),
            "errors": self.errors,
            "refused": self.refused,
            **({"first_error": self.first_error} if self.first_error else {}),
        }


# The pieces: a home, its folder, the services --------------------------------------------


def run_loom(env: dict[str, str], *args: str, timeout: float = 3600) -> str:
    done = subprocess.run(
        [LOOM, *args], env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise SystemExit(
            f"loom {' '.join(args)} failed ({done.returncode}):\n{done.stderr[-2000:]}"
        )
    return done.stdout


def tiny_files(folder: Path, count: int) -> float:
    """`count` tiny Markdown files, written in the past (settled); the seconds it took."""
    started = time.perf_counter()
    rng = random.Random(11)
    past = time.time() - 3600
    for n in range(count):
        sub = folder / f"d{n // 1000:03d}"
        if n % 1000 == 0:
            sub.mkdir(parents=True, exist_ok=True)
        path = sub / f"note-{n:06d}.md"
        text = " ".join(rng.choices(WORDS, k=12))
        path.write_text(f"# Note {n}\n\n{text}.\n")
        os.utime(path, (past, past))
    return round(time.perf_counter() - started, 1)


def metrics_csv(path: Path, rows: int) -> None:
    lines = ["host,day,value"]
    lines += [
        f"host-{i % 20:02d},2026-01-{1 + i % 28:02d},{(i * 37) % 1000}.{i % 100:02d}"
        for i in range(rows)
    ]
    path.write_text("\n".join(lines) + "\n")


def big_pdf(path: Path, pages: int, word: str) -> None:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    rng = random.Random(7)
    pdf = canvas.Canvas(str(path), pagesize=A4)
    for page in range(pages):
        pdf.setFont("Helvetica", 10)
        y = 800
        pdf.drawString(50, y, f"Page {page + 1} {word if page == 0 else ''}")
        for _ in range(40):
            y -= 18
            pdf.drawString(50, y, " ".join(rng.choices(WORDS, k=14)))
        pdf.showPage()
    pdf.save()


def big_csv(path: Path, rows: int, word: str) -> None:
    with path.open("w") as out:
        out.write("id,site,reading,note\n")
        out.write(f"0,{word},0.0,first\n")
        for i in range(1, rows):
            out.write(f"{i},site-{i % 97},{(i * 13) % 10007 / 10},{WORDS[i % len(WORDS)]}\n")


def sha_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@contextlib.contextmanager
def start_ingest(
    env: dict[str, str], log: Path, nice: int = 0
) -> Iterator[subprocess.Popen[bytes]]:
    """Ingest as a user runs it on a server: `loom watch` (Dagster's daemon with the folder
    sensor and automation, their runs launched as processes of its own, and the folder watcher
    beside it), at CPU niceness `nice`, which every process it starts inherits (as `nice -n 10
    loom watch` would). The one place the bench starts ingest; ended with every process it
    started."""
    from tests.integration.daemon import stop_group

    with open(log, "wb") as out:
        watch = subprocess.Popen(
            [*(["nice", "-n", str(nice)] if nice else []), LOOM, "watch"],
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, **env},
        )
    try:
        yield watch
    finally:
        stop_group(watch)


# The load ----------------------------------------------------------------------------------


class Load:
    """The operations, each called at its rate on a schedule of its own."""

    def __init__(
        self,
        env: dict[str, str],
        url: str,
        token: str,
        dataset: str,
        rates: dict[str, float],
        folder: Path,
    ) -> None:
        from loom_dagster.search.resident import ResidentClient

        self.env = env
        self.url = url
        self.http = httpx.Client(headers={"Authorization": f"Bearer {token}"}, timeout=30)
        self.resident = ResidentClient(env)
        self.resident.answer_timeout = 30
        self.dataset = dataset
        self.rates = rates
        self.folder = folder
        self.rng = random.Random(5)
        self.pool = ThreadPoolExecutor(max_workers=64)
        self.written: dict[str, float] = {}  # incoming path -> write time (epoch)
        self.words: dict[str, str] = {}  # incoming path -> its unique word
        self.found: dict[str, float] = {}  # incoming path -> first search that found it
        self.probes = Tally()
        self.files_lock = threading.Lock()
        self.counter = 0

    def query_text(self) -> str:
        return " ".join(self.rng.choices(WORDS, k=self.rng.randint(2, 4)))

    def search_resident(self) -> tuple[str, str]:
        from loom_dagster.search.resident import SEARCH_FIELDS

        fields = {name: kind() for name, kind in SEARCH_FIELDS.items()}
        fields.update(text=self.query_text(), limit="10", json=True)
        answer = self.resident.search(fields)
        if answer is None:
            return "refused", "the resident did not answer"
        return ("ok", "") if answer.status == 0 else ("error", answer.stderr)

    def _post(self, path: str, body: dict[str, Any]) -> tuple[str, str]:
        response = self.http.post(f"{self.url}{path}", json=body)
        if response.status_code in (429, 503):
            return "refused", response.text
        return ("ok", "") if response.status_code == 200 else ("error", response.text)

    def search_http(self) -> tuple[str, str]:
        return self._post("/v1/search", {"query": self.query_text(), "k": 10})

    def query_http(self) -> tuple[str, str]:
        plan = {
            "datasets": [{"alias": "m", "dataset": self.dataset}],
            "groups": [{"alias": "m", "column": "host"}],
            "aggregates": [{"fn": "sum", "alias": "m", "column": "value"}, {"fn": "count"}],
        }
        return self._post("/v1/query", {"plan": plan})

    def sql_statement(self) -> str:
        return (
            f'SELECT host, sum(value), count(*) FROM "{self.dataset}" '
            f"WHERE value > {self.rng.randint(0, 900)} GROUP BY host ORDER BY host"
        )

    def sql_http(self) -> tuple[str, str]:
        return self._post("/v1/sql", {"statement": self.sql_statement()})

    def sql_cli(self) -> tuple[str, str]:
        done = subprocess.run(
            [LOOM, "sql", self.sql_statement()],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        return ("ok", "") if done.returncode == 0 else ("error", done.stderr)

    def write_file(self) -> tuple[str, str]:
        with self.files_lock:
            self.counter += 1
            n = self.counter
        word = f"zq{secrets.token_hex(5)}"
        rel = f"{INCOMING}/new-{n:05d}.md"
        path = self.folder / rel
        path.write_text(f"# New note {n}\n\n{word} {' '.join(self.rng.choices(WORDS, k=20))}.\n")
        with self.files_lock:
            self.written[rel] = time.time()
            self.words[rel] = word
        return "ok", ""

    def call(self, name: str) -> Callable[[], tuple[str, str]]:
        return {
            "search (resident)": self.search_resident,
            "search (serve HTTP)": self.search_http,
            "query (serve HTTP)": self.query_http,
            "sql (serve HTTP)": self.sql_http,
            "sql (loom sql)": self.sql_cli,
            "file": self.write_file,
        }[name]

    def run(
        self,
        seconds: float,
        tallies: dict[str, Tally],
        files: bool,
        stop: threading.Event | None = None,
    ) -> None:
        """Every operation at its rate for `seconds` (or until `stop`), open loop: a call is
        sent when due, on a pool wide enough that earlier calls do not hold it back."""
        start = time.monotonic()
        due: dict[str, float] = {}
        for name, rate in self.rates.items():
            if rate > 0 and (files or name != "file"):
                due[name] = start + random.Random(name).random() / rate
                tallies.setdefault(name, Tally())
        while due:
            name, when = min(due.items(), key=lambda item: item[1])
            if when - start > seconds or (stop is not None and stop.is_set()):
                break
            pause = when - time.monotonic()
            if pause > 0:
                time.sleep(pause)
            self.pool.submit(self._timed, name, when, tallies[name])
            due[name] = when + 1 / self.rates[name]

    def _timed(self, name: str, due: float, tally: Tally) -> None:
        try:
            outcome, detail = self.call(name)()
        except Exception as error:  # a call that failed on the client's side is an error
            outcome, detail = "error", f"{type(error).__name__}: {error}"
        tally.add(time.monotonic() - due, outcome, detail)

    def pending(self) -> list[str]:
        with self.files_lock:
            return sorted(set(self.written) - set(self.found))

    def probe_loop(self, stop: threading.Event) -> None:
        """The first search that finds each written file: its unique word, a batch of pending
        files at a time, searched under `incoming/` through the resident (as `loom search`)."""
        from loom_dagster.search.resident import SEARCH_FIELDS

        at = 0
        while not stop.is_set():
            pending = self.pending()
            if not pending:
                time.sleep(0.1)
                continue
            at = at % len(pending)
            batch = (pending[at:] + pending[:at])[:PROBE_BATCH]
            at += PROBE_BATCH
            fields = {name: kind() for name, kind in SEARCH_FIELDS.items()}
            fields.update(
                text=" ".join(self.words[p] for p in batch),
                limit="100",
                json=True,
                path=f"{INCOMING}/",
            )
            started = time.monotonic()
            try:
                answer = self.resident.search(fields)
            except Exception as error:  # counted, and the probing goes on
                self.probes.add(time.monotonic() - started, "error", repr(error))
                continue
            now = time.time()
            if answer is None or answer.status != 0:
                self.probes.add(
                    time.monotonic() - started,
                    "refused" if answer is None else "error",
                    "" if answer is None else answer.stderr,
                )
                time.sleep(PROBE_EVERY_S)
                continue
            self.probes.add(time.monotonic() - started, "ok")
            hits = json.loads(answer.stdout).get("hits", [])
            with self.files_lock:
                for hit in hits:
                    path = hit.get("path")
                    if path in self.words and path not in self.found:
                        self.found[path] = now
            time.sleep(max(0.0, PROBE_EVERY_S - (time.monotonic() - started)))


# What Dagster recorded --------------------------------------------------------------------


def queue_sampler(stop: threading.Event, samples: list[dict[str, float]], t0: float) -> None:
    from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

    instance = DagsterInstance.from_config(os.environ["DAGSTER_HOME"])
    queued = [DagsterRunStatus.QUEUED, DagsterRunStatus.NOT_STARTED]
    running = [DagsterRunStatus.STARTING, DagsterRunStatus.STARTED]
    while not stop.is_set():
        try:
            samples.append(
                {
                    "t_s": round(time.time() - t0, 1),
                    "queued": instance.get_runs_count(RunsFilter(statuses=queued)),
                    "running": instance.get_runs_count(RunsFilter(statuses=running)),
                }
            )
        except Exception:  # a busy SQLite read: the next sample
            pass
        stop.wait(1.0)


def stage_times(keys: dict[str, str]) -> dict[str, dict[str, float]]:
    """For each revision key: the epoch time of each stage Dagster recorded (see the module's
    docstring); a stage not reached is missing."""
    from dagster import AssetKey, AssetRecordsFilter, DagsterInstance
    from dagster._core.scheduler.instigation import InstigatorType

    wanted = set(keys)
    found: dict[str, dict[str, float]] = {key: {} for key in wanted}
    with DagsterInstance.from_config(os.environ["DAGSTER_HOME"]) as instance:
        for state in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR):
            if state.instigator_name != "loom_folders":
                continue
            ticks = instance.get_ticks(state.instigator_origin_id, state.selector_id, limit=5000)
            for tick in ticks:
                for result in tick.tick_data.dynamic_partitions_request_results or []:
                    for key in result.added_partitions or []:
                        if key in wanted:
                            found[key]["seen"] = tick.timestamp
                            found[key]["partition added"] = tick.end_timestamp or tick.timestamp
        run_of: dict[str, str] = {}
        for record in instance.fetch_planned_materializations(
            AssetRecordsFilter(
                asset_key=AssetKey(["loom", "original"]), asset_partitions=sorted(wanted)
            ),
            limit=10_000,
        ).records:
            event = record.event_log_entry.dagster_event
            partition = event.partition if event is not None else None
            if partition in wanted and partition not in run_of:
                run_of[partition] = record.run_id
        runs = {
            r.dagster_run.run_id: r
            for r in instance.get_run_records()
            if r.dagster_run.run_id in set(run_of.values())
        }
        for key, run_id in run_of.items():
            run = runs.get(run_id)
            if run is not None:
                found[key]["run queued"] = run.create_timestamp.timestamp()
                # The tick adds the partitions before it submits their runs, and ends after.
                if "partition added" in found[key]:
                    found[key]["partition added"] = min(
                        found[key]["partition added"], found[key]["run queued"]
                    )
                if run.start_time:
                    found[key]["run started"] = run.start_time
        for stage, asset in (
            ("original", "original"),
            ("extracted", "artifact"),
            ("published", "published"),
        ):
            records = instance.fetch_materializations(
                AssetRecordsFilter(
                    asset_key=AssetKey(["loom", asset]), asset_partitions=sorted(wanted)
                ),
                limit=10_000,
            ).records
            for record in records:
                if record.partition_key in wanted:
                    found[record.partition_key].setdefault(stage, record.timestamp)
    return found


def file_report(
    load: Load, names: dict[str, str], sha_of: Callable[[Path], str], source: str
) -> dict[str, Any]:
    """The written files' write-to-searchable times, and each stage's share (from the write)."""
    from loom_dagster.sources.keys import revision_key

    with load.files_lock:
        written, found = dict(load.written), dict(load.found)
    keys = {revision_key(source, rel, sha_of(load.folder / rel)): rel for rel in written}
    stages = stage_times(keys)
    per_stage: dict[str, list[float]] = {stage: [] for stage in STAGES}
    for key, rel in keys.items():
        times = {**stages[key], **({"searchable": found[rel]} if rel in found else {})}
        for stage in STAGES:
            if stage in times:
                per_stage[stage].append(max(0.0, times[stage] - written[rel]))
    return {
        "written": len(written),
        "searchable": len(found),
        "never_found": sorted(set(written) - set(found))[:20],
        "write_to_searchable": ms_percentiles([found[r] - written[r] for r in found]),
        "stages_from_write": {
            s: {"reached": len(v), **ms_percentiles(v)} for s, v in per_stage.items()
        },
        "write_to_published": ms_percentiles(per_stage["published"]),
    }


def runs_ended(seconds: float) -> int:
    """Wait up to `seconds` for every queued or started run to end; how many had not."""
    from dagster import DagsterInstance, RunsFilter

    from loom_dagster.sensors import IN_FLIGHT

    deadline = time.monotonic() + seconds
    with DagsterInstance.from_config(os.environ["DAGSTER_HOME"]) as instance:
        while True:
            left = instance.get_runs_count(RunsFilter(statuses=IN_FLIGHT))
            if not left or time.monotonic() > deadline:
                return left
            time.sleep(2)


def failed_runs() -> int:
    from dagster import DagsterInstance, DagsterRunStatus, RunsFilter

    with DagsterInstance.from_config(os.environ["DAGSTER_HOME"]) as instance:
        return instance.get_runs_count(RunsFilter(statuses=[DagsterRunStatus.FAILURE]))


def big_file_times(
    names: dict[str, str],
    source: str,
    sha_of: Callable[[Path], str],
    folder: Path,
    written: dict[str, float],
) -> dict[str, Any]:
    from loom_dagster.sources.keys import revision_key

    keys = {revision_key(source, rel, sha_of(folder / rel)): rel for rel in names.values()}
    stages = stage_times(keys)
    out: dict[str, Any] = {}
    for key, rel in keys.items():
        out[rel] = {
            s: round(t - written[rel], 1)
            for s, t in sorted(stages[key].items(), key=lambda i: i[1])
        }
    return out


# The report --------------------------------------------------------------------------------


def verdicts(rows: dict[str, dict[str, Any]]) -> list[str]:
    """Each measure past its level, as a line; none: every level held."""
    past = []
    for measure, row in rows.items():
        level_name = MEASURE_LEVEL.get(measure)
        if level_name is None:
            continue
        level = LEVELS[level_name]
        for at, bound in (("p95_ms", level.p95_ms), ("p99_ms", level.p99_ms)):
            value = row.get(at)
            if value is None or value > bound:
                past.append(f"{measure}: {at} {value} past {level_name}'s {bound:g}")
        if row.get("errors"):
            past.append(f"{measure}: {row['errors']} errors")
    return past


def markdown(result: dict[str, Any]) -> str:
    def cell(value: Any) -> str:
        return "—" if value is None else f"{value:,.0f}" if isinstance(value, float) else str(value)

    def triple(row: dict[str, Any]) -> str:
        return " | ".join(cell(row.get(at)) for at in ("p50_ms", "p95_ms", "p99_ms"))

    phases = result["phases"]
    head = ["idle", *phases]
    lines = [
        f"Machine: {result['machine']}; load average at the end {result['loadavg']}; "
        f"{result['files_prepublished']} files pre-published. Milliseconds, p50 / p95 / p99.",
        "",
        "| Operation | rate /s | "
        + " | ".join(f"{h} p50 | p95 | p99" for h in head)
        + " | calls | errors | refused | level p95 / p99 |",
        "|---|---|" + "---|---|---|" * len(head) + "---|---|---|---|",
    ]
    final = phases[list(phases)[-1]]["ops"]
    for name, row in final.items():
        level = LEVELS.get(MEASURE_LEVEL.get(name, ""), None)
        columns = [triple(result["idle"].get(name, {}))]
        columns += [triple(phase["ops"].get(name, {})) for phase in phases.values()]
        lines.append(
            f"| {name} | {result['rates'].get(name, '')} | {' | '.join(columns)} | "
            f"{row['calls']} | {row['errors']} | {row['refused']} | "
            f"{f'{level.p95_ms:,.0f} / {level.p99_ms:,.0f}' if level else ''} |"
        )
    for label, phase in phases.items():
        for part in ("files", "burst"):
            files = phase.get(part)
            if not files:
                continue
            drain = f", drained in {files['drain_s']} s" if "drain_s" in files else ""
            lines += [
                "",
                f"{label}, {part}: {files['written']} written, {files['searchable']} "
                f"searchable{drain}",
                "",
                "| Stage (ms from the write) | reached | p50 | p95 | p99 |",
                "|---|---|---|---|---|",
            ]
            for stage, row in files["stages_from_write"].items():
                lines.append(f"| {stage} | {row['reached']} | {triple(row)} |")
            if part == "burst":
                for name, row in phase.get("burst_ops", {}).items():
                    lines.append(f"| during the burst: {name} | {row['calls']} | {triple(row)} |")
        depth = phase.get("queue_depth", [])
        if depth:
            peak = max(depth, key=lambda s: s["queued"] + s["running"])
            lines += [
                "",
                f"{label}: run queue peak {peak['queued']} queued + {peak['running']} running "
                f"at {peak['t_s']} s ({len(depth)} samples in the JSON); large files, s from "
                f"the write: {json.dumps(phase.get('big_files_s_from_write', {}))}",
            ]
    lines += ["", "Past their levels: " + ("; ".join(result["past"]) or "none")]
    return "\n".join(lines)


def loaded_phase(
    load: Load,
    args: argparse.Namespace,
    env: dict[str, str],
    nice: int,
    base: Path,
    folder: Path,
    source: str,
    number: int,
    *,
    burst: int,
) -> dict[str, Any]:
    """The load with ingest running (its daemon started for this phase and stopped after):
    the operations' rows, the files' stages, the large files', the run queue's depth, and the
    burst's when asked for."""
    with load.files_lock:
        load.written, load.found, load.words = {}, {}, {}
    loaded: dict[str, Tally] = {}
    stop = threading.Event()
    depth: list[dict[str, float]] = []
    t0 = time.time()
    out: dict[str, Any] = {}
    big_written: dict[str, float] = {}
    with start_ingest(env, base / f"daemon-{number}.log", nice):
        threads = [
            threading.Thread(target=queue_sampler, args=(stop, depth, t0), daemon=True),
            threading.Thread(target=load.probe_loop, args=(stop,), daemon=True),
        ]
        for thread in threads:
            thread.start()

        def drop_big() -> None:
            time.sleep(args.duration / 5)
            names = (f"big-{number}.pdf", f"big-{number}.csv")
            big_pdf(base / names[0], args.pdf_pages, f"zqbigpdf{number}")
            big_csv(base / names[1], args.csv_rows, f"zqbigcsv{number}")
            for name in names:
                os.replace(base / name, folder / INCOMING / name)
                big_written[f"{INCOMING}/{name}"] = time.time()

        dropper = threading.Thread(target=drop_big, daemon=True)
        dropper.start()
        load.run(args.duration, loaded, files=True)
        deadline = time.monotonic() + args.drain
        while load.pending() and time.monotonic() < deadline:
            time.sleep(1)
        dropper.join()
        # A step writes its events a batch at a time (event_log.py): a file can be searchable
        # before its run's `published` event is in the instance, so its runs end first.
        in_flight = runs_ended(args.drain)
        files = file_report(load, {}, sha_of, source)
        files["runs_left_in_flight"] = in_flight
        loaded["small file: write to searchable"] = _from(
            files["write_to_searchable"], files["written"], files["written"] - files["searchable"]
        )
        loaded["small file: write to published"] = _from(
            files["write_to_published"],
            files["written"],
            files["written"] - files["stages_from_write"]["published"]["reached"],
        )
        out["ops"] = {name: t.summary() for name, t in loaded.items() if name != "file"}
        out["files"] = files
        if burst:
            print(f"burst: {burst} files", file=sys.stderr)
            with load.files_lock:
                load.written, load.found, load.words = {}, {}, {}
            drained = threading.Event()
            burst_ops: dict[str, Tally] = {}
            runner = threading.Thread(
                target=load.run, args=(args.burst_wait, burst_ops, False, drained), daemon=True
            )
            runner.start()
            for _ in range(burst):
                load.write_file()
            end = time.monotonic() + args.burst_wait
            while load.pending() and time.monotonic() < end:
                time.sleep(1)
            drained.set()
            runner.join()
            in_flight = runs_ended(args.drain)
            report = file_report(load, {}, sha_of, source)
            report["runs_left_in_flight"] = in_flight
            with load.files_lock:
                first = min(load.written.values())
                report["drain_s"] = round(max(load.found.values(), default=time.time()) - first, 1)
            out["burst"] = report
            out["burst_ops"] = {name: t.summary() for name, t in burst_ops.items()}
        stop.set()
        # A daemon stopped mid-run leaves its runs STARTED, holding their partitions and the
        # catalog's slot from the next phase's daemon: its runs end first.
        out["runs_left_in_flight"] = runs_ended(args.drain)
    out["big_files_s_from_write"] = big_file_times(
        {n: n for n in big_written}, source, sha_of, folder, big_written
    )
    out["queue_depth"] = depth
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=120, help="loaded phase, seconds")
    parser.add_argument("--idle", type=float, default=60, help="idle baseline phase, seconds")
    parser.add_argument("--files", type=int, default=1000, help="pre-published tiny files")
    parser.add_argument(
        "--rate",
        action="append",
        default=[],
        metavar="OP=PER_S",
        help=f"an operation's rate: {', '.join(RATE_NAMES)}",
    )
    parser.add_argument("--pdf-pages", type=int, default=200)
    parser.add_argument("--csv-rows", type=int, default=100_000)
    parser.add_argument("--burst", type=int, default=0, help="files dropped at once at the end")
    parser.add_argument("--burst-wait", type=float, default=600)
    parser.add_argument(
        "--drain",
        type=float,
        default=90,
        help="after the load, seconds to wait for the written files",
    )
    parser.add_argument(
        "--ingest-nice",
        type=lambda text: [int(v) for v in text.split(",")],
        default=[0],
        help="CPU niceness `loom watch` is started at in the loaded phase; several (0,10): "
        "one phase each, in turn",
    )
    parser.add_argument("--home", type=Path, help="build here and keep it (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    rates = dict(DEFAULT_RATES)
    for item in args.rate:
        name, _, value = item.partition("=")
        if name not in RATE_NAMES:
            parser.error(f"--rate: unknown operation {name!r}")
        rates[RATE_NAMES[name]] = float(value)

    with contextlib.ExitStack() as stack:
        if args.home is None:
            base = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="loom-load-")))
        else:
            base = args.home
            shutil.rmtree(base, ignore_errors=True)
            base.mkdir(parents=True)
        home = base / "home"
        env = {**os.environ, "LOOM_HOME": str(home), "DAGSTER_HOME": str(home / "dagster")}
        env.pop("LOOM_SEARCH_RESIDENT", None)
        os.environ.update(env)
        folder = base / "watched"
        (folder / INCOMING).mkdir(parents=True)
        made_s = tiny_files(folder, args.files)
        metrics_csv(folder / "metrics.csv", 400)
        past = time.time() - 3600
        os.utime(folder / "metrics.csv", (past, past))
        source = folder.name
        run_loom(env, "sources", "add", str(folder))
        started = time.perf_counter()
        run_loom(env, "ingest", str(folder))
        published_s = round(time.perf_counter() - started, 1)
        print(
            f"pre-published {args.files} tiny files (made in {made_s} s, "
            f"published in {published_s} s)",
            file=sys.stderr,
        )

        url, token = stack.enter_context(serving(env, base))
        listed = httpx.get(
            f"{url}/v1/datasets", headers={"Authorization": f"Bearer {token}"}, timeout=30
        ).json()
        names = [d["name"] for d in listed.get("datasets", []) if "metrics" in d["name"]]
        if not names:
            raise SystemExit(f"no metrics dataset served: {listed}")
        run_loom(env, "search", "warm the resident")  # starts the resident for the next call
        time.sleep(2)
        load = Load(env, url, token, names[0], rates, folder)
        for _ in range(20):  # warm both paths
            load.search_resident()
            load.search_http()
            load.query_http()

        idle: dict[str, Tally] = {}
        if args.idle > 0:
            print(f"idle phase: {args.idle:.0f} s", file=sys.stderr)
            load.run(args.idle, idle, files=False)
            time.sleep(2)

        phases: dict[str, dict[str, Any]] = {}
        for at, nice in enumerate(args.ingest_nice):
            label = f"load (ingest nice {nice})"
            print(f"{label}: {args.duration:.0f} s", file=sys.stderr)
            last = at == len(args.ingest_nice) - 1
            phases[label] = loaded_phase(
                load,
                args,
                env,
                nice,
                base,
                folder,
                source,
                at,
                burst=args.burst if last else 0,
            )
        result: dict[str, Any] = {
            "machine": f"{os.cpu_count()} cores, {platform.machine()}, "
            f"Python {platform.python_version()}",
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "files_prepublished": args.files,
            "prepublish_s": published_s,
            "duration_s": args.duration,
            "rates": {k: v for k, v in rates.items() if v > 0},
            "idle": {name: t.summary() for name, t in idle.items()},
            "phases": phases,
            "probes": load.probes.summary(),
            "failed_runs": failed_runs(),
        }
        final = phases[list(phases)[-1]]
        result["load"] = final["ops"]
        result["past"] = verdicts(final["ops"]) + [
            f"burst {m}" for m in verdicts(final.get("burst_ops", {}))
        ]
        if result["failed_runs"]:
            result["past"].append(f"{result['failed_runs']} failed runs")
    text = markdown(result)
    print(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 1 if result["past"] else 0


class _Computed(Tally):
    """A row of already-computed percentiles (the files'): `errors` are files never reached."""

    def __init__(self, percentiles: dict[str, float | None], calls: int, missing: int) -> None:
        super().__init__()
        self.row = {"calls": calls, **percentiles, "errors": missing, "refused": 0}

    def summary(self) -> dict[str, Any]:
        return dict(self.row)


def _from(percentiles: dict[str, float | None], calls: int, missing: int) -> Tally:
    return _Computed(percentiles, calls, missing)


if __name__ == "__main__":
    raise SystemExit(main())
