"""Issue 40 row 1: peak memory and time of `loom ingest` on a folder holding a sparse 2 GiB
file beside two Markdown files, and on the same folder without it, in one run.

Each ingest is its own `loom` process (a fresh LOOM_HOME, the local reference extractor);
its peak memory is the child's ru_maxrss (RUSAGE_CHILDREN, read after each child exits, so
the larger of the two rows is the one that tells). Run: `.venv/bin/python bench/hostile_files.py`.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SIZE = 2 << 30


def ingest(folder: Path, home: Path) -> tuple[float, float, str]:
    env = dict(os.environ, LOOM_HOME=str(home), DAGSTER_HOME=str(home / "dagster"))
    env["LOOM_EMBEDDER"] = "ngram"
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "loom_dagster.cli", "ingest", str(folder)],
        capture_output=True, text=True, env=env, timeout=900,
    )  # fmt: skip
    elapsed = time.monotonic() - started
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    store = home / "store"
    largest = max((p.stat().st_size for p in store.rglob("*") if p.is_file()), default=0)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-200:]
    return elapsed, peak_mib, f"{summary}; largest stored object {largest} bytes"


def main() -> None:
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        normal = base / "normal"
        hostile = base / "hostile"
        for folder in (normal, hostile):
            folder.mkdir()
            (folder / "a.md").write_text("# A\n\nFirst note.\n")
            (folder / "b.md").write_text("# B\n\nSecond note.\n")
        with open(hostile / "big.csv", "wb") as handle:
            handle.truncate(SIZE)
        # The normal folder first: ru_maxrss of children is a maximum over all of them.
        for label, folder in (("normal (2 Markdown)", normal), ("+ sparse 2 GiB", hostile)):
            elapsed, peak, summary = ingest(folder, base / f"home-{folder.name}")
            print(f"{label:<22} {elapsed:6.1f} s  peak {peak:7.0f} MiB  {summary}")


if __name__ == "__main__":
    main()
