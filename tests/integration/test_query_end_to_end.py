"""End to end through `loom ingest` and `loom query`: a CSV, an XLSX of two sheets, a Parquet
file and a PDF with a ruled table publish datasets, and typed queries over them answer what
this test computes itself from the values it wrote (issue 14, "Done means", first bullet)."""

from __future__ import annotations

import csv
import json
from datetime import UTC, date, datetime
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Any

import openpyxl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from bench.docparse.generate_pdf import Doc
from tests.integration.loom_command import loom

USAGE = [
    ("web1", date(2026, 10, 30), Decimal("1.25")),
    ("web1", date(2026, 11, 1), Decimal("2.50")),
    ("db1", date(2026, 11, 15), Decimal("10.125")),
    ("web2", date(2026, 11, 30), Decimal("0.1")),
    ("db1", date(2026, 12, 1), Decimal("3")),
    ("web2", date(2026, 11, 2), Decimal("0.000000001")),
]
HOSTS = [("web1", "web"), ("web2", "web"), ("db1", "data")]
RACKS = [("r1", 42), ("r2", 24)]
METRICS = [
    ("web1", datetime(2026, 11, 1, 23, 30, tzinfo=UTC)),
    ("db1", datetime(2026, 12, 2, tzinfo=UTC)),
]
SHIPPED = [("North", 100, "2024-01-10"), ("South", 117, "2024-02-11"), ("East", 134, "2024-03-12")]


def write_folder(folder: Path, usage: list[tuple[str, date, Decimal]]) -> None:
    folder.mkdir(exist_ok=True)
    with (folder / "usage.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["host", "day", "bytes"])
        writer.writerows((h, d.isoformat(), str(b)) for h, d, b in usage)
    book = openpyxl.Workbook()
    hosts = book.active
    hosts.title = "hosts"
    for row in [("host", "team"), *HOSTS]:
        hosts.append(row)
    racks = book.create_sheet("racks")
    for row in [("rack", "slots"), *RACKS]:
        racks.append(row)
    book.save(folder / "inventory.xlsx")
    pq.write_table(
        pa.table(
            {
                "host": [h for h, _ in METRICS],
                "at": pa.array([t for _, t in METRICS], pa.timestamp("us", tz="UTC")),
            }
        ),
        folder / "metrics.parquet",
    )
    doc = Doc("report")
    doc.heading("Shipments", 1, 16)
    doc.table(
        [["Region", "Units", "Shipped"], *[[r, str(u), s] for r, u, s in SHIPPED]],
        [110, 70, 100],
        ruled=True,
    )
    data, _ = doc.save()
    (folder / "report.pdf").write_bytes(data)


def ask(plan: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    plan_file = tmp_path / "plan.json"
    plan_file.write_text(json.dumps(plan))
    result = loom("query", str(plan_file), "--json")
    assert result.returncode == 0, result.stderr
    answer: dict[str, Any] = json.loads(result.stdout)
    return answer


def exact(values: list[Decimal]) -> Decimal:
    with localcontext(prec=80):
        return sum(values, Decimal(0))


def average(values: list[Decimal]) -> Decimal:
    """Cut at 18 places, then half away from zero to nine: computed with fractions."""
    cut = Fraction(int(Fraction(exact(values)) / len(values) * 10**18), 10**18) * 10**9
    whole = int(cut) + (1 if cut - int(cut) >= Fraction(1, 2) else 0)
    return Decimal(whole).scaleb(-9)


def nine(value: Decimal) -> str:
    return str(value.quantize(Decimal("0.000000001")))


USAGE_NAME, HOSTS_NAME = "usage.csv#usage.csv", "inventory.xlsx#hosts"
PDF_NAME = "report.pdf#report.pdf page 1 table 1"


@pytest.mark.slow
def test_ingested_tables_answer_typed_queries(loom_home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    write_folder(folder, USAGE)
    ingest = loom("ingest", str(folder))
    assert ingest.returncode == 0, ingest.stderr
    listed = loom("datasets", "list")
    assert listed.returncode == 0, listed.stderr
    for name in (
        USAGE_NAME,
        HOSTS_NAME,
        "inventory.xlsx#racks",
        "metrics.parquet#metrics.parquet",
        PDF_NAME,
    ):
        assert name in listed.stdout

    # A group-by with sum and avg.
    by_host = ask(
        {
            "datasets": [{"alias": "u", "dataset": USAGE_NAME}],
            "groups": [{"alias": "u", "column": "host"}],
            "aggregates": [
                {"fn": "sum", "alias": "u", "column": "bytes"},
                {"fn": "avg", "alias": "u", "column": "bytes"},
            ],
        },
        tmp_path,
    )
    expected = []
    for host in sorted({h for h, _, _ in USAGE}):
        values = [b for h, _, b in USAGE if h == host]
        expected.append([host, nine(exact(values)), nine(average(values))])
    assert by_host["rows"] == expected
    assert by_host["receipt"]["complete"] is True

    # A filter on a date range.
    november = ask(
        {
            "datasets": [{"alias": "u", "dataset": USAGE_NAME}],
            "filters": [
                {"alias": "u", "column": "day", "op": ">=", "value": "2026-11-01"},
                {"alias": "u", "column": "day", "op": "<=", "value": "2026-11-30"},
            ],
            "aggregates": [{"fn": "count"}, {"fn": "sum", "alias": "u", "column": "bytes"}],
        },
        tmp_path,
    )
    in_range = [b for _, d, b in USAGE if date(2026, 11, 1) <= d <= date(2026, 11, 30)]
    assert november["rows"] == [[len(in_range), nine(exact(in_range))]]

    # A join of two datasets: the CSV's hosts to the workbook's sheet.
    by_team = ask(
        {
            "datasets": [
                {"alias": "u", "dataset": USAGE_NAME},
                {"alias": "h", "dataset": HOSTS_NAME},
            ],
            "joins": [{"alias": "h", "to": "u", "on": [["host", "host"]]}],
            "groups": [{"alias": "h", "column": "team"}],
            "aggregates": [{"fn": "sum", "alias": "u", "column": "bytes"}, {"fn": "count"}],
        },
        tmp_path,
    )
    teams = dict(HOSTS)
    assert by_team["rows"] == [
        [
            team,
            nine(exact([b for h, _, b in USAGE if teams[h] == team])),
            sum(1 for h, _, _ in USAGE if teams[h] == team),
        ]
        for team in sorted(set(teams.values()))
    ]
    assert [s["name"] for s in by_team["receipt"]["snapshots"]] == [USAGE_NAME, HOSTS_NAME]

    # The PDF's ruled table and the Parquet file's timestamps, by month in UTC.
    units = ask(
        {
            "datasets": [{"alias": "p", "dataset": PDF_NAME}],
            "filters": [{"alias": "p", "column": "Shipped", "op": ">=", "value": "2024-02-01"}],
            "aggregates": [{"fn": "sum", "alias": "p", "column": "Units"}],
        },
        tmp_path,
    )
    assert units["rows"] == [[nine(Decimal(sum(u for _, u, s in SHIPPED if s >= "2024-02-01")))]]
    months = ask(
        {
            "datasets": [{"alias": "m", "dataset": "metrics.parquet#metrics.parquet"}],
            "groups": [{"alias": "m", "column": "at", "by": "month"}],
            "aggregates": [{"fn": "count"}],
        },
        tmp_path,
    )
    assert months["rows"] == [[t.date().replace(day=1).isoformat(), 1] for _, t in METRICS]

    # The same answer through `loom sql`, printed as a table with its receipt.
    printed = loom(
        "sql", f'SELECT host, sum(bytes) AS total FROM "{USAGE_NAME}" GROUP BY host ORDER BY host'
    )
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    assert lines[0].split() == ["host", "total"]
    assert [line.split() for line in lines[2:5]] == [[h, s] for h, s, _ in expected]
    assert f"read {USAGE_NAME}: " in printed.stdout

    # A changed file publishes a new snapshot, and the query reads it.
    before = by_host["receipt"]["snapshots"][0]["snapshot"]
    changed = [*USAGE, ("db1", date(2026, 11, 20), Decimal("5"))]
    write_folder(folder, changed)
    again = loom("ingest", str(folder))
    assert again.returncode == 0, again.stderr
    after = ask(
        {
            "datasets": [{"alias": "u", "dataset": USAGE_NAME}],
            "aggregates": [{"fn": "sum", "alias": "u", "column": "bytes"}],
        },
        tmp_path,
    )
    assert after["rows"] == [[nine(exact([b for _, _, b in changed]))]]
    assert after["receipt"]["snapshots"][0]["snapshot"] != before
