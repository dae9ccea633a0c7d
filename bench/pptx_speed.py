"""Reading speed of the PPTX reader beside markitdown's, on the same decks in the same run.

    .venv/bin/python bench/pptx_speed.py [--rounds 5] [--markitdown /work/peers/markitdown/bin/python]

The decks: the shared corpus's (../shared/corpus/inputs/pptx), the real-world bench's
(bench/realworld/office/data/pptx) and the parsing bench's generated ones (bench/docparse/pptx).
Each reader runs in a child process of its own, through the same timing loop (one deck read
first, so imports are not its speed, then every deck `--rounds` times): Loom through the
extractor's own code path (detection, then the reader) in this checkout's interpreter, and
markitdown in its own environment, never a dependency of the project, twice: as its users call
it (`MarkItDown().convert_stream`, which also guesses the stream's type) and its PPTX converter
alone (`PptxConverter().convert`, "markitdown-pptx"), its fastest path. When markitdown's interpreter is missing, Loom is measured alone and
the table says so. Prints seconds a round and decks per second for each, the ratio, and the
machine (`nproc`, load); writes bench/results/pptx_speed.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (
    ROOT.parent / "shared" / "corpus" / "inputs" / "pptx",
    ROOT / "bench" / "realworld" / "office" / "data" / "pptx",
    ROOT / "bench" / "docparse" / "pptx",
)
MARKITDOWN = Path("/work/peers/markitdown/bin/python")
RESULTS = ROOT / "bench" / "results" / "pptx_speed.json"

# The timing loop each child runs: stdin the deck paths, argv[1] the reader, argv[2] the rounds.
TIMER = """
import io, json, sys, time
from pathlib import Path
reader, rounds = sys.argv[1], int(sys.argv[2])
if reader == "loom":
    sys.path.insert(0, sys.argv[3])
    from extractor_sandbox.source import extract
    def read(path, data):
        return extract(data, "pptx", path.name, {})
elif reader == "markitdown":
    from markitdown import MarkItDown, StreamInfo
    converter = MarkItDown()
    def read(path, data):
        info = StreamInfo(extension=".pptx", filename=path.name)
        return converter.convert_stream(io.BytesIO(data), stream_info=info).markdown
else:
    from markitdown import StreamInfo
    from markitdown.converters import PptxConverter
    pptx_converter = PptxConverter()
    def read(path, data):
        info = StreamInfo(extension=".pptx", filename=path.name)
        return pptx_converter.convert(io.BytesIO(data), info).markdown
decks = [(p, p.read_bytes()) for p in map(Path, sys.stdin.read().split())]
failed = 0
try:
    read(*decks[0])
except Exception:
    pass
started = time.perf_counter()
for _ in range(rounds):
    for path, data in decks:
        try:
            read(path, data)
        except Exception:
            failed += 1
elapsed = time.perf_counter() - started
print(json.dumps({"seconds": elapsed, "failed": failed // rounds}))
"""


def decks() -> list[Path]:
    return sorted(p for source in SOURCES if source.is_dir() for p in source.glob("*.pptx"))


def timed(python: Path, reader: str, paths: list[Path], rounds: int) -> dict[str, Any]:
    done = subprocess.run(
        [str(python), "-c", TIMER, reader, str(rounds), str(ROOT)],
        input="\n".join(str(p) for p in paths),
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    )
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    found["seconds_a_round"] = found["seconds"] / rounds
    found["decks_per_s"] = len(paths) * rounds / found["seconds"]
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--markitdown", type=Path, default=MARKITDOWN)
    args = parser.parse_args()
    paths = decks()
    size = sum(p.stat().st_size for p in paths)
    machine = {
        "nproc": os.cpu_count(),
        "load": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
    }
    print(
        f"{len(paths)} decks, {size / 1e6:.1f} MB, {args.rounds} rounds;"
        f" nproc {machine['nproc']}, load {machine['load'][0]}"
    )
    readers: dict[str, dict[str, Any]] = {}
    readers["loom"] = timed(Path(sys.executable), "loom", paths, args.rounds)
    if args.markitdown.exists():
        readers["markitdown"] = timed(args.markitdown, "markitdown", paths, args.rounds)
        readers["markitdown-pptx"] = timed(args.markitdown, "markitdown-pptx", paths, args.rounds)
    else:
        print(f"markitdown not measured: no interpreter at {args.markitdown}")
    print(f"\n{'reader':<16} {'s a round':>10} {'decks/s':>9} {'failed':>7}")
    for name, found in readers.items():
        print(
            f"{name:<16} {found['seconds_a_round']:>10.3f} {found['decks_per_s']:>9.1f}"
            f" {found['failed']:>7}"
        )
    print()
    for peer in ("markitdown", "markitdown-pptx"):
        if peer in readers:
            ratio = readers[peer]["seconds"] / readers["loom"]["seconds"]
            print(f"Loom is {ratio:.2f}x {peer}'s speed (above 1: faster)")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(
        json.dumps(
            {"decks": len(paths), "mb": size / 1e6, "rounds": args.rounds, "machine": machine}
            | {"readers": readers},
            indent=1,
        )
        + "\n",
        encoding="utf-8",
    )
    print(f"wrote {RESULTS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
