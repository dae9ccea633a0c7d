"""`loom query` and `loom sql` as commands: a table or JSON with the receipt, and every mistake
one line with its code."""

from __future__ import annotations

import io
import json
from decimal import Decimal
from pathlib import Path

import pytest

from loom_dagster import cli
from loom_dagster.datasets.model import (
    ColumnType,
    DatasetColumn,
    DatasetSchema,
)
from loom_dagster.objectstore import ObjectStore
from loom_dagster.settings import LoomSettings
from tests.support.query_datasets import parquet_bytes, serve_in_catalog

SCHEMA = DatasetSchema(
    (DatasetColumn("host", ColumnType.TEXT), DatasetColumn("n", ColumnType.DECIMAL))
)
ROWS = [("a", Decimal("1.5")), ("b\x1b[2J", Decimal(2)), ("a", Decimal("0.25"))]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    monkeypatch.setenv("LOOM_HOME", str(home))
    monkeypatch.delenv("LOOM_OBJECT_STORE_URL", raising=False)
    settings = LoomSettings.from_env()
    settings.prepare()
    serve_in_catalog(
        settings.catalog_path,
        ObjectStore(settings.object_store_url),
        parquet_bytes(SCHEMA, ROWS),
        SCHEMA,
        source="docs",
        path="a.csv",
        sha="1" * 64,
        snapshot="s1",
        rows_stored=3,
        rows_rejected=1,
    )
    return home


PLAN = {
    "datasets": [{"alias": "a", "dataset": "a.csv#t0"}],
    "groups": [{"alias": "a", "column": "host"}],
    "aggregates": [{"fn": "sum", "alias": "a", "column": "n"}, {"fn": "count"}],
}


def test_query_prints_a_table_with_its_receipt(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps(PLAN))
    assert cli.main(["query", str(plan)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["a.host", "sum", "a.n", "count"]
    assert out[2].split() == ["a", "1.750000000", "2"]
    assert out[3].split() == ["b\\x1b[2J", "2.000000000", "1"]  # a document's text, escaped
    assert out[4] == "(2 rows)"
    assert out[5].startswith("read a: ds_") and out[5].endswith("snapshot s1  a.csv#t0")
    assert out[6] == "incomplete: a: 1 rows rejected"


def test_query_reads_stdin_and_answers_json(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(PLAN)))
    assert cli.main(["query", "-", "--json"]) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["rows"] == [["a", "1.750000000", 2], ["b\u001b[2J", "2.000000000", 1]]
    assert [c["name"] for c in answer["columns"]] == ["c0", "c1", "c2"]
    receipt = answer["receipt"]
    assert receipt["complete"] is False and receipt["reasons"] == ["a: 1 rows rejected"]
    assert receipt["snapshots"][0]["snapshot"] == "s1"
    assert receipt["parameters"]["s0"] == receipt["snapshots"][0]["snapshot_key"]
    assert receipt["plan"]["groups"] == [
        {"alias": "a", "column": "host", "type": "text", "by": None}
    ]
    assert receipt["statement"].startswith("SELECT d0.k0 AS c0")


def test_sql_prints_a_table(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["sql", 'SELECT count(*) AS rows FROM "a.csv#t0" WHERE n > 1']) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:3] == ["rows", "----", "2"]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["query", "/nonexistent/plan.json"],
            "loom: invalid_plan: cannot read the plan /nonexistent/plan.json: [Errno 2] No such file or directory: '/nonexistent/plan.json'",
        ),
        (
            ["sql", "ATTACH '/nonexistent/x.db' AS x"],
            "loom: sql_refused: only a SELECT is allowed, not 'ATTACH'",
        ),
        (
            ["sql", 'SELECT * FROM "a.csv#t0"', "--max-rows", "2"],
            "loom: too_many_rows: the answer has more than 2 rows; filter or group it",
        ),
    ],
)
def test_a_mistake_is_one_line_with_its_code(
    home: Path, argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(argv) == 1
    captured = capsys.readouterr()
    assert captured.err == message + "\n"
    assert captured.out == ""


@pytest.mark.parametrize(
    ("flag", "value", "message"),
    [
        ("--timeout", "nan", "the time limit must be above 0 and at most 3,600 s, not nan"),
        ("--timeout", "inf", "the time limit must be above 0 and at most 3,600 s, not inf"),
        ("--timeout", "-1", "the time limit must be above 0 and at most 3,600 s, not -1.0"),
        ("--timeout", "0", "the time limit must be above 0 and at most 3,600 s, not 0.0"),
        (
            "--timeout",
            "1e9",
            "the time limit must be above 0 and at most 3,600 s, not 1000000000.0",
        ),
        (
            "--max-rows",
            "99999999999999999999999",
            "the row limit must be a whole number from 1 to 1,000,000, not 99999999999999999999999",
        ),
        ("--max-rows", "0", "the row limit must be a whole number from 1 to 1,000,000, not 0"),
    ],
)
@pytest.mark.parametrize("command", ["sql", "query"])
def test_an_invalid_ceiling_is_refused_before_anything_runs(
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    command: str,
    flag: str,
    value: str,
    message: str,
) -> None:
    """Issue 34 row 4: nan ran and said "past its time limit (nan s)", inf ran unbounded, a
    huge row count failed inside DuckDB."""
    from loom_dagster.api import tables

    def ran(*_: object, **__: object) -> None:
        raise AssertionError("the query ran")

    monkeypatch.setattr(tables, "sql", ran)
    monkeypatch.setattr(tables, "query", ran)
    target = 'SELECT * FROM "a.csv#t0"' if command == "sql" else "/nonexistent/plan.json"
    assert cli.main([command, target, flag, value]) == 2
    captured = capsys.readouterr()
    assert captured.err == f"loom: invalid_ceiling: {message}\n"
    assert captured.out == ""


def test_a_plan_that_is_not_json_is_one_line(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("{nope"))
    assert cli.main(["query", "-"]) == 1
    assert capsys.readouterr().err == (
        "loom: invalid_plan: the plan is not JSON: Expecting property name enclosed in double "
        "quotes: line 1 column 2 (char 1)\n"
    )
