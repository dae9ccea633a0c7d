"""Reading a served dataset into pandas (`api.read`, the path LoomDatasets takes) beside
`pyarrow.parquet.read_table(...).to_pandas()` on the same snapshot file, in the same run.

Builds a served dataset of 1,000,000 rows by 10 columns (every column type) in a fresh Loom
home, for real: its snapshot in the object store, its catalog row published with its revision
in the DuckDB catalog. Then, interleaved, it times

- loom: `api.read(name)`: the catalog lookup, the namespace and state checks, the snapshot's
  schema check, the read, the casts to the typed dtypes (decimals exact, as
  decimal128[pyarrow]; dates and durations cast) and the conversion;
- loom float: the same with `decimals="float"`;
- baseline: `pq.read_table(path).to_pandas()`: pyarrow's defaults (decimals as Python
  `Decimal` objects, dates as objects), no catalog, no checks.

Target (issue 30): loom's median within 2x the baseline's.

    .venv/bin/python bench/datasets_read.py [--rows 1000000] [--runs 5]

Prints a table with the machine (nproc, load) and writes bench/results/datasets_read.json (not
committed).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loom_dagster import api  # noqa: E402
from loom_dagster.datasets.model import ColumnType, DatasetColumn, DatasetSchema  # noqa: E402
from loom_dagster.datasets.snapshots import ROW_GROUP_ROWS  # noqa: E402
from loom_dagster.objectstore import ObjectStore  # noqa: E402
from loom_dagster.settings import LoomSettings  # noqa: E402
from tests.support.query_datasets import serve_in_catalog  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "datasets_read.json"
NAME = "usage.csv#t0"
COLUMNS = [
    ("host", ColumnType.TEXT),
    ("day", ColumnType.DATE),
    ("bytes", ColumnType.DECIMAL),
    ("cost", ColumnType.DECIMAL),
    ("took", ColumnType.DURATION),
    ("load", ColumnType.DOUBLE),
    ("ratio", ColumnType.DOUBLE),
    ("at", ColumnType.TIMESTAMP),
    ("up", ColumnType.BOOLEAN),
    ("note", ColumnType.TEXT),
]


def table(rows: int, schema: DatasetSchema) -> pa.Table:
    """Built with Arrow's kernels: a million rows in about a second."""
    n = pa.array(range(rows), pa.int64())
    text = pc.binary_join_element_wise("host-", pc.cast(pc.divide(n, 20_000), pa.string()), "")
    values: dict[str, pa.Array] = {
        "_row_id": n,
        "host": text,
        "day": pc.add(pc.cast(pc.divide(n, 3000), pa.int32()), 20_000)
        .cast(pa.int32())
        .view(pa.date32()),
        "bytes": pc.cast(pc.multiply(n, 7919), pa.decimal128(38, 9)),
        "cost": pc.binary_join_element_wise(
            pc.cast(pc.divide(n, 100), pa.string()),
            pc.cast(pc.bit_wise_and(n, 63), pa.string()),
            ".",
        ).cast(pa.decimal128(38, 9)),
        "took": pc.cast(pc.add(n, 1), pa.decimal128(38, 9)),
        "load": pc.divide(pc.cast(n, pa.float64()), 7.0),
        "ratio": pc.divide(pc.cast(n, pa.float64()), float(rows)),
        "at": pc.cast(pc.multiply(n, 60_000_000), pa.timestamp("us", tz="UTC")),
        "up": pc.equal(pc.bit_wise_and(n, 1), 0),
        "note": pc.binary_join_element_wise("row ", pc.cast(n, pa.string()), ""),
    }
    arrow = schema.arrow_schema()
    return pa.Table.from_arrays([values[f.name].cast(f.type) for f in arrow], schema=arrow)


def serve(settings: LoomSettings, rows: int) -> Path:
    """A served dataset of `rows` rows; the path of its snapshot file."""
    schema = DatasetSchema(tuple(DatasetColumn(n, t) for n, t in COLUMNS))
    sink = pa.BufferOutputStream()
    # As snapshots are written (datasets.snapshots.write_snapshot).
    pq.write_table(table(rows, schema), sink, compression="zstd", row_group_size=ROW_GROUP_ROWS)
    dataset = serve_in_catalog(
        settings.catalog_path,
        ObjectStore(settings.object_store_url),
        sink.getvalue().to_pybytes(),
        schema,
        source="bench",
        path="usage.csv",
        sha="a" * 64,
        snapshot="s1",
        rows_stored=rows,
    )
    return Path(settings.object_store_url.removeprefix("file://")) / dataset.snapshot_key


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="loom-read-bench-") as home:
        os.environ["LOOM_HOME"] = home
        os.environ.pop("LOOM_OBJECT_STORE_URL", None)
        settings = LoomSettings.from_env()
        settings.prepare()
        path = serve(settings, args.rows)
        runs = {
            "loom": lambda: api.read(NAME),
            "loom float": lambda: api.read(NAME, decimals="float"),
            "baseline": lambda: pq.read_table(path).to_pandas(),
        }
        frame, baseline = runs["loom"](), runs["baseline"]()
        assert len(frame) == len(baseline) == args.rows
        assert frame["bytes"].iloc[-1] == baseline["bytes"].iloc[-1]  # the same exact value
        times: dict[str, list[float]] = {name: [] for name in runs}
        for _ in range(args.runs):
            for name, run in runs.items():
                started = time.perf_counter()
                run()
                times[name].append(time.perf_counter() - started)
    load_after = os.getloadavg()[0]
    summary = {
        name: {"median_s": round(statistics.median(v), 3), "min_s": round(min(v), 3)}
        for name, v in times.items()
    }
    ratio = summary["loom"]["median_s"] / summary["baseline"]["median_s"]
    report = {
        "machine": {
            "nproc": os.cpu_count(),
            "load_before": load_before,
            "load_after": load_after,
            "python": platform.python_version(),
            "pyarrow": pa.__version__,
        },
        "rows": args.rows,
        "columns": len(COLUMNS),
        "runs": args.runs,
        "results": summary,
        "ratio_median": round(ratio, 2),
        "target_ratio": 2.0,
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"{args.rows:,} rows x {len(COLUMNS)} columns, {args.runs} runs each, interleaved; "
        f"nproc {os.cpu_count()}, load {load_before:.2f} before, {load_after:.2f} after"
    )
    print(f"| {'read':<10} | {'median s':>8} | {'min s':>8} |")
    print(f"| {'-' * 10} | {'-' * 7}: | {'-' * 7}: |")
    for name, values in summary.items():
        print(f"| {name:<10} | {values['median_s']:8.3f} | {values['min_s']:8.3f} |")
    print(f"loom / baseline (median): {ratio:.2f}x (target: within 2x)")
    return 0 if ratio <= 2.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())
