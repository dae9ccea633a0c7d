"""Datasets through the whole path: `loom ingest` of a folder of tables publishes typed datasets,
switched with the chunks; `loom datasets` lists, shows and approves them."""

from __future__ import annotations

import datetime as dt
import io
import shutil
from decimal import Decimal
from pathlib import Path

import duckdb
import pytest

from loom_dagster import api
from loom_dagster.datasets.model import ROW_ID, Dataset
from loom_dagster.extractor.local import RunningExtractor
from loom_dagster.extractor.settings import ENV_URL
from loom_dagster.objectstore import ObjectStore
from loom_dagster.settings import LoomSettings
from tests.integration.loom_command import loom
from tests.integration.test_extractor_down import a_port_nobody_listens_on

RULED_PDF = Path(__file__).resolve().parents[2] / "bench" / "docparse" / "pdf" / "ruled_table.pdf"


def csv_file(extra: str = "") -> bytes:
    return ("host,day,disk\nalpha,2024-01-01,10.5\nbeta,2024-01-02,20\n" + extra).encode()


def xlsx_file() -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    hosts = book.active
    assert hosts is not None
    hosts.title = "Hosts"
    hosts.append(["host", "rack"])
    hosts.append(["alpha", 1])
    hosts.append(["beta", 2])
    usage = book.create_sheet("Usage")
    usage.append(["host", "used", "ok"])
    usage.append(["alpha", 1.25, True])
    usage.append(["beta", "=1/0", False])  # openpyxl writes no cached value: no error cell
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def parquet_file() -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"task": ["a", "b"], "cost": pa.array([10, 250], pa.int64())})
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return bytes(sink.getvalue().to_pybytes())


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "disk.csv").write_bytes(csv_file())
    (docs / "book.xlsx").write_bytes(xlsx_file())
    (docs / "costs.parquet").write_bytes(parquet_file())
    shutil.copy(RULED_PDF, docs / "ruled.pdf")
    return docs


def served() -> dict[str, Dataset]:
    return {d.name: d for d in api.datasets()}


def rows(dataset: Dataset) -> list[dict[str, object]]:
    """The snapshot's rows, read by DuckDB from the stored Parquet file (not by loom's code)."""
    store = ObjectStore(LoomSettings.from_env().object_store_url)
    path = store._path(dataset.snapshot_key)
    con = duckdb.connect()
    try:
        cursor = con.execute(f"SELECT * FROM read_parquet('{path}') ORDER BY {ROW_ID}")
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
    finally:
        con.close()


def snapshot_exists(dataset: Dataset) -> bool:
    return ObjectStore(LoomSettings.from_env().object_store_url).exists(dataset.snapshot_key)


def test_loom_ingest_publishes_a_dataset_per_table(loom_home: Path, folder: Path) -> None:
    result = loom("ingest", str(folder))
    assert result.returncode == 0, result.stderr

    found = served()
    assert sorted(found) == [
        "book.xlsx#Hosts",
        "book.xlsx#Usage",
        "costs.parquet#costs.parquet",
        "disk.csv#disk.csv",
        "ruled.pdf#ruled.pdf page 1 table 1",
    ], sorted(found)
    disk = found["disk.csv#disk.csv"]
    assert [(c.name, c.type.value) for c in disk.schema.columns] == [
        ("host", "text"), ("day", "date"), ("disk", "decimal"),
    ]  # fmt: skip
    assert rows(disk) == [
        {ROW_ID: 0, "host": "alpha", "day": dt.date(2024, 1, 1), "disk": Decimal("10.5")},
        {ROW_ID: 1, "host": "beta", "day": dt.date(2024, 1, 2), "disk": Decimal("20")},
    ]
    assert disk.state.value == "inferred" and disk.complete
    hosts = found["book.xlsx#Hosts"]
    assert rows(hosts) == [
        {ROW_ID: 0, "host": "alpha", "rack": Decimal(1)},
        {ROW_ID: 1, "host": "beta", "rack": Decimal(2)},
    ]
    costs = found["costs.parquet#costs.parquet"]
    assert [r["cost"] for r in rows(costs)] == [Decimal(10), Decimal(250)]
    pdf = found["ruled.pdf#ruled.pdf page 1 table 1"]
    assert pdf.state.value == "needs_clarification"
    assert pdf.questions == ("column 'Version' holds values of more than one kind: held as text",)
    assert rows(pdf)[0]["Units"] == Decimal(100)

    listing = loom("datasets", "list")
    assert listing.returncode == 0, listing.stderr
    assert len(listing.stdout.splitlines()) == 5
    assert f"{disk.dataset_id}  inferred             2 rows  0 rejected  disk.csv#disk.csv" in (
        listing.stdout.splitlines()
    )
    shown = loom("datasets", "show", pdf.dataset_id)
    assert shown.returncode == 0, shown.stderr
    assert "state     needs_clarification" in shown.stdout
    assert "  Version: text" in shown.stdout


def test_a_changed_file_serves_a_new_snapshot_and_a_deleted_one_or_source_none(
    loom_home: Path, folder: Path
) -> None:
    api.ingest_folder(folder)
    before = served()["disk.csv#disk.csv"]
    (folder / "disk.csv").write_bytes(csv_file("gamma,2024-01-03,30\n"))
    api.ingest_folder(folder)
    after = served()["disk.csv#disk.csv"]
    assert after.dataset_id == before.dataset_id  # stable across revisions
    assert after.snapshot != before.snapshot and after.revision != before.revision
    assert after.rows_stored == 3
    assert not snapshot_exists(before)  # no row serves it: deleted after the switch
    assert snapshot_exists(after)

    (folder / "disk.csv").unlink()
    api.ingest_folder(folder)
    assert "disk.csv#disk.csv" not in served()
    assert not snapshot_exists(after)

    rest = list(served().values())
    assert len(rest) == 4
    removed = loom("sources", "remove", "docs", "--yes")
    assert removed.returncode == 0, removed.stderr
    assert served() == {}
    assert not any(snapshot_exists(d) for d in rest)


@pytest.mark.slow
def test_a_failed_run_leaves_the_earlier_snapshot_serving(
    loom_home: Path,
    folder: Path,
    monkeypatch: pytest.MonkeyPatch,
    reference_service: RunningExtractor,
) -> None:
    api.ingest_folder(folder)
    before = served()["disk.csv#disk.csv"]
    (folder / "disk.csv").write_bytes(csv_file("gamma,2024-01-03,30\n"))
    monkeypatch.setenv(ENV_URL, f"http://127.0.0.1:{a_port_nobody_listens_on()}")
    monkeypatch.setenv("LOOM_RETRY_ATTEMPTS", "0")
    api.ingest_folder(folder)
    now = served()["disk.csv#disk.csv"]
    assert (now.revision, now.snapshot) == (before.revision, before.snapshot)
    assert snapshot_exists(now) and len(rows(now)) == 2


def test_approve_retypes_under_a_new_snapshot_and_a_later_revision_keeps_it(
    loom_home: Path, folder: Path
) -> None:
    api.ingest_folder(folder)
    disk = served()["disk.csv#disk.csv"]

    bad = loom("datasets", "approve", disk.dataset_id, "--type", "disk=number")
    assert bad.returncode == 1
    assert bad.stderr.startswith("loom: invalid_type: 'number' is no column type (one of text,")
    unknown = loom("datasets", "approve", disk.dataset_id, "--type", "nope=text")
    assert (
        unknown.stderr.strip() == "loom: unknown_column: disk.csv#disk.csv stores no column 'nope'"
    )

    done = loom(
        "datasets", "approve", disk.dataset_id, "--type", "disk=double", "--revision", disk.revision
    )
    assert done.returncode == 0, done.stderr
    approved = served()["disk.csv#disk.csv"]
    assert approved.state.value == "approved" and approved.snapshot != disk.snapshot
    assert [(c.name, c.type.value, c.approved) for c in approved.schema.columns][2] == (
        "disk", "double", True,
    )  # fmt: skip
    assert [r["disk"] for r in rows(approved)] == [10.5, 20.0]
    assert not snapshot_exists(disk)

    (folder / "disk.csv").write_bytes(csv_file("gamma,2024-01-03,30\n"))
    api.ingest_folder(folder)
    later = served()["disk.csv#disk.csv"]
    assert later.revision != approved.revision
    assert later.state.value == "approved"
    assert later.schema == approved.schema
    assert [r["disk"] for r in rows(later)] == [10.5, 20.0, 30.0]

    stale = loom("datasets", "approve", disk.dataset_id, "--revision", approved.revision)
    assert stale.returncode == 1
    assert stale.stderr.strip() == (
        f"loom: revision_conflict: disk.csv#disk.csv was read at revision {approved.revision}; its "
        f"document serves revision {later.revision} now: show it again and approve what it serves"
    )
    assert served()["disk.csv#disk.csv"].snapshot == later.snapshot


def test_mistakes_are_one_line_with_their_code(loom_home: Path) -> None:
    unknown = loom("datasets", "show", "nope")
    assert (unknown.returncode, unknown.stderr.strip()) == (
        1,
        "loom: unknown_dataset: no served dataset has the id or name 'nope'",
    )
    approve = loom("datasets", "approve", "nope", "--type", "x=text")
    assert approve.stderr.strip() == (
        "loom: unknown_dataset: no served dataset has the id or name 'nope'"
    )
    malformed = loom("datasets", "approve", "nope", "--type", "text")
    assert malformed.returncode == 2
    assert (
        malformed.stderr.strip()
        .splitlines()[-1]
        .endswith("argument --type: must be COLUMN=TYPE, not 'text'")
    )
    assert loom("datasets", "list").stdout == ""
