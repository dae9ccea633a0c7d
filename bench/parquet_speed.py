"""Parsing speed of the reference extractor's Parquet reader, in MB/s, beside pyarrow's own.

Generates Parquet files of mixed columns (integers, floats, float32, decimals, uint64, bools,
text, dictionary text, dates, timestamps with a zone and in nanoseconds, times, durations,
lists, structs, UUIDs) and parses each in this process through the extractor's own code path
(detection and the parser, `source.extract`, as the child runs it, then the artifact's JSON as the
child writes it), beside a baseline in the same run: pyarrow's
`read_table(BufferReader(data)).to_pylist()` on the same bytes. MB/s is the file's size over the
best of `--repeat` runs.

The table budget bounds what one file gives: a million non-empty cells and 12 M characters of
row-block text. A file of 100,000 rows by these 20 columns (about 600 characters a row) holds
more, so the reader stops at the row the budget runs out in (the rest a failed unit, counted,
never decoded) and its MB/s is given over the whole file and over the share of it read; the
second file, 15,000 rows, is read whole, which is the fair comparison with pyarrow.

    .venv/bin/python bench/parquet_speed.py [--rows 100000 --rows 15000] [--repeat 3]

Prints a table and writes bench/results/parquet.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import sys
import time
import uuid
from collections.abc import Callable
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

# This checkout's package, not the one the environment may have installed from another checkout.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from extractor_sandbox.source import extract  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "parquet.json"
WORDS = "ledger invoice account retention schema partition revision chunk citation".split()
COLUMNS = 20


def mixed_table(rows: int, seed: int = 7) -> pa.Table:
    """`rows` rows of twenty columns of mixed types, a few values null."""
    rng = random.Random(seed)

    def maybe(value: Any) -> Any:
        return None if rng.random() < 0.02 else value

    def words(count: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(count))

    base = date(2020, 1, 1)
    columns: dict[str, pa.Array] = {
        "id": pa.array(range(rows), pa.int64()),
        "qty": pa.array([maybe(rng.randint(-1000, 1000)) for _ in range(rows)], pa.int32()),
        "price": pa.array([maybe(rng.random() * 1000) for _ in range(rows)], pa.float64()),
        "ratio": pa.array([maybe(rng.random()) for _ in range(rows)], pa.float32()),
        "amount": pa.array(
            [maybe(Decimal(rng.randint(0, 10**9)) / 100) for _ in range(rows)],
            pa.decimal128(12, 2),
        ),
        "serial": pa.array([rng.getrandbits(64) for _ in range(rows)], pa.uint64()),
        "flag": pa.array([maybe(rng.random() < 0.5) for _ in range(rows)], pa.bool_()),
        "title": pa.array([maybe(words(4)) for _ in range(rows)], pa.string()),
        "note": pa.array([maybe(words(12)) for _ in range(rows)], pa.string()),
        "category": pa.array([rng.choice(WORDS) for _ in range(rows)]).dictionary_encode(),
        "day": pa.array([base + timedelta(days=rng.randint(0, 3000)) for _ in range(rows)]),
        "created": pa.array(
            [1_600_000_000_000_000 + rng.randint(0, 10**14) for _ in range(rows)],
            pa.timestamp("us", tz="Europe/Paris"),
        ),
        "logged": pa.array(
            [maybe(1_600_000_000_000_000_000 + rng.randint(0, 10**17)) for _ in range(rows)],
            pa.timestamp("ns"),
        ),
        "at": pa.array([rng.randint(0, 86_399) for _ in range(rows)], pa.time32("s")),
        "took": pa.array([maybe(rng.randint(0, 10**7)) for _ in range(rows)], pa.duration("ms")),
        "tags": pa.array(
            [[rng.choice(WORDS) for _ in range(rng.randint(0, 3))] for _ in range(rows)],
            pa.list_(pa.string()),
        ),
        "point": pa.array(
            [{"x": rng.randint(0, 99), "y": rng.random()} for _ in range(rows)],
            pa.struct([("x", pa.int16()), ("y", pa.float64())]),
        ),
        "ref": pa.ExtensionArray.from_storage(
            pa.uuid(),
            pa.array(
                [uuid.UUID(int=rng.getrandbits(128)).bytes for _ in range(rows)], pa.binary(16)
            ),
        ),
        "score": pa.array([maybe(rng.gauss(0, 1)) for _ in range(rows)], pa.float64()),
        "code": pa.array([f"C-{rng.randint(0, 99999):05d}" for _ in range(rows)], pa.string()),
    }
    assert len(columns) == COLUMNS
    return pa.table(columns)


def parquet_bytes(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


def best_of(repeat: int, run: Callable[[], Any]) -> tuple[float, Any]:
    best, result = float("inf"), None
    for _ in range(repeat):
        started = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - started)
    return best, result


def loom_reader(data: bytes) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        artifact = extract(data, "parquet", "bench.parquet", {})
        json.dumps(artifact, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
        return artifact

    return run


def loom_parser_only(data: bytes) -> Callable[[], dict[str, Any]]:
    def run() -> dict[str, Any]:
        return extract(data, "parquet", "bench.parquet", {})

    return run


def pyarrow_baseline(data: bytes) -> Callable[[], list[dict[str, Any]]]:
    def run() -> list[dict[str, Any]]:
        rows: list[dict[str, Any]] = pq.read_table(pa.BufferReader(data)).to_pylist()
        return rows

    return run


def measure(rows: int, repeat: int) -> dict[str, Any]:
    data = parquet_bytes(mixed_table(rows))
    megabytes = len(data) / 1_000_000
    parse_s, artifact = best_of(repeat, loom_parser_only(data))
    whole_s, _ = best_of(repeat, loom_reader(data))
    baseline_s, baseline_rows = best_of(repeat, pyarrow_baseline(data))
    coverage = artifact["coverage"]
    return {
        "rows": rows,
        "columns": COLUMNS,
        "bytes": len(data),
        "rows_read": coverage["extracted"],
        "rows_in_table": len(artifact["tables"][0]["rows"]),
        "failed": coverage["failed"],
        "loom_parse_s": round(parse_s, 3),
        "loom_parse_mb_s": round(megabytes / parse_s, 2),
        "loom_parse_mb_s_over_rows_read": round(
            megabytes * coverage["extracted"] / rows / parse_s, 2
        ),
        "loom_parse_json_s": round(whole_s, 3),
        "loom_parse_json_mb_s": round(megabytes / whole_s, 2),
        "pyarrow_to_pylist_s": round(baseline_s, 3),
        "pyarrow_to_pylist_mb_s": round(megabytes / baseline_s, 2),
        "pyarrow_rows": len(baseline_rows),
    }


def machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "pyarrow": pa.__version__,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, action="append", help="rows a file (repeatable)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    pa.set_cpu_count(1)  # as the child runs it: one thread
    pa.set_io_thread_count(1)
    results = [measure(rows, args.repeat) for rows in (args.rows or [100_000, 15_000])]
    report = {"machine": machine(), "repeat": args.repeat, "results": results}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")
    print(f"parquet, {COLUMNS} mixed columns, best of {args.repeat}; {machine()}")
    header = (
        f"  {'rows':>8} {'MB':>6} {'read':>8} {'loom s':>8} {'loom MB/s':>10} {'(of read)':>10}"
        f" {'+json MB/s':>11} {'pyarrow s':>10} {'pyarrow MB/s':>13} {'ratio':>6}"
    )
    print(header)
    for r in results:
        print(
            f"  {r['rows']:>8} {r['bytes'] / 1e6:>6.2f} {r['rows_read']:>8} {r['loom_parse_s']:>8.3f}"
            f" {r['loom_parse_mb_s']:>10.2f} {r['loom_parse_mb_s_over_rows_read']:>10.2f}"
            f" {r['loom_parse_json_mb_s']:>11.2f}"
            f" {r['pyarrow_to_pylist_s']:>10.3f} {r['pyarrow_to_pylist_mb_s']:>13.2f}"
            f" {r['loom_parse_s'] / r['pyarrow_to_pylist_s']:>6.1f}"
        )
        for unit in r["failed"]:
            print(f"    failed: {unit['unit']}: {unit['reason']}")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
