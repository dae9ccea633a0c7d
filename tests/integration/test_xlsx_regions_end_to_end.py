"""A sheet of several regions through the whole path (issue 16): the real extractor service splits
it into tables, and `loom ingest` publishes a dataset for each, keyed by sheet and table id, with
the title and the note searchable as paragraphs."""

from __future__ import annotations

import io
from decimal import Decimal
from pathlib import Path

from loom_dagster import api
from loom_dagster.datasets.model import ROW_ID
from tests.integration.loom_command import loom
from tests.integration.test_datasets_end_to_end import rows


def workbook() -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    sheet = book.active
    assert sheet is not None
    sheet.title = "Report"
    sheet["A1"] = "Quarterly fleet report"
    sheet.append([])
    sheet.append(["ship", "crew"])
    sheet.append(["Ark", 8])
    sheet.append(["Bark", 3])
    sheet.append([])
    sheet.append(["port", "calls"])
    sheet.append(["Hull", 12])
    sheet.append([])
    sheet.append(["Figures are those logged by the harbour office"])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def test_a_sheet_of_two_tables_publishes_two_datasets(loom_home: Path, tmp_path: Path) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "fleet.xlsx").write_bytes(workbook())
    result = loom("ingest", str(folder))
    assert result.returncode == 0, result.stderr

    found = sorted(api.datasets(), key=lambda d: d.table_id)
    assert [(d.name, d.table_id) for d in found] == [
        ("fleet.xlsx#Report", "t0"),
        ("fleet.xlsx#Report", "t1"),
    ]
    assert found[0].dataset_id != found[1].dataset_id
    assert rows(found[0]) == [
        {ROW_ID: 0, "ship": "Ark", "crew": Decimal(8)},
        {ROW_ID: 1, "ship": "Bark", "crew": Decimal(3)},
    ]
    assert rows(found[1]) == [{ROW_ID: 0, "port": "Hull", "calls": Decimal(12)}]
    assert all(d.complete for d in found)

    search = loom("search", "harbour office")
    assert search.returncode == 0, search.stderr
    assert "fleet.xlsx" in search.stdout
