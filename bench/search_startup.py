"""`loom search` as a whole process on an index of 100,000 chunks: interpreter start-up, imports,
opening the index (and the vector generation), loading the embedder, the search, the printing;
with the exact and lexical legs only and with the vector leg, beside `python -c pass`, all
interleaved in the same run so the machine's load falls on every column alike.

The index is built once under the folder you name (reused when it is there): synthetic chunks
as bench/search_latency.py makes them (60-90 corpus words, 20 a document, four formats, four
sources each tagged with its own name), published through the real LexicalIndex and the real
VectorIndex with the default embedder (LOOM_EMBEDDER unset). Two Loom homes share its lexical
index: `with-vectors/` (a vector generation beside it) and `lexical-only/` (none, so the command
runs two legs).

The same run times the command with the resident searcher (README, "Search start-up"): the
rows above run with LOOM_SEARCH_RESIDENT=off (in-process, as without one); "cold" is the first
call of a home (no resident yet: it searches in-process, then starts one), timed after stopping
the resident before each sample; "served" is a call the home's resident answers. The resident
rows use homes made in a temporary folder whose index folders link to the built ones, so a
home reused from an earlier run is only read.

Then one process, `python -X importtime`-free, breaks the vector-leg command into its steps.

    .venv/bin/python bench/search_startup.py --home ~/bench-search-100k --runs 15
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

PUBLISH_DOCUMENTS = 500

QUERIES = (
    ("two words, --tag and --path", ["guide section", "--tag", "wiki", "--path", "wiki/"]),
    ("three words, no filter", ["replication database storage"]),
    ("an identifier", ["E-123-77"]),
)

BREAKDOWN = r"""
import json, sys, time
marks = [("start", time.perf_counter())]
from loom_dagster.search.service import default_legs, open_index, open_vector_leg, search
marks.append(("import the search modules", time.perf_counter()))
index = open_index()
marks.append(("open the lexical index", time.perf_counter()))
leg = open_vector_leg(index)
marks.append(("import numpy + the vector index, map the generation", time.perf_counter()))
table = leg._current()
marks.append(("read the manifest, map the arrays", time.perf_counter()))
leg.embedder.embed(["warm"])
marks.append(("load the embedder (first query embedding)", time.perf_counter()))
leg.embedder.embed(["guide section"])
marks.append(("embed a query (loaded)", time.perf_counter()))
hits = search(index, "guide section", limit=10, legs=default_legs(index, leg))
marks.append(("the fused search with citations", time.perf_counter()))
print(json.dumps([(name, round((t - marks[n][1]) * 1000, 1))
                  for n, (name, t) in enumerate(marks[1:])]))
"""


def build(home: Path, chunks: int) -> dict[str, float]:
    """The two homes under `home`, built unless they already hold `chunks` chunks."""
    from search_latency import corpus_text, make_chunks, vocabulary

    from loom_dagster.search.lexical import LexicalIndex
    from loom_dagster.search.vector import open_vectors
    from loom_dagster.settings import LoomSettings

    full = home / "with-vectors"
    lexical_only = home / "lexical-only"
    settings = LoomSettings.from_env({"LOOM_HOME": str(full)})
    settings.prepare()
    marker = home / "built.json"
    if marker.is_file() and json.loads(marker.read_text()).get("chunks") == chunks:
        return dict(json.loads(marker.read_text()))
    documents = make_chunks(chunks, vocabulary(corpus_text()))
    names = list(documents)
    lexical = LexicalIndex(settings.search_dir)
    vectors = open_vectors(settings)
    figures: dict[str, float] = {"chunks": chunks}
    started = time.perf_counter()
    for at in range(0, len(names), PUBLISH_DOCUMENTS):
        lexical.publish_many({d: documents[d] for d in names[at : at + PUBLISH_DOCUMENTS]})
    figures["lexical_publish_s"] = round(time.perf_counter() - started, 1)
    started = time.perf_counter()
    for at in range(0, len(names), PUBLISH_DOCUMENTS):
        vectors.publish_many({d: documents[d] for d in names[at : at + PUBLISH_DOCUMENTS]})
    figures["vector_publish_s"] = round(time.perf_counter() - started, 1)
    lexical_only.mkdir(parents=True, exist_ok=True)
    other = LoomSettings.from_env({"LOOM_HOME": str(lexical_only)})
    if not other.search_dir.exists():
        other.search_dir.symlink_to(settings.search_dir, target_is_directory=True)
    marker.write_text(json.dumps(figures))
    return figures


def run(command: list[str], env: dict[str, str]) -> float:
    return run_timed(command, env)[0]


def run_timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """The command's wall time, and the CPU time (user + system) of its own process: the share
    of the wall time the machine's load does not stretch."""
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr[-500:]}")
    return elapsed, after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime


def linked_home(folder: Path, built: Path, *, vectors: bool) -> Path:
    """A home of its own whose index folders are the built home's (only read through it)."""
    folder.mkdir(mode=0o700)
    (folder / "search").symlink_to(built / "search", target_is_directory=True)
    if vectors:
        (folder / "vectors").symlink_to(built / "vectors", target_is_directory=True)
    return folder


def wait_until(done: Callable[[], Any], what: str, seconds: float = 120.0) -> Any:
    deadline = time.monotonic() + seconds
    while not (value := done()):
        if time.monotonic() > deadline:
            raise SystemExit(f"waited {seconds:.0f} s for {what}")
        time.sleep(0.02)
    return value


def stop_resident(env: dict[str, str]) -> None:
    """Stop the home's resident and wait until it has let go of its lock."""
    from loom_dagster.search.resident import Place, ResidentClient, home_of

    ResidentClient(env).stop()
    place = Place(home_of(env))
    wait_until(lambda: not os.path.exists(place.folder) or not place.held(), "the resident to exit")


def resident_state(env: dict[str, str]) -> dict[str, Any]:
    from loom_dagster.search.resident import ResidentClient

    state: dict[str, Any] = wait_until(
        lambda: ResidentClient(env).status(), "the resident to answer"
    )
    if not state["same_version"]:
        raise SystemExit("the resident is of another version than this bench's commands")
    return state


def resident_answered(env: dict[str, str]) -> int:
    return int(resident_state(env)["answered"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--home", type=Path, required=True, help="folder to build or reuse")
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    home = args.home.expanduser().resolve()
    os.environ.pop("LOOM_EMBEDDER", None)
    figures = build(home, args.chunks)
    python = sys.executable
    base_env = {k: v for k, v in os.environ.items() if not k.startswith(("LOOM_", "DAGSTER_"))}
    base_env["PYTHONPATH"] = str(HERE.parent)
    off = {**base_env, "LOOM_SEARCH_RESIDENT": "off"}
    homes = {
        "lexical + exact": {**off, "LOOM_HOME": str(home / "lexical-only")},
        "with the vector leg": {**off, "LOOM_HOME": str(home / "with-vectors")},
    }
    scratch = Path(tempfile.mkdtemp(prefix="loom-search-startup-"))
    on = {**base_env, "LOOM_SEARCH_RESIDENT": "on", "LOOM_SEARCH_RESIDENT_IDLE": "600"}
    residents = {
        "lexical + exact": {
            **on,
            "LOOM_HOME": str(linked_home(scratch / "lex", home / "with-vectors", vectors=False)),
        },
        "with the vector leg": {
            **on,
            "LOOM_HOME": str(linked_home(scratch / "vec", home / "with-vectors", vectors=True)),
        },
    }
    search = [python, "-m", "loom_dagster.cli", "search"]
    # (label, command, env, kind): kind "cold" stops the resident first; "served" must be
    # answered by it.
    commands: list[tuple[str, list[str], dict[str, str], str]] = [
        ("python -c pass", [python, "-c", "pass"], base_env, "")
    ]
    for legs, env in homes.items():
        for label, words in QUERIES:
            commands.append((f"{label}: {legs}, in-process", [*search, *words], env, ""))
    cold_label, cold_words = QUERIES[0]
    commands.append(
        (
            f"{cold_label}: with the vector leg, cold (no resident yet)",
            [*search, *cold_words],
            residents["with the vector leg"],
            "cold",
        )
    )
    for legs, env in residents.items():
        for label, words in QUERIES:
            commands.append((f"{label}: {legs}, served", [*search, *words], env, "served"))
    try:
        for _, command, env, _ in commands:
            run(command, env)  # once each first: the page cache holds the files every run reads
        samples: dict[str, list[float]] = {label: [] for label, _, _, _ in commands}
        cpu: dict[str, list[float]] = {label: [] for label, _, _, _ in commands}
        served = 0
        # Each resident's answers and time answering, counted from its status: summed over the
        # vector home's residents, one per cold call.
        answered = dict.fromkeys(residents, 0)
        busy = dict.fromkeys(residents, 0.0)
        before = {legs: resident_state(env) for legs, env in residents.items()}

        def count(legs: str) -> None:
            now = resident_state(residents[legs])
            answered[legs] += int(now["answered"]) - int(before[legs]["answered"])
            busy[legs] += float(now["busy_seconds"]) - float(before[legs]["busy_seconds"])

        for _ in range(args.runs):
            for label, command, env, kind in commands:  # interleaved: load falls on all alike
                if kind == "cold":
                    count("with the vector leg")
                    stop_resident(env)
                wall, used = run_timed(command, env)
                samples[label].append(wall)
                cpu[label].append(used)
                if kind == "cold":  # the resident it started is up before going on
                    before["with the vector leg"] = resident_state(env)
                served += kind == "served"
        for legs in residents:
            count(legs)
        if sum(answered.values()) != served:
            raise SystemExit(f"the residents answered {answered} of the {served} served calls")
        inside_ms = {legs: 1000 * busy[legs] / max(1, answered[legs]) for legs in residents}
    finally:
        for env in residents.values():
            stop_resident(env)
        shutil.rmtree(scratch)

    def at(values: list[float], share: float) -> float:
        ordered = sorted(values)
        return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000)

    load = os.getloadavg()
    print(
        f"{args.chunks:,} chunks, {args.runs} runs each, {platform.machine()}, "
        f"{os.cpu_count()} cores, load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}"
    )
    print(f"{'command':<72} {'min':>6} {'p50':>6} {'p95':>6} {'cpu p50':>8}  ms")
    result: dict[str, object] = {
        "build": figures,
        "runs": args.runs,
        "load": load,
        "resident_ms_per_answer": {legs: round(ms, 1) for legs, ms in inside_ms.items()},
    }
    for label, values in samples.items():
        row = {
            "min_ms": round(min(values) * 1000),
            "p50_ms": round(statistics.median(values) * 1000),
            "p95_ms": at(values, 0.95),
            "cpu_p50_ms": round(statistics.median(cpu[label]) * 1000),
        }
        result[label] = row
        print(
            f"{label:<72} {row['min_ms']:>6} {row['p50_ms']:>6} {row['p95_ms']:>6}"
            f" {row['cpu_p50_ms']:>8}"
        )

    for legs, ms in inside_ms.items():
        print(f"the resident's time per answer, {legs} (search and rendering, mean): {ms:.1f} ms")

    steps: dict[str, list[float]] = {}
    for _ in range(5):
        done = subprocess.run(
            [python, "-c", BREAKDOWN],
            env=homes["with the vector leg"],
            capture_output=True,
            text=True,
            check=True,
        )
        for name, ms in json.loads(done.stdout.splitlines()[-1]):
            steps.setdefault(name, []).append(ms)
    print("\nthe vector-leg command's steps in one process (median of 5, ms):")
    for name, values in steps.items():
        print(f"  {name:<55} {statistics.median(values):>7.1f}")
    result["steps_ms"] = {name: statistics.median(values) for name, values in steps.items()}
    out = args.out or HERE / "results" / f"search_startup_{args.chunks}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
