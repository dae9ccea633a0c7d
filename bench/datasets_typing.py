"""Typing and writing a dataset against pyarrow alone, in the same run (issue 14's target: 3x).

A 100,000 x 10 table (one million cells, the extractor's table budget) whose values are spelled
as the artifact spells them (JSON integers and floats, exact decimals as strings, ISO dates and
date-times, booleans, H:MM:SS durations, text) goes through loom's typing
(loom_dagster.datasets.typing.type_rows: every value checked and converted, rejects counted)
and is written as a snapshot (datasets.snapshots.write_snapshot into a local object store).
The baseline reads the same Python values into a pyarrow table (pa.array per column, its own
inferred types: dates and decimals stay text) and writes it to Parquet with the same
compression. Each is timed as the best of --repeat runs; the ratio is loom over the baseline.

    .venv/bin/python bench/datasets_typing.py [--rows 100000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import io
import platform
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from loom_dagster.datasets.model import ColumnType, DatasetColumn, DatasetSchema
from loom_dagster.datasets.snapshots import write_snapshot
from loom_dagster.datasets.typing import type_rows
from loom_dagster.objectstore import ObjectStore

COLUMNS = (
    ("id", ColumnType.DECIMAL),
    ("amount", ColumnType.DECIMAL),
    ("exact", ColumnType.DECIMAL),
    ("host", ColumnType.TEXT),
    ("day", ColumnType.DATE),
    ("at", ColumnType.TIMESTAMP),
    ("ok", ColumnType.BOOLEAN),
    ("took", ColumnType.DURATION),
    ("ratio", ColumnType.DOUBLE),
    ("note", ColumnType.TEXT),
)


def make_rows(count: int) -> list[list[object]]:
    pick = random.Random(14)
    return [
        [
            n,
            round(pick.uniform(0, 10_000), 2),
            f"{pick.randrange(10**12)}.{pick.randrange(10**9):09d}",
            f"host-{n % 97}",
            f"2024-{1 + n % 12:02d}-{1 + n % 28:02d}",
            f"2024-{1 + n % 12:02d}-{1 + n % 28:02d}T{n % 24:02d}:{n % 60:02d}:00+02:00",
            n % 3 == 0,
            f"{n % 50}:{n % 60:02d}:{(n * 7) % 60:02d}",
            pick.random(),
            f"note {n}",
        ]
        for n in range(count)
    ]


def best(repeat: int, run: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rows = make_rows(args.rows)
    schema = DatasetSchema(tuple(DatasetColumn(n, t) for n, t in COLUMNS))
    positions = range(len(COLUMNS))

    with tempfile.TemporaryDirectory() as folder:
        store = ObjectStore(Path(folder).as_uri())

        def loom() -> None:
            typed = type_rows(schema, positions, rows)
            assert typed.rows_rejected == 0
            write_snapshot(store, "ds_bench", "s", typed.table)

        def baseline() -> None:
            columns = list(zip(*rows, strict=True))
            table = pa.table(
                {name: pa.array(col) for (name, _), col in zip(COLUMNS, columns, strict=True)}
            )
            sink = io.BytesIO()
            pq.write_table(table, sink, compression="zstd")
            (Path(folder) / "baseline.parquet").write_bytes(sink.getvalue())

        base = best(args.repeat, baseline)
        ours = best(args.repeat, loom)
    print(
        f"machine: {platform.machine()}, {platform.processor() or '-'}, Python {platform.python_version()}"
    )
    print(f"rows x columns: {args.rows:,} x {len(COLUMNS)}")
    print(f"pyarrow baseline (read + write Parquet): {base * 1000:,.0f} ms")
    print(f"loom typing + snapshot:                  {ours * 1000:,.0f} ms")
    print(f"ratio: {ours / base:.2f}x (target: within 3x)")


if __name__ == "__main__":
    main()
