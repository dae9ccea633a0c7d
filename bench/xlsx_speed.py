"""XLSX reading speed: the seed's reference case through the real confined child.

One sheet of 100,000 rows by 20 numbers (about 62 MB of sheet XML inflated, a few MB zipped),
written by a streaming writer here (zipfile, one row at a time; openpyxl is far too slow to
write it), read by the extractor's child process under the service's default limits
(extractor_sandbox/settings.py: 120 s CPU, 2 GiB), beside a baseline in the same run: openpyxl
read_only iter_rows(values_only=True) over the same file, in this process. With
`--baseline-checkout`, another checkout's child reads the same file too (in a process of its own,
with that checkout's .venv and the extractor environment `--baseline-env` built for it), the
sides taking turns for `--rounds` rounds (medians kept), and the two artifacts are compared.

    .venv/bin/python bench/xlsx_speed.py [--rows 100000] [--columns 20] [--rounds 3]
        [--baseline-checkout ../loom-before --baseline-env /opt/loom/extractor-venv-before]

Prints a table and writes bench/results/xlsx.json.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import statistics
import subprocess
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).resolve().parent / "results" / "xlsx.json"

CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
    '<Default Extension="xml" ContentType="application/xml"/>'
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>'
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>'
    "</Types>"
)
ROOT_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/>'
    "</Relationships>"
)
WORKBOOK = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" '
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">'
    '<sheets><sheet name="Numbers" sheetId="1" r:id="rId1"/></sheets></workbook>'
)
WORKBOOK_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>'
    "</Relationships>"
)
SHEET_HEAD = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    '<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
)
SHEET_TAIL = "</sheetData></worksheet>"


def column_letters(index: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def reference_workbook(rows: int = 100_000, columns: int = 20, seed: int = 5) -> tuple[bytes, int]:
    """The zipped workbook and its sheet's inflated size: `rows` by `columns` numbers."""
    rng = random.Random(seed)
    letters = [column_letters(c) for c in range(columns)]
    buffer = io.BytesIO()
    inflated = 0
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=6) as archive:
        archive.writestr("[Content_Types].xml", CONTENT_TYPES)
        archive.writestr("_rels/.rels", ROOT_RELS)
        archive.writestr("xl/workbook.xml", WORKBOOK)
        archive.writestr("xl/_rels/workbook.xml.rels", WORKBOOK_RELS)
        with archive.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as sheet:
            inflated += sheet.write(SHEET_HEAD.encode())
            for r in range(1, rows + 1):
                cells = "".join(
                    f'<c r="{letter}{r}"><v>{rng.randint(0, 999_999) / 100}</v></c>'
                    for letter in letters
                )
                inflated += sheet.write(f'<row r="{r}">{cells}</row>'.encode())
            inflated += sheet.write(SHEET_TAIL.encode())
    return buffer.getvalue(), inflated


def through_openpyxl(data: bytes) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds and the cells read, in this process."""
    import openpyxl

    started, cpu = time.perf_counter(), time.process_time()
    book = openpyxl.load_workbook(io.BytesIO(data), read_only=True)
    cells = 0
    for sheet in book.worksheets:
        for row in sheet.iter_rows(values_only=True):
            cells += sum(value is not None for value in row)
    book.close()
    return time.perf_counter() - started, time.process_time() - cpu, cells


# Run in a checkout's own interpreter: its child reads the workbook at argv[1]; prints the wall
# and CPU seconds and the artifact's digest and first table's size.
CHILD_RUN = """
import hashlib, json, resource, sys, time
from extractor_sandbox.runner import Limits, run_extraction
from extractor_sandbox.settings import load_settings
data = open(sys.argv[1], "rb").read()
limits = Limits.of(load_settings({}))
before = resource.getrusage(resource.RUSAGE_CHILDREN)
started = time.perf_counter()
answer = run_extraction(data, "xlsx", "reference.xlsx", {}, limits)
seconds = time.perf_counter() - started
after = resource.getrusage(resource.RUSAGE_CHILDREN)
artifact = json.loads(answer)
print(json.dumps({
    "seconds": seconds,
    "cpu": (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime),
    "digest": hashlib.sha256(answer if isinstance(answer, bytes) else answer.encode()).hexdigest(),
    "rows_in_table": len(artifact["tables"][0]["rows"]),
    "failed": artifact["coverage"]["failed"],
}))
"""


def through_checkout(checkout: Path, env_dir: str | None, workbook: Path) -> dict[str, Any]:
    """One read of `workbook` by `checkout`'s child, in a process of that checkout."""
    python = checkout / ".venv" / "bin" / "python"
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    if env_dir:
        env["LOOM_EXTRACTOR_ENV"] = env_dir
    done = subprocess.run(
        [str(python), "-c", CHILD_RUN, str(workbook)],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument("--no-baseline", action="store_true", help="leave openpyxl out")
    parser.add_argument("--rounds", type=int, default=1, help="interleaved rounds (medians kept)")
    parser.add_argument("--baseline-checkout", type=Path, help="another checkout to read beside")
    parser.add_argument("--baseline-env", help="the extractor environment built for that checkout")
    args = parser.parse_args()

    data, inflated = reference_workbook(args.rows, args.columns)
    mb = inflated / 1e6
    sides = {"loom (confined child)": ROOT}
    if args.baseline_checkout:
        sides["baseline checkout (confined child)"] = args.baseline_checkout.resolve()
    timings: dict[str, list[tuple[float, float]]] = {label: [] for label in sides}
    timings["openpyxl read_only values_only"] = []
    answers: dict[str, dict[str, Any]] = {}
    loads = []
    with tempfile.TemporaryDirectory() as scratch:
        workbook = Path(scratch) / "reference.xlsx"
        workbook.write_bytes(data)
        for _ in range(args.rounds):
            for label, checkout in sides.items():
                env_dir = args.baseline_env if checkout != ROOT else None
                answer = through_checkout(checkout, env_dir, workbook)
                answers[label] = answer
                timings[label].append((answer["seconds"], answer["cpu"]))
                loads.append(os.getloadavg()[0])
            if not args.no_baseline:
                base_seconds, base_cpu, cells = through_openpyxl(data)
                timings["openpyxl read_only values_only"].append((base_seconds, base_cpu))
    mine = answers["loom (confined child)"]
    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average_1m": [round(min(loads), 2), round(max(loads), 2)],
        "rows": args.rows,
        "columns": args.columns,
        "zipped_mb": round(len(data) / 1e6, 2),
        "inflated_mb": round(mb, 2),
        "rounds": args.rounds,
        "rows_in_table": mine["rows_in_table"],
        "failed": mine["failed"],
    }
    print(
        f"{args.rows:,} x {args.columns} numbers: {mb:.1f} MB inflated, {len(data) / 1e6:.1f} MB zipped"
    )
    print(f"{'reader (medians)':36} {'seconds':>8} {'CPU s':>7} {'MB/s':>7}")
    for label, runs in timings.items():
        if not runs:
            continue
        secs = statistics.median(run[0] for run in runs)
        used = statistics.median(run[1] for run in runs)
        results[label] = {"seconds": round(secs, 2), "cpu_seconds": round(used, 2)}
        print(f"{label:36} {secs:8.2f} {used:7.2f} {mb / secs:7.2f}")
    print(f"loom table rows: {mine['rows_in_table']:,}; failed: {mine['failed']}")
    if args.baseline_checkout:
        same = answers["baseline checkout (confined child)"]["digest"] == mine["digest"]
        results["artifacts_identical"] = same
        print(f"artifacts identical to the baseline checkout's: {same}")
    print(f"machine: {results['machine']}; load average {results['load_average_1m']}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
