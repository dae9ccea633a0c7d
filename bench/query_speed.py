"""A typed query's speed through the query API, beside bare DuckDB on the same Parquet file.

Builds a served dataset of 100,000 rows by 10 columns (the table budget: a million cells) in a
fresh Loom home, for real: its snapshot in the object store, its catalog row published with its
revision in the DuckDB catalog. Then, in the same run and interleaved, it times

- loom: `loom_dagster.api.query` with a group-by plan (sum and exact avg of decimals, a count,
  a max date, grouped by a text column): the catalog lookup, the checks, the compilation, the
  locked-down connection, the statement and the revalidation;
- baseline: DuckDB running the same aggregate on the same Parquet file directly (a fresh
  in-memory connection, the same thread count), with no catalog, no checks and no ceilings.

The overhead is loom's p50 minus the baseline's p50. Targets (issue 14): overhead under 50 ms,
loom's p95 within the seed's service level for a query (1,000 ms).

    .venv/bin/python bench/query_speed.py [--rows 100000] [--runs 30]

Prints a table and writes bench/results/query_speed.json (not committed).
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
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from loom_dagster import api  # noqa: E402
from loom_dagster.datasets.model import (  # noqa: E402
    ColumnType,
    DatasetColumn,
    DatasetSchema,
)
from loom_dagster.objectstore import ObjectStore  # noqa: E402
from loom_dagster.query.run import Ceilings  # noqa: E402
from loom_dagster.settings import LoomSettings  # noqa: E402
from tests.support.query_datasets import serve_in_catalog  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "query_speed.json"
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
PLAN = {
    "datasets": [{"alias": "u", "dataset": "usage.csv#t0"}],
    "groups": [{"alias": "u", "column": "host"}],
    "aggregates": [
        {"fn": "sum", "alias": "u", "column": "bytes"},
        {"fn": "avg", "alias": "u", "column": "cost"},
        {"fn": "count"},
        {"fn": "max", "alias": "u", "column": "day"},
    ],
}
BARE = (
    "SELECT k0, sum(k2), sum(k3), count(k3), count(*), max(k1) "
    "FROM read_parquet($p) AS t(r, k0, k1, k2, k3) GROUP BY k0 ORDER BY k0"
)


def table(rows: int, schema: DatasetSchema) -> pa.Table:
    start = date(2026, 1, 1)
    instant = datetime(2026, 1, 1, tzinfo=UTC)
    values: dict[str, list[Any]] = {
        "_row_id": list(range(rows)),
        "host": [f"host-{i % 50:02d}" for i in range(rows)],
        "day": [start + timedelta(days=i % 365) for i in range(rows)],
        "bytes": [Decimal(i * 7919 % 1_000_003).scaleb(-3) for i in range(rows)],
        "cost": [Decimal(i % 9973).scaleb(-2) for i in range(rows)],
        "took": [Decimal(i % 600) for i in range(rows)],
        "load": [(i % 1000) / 7 for i in range(rows)],
        "ratio": [(i % 97) / 97 for i in range(rows)],
        "at": [instant + timedelta(minutes=i) for i in range(rows)],
        "up": [i % 3 != 0 for i in range(rows)],
        "note": [f"row {i}" for i in range(rows)],
    }
    arrow = schema.arrow_schema()
    return pa.Table.from_arrays(
        [pa.array(values[f.name], type=f.type) for f in arrow], schema=arrow
    )


def serve(settings: LoomSettings, rows: int) -> Path:
    """A served dataset of `rows` rows; the path of its snapshot file."""
    schema = DatasetSchema(tuple(DatasetColumn(n, t) for n, t in COLUMNS))
    sink = pa.BufferOutputStream()
    pq.write_table(table(rows, schema), sink)
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


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def machine() -> dict[str, Any]:
    return {
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "duckdb": duckdb.__version__,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    ceilings = Ceilings()
    with tempfile.TemporaryDirectory(prefix="loom-query-bench-") as home:
        os.environ["LOOM_HOME"] = home
        os.environ.pop("LOOM_OBJECT_STORE_URL", None)
        settings = LoomSettings.from_env()
        settings.prepare()
        path = serve(settings, args.rows)

        def loom() -> list[tuple[Any, ...]]:
            return list(api.query(PLAN, ceilings=ceilings).rows)

        def bare() -> list[tuple[Any, ...]]:
            with duckdb.connect(":memory:") as con:
                con.execute(f"SET threads = {ceilings.threads}")
                return con.execute(BARE, {"p": str(path)}).fetchall()

        answer, baseline = loom(), bare()
        assert [r[0] for r in answer] == [r[0] for r in baseline]
        assert [r[1] for r in answer] == [r[1] for r in baseline]  # the same exact sums
        for _ in range(3):
            loom(), bare()
        times: dict[str, list[float]] = {"loom": [], "baseline": []}
        for _ in range(args.runs):
            for name, run in (("loom", loom), ("baseline", bare)):
                started = time.perf_counter()
                run()
                times[name].append((time.perf_counter() - started) * 1000)
    summary = {
        name: {
            "p50_ms": round(statistics.median(values), 1),
            "p95_ms": round(percentile(values, 0.95), 1),
            "min_ms": round(min(values), 1),
        }
        for name, values in times.items()
    }
    overhead = summary["loom"]["p50_ms"] - summary["baseline"]["p50_ms"]
    report = {
        "machine": machine(),
        "rows": args.rows,
        "columns": len(COLUMNS),
        "runs": args.runs,
        "groups": len(answer),
        "results": summary,
        "overhead_p50_ms": round(overhead, 1),
        "targets": {"overhead_ms": 50, "p95_ms": 1000},
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(report, indent=2) + "\n")
    print(
        f"{args.rows:,} rows x {len(COLUMNS)} columns, {len(answer)} groups, {args.runs} runs each"
    )
    print(f"{'':10} {'p50 ms':>8} {'p95 ms':>8} {'min ms':>8}")
    for name, values in summary.items():
        print(f"{name:10} {values['p50_ms']:8.1f} {values['p95_ms']:8.1f} {values['min_ms']:8.1f}")
    print(f"overhead (p50) {overhead:.1f} ms")
    held = overhead < 50 and summary["loom"]["p95_ms"] <= 1000
    print("targets held" if held else "targets MISSED")
    return 0 if held else 1


if __name__ == "__main__":
    raise SystemExit(main())
