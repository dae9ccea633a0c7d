"""XLSX reading speed: the seed's reference case through the real confined child.

One sheet of 100,000 rows by 20 numbers (about 62 MB of sheet XML inflated, a few MB zipped),
written by a streaming writer here (zipfile, one row at a time; openpyxl is far too slow to
write it), read by the extractor's child process under the service's default limits
(extractor_sandbox/settings.py: 120 s CPU, 2 GiB), beside a baseline in the same run: openpyxl
read_only iter_rows(values_only=True) over the same file, in this process.

    .venv/bin/python bench/xlsx_speed.py [--rows 100000] [--columns 20]

Prints a table and writes bench/results/xlsx.json.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import random
import resource
import time
import zipfile
from pathlib import Path
from typing import Any

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


def through_child(data: bytes) -> tuple[float, float, dict[str, Any]]:
    """Wall seconds, the child's CPU seconds, and its artifact."""
    from extractor_sandbox.runner import Limits, run_extraction
    from extractor_sandbox.settings import load_settings

    limits = Limits.of(load_settings({}))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    answer = run_extraction(data, "xlsx", "reference.xlsx", {}, limits)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    return seconds, cpu, json.loads(answer)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument("--no-baseline", action="store_true")
    args = parser.parse_args()

    data, inflated = reference_workbook(args.rows, args.columns)
    mb = inflated / 1e6
    seconds, cpu, artifact = through_child(data)
    table = artifact["tables"][0]
    results: dict[str, Any] = {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "load_average_1m": round(os.getloadavg()[0], 2),
        "rows": args.rows,
        "columns": args.columns,
        "zipped_mb": round(len(data) / 1e6, 2),
        "inflated_mb": round(mb, 2),
        "loom_child": {
            "seconds": round(seconds, 2),
            "cpu_seconds": round(cpu, 2),
            "mb_per_s": round(mb / seconds, 2),
            "rows_in_table": len(table["rows"]),
            "failed": artifact["coverage"]["failed"],
        },
    }
    rows = [("loom (confined child)", seconds, cpu)]
    if not args.no_baseline:
        base_seconds, base_cpu, cells = through_openpyxl(data)
        results["openpyxl_read_only"] = {
            "seconds": round(base_seconds, 2),
            "cpu_seconds": round(base_cpu, 2),
            "mb_per_s": round(mb / base_seconds, 2),
            "cells": cells,
        }
        rows.append(("openpyxl read_only values_only", base_seconds, base_cpu))
    print(
        f"{args.rows:,} x {args.columns} numbers: {mb:.1f} MB inflated, {len(data) / 1e6:.1f} MB zipped"
    )
    print(f"{'reader':34} {'seconds':>8} {'CPU s':>7} {'MB/s':>7}")
    for label, secs, used in rows:
        print(f"{label:34} {secs:8.2f} {used:7.2f} {mb / secs:7.2f}")
    print(f"loom table rows: {len(table['rows']):,}; failed: {artifact['coverage']['failed']}")
    print(f"machine: {results['machine']}; load average {results['load_average_1m']}")
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
