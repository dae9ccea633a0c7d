"""Issue 40 row 2: how many artifact bytes the reference extractor makes per byte of an original,
over every real document it can read here (the development corpus and the tests' fixtures), the
measure LOOM_EXTRACTOR_MAX_OUTPUT_PER_INPUT_BYTE's default is chosen against.

Each file is extracted in this process (`extractor_sandbox.source.extract`, no service, no
sandbox) with the ratio bound turned off, and its artifact serialized as the child writes it.
Prints the files with the highest ratio, and the largest ratio past the bound's floor
(artifact bytes over ARTIFACT_BYTES_FLOOR + ratio x original bytes); the 25 KB DOCX bomb beside
them.

    .venv/bin/python bench/artifact_ratio.py [FOLDER ...]
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from extractor_sandbox.errors import ExtractError  # noqa: E402
from extractor_sandbox.output_size import ARTIFACT_BYTES_FLOOR  # noqa: E402
from extractor_sandbox.source import extract  # noqa: E402
from loom_dagster.contract.formats import format_of  # noqa: E402
from loom_dagster.errors import ExtractionFailed  # noqa: E402
from tests.extractor import office_packages  # noqa: E402

DEFAULT_FOLDERS = (ROOT / "tests", ROOT.parent.parent / "shared" / "corpus" / "inputs")
SKIPPED_SUFFIXES = {".py", ".pyc", ".json", ".txt", ".gold", ".yaml", ".yml", ".lock"}


def artifact_bytes(data: bytes, fmt: str, name: str) -> int:
    artifact = extract(data, fmt, name, {})
    text = json.dumps(artifact, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return len(text.encode("utf-8"))


def main() -> None:
    logging.disable(logging.WARNING)  # pypdf's notes on fonts, per file
    folders = [Path(arg) for arg in sys.argv[1:]] or [f for f in DEFAULT_FOLDERS if f.exists()]
    rows: list[tuple[float, int, int, str]] = []
    refused = 0
    started = time.perf_counter()
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if not path.is_file() or path.suffix.lower() in SKIPPED_SUFFIXES:
                continue
            if "__pycache__" in path.parts or "gold" in path.parts:
                continue
            try:
                fmt = format_of(path.name)
            except ExtractionFailed:
                continue
            data = path.read_bytes()
            if not data:
                continue
            try:
                size = artifact_bytes(data, fmt, path.name)
            except ExtractError:
                refused += 1
                continue
            rows.append((size / len(data), size, len(data), str(path)))
    rows.sort(reverse=True)
    sized = [row for row in rows if row[2] >= 1024]
    print(f"machine: {os.cpu_count()} cores, load {open('/proc/loadavg').read().split()[:3]}")
    print(
        f"{len(rows)} files extracted, {refused} refused, in {time.perf_counter() - started:.0f} s"
    )
    print("highest ratios (artifact bytes / original bytes), originals of 1 KiB or more:")
    for ratio, size, original, path in sized[:12]:
        print(f"  {ratio:8.1f}  {size:>11,} / {original:>9,}  {path}")
    ratio, size, original, path = rows[0]
    print(f"highest of any size: {ratio:.1f} ({size:,} / {original:,}) {path}")
    by_kind: dict[str, float] = {}
    for ratio, _, _, path in sized:
        kind = Path(path).suffix.lower()
        by_kind[kind] = max(by_kind.get(kind, 0.0), ratio)
    print(
        "highest per extension (1 KiB or more):",
        {k: round(v, 1) for k, v in sorted(by_kind.items())},
    )
    past_floor = max(
        ((size - ARTIFACT_BYTES_FLOOR) / original, path) for _, size, original, path in rows
    )
    print(
        f"largest (artifact - {ARTIFACT_BYTES_FLOOR:,}) / original: {past_floor[0]:.1f} ({past_floor[1]})"
    )
    big = max(rows, key=lambda row: row[1])
    print(f"largest artifact: {big[1]:,} bytes ({big[0]:.1f} x {big[2]:,}) {big[3]}")
    data = office_packages.docx(office_packages.paragraph("A" * 25_000_000))
    size = artifact_bytes(data, "docx", "bomb.docx")
    print(f"the 25 KB DOCX bomb: {size:,} / {len(data):,} = {size / len(data):,.0f}")


if __name__ == "__main__":
    main()
