"""Markdown reading speed: Loom's reader beside markitdown, on the same files, in one run.

    .venv/bin/python bench/markdown_speed.py [--rounds 5] [--baseline-checkout /work/main]

The files: the shared corpus's Markdown inputs (../shared/corpus/inputs/md), as two sets: the
documents (docling's) and the CommonMark spec's examples; and a hostile one, the list indented one
more space a line of tests/extractor/test_hostile_text.py (`--indented-lines`, 2,000 by default,
2 MB: the test's 10,000 lines are 50 MB, and a baseline before its fix took a minute a pass).
Each reader runs in a worker process of
its own, started once (its imports and set-up are not timed) and asked for one pass over a set
per round; the readers take turns round after round, so a burst of other work on a shared
machine falls on all of them alike, and each one's median wall and CPU seconds are kept. A pass
reads each file from disk and makes the reader's whole output:

- loom: this checkout's extractor code path (detection, strict decoding, the parser), in process;
- loom (baseline): the same from another checkout (`--baseline-checkout`, e.g. main before a
  change), with this environment's Python;
- loom service (`--service`): one warm extractor service of this checkout (started as
  bench/extract_call.py starts one, from the extractor environment), a POST /v1/extract per
  file on a new connection, as Loom's client makes: the whole call, the fork of the warm
  template included; its CPU is the service's and its children's (from /proc);
- markitdown: `MarkItDown().convert(path)` in its own environment (`--markitdown-python`, default
  /work/peers/markitdown/bin/python), never a dependency of the project; left out, and said so,
  when that interpreter is missing.

"x markitdown" is a reader's CPU seconds over markitdown's (CPU, since on a shared machine wall
time is mostly waiting).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import extract_call  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus" / "inputs" / "md"
MARKITDOWN_PYTHON = Path("/work/peers/markitdown/bin/python")
INDENTED_LINES = 2_000

# The worker: set up once, then one timed pass over the paths of each line it is sent.
WORKER = r"""
import json, os, sys, time
kind, checkout = sys.argv[1], sys.argv[2]
if kind == "markitdown":
    from markitdown import MarkItDown
    converter = MarkItDown()
    def read(path):
        return converter.convert(path).text_content
else:
    sys.path.insert(0, checkout)
    from extractor_sandbox.source import extract
    def read(path):
        with open(path, "rb") as handle:
            return extract(handle.read(), "markdown", os.path.basename(path), {})
print("ready", flush=True)
warmed = False
for line in sys.stdin:
    paths = json.loads(line)
    if not warmed:
        for path in paths[:3]:
            read(path)
        warmed = True
    refused = 0
    wall, cpu = time.perf_counter(), time.process_time()
    for path in paths:
        try:
            read(path)
        except Exception:
            refused += 1
    print(json.dumps([time.perf_counter() - wall, time.process_time() - cpu, refused]), flush=True)
"""


class Worker:
    """A reader's process: started once, asked for timed passes."""

    def __init__(self, name: str, python: str, kind: str, checkout: Path) -> None:
        self.name = name
        self.process = subprocess.Popen(
            [python, "-c", WORKER, kind, str(checkout)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        ready = self.process.stdout.readline().strip()
        if ready != "ready":
            raise SystemExit(f"{name}: the worker did not start ({ready!r})")

    def timed_pass(self, paths: list[str]) -> tuple[float, float, int]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(paths) + "\n")
        self.process.stdin.flush()
        wall, cpu, refused = json.loads(self.process.stdout.readline())
        return float(wall), float(cpu), int(refused)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait(timeout=60)


class ServiceReader:
    """This checkout's extractor service, a call per file."""

    name = "loom service"

    def __init__(self) -> None:
        environment = extract_call.extractor_environment() if extract_call.AS_ROOT else None
        python = str(environment / "bin" / "python") if environment else sys.executable
        self.scratch = Path(tempfile.mkdtemp(prefix="loom-markdown-speed-"))
        self.scratch.chmod(0o755)
        package = extract_call.readable_copy(ROOT, self.scratch / "this")
        self.service = extract_call.start(self.name, python, package, {})
        self.http = httpx.Client(timeout=120, limits=httpx.Limits(max_keepalive_connections=0))

    def timed_pass(self, paths: list[str]) -> tuple[float, float, int]:
        refused = 0
        cpu = extract_call.cpu_seconds(self.service.process.pid)
        wall = time.perf_counter()
        for path in paths:
            response = self.http.post(
                f"{self.service.url}/v1/extract",
                params={"format": "markdown", "name": Path(path).name},
                content=Path(path).read_bytes(),
                headers={"Authorization": f"Bearer {self.service.token}"},
            )
            refused += response.status_code != 200
        wall = time.perf_counter() - wall
        return wall, extract_call.cpu_seconds(self.service.process.pid) - cpu, refused

    def close(self) -> None:
        self.http.close()
        self.service.process.terminate()
        self.service.process.wait(timeout=30)
        if self.service.process.stdout is not None:
            self.service.process.stdout.close()
        shutil.rmtree(self.scratch, ignore_errors=True)


def file_sets(scratch: Path, indented_lines: int) -> list[tuple[str, list[Path]]]:
    files = sorted(path for path in CORPUS.rglob("*.md") if path.is_file())
    examples = [path for path in files if "commonmark-spec" in path.parts]
    documents = [path for path in files if "commonmark-spec" not in path.parts]
    indented = scratch / "indented-list.md"
    indented.write_text("".join(" " * i + "- item\n" for i in range(indented_lines)))
    return [
        ("documents", documents),
        ("commonmark examples", examples),
        ("all", files),
        (f"indented list {indented_lines:,}", [indented]),
    ]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds (median kept)")
    parser.add_argument("--baseline-checkout", type=Path, help="another checkout's reader beside")
    parser.add_argument("--markitdown-python", type=Path, default=MARKITDOWN_PYTHON)
    parser.add_argument("--service", action="store_true", help="a service call per file too")
    parser.add_argument("--indented-lines", type=int, default=INDENTED_LINES, help="hostile set")
    args = parser.parse_args()

    load = os.getloadavg()[0]
    print(
        f"machine: {platform.machine()}, nproc {os.cpu_count()}, load {load:.1f},"
        f" Python {platform.python_version()}; medians of {args.rounds} interleaved rounds"
    )
    workers: list[Worker | ServiceReader] = [Worker("loom", sys.executable, "loom", ROOT)]
    if args.service:
        workers.append(ServiceReader())
    if args.baseline_checkout is not None:
        workers.append(
            Worker("loom (baseline)", sys.executable, "loom", args.baseline_checkout.resolve())
        )
    if args.markitdown_python.exists():
        workers.append(Worker("markitdown", str(args.markitdown_python), "markitdown", ROOT))
    else:
        print(f"markitdown: no interpreter at {args.markitdown_python}; Loom measured alone")
    print(
        f"{'files':<21}{'n':>5}{'KB':>8}  {'reader':<17}{'wall s':>9}{'CPU s':>9}"
        f"{'files/s (CPU)':>15}{'x markitdown':>14}  refused"
    )
    scratch = Path(tempfile.mkdtemp(prefix="loom-markdown-speed-"))
    try:
        for label, files in file_sets(scratch, args.indented_lines):
            paths = [str(path) for path in files]
            kilobytes = sum(path.stat().st_size for path in files) / 1e3
            runs: list[list[tuple[float, float, int]]] = [[] for _ in workers]
            for _ in range(args.rounds):
                for index, worker in enumerate(workers):
                    runs[index].append(worker.timed_pass(paths))
            medians = [
                (
                    statistics.median(wall for wall, _, _ in found),
                    statistics.median(cpu for _, cpu, _ in found),
                    found[0][2],
                )
                for found in runs
            ]
            reference = medians[-1][1] if workers[-1].name == "markitdown" else float("nan")
            for worker, (wall, cpu, refused) in zip(workers, medians, strict=True):
                print(
                    f"{label:<21}{len(files):>5}{kilobytes:>8.1f}  {worker.name:<17}{wall:>9.3f}"
                    f"{cpu:>9.3f}{len(files) / max(cpu, 1e-9):>15.0f}{cpu / reference:>14.3f}"
                    f"  {refused}"
                )
    finally:
        for worker in workers:
            worker.close()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
