"""Normal `loom search` commands through the home's resident searcher while another client of
the same user floods it with long queries, beside the same commands without that client, in one
run (issue 34 rows 1-2).

A Loom home with a synthetic lexical index (bench/search_latency.py's chunks, published through
the real LexicalIndex) is made in a temporary folder; its resident is started by a first
`loom search`. Then, interleaved round by round so the machine's load falls on every column
alike, a normal search (`loom search "replication database storage"`, a real process with
LOOM_SEARCH_RESIDENT=on) is timed:

- alone;
- while a thread sends the resident 100,000-character one-word queries back to back, straight
  over its socket (as a hostile client would, not through the command's own checks);
- while a thread sends it the longest query searched (2,000 characters of corpus words).

Each row: p50 and p95 of the command's wall time, how many of the commands the resident
answered (the rest were told `busy` and searched in their own process), and how many flooding
queries were sent and their median answer time.

    .venv/bin/python bench/resident_abuse.py --chunks 20000 --runs 20
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

NORMAL = "replication database storage"
FIELDS: dict[str, Any] = {
    "limit": "10",
    "formats": [],
    "sources": [],
    "tags": [],
    "block_types": [],
    "path": "",
    "json": False,
    "explain": False,
}


def build(home: Path, chunks: int) -> list[str]:
    from search_latency import corpus_text, make_chunks, vocabulary

    from loom_dagster.search.lexical import LexicalIndex
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env({"LOOM_HOME": str(home)})
    settings.prepare()
    words = vocabulary(corpus_text())
    documents = make_chunks(chunks, words)
    index = LexicalIndex(settings.search_dir)
    names = list(documents)
    for at in range(0, len(names), 500):
        index.publish_many({d: documents[d] for d in names[at : at + 500]})
    return words


class Flood:
    """A thread sending the resident `text` over and over until stopped."""

    def __init__(self, env: dict[str, str], text: str) -> None:
        from loom_dagster.search.resident import ResidentClient

        self.client = ResidentClient(env)
        self.request = {"op": "search", "key": self.client.key, "search": {**FIELDS, "text": text}}
        self.times: list[float] = []
        self.replies: dict[str, int] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            started = time.perf_counter()
            reply = self.client.exchange(self.request) or {"status": "none"}
            self.times.append(time.perf_counter() - started)
            status = str(reply.get("status"))
            self.replies[status] = self.replies.get(status, 0) + 1

    def __enter__(self) -> Flood:
        self._thread.start()
        time.sleep(0.3)  # flooding before the timed command starts
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(600)


def answered(env: dict[str, str]) -> int:
    from loom_dagster.search.resident import ResidentClient

    state = ResidentClient(env).status()
    if not state or not state.get("same_version"):
        raise SystemExit("no resident of this version answers")
    return int(state["answered"])


def timed_search(env: dict[str, str]) -> tuple[float, bool]:
    """The command's wall time, and whether the resident answered it."""
    before = answered(env)
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "loom_dagster.cli", "search", NORMAL],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"loom search failed ({done.returncode}): {done.stderr[-500:]}")
    return elapsed, answered(env) > before


def percentile(samples: list[float], share: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="loom-resident-abuse-"))
    home = scratch / "home"
    try:
        started = time.perf_counter()
        words = build(home, args.chunks)
        print(f"index of {args.chunks:,} chunks built in {time.perf_counter() - started:.1f} s")
        base = {k: v for k, v in os.environ.items() if not k.startswith(("LOOM_", "DAGSTER_"))}
        env = {
            **base,
            "PYTHONPATH": str(HERE.parent),
            "LOOM_HOME": str(home),
            "LOOM_SEARCH_RESIDENT": "on",
            "LOOM_SEARCH_RESIDENT_IDLE": "600",
            "LOOM_EMBEDDER": "ngram",
        }
        subprocess.run(
            [sys.executable, "-m", "loom_dagster.cli", "search", NORMAL],
            env=env,
            capture_output=True,
            check=True,
        )
        deadline = time.monotonic() + 120
        while True:
            try:
                answered(env)
                break
            except SystemExit:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        longest = " ".join(words[i % len(words)] for i in range(2000))[:2000]
        scenarios: dict[str, str | None] = {
            "alone": None,
            "beside a client sending 100,000-character one-word queries": "a" * 100_000,
            "beside a client sending 2,000-character queries (the longest searched)": longest,
        }
        samples: dict[str, list[float]] = {name: [] for name in scenarios}
        served: dict[str, int] = dict.fromkeys(scenarios, 0)
        floods: dict[str, list[Flood]] = {name: [] for name in scenarios}
        for _ in range(args.runs):
            for name, text in scenarios.items():
                if text is None:
                    elapsed, by_resident = timed_search(env)
                else:
                    with Flood(env, text) as flood:
                        elapsed, by_resident = timed_search(env)
                    floods[name].append(flood)
                samples[name].append(elapsed)
                served[name] += by_resident
        print(
            f"machine: {os.cpu_count()} cores, {platform.machine()}, {platform.processor() or '-'}"
            f", Python {platform.python_version()}; {args.runs} commands per row, interleaved"
        )
        print(f"{'normal `loom search`':76} {'p50 s':>6} {'p95 s':>6}  by resident  flood")
        for name in scenarios:
            times = samples[name]
            sent = [t for flood in floods[name] for t in flood.times]
            replies: dict[str, int] = {}
            for flood in floods[name]:
                for status, count in flood.replies.items():
                    replies[status] = replies.get(status, 0) + count
            flood_text = (
                f"{len(sent)} sent, median {statistics.median(sent) * 1000:.0f} ms, {replies}"
                if sent
                else "-"
            )
            print(
                f"{name:76} {statistics.median(times):6.2f} {percentile(times, 0.95):6.2f}"
                f"  {served[name]:>3}/{len(times):<3}      {flood_text}"
            )
    finally:
        from loom_dagster.search.resident import ResidentClient

        ResidentClient({"LOOM_HOME": str(home), "LOOM_SEARCH_RESIDENT": "on"}).stop()
        time.sleep(0.5)
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
