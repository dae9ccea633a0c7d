"""What the Dagster UI is told of each revision's datasets: a materialization of loom/datasets
per revision with tables (a TableSchema each, rows stored and rejected, state, complete), and
its `typed` check: a warning while a dataset needs clarification, an error when rows were
rejected."""

from __future__ import annotations

from pathlib import Path

from dagster import (
    AssetCheckKey,
    AssetKey,
    DagsterEventType,
    DagsterInstance,
    EventRecordsFilter,
    TableColumn,
    TableSchema,
)

from loom_dagster import api

DATASETS = AssetKey(["loom", "datasets"])


def test_each_revision_with_tables_shows_its_datasets_and_their_check(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "clean.csv").write_text("host,disk\nalpha,1\nbeta,2\n")
    (folder / "mixed.csv").write_text("host,disk\nalpha,1\nbeta,n/a\n")
    (folder / "huge.csv").write_text("host,disk\nalpha,1\nbeta,1e300\n")
    (folder / "note.txt").write_text("No table here.\n")
    report = api.ingest_folder(folder)
    revision = {o.path: o.revision for o in report.outcomes}
    assert {o.status for o in report.outcomes} == {"published"}

    records = DagsterInstance.get().get_event_records(
        EventRecordsFilter(event_type=DagsterEventType.ASSET_MATERIALIZATION, asset_key=DATASETS)
    )
    shown = {
        r.asset_materialization.partition: r.asset_materialization.metadata  # type: ignore[union-attr]
        for r in records
    }
    # Every published revision: one with no table says so, row count 0, and is green in the UI
    # (issue 28 part 2: a backfill over a healthy mixed folder no longer ends "Failed").
    assert set(shown) == set(revision.values())
    none = shown[revision["note.txt"]]
    assert none["status"].value == "no tables"
    assert (none["datasets"].value, none["dagster/row_count"].value) == (0, 0)
    clean = shown[revision["clean.csv"]]
    assert clean["schema 1"].value == TableSchema(
        columns=[TableColumn("host", "text"), TableColumn("disk", "decimal")]
    )
    assert (clean["rows_stored"].value, clean["rows_rejected"].value) == (2, 0)
    assert clean["dagster/row_count"].value == 2
    assert clean["dagster/column_schema"].value == clean["schema 1"].value
    assert clean["state"].value == "clean.csv#clean.csv: inferred"
    assert clean["complete"].value is True
    huge = shown[revision["huge.csv"]]
    assert (huge["rows_stored"].value, huge["rows_rejected"].value) == (1, 1)
    assert shown[revision["mixed.csv"]]["state"].value == "mixed.csv#mixed.csv: needs_clarification"

    history = DagsterInstance.get().event_log_storage.get_asset_check_execution_history(
        AssetCheckKey(DATASETS, "typed"), limit=100
    )
    evaluations = {
        r.partition: r.event.dagster_event.event_specific_data  # type: ignore[union-attr]
        for r in history
    }
    # Every revision's check ran: one with no table passes.
    assert set(evaluations) == set(revision.values())
    assert all(r.status.value != "PLANNED" for r in history)
    assert evaluations[revision["note.txt"]].passed
    assert evaluations[revision["note.txt"]].metadata["datasets"].value == 0
    assert evaluations[revision["clean.csv"]].passed
    mixed = evaluations[revision["mixed.csv"]]
    assert (mixed.passed, mixed.severity.value) == (False, "WARN")
    assert mixed.description == (
        "1 datasets need clarification: column 'disk' holds values of more than one kind: "
        "held as text"
    )
    rejected = evaluations[revision["huge.csv"]]
    assert (rejected.passed, rejected.severity.value) == (False, "ERROR")
    assert rejected.description == "1 rows rejected"
    # The rejected row's reason, as `loom datasets show` gives it.
    [dataset] = [d for d in api.datasets() if d.path == "huge.csv"]
    assert [(r.row, r.reason) for r in dataset.rejects] == [
        (1, "column 'disk': '1e+300' is past what a decimal holds (10^29)")
    ]
