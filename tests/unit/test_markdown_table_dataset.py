"""A Markdown pipe table reaches the datasets as a CSV's table does, through the server's own
contract check and inference, with no change of the pipeline (issue 36)."""

from __future__ import annotations

import json
from decimal import Decimal

from extractor_sandbox.formats.markdown import extract_markdown
from loom_dagster.contract.validate import parse_artifact
from loom_dagster.datasets.infer import infer, table_keys
from loom_dagster.datasets.model import ROW_ID, ColumnType
from loom_dagster.datasets.typing import type_rows

RUNBOOK = """\
# Disks

| Host | Free GB | Checked |
|:-----|--------:|---------|
| db-1 | 12.5 | 2026-01-02 |
| db-2 | 40 | 2026-01-03 |
"""


def test_a_pipe_table_is_a_typed_dataset() -> None:
    raw = json.dumps(extract_markdown(RUNBOOK)).encode()
    artifact = parse_artifact(raw, expected_format="markdown", original_size=len(raw))
    [table] = artifact.tables
    [key] = table_keys(artifact)
    inferred = infer(artifact, table, key, source="home", path="runbook.md")

    assert inferred.name == "runbook.md#table 1"
    assert [(c.name, c.type) for c in inferred.schema.columns] == [
        ("Host", ColumnType.TEXT),
        ("Free GB", ColumnType.DECIMAL),
        ("Checked", ColumnType.DATE),
    ]
    assert inferred.questions == ()
    typed = type_rows(inferred.schema, inferred.positions, table.rows)
    assert typed.rows_rejected == 0
    rows = [{k: v for k, v in row.items() if k != ROW_ID} for row in typed.table.to_pylist()]
    assert [(row["Host"], row["Free GB"]) for row in rows] == [
        ("db-1", Decimal("12.5")),
        ("db-2", Decimal("40")),
    ]
