"""Instructions the extractor's in-process parse takes over the shared corpus, per format, counted
by valgrind's callgrind, for this checkout and (optionally) another one side by side.

Wall-clock figures on a shared 2-core machine move by a third between runs; an instruction count
is the same for the same code and input whatever else the machine does, so it is how a refactor's
before and after are compared. Each figure is the count for parsing every corpus input of the
format minus the count for the same process that parses nothing (interpreter start and the
package's import), reported separately.

    .venv/bin/python bench/parse_instructions.py --baseline-checkout ../loom-before
"""

from __future__ import annotations

import argparse
import platform
import random
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT.parent / "shared" / "corpus" / "inputs"
FOLDER = {
    "markdown": "md",
    "html": "html",
    "toml": "toml",
    "csv": "csv",
    "sql": "sql",
    "docx": "docx",
    "pptx": "pptx",
    "xlsx": "xlsx",
    "pdf": "pdf",
    "text": "",  # no corpus folder: counted on --generated-mb only
}
# Run inside the counted process: parse every corpus input of one format (or the one generated
# file), or nothing.
PARSE_ALL = """
import sys
from pathlib import Path
from extractor_sandbox.source import extract
fmt, folder = sys.argv[1], sys.argv[2]
if fmt != "none":
    found = Path(folder)
    for path in [found] if found.is_file() else sorted(p for p in found.rglob("*") if p.is_file()):
        try:
            extract(path.read_bytes(), fmt, path.name, {})
        except Exception:  # a refusal is work done too
            pass
"""


def instructions(checkout: Path, fmt: str, source: Path | None = None) -> int:
    folder = source or CORPUS / FOLDER.get(fmt, "")
    result = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            "-c",
            PARSE_ALL,
            fmt,
            str(folder),
        ],
        cwd=checkout,
        # A fixed hash seed: set and dict orders (sqlglot's dialect candidates among them)
        # otherwise change how much work a parse does from one process to the next.
        env={"PYTHONPATH": str(checkout), "PATH": "/usr/bin:/bin", "PYTHONHASHSEED": "0"},
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", result.stderr)
    if not found:
        raise SystemExit(f"callgrind printed no count for {fmt}: {result.stderr[-300:]}")
    return int(found.group(1))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline-checkout", type=Path, help="another checkout to count beside")
    parser.add_argument("--format", action="append", dest="formats", choices=sorted(FOLDER))
    parser.add_argument(
        "--generated-mb",
        type=float,
        help="count one file of this size made by bench/extract_speed.py's generator (text, csv,"
        " html, toml, sql, markdown), the same bytes for both checkouts, instead of the corpus",
    )
    args = parser.parse_args()
    if not CORPUS.is_dir():
        raise SystemExit(f"the shared corpus is not at {CORPUS}")
    sides = {"this": ROOT}
    if args.baseline_checkout:
        sides["baseline"] = args.baseline_checkout.resolve()
    print(
        f"machine: {platform.machine()}, Python {platform.python_version()}; millions of instructions"
    )
    start = {side: instructions(path, "none") for side, path in sides.items()}
    print(f"{'format':8}" + "".join(f"{side:>12}" for side in sides) + "   change")
    print(f"{'(start)':8}" + "".join(f"{start[s] / 1e6:12.1f}" for s in sides) + _change(start))
    with tempfile.TemporaryDirectory() as scratch:
        for fmt in args.formats or [name for name, folder in FOLDER.items() if folder]:
            source = (
                _generated(fmt, args.generated_mb, Path(scratch)) if args.generated_mb else None
            )
            parse = {
                side: instructions(path, fmt, source) - start[side] for side, path in sides.items()
            }
            print(f"{fmt:8}" + "".join(f"{parse[s] / 1e6:12.1f}" for s in sides) + _change(parse))


def _generated(fmt: str, size_mb: float, folder: Path) -> Path:
    sys.path.insert(0, str(ROOT / "bench"))
    import extract_speed  # noqa: PLC0415 - a sibling script, found once bench/ is on the path

    suffix, generate = extract_speed.GENERATORS[fmt]
    path = folder / f"big{suffix}"
    path.write_bytes(generate(random.Random(7), int(size_mb * 1e6)).encode())
    return path


def _change(counts: dict[str, int]) -> str:
    if "baseline" not in counts or not counts["baseline"]:
        return ""
    return f"   {counts['this'] / counts['baseline'] - 1:+.1%}"


if __name__ == "__main__":
    main()
