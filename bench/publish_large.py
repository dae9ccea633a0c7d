"""How long the publishing step of one large table holds the catalog's slot (issue 39): every
run's `published` step waits for that slot (the `loom_catalog` pool, size 1), so while a
100,000-row CSV publishes, the small files that arrived meanwhile wait behind it.

Each round ingests, through `loom ingest` (Dagster, in this process, with the reference extractor
on loopback), a fresh home's folder of one generated CSV (bench/load.py's `big_csv`) and one small
note, under cProfile, and reports the inclusive seconds of the `published` step and of its parts.
With `--baseline DIR` (a checkout of another commit, e.g. `git worktree add DIR main`), each round
runs both checkouts, alternating which goes first, each in a process of its own started with its
own `.venv`, so the two are compared under the same load.

    .venv/bin/python bench/publish_large.py --rows 100000 --rounds 3 --baseline ../main
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# (label, path suffix, function): the inclusive seconds of each, summed over its entries.
PARTS = [
    ("published step (slot held)", "loom_dagster/assets/published.py", "published"),
    ("  cut chunks", "loom_dagster/pipeline/steps.py", "make_chunks"),
    ("  publish", "loom_dagster/pipeline/publishing.py", "publish"),
    ("    type datasets", "loom_dagster/pipeline/publishing.py", "type_datasets"),
    ("    lexical index", "loom_dagster/search/lexical.py", "publish_many"),
    ("    vector index", "loom_dagster/search/vector.py", "publish_many"),
    ("  parse artifacts (all)", "loom_dagster/contract/validate.py", "parse_artifact"),
]


def measure(root: Path, rows: int, scratch_root: Path | None) -> dict[str, float]:
    """One profiled ingest of a fresh home in this process, with the code of the checkout
    `root`: the seconds of each part."""
    import cProfile
    import pstats

    sys.path[:0] = [str(root), str(root / "bench")]
    warnings.filterwarnings("ignore")
    from ingest_throughput import fresh_home

    from bench.load import big_csv
    from loom_dagster import api, runs
    from loom_dagster.extractor.local import reference_extractor
    from loom_dagster.extractor.settings import ENV_TOKEN, ENV_URL

    runs.run_stoppably = lambda work, on_stop: work()  # type: ignore[assignment]
    with tempfile.TemporaryDirectory(prefix="publish-large-", dir=scratch_root) as scratch:
        folder = Path(scratch) / "folder"
        folder.mkdir()
        big_csv(folder / "big.csv", rows, "zqpublishlarge")
        (folder / "note.md").write_text("# A note\n\nThe keeper logged the lamp.\n")
        with reference_extractor() as service:
            os.environ[ENV_URL], os.environ[ENV_TOKEN] = service.url, service.token
            fresh_home(Path(scratch), "home")
            profile = cProfile.Profile()
            started = time.perf_counter()
            profile.runcall(api.ingest_folder, folder, name="bench")
            wall = time.perf_counter() - started
    stats = pstats.Stats(profile).stats  # type: ignore[attr-defined]
    seconds = {"whole ingest": wall}
    for label, suffix, function in PARTS:
        seconds[label] = sum(
            entry[3]
            for (path, _, name), entry in stats.items()
            if name == function and path.endswith(suffix)
        )
    return seconds


def child(checkout: Path, rows: int, scratch_root: Path | None) -> dict[str, float]:
    """`measure` run by the checkout's own interpreter and code (this file drives it: a
    baseline from before this bench has none)."""
    command = [
        str(checkout / ".venv" / "bin" / "python"),
        str(Path(__file__).resolve()),
        "--child",
        str(checkout),
        "--rows",
        str(rows),
    ]
    if scratch_root:
        command += ["--scratch-root", str(scratch_root)]
    done = subprocess.run(command, cwd=checkout, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: exit {done.returncode}: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: dict[str, list[dict[str, float]]]) -> list[str]:
    names = list(results)
    lines = [
        "| part, seconds (median of rounds) | " + " | ".join(names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for label in ["whole ingest"] + [label for label, _, _ in PARTS]:
        cells = [f"{statistics.median(r[label] for r in results[n]):.2f}" for n in names]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout, with its own .venv")
    parser.add_argument("--scratch-root", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child, args.rows, args.scratch_root)))
        return 0
    checkouts = {"this checkout": ROOT}
    if args.baseline:
        checkouts = {f"baseline ({args.baseline.name})": args.baseline.resolve(), **checkouts}
    results: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    for round_number in range(args.rounds):
        order = list(checkouts.items())
        if round_number % 2:
            order.reverse()
        for name, checkout in order:
            results[name].append(child(checkout, args.rows, args.scratch_root))
            print(
                f"round {round_number + 1}, {name}: published step "
                f"{results[name][-1]['published step (slot held)']:.2f} s "
                f"(load {os.getloadavg()[0]:.2f})",
                flush=True,
            )
    print(
        f"\nMachine: {os.cpu_count()} cores, {platform.machine()}, Python "
        f"{platform.python_version()}; load average at the end {os.getloadavg()}; "
        f"{args.rows:,} rows, {args.rounds} rounds, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n"
    )
    print("\n".join(table(results)))
    if args.out:
        args.out.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
