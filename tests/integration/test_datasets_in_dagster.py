"""The example's user asset (examples/datasets_in_dagster.py) on a dataset Loom ingested for
real: the frame's values and dtypes are the workbook's, `dagster asset materialize` runs it as
a process, and a new revision of the workbook makes it stale (the instance's staleness
resolver) and its automation condition requests it again.

One test, so one ingest pair serves every assertion: the ingests and the `dagster` process are
most of its 20-60 s (the latter on a loaded 2-core machine).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path
from types import ModuleType

import dagster as dg
from openpyxl import Workbook, load_workbook

from loom_dagster import api
from loom_dagster.assets.dataset_sources import dataset_key
from tests.support.dataset_assets import StaleStatus, observe, stale_status

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "datasets_in_dagster.py"
WORKBOOK = ROOT / "examples" / "docs" / "runbooks" / "disk-usage.xlsx"
NAME = "runbooks/disk-usage.xlsx#Disk usage"
ASSET = dg.AssetKey("volumes_over_75")


def example() -> ModuleType:
    spec = importlib.util.spec_from_file_location("datasets_in_dagster_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_example_asset_reads_the_workbook_runs_as_a_process_and_goes_stale(
    loom_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "docs"  # the source is named "docs", as the example's namespace says
    (folder / "runbooks").mkdir(parents=True)
    shutil.copy(WORKBOOK, folder / "runbooks" / "disk-usage.xlsx")
    report = api.ingest_folder(folder)
    assert {o.status for o in report.outcomes} == {"published"}

    # The frame is the workbook's rows, typed.
    frame = api.read(NAME, sources=["docs"])
    sheet = load_workbook(WORKBOOK).active
    assert sheet is not None
    header, *rows = [list(r) for r in sheet.iter_rows(values_only=True)]
    assert list(frame.columns) == header
    assert {c: str(t) for c, t in frame.dtypes.items()} == {
        "host": "string",
        "volume": "string",
        "used %": "decimal128(38, 9)[pyarrow]",  # inferred: a number, held exactly
        "checked": "string",  # the sheet holds the dates as text
    }
    for (_, got), want in zip(frame.iterrows(), rows, strict=True):
        assert [got["host"], got["volume"], got["checked"]] == [want[0], want[1], want[3]]
        assert got["used %"] == Decimal(repr(want[2]))
    assert frame.attrs["loom_complete"] is True

    # `dagster asset materialize` runs the example's asset as a process, on this home.
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [str(Path(sys.executable).parent / "dagster"), "asset", "materialize",
         "-f", str(EXAMPLE), "--select", "volumes_over_75"],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    instance = dg.DagsterInstance.get()
    materialization = instance.get_latest_materialization_event(ASSET)
    assert materialization is not None and materialization.asset_materialization is not None
    metadata = materialization.asset_materialization.metadata
    assert metadata["hosts"].value == "invoice-worker-1, ledger-db-1"
    assert metadata["loom snapshot"].value == frame.attrs["loom_snapshot"]

    # The asset graph has the dataset -> asset edge; a new workbook revision makes it stale.
    defs = example().defs
    assert defs.resolve_asset_graph().get(ASSET).parent_keys == {dataset_key(NAME)}
    observe(defs, instance, dataset_key(NAME))
    cursor = dg.evaluate_automation_conditions(defs=defs, instance=instance).cursor
    book = Workbook()
    changed = book.active
    assert changed is not None
    changed.title = "Disk usage"
    for row in (header, *rows, ["mail-1", "/var/mail", 99.0, "2026-11-04"]):
        changed.append(row)
    book.save(folder / "runbooks" / "disk-usage.xlsx")
    assert {o.status for o in api.ingest_folder(folder).outcomes} == {"published"}
    observe(defs, instance, dataset_key(NAME))
    assert stale_status(instance, defs, ASSET) is StaleStatus.STALE
    requested = dg.evaluate_automation_conditions(defs=defs, instance=instance, cursor=cursor)
    assert requested.get_num_requested(ASSET) == 1
