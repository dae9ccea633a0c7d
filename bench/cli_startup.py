"""How long a `loom` command takes as a whole process, when it has little to do.

For this checkout and (with `--baseline-checkout`) another one, in the same run, round by round
(interleaved, so the machine's load falls on both alike), beside `python -c pass`:

- `loom ingest FOLDER` with nothing changed, on a folder of N small files already ingested
  (the setup ingests it once, through Dagster, minutes for 1,000 files, and gives the
  baseline a copy of that home);
- `loom sources list`;
- `loom formats` (which starts the local reference extractor and asks it; with
  LOOM_DOCUMENT_EXTRACTOR_URL set, only the question).

Each checkout runs with its own .venv, its own code on PYTHONPATH and its own LOOM_HOME; the
extractor environment is LOOM_EXTRACTOR_ENV, or `--baseline-extractor-env` for the baseline.

    .venv/bin/python bench/cli_startup.py --baseline-checkout /work/wt/base \\
        --baseline-extractor-env /opt/loom/extractor-venv-base
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def make_folder(root: Path, files: int) -> Path:
    for n in range(files):
        path = root / f"group-{n % 20:02d}" / f"note-{n:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"# Note {n}\n\nA few words of note {n}.\n")
    return root


class Checkout:
    def __init__(self, label: str, path: Path, extractor_env: str | None, work: Path) -> None:
        self.label, self.path = label, path
        home = work / label
        self.env = {
            **os.environ,
            "PYTHONPATH": str(path),
            "LOOM_HOME": str(home),
            "DAGSTER_HOME": str(home / "dagster"),
            "LOOM_EMBEDDER": "ngram",
        }
        if extractor_env:
            self.env["LOOM_EXTRACTOR_ENV"] = extractor_env
        self.python = str(path / ".venv" / "bin" / "python")

    def run(self, *args: str) -> float:
        started = time.perf_counter()
        done = subprocess.run(
            [self.python, *args], cwd=self.path, env=self.env, capture_output=True, text=True
        )
        elapsed = time.perf_counter() - started
        if done.returncode:
            raise SystemExit(f"{self.label}: {' '.join(args)} failed:\n{done.stderr[-2000:]}")
        return elapsed

    def loom(self, *args: str) -> float:
        return self.run("-m", "loom_dagster.cli", *args)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline-checkout", type=Path)
    parser.add_argument("--baseline-extractor-env", help="LOOM_EXTRACTOR_ENV for the baseline")
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="cli-startup-") as scratch:
        work = Path(scratch)
        folder = make_folder(work / "docs", args.files)
        checkouts = [Checkout("after", ROOT, os.environ.get("LOOM_EXTRACTOR_ENV"), work)]
        if args.baseline_checkout:
            checkouts.append(
                Checkout(
                    "before",
                    args.baseline_checkout.resolve(),
                    args.baseline_extractor_env or os.environ.get("LOOM_EXTRACTOR_ENV"),
                    work,
                )
            )
        # The folder is published once, by this checkout; the baseline starts from a copy of
        # that home (the catalog's schema and the instance's are the same), so both measure
        # "nothing changed" on the same state, and the setup costs one first load, not two.
        first = checkouts[0]
        print(f"{first.label}: first ingest of {args.files} files ...", flush=True)
        print(f"  {first.loom('ingest', str(folder)):.1f} s", flush=True)
        for checkout in checkouts[1:]:
            shutil.copytree(first.env["LOOM_HOME"], checkout.env["LOOM_HOME"], symlinks=True)
        for checkout in checkouts:
            checkout.loom("ingest", str(folder))  # unmeasured: each side's first look
        commands = {
            "python -c pass": ("-c", "pass"),
            f"loom ingest ({args.files} files, nothing changed)": (
                "-m",
                "loom_dagster.cli",
                "ingest",
                str(folder),
            ),
            "loom sources list": ("-m", "loom_dagster.cli", "sources", "list"),
            "loom formats": ("-m", "loom_dagster.cli", "formats"),
        }
        times: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for name, command in commands.items():
                for checkout in checkouts:
                    times.setdefault((name, checkout.label), []).append(checkout.run(*command))
    labels = [c.label for c in checkouts]
    print(
        f"nproc {os.cpu_count()}, load {os.getloadavg()[0]:.2f}, Python {platform.python_version()}, "
        f"{args.rounds} rounds, median seconds"
    )
    print(f"| command | {' | '.join(labels)} |")
    print(f"|---|{'---|' * len(labels)}")
    for name in commands:
        cells = [f"{statistics.median(times[(name, label)]):.2f}" for label in labels]
        print(f"| {name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
