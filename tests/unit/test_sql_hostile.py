"""`loom sql` against hostile statements: each refused with one typed line naming what was
refused, or bounded by a ceiling. Real Parquet snapshots, a real locked-down DuckDB."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from loom_dagster.datasets.model import ColumnType as T
from loom_dagster.objectstore import ObjectStore
from loom_dagster.query.errors import QueryError
from loom_dagster.query.run import Answer, Ceilings
from loom_dagster.query.service import run_query, run_sql
from loom_dagster.query.snapshots import StoreSnapshots
from tests.support.query_datasets import MemoryCatalog, publish

NOT_SELECT = "sql_refused: only a SELECT is allowed, not "


def fn(name: str) -> str:
    return f"sql_refused: the function '{name}' is not allowed"


REFUSED = [
    # Reading /etc/passwd through any function or name.
    ("SELECT * FROM read_csv('/etc/passwd')", fn("read_csv")),
    ("SELECT * FROM read_csv_auto('/etc/passwd')", fn("read_csv_auto")),
    ("SELECT * FROM read_text('/etc/passwd')", fn("read_text")),
    ("SELECT read_blob('/etc/passwd')", fn("read_blob")),
    ("SELECT * FROM read_parquet('/etc/passwd')", fn("read_parquet")),
    ("SELECT * FROM parquet_scan('/etc/passwd')", fn("parquet_scan")),
    ("SELECT * FROM read_json_auto('/etc/passwd')", fn("read_json_auto")),
    ("SELECT * FROM glob('/etc/*')", fn("glob")),
    ("SELECT * FROM sqlite_scan('/nonexistent/x.db', 't')", fn("sqlite_scan")),
    ("SELECT * FROM query('SELECT 1')", fn("query")),
    ("SELECT * FROM duckdb_settings()", fn("duckdb_settings")),
    ("SELECT getenv('HOME') FROM usage", fn("getenv")),
    ("SELECT current_setting('threads') FROM usage", fn("current_setting")),
    ("SELECT load_extension('x') FROM usage", fn("load_extension")),
    (
        "SELECT * FROM usage WHERE host = (SELECT content FROM read_text('/etc/passwd'))",
        fn("read_text"),
    ),
    ("SELECT * FROM usage UNION ALL SELECT * FROM read_text('/etc/passwd')", fn("read_text")),
    (
        "SELECT * FROM '/etc/passwd'",
        "unknown_dataset: no dataset '/etc/passwd' is served (by id or name)",
    ),
    (
        'SELECT * FROM "/etc/passwd"',
        "unknown_dataset: no dataset '/etc/passwd' is served (by id or name)",
    ),
    ("SELECT * FROM main.usage", "sql_refused: the table 'main.usage' is not a dataset name"),
    # Statements that are not a SELECT.
    ("ATTACH '/nonexistent/x.db' AS x", NOT_SELECT + "'ATTACH'"),
    ("COPY usage TO '/nonexistent/out.csv'", NOT_SELECT + "'COPY'"),
    ("COPY (SELECT * FROM usage) TO '/nonexistent/out.csv'", NOT_SELECT + "'COPY'"),
    ("INSTALL httpfs", NOT_SELECT + "'INSTALL'"),
    ("LOAD httpfs", NOT_SELECT + "'LOAD'"),
    ("PRAGMA version", NOT_SELECT + "'PRAGMA'"),
    ("CALL pragma_version()", NOT_SELECT + "'CALL'"),
    ("SET enable_external_access = true", NOT_SELECT + "'SET'"),
    ("CREATE TABLE x AS SELECT * FROM usage", NOT_SELECT + "'CREATE'"),
    ("INSERT INTO usage VALUES ('c', 3)", NOT_SELECT + "'INSERT'"),
    ("DELETE FROM usage", NOT_SELECT + "'DELETE'"),
    ("DESCRIBE usage", NOT_SELECT + "'DESCRIBE'"),
    ("EXPLAIN SELECT * FROM usage", NOT_SELECT + "'EXPLAIN'"),
    ("VACUUM", NOT_SELECT + "'VACUUM'"),
    # More than one statement, however it is hidden.
    ("SELECT 1; DROP TABLE usage", "sql_refused: one statement is allowed, not 2"),
    (
        "SELECT * FROM usage; SELECT * FROM read_text('/etc/passwd')",
        "sql_refused: one statement is allowed, not 2",
    ),
    # Recursive CTE bombs, parameters, values, method calls, lambdas, types, samples.
    (
        "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r, usage",
        "sql_refused: a recursive CTE is not allowed",
    ),
    ("SELECT * FROM usage WHERE host = $1", "sql_refused: PLACEHOLDER is not allowed"),
    ("SELECT * FROM usage WHERE host = ?", "sql_refused: PLACEHOLDER is not allowed"),
    ("SELECT * FROM (VALUES (1))", "sql_refused: VALUES is not allowed"),
    ("SELECT host.upper() FROM usage", "sql_refused: DOT is not allowed"),
    ("SELECT list_transform([1], x -> x + 1) FROM usage", fn("transform")),
    ("SELECT COLUMNS('.*') FROM usage", fn("columns")),
    ("SELECT CAST(bytes AS BLOB) FROM usage", "sql_refused: the type BLOB is not allowed"),
    ("SELECT * FROM usage USING SAMPLE 10", "sql_refused: TABLESAMPLE is not allowed"),
    ("SELECT * FROM usage AT (VERSION => 1)", "sql_refused: HISTORICALDATA is not allowed"),
    ("SELECT * FROM usage WHERE host IN (SELECT unnest(['a']))", fn("explode")),
    # Unicode tricks: a zero-width space, a right-to-left override, full-width letters.
    (
        "SELECT * FROM usage\u200b",
        "unknown_dataset: no dataset 'usage\\\\u200b' is served (by id or name)",
    ),
    (
        'SELECT * FROM "usage\u202e"',
        "unknown_dataset: no dataset 'usage\\\\u202e' is served (by id or name)",
    ),
    (
        "\uff33\uff25\uff2c\uff25\uff23\uff34 1",
        "sql_refused: cannot parse the statement at line 1, column 8: Invalid expression / Unexpected token",
    ),
    ("SELECT 1", "sql_refused: the statement reads no dataset"),
    (
        "SELECT * FROM usage WHERE host = '" + "x" * 20_000 + "'",
        "sql_refused: the statement is longer than 20000 characters",
    ),
    (
        "SELECT * FROM usage a, hosts b, big c, d1 d, d2 e",
        "too_many_datasets: the statement reads 5 datasets; a query reads at most 4",
    ),
]


@pytest.fixture
def store(tmp_path: Path) -> ObjectStore:
    return ObjectStore((tmp_path / "store").as_uri())


@pytest.fixture
def catalog(store: ObjectStore) -> MemoryCatalog:
    served = MemoryCatalog()
    publish(
        store,
        served,
        "usage",
        [("host", T.TEXT), ("bytes", T.DECIMAL)],
        [("a", Decimal(1)), ("b", Decimal(2)), ("a", Decimal("3.5"))],
    )
    publish(
        store, served, "hosts", [("host", T.TEXT), ("team", T.TEXT)], [("a", "web"), ("b", "db")]
    )
    publish(store, served, "big", [("n", T.DECIMAL)], [(Decimal(1),)] * 30_000)
    publish(store, served, "d1", [("n", T.DECIMAL)], [])
    publish(store, served, "d2", [("n", T.DECIMAL)], [])
    return served


def sql(catalog: MemoryCatalog, store: ObjectStore, text: str, **ceilings: object) -> Answer:
    return run_sql(text, catalog, StoreSnapshots(store), Ceilings(**ceilings))  # type: ignore[arg-type]


def test_there_are_at_least_thirty_attempts() -> None:
    assert len(REFUSED) >= 30


@pytest.mark.parametrize(("text", "message"), REFUSED, ids=range(len(REFUSED)))
def test_a_hostile_statement_is_refused_in_one_typed_line(
    catalog: MemoryCatalog, store: ObjectStore, text: str, message: str
) -> None:
    with pytest.raises(QueryError) as caught:
        sql(catalog, store, text)
    assert str(caught.value) == message
    assert "\n" not in str(caught.value)


def test_a_huge_cross_join_is_bounded_by_the_time_ceiling(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    with pytest.raises(QueryError) as caught:
        # Memory enough that the clock, not the buffers of the cross product, stops it first
        # (at 512 MB which ceiling trips first depends on the machine).
        sql(
            catalog,
            store,
            "SELECT count(*) FROM big a, big b, big c, big d",
            seconds=1.0,
            memory="4GB",
        )
    assert str(caught.value) == "time_limit: the query ran past its time limit (1 s)"


def test_a_cross_join_returning_rows_is_bounded_by_the_row_ceiling(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    with pytest.raises(QueryError) as caught:
        sql(catalog, store, "SELECT * FROM big a, big b", max_rows=1000)
    assert (
        str(caught.value) == "too_many_rows: the answer has more than 1000 rows; filter or group it"
    )


def test_a_memory_hungry_statement_is_bounded_by_the_memory_ceiling(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    with pytest.raises(QueryError) as caught:
        sql(
            catalog,
            store,
            "SELECT count(DISTINCT a.n + b.n * 100000) FROM big a, big b",
            memory="2MB",
        )
    assert str(caught.value) == "memory_limit: the query needs more memory than its ceiling (2MB)"


def test_comments_hiding_statements_are_not_run(catalog: MemoryCatalog, store: ObjectStore) -> None:
    answer = sql(
        catalog,
        store,
        "SELECT count(*) FROM usage /* ; ATTACH '/nonexistent/x.db' */ -- ; COPY usage TO '/nonexistent/o'",
    )
    assert answer.rows == ((3,),)
    assert "ATTACH" not in answer.receipt.statement and "COPY" not in answer.receipt.statement
    assert "/*" not in answer.receipt.statement and "--" not in answer.receipt.statement


def test_a_trailing_semicolon_and_comment_is_one_statement(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    assert sql(catalog, store, "SELECT count(*) FROM usage; -- done").rows == ((3,),)


def test_sql_answers_as_the_plan_does_with_the_same_receipt(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    answer = sql(
        catalog,
        store,
        "SELECT h.team, sum(u.bytes) AS total, count(*) AS n FROM usage u JOIN hosts h "
        "ON u.host = h.host GROUP BY h.team ORDER BY h.team",
    )
    assert [c.label for c in answer.columns] == ["team", "total", "n"]
    assert answer.rows == (("db", Decimal(2), 1), ("web", Decimal("4.5"), 2))
    plan = run_query(
        {
            "datasets": [{"alias": "u", "dataset": "usage"}, {"alias": "h", "dataset": "hosts"}],
            "joins": [{"alias": "h", "to": "u", "on": [["host", "host"]]}],
            "groups": [{"alias": "h", "column": "team"}],
            "aggregates": [{"fn": "sum", "alias": "u", "column": "bytes"}, {"fn": "count"}],
        },
        catalog,
        StoreSnapshots(store),
    )
    assert plan.rows == answer.rows
    receipt = answer.receipt
    usage, hosts = catalog.served_dataset("usage"), catalog.served_dataset("hosts")
    assert usage is not None and hosts is not None
    assert [s.snapshot_key for s in receipt.snapshots] == [usage.snapshot_key, hosts.snapshot_key]
    assert receipt.parameters == {"s0": usage.snapshot_key, "s1": hosts.snapshot_key, "n0": 10001}
    assert receipt.statement.count("READ_PARQUET($s") == 2
    assert receipt.complete is True


def test_a_dataset_named_by_id_or_by_name_is_the_same_snapshot(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    usage = catalog.served_dataset("usage")
    assert usage is not None
    answer = sql(
        catalog,
        store,
        f"SELECT count(*) FROM usage a JOIN {usage.dataset_id} b ON a._row_id = b._row_id",
    )
    assert answer.rows == ((3,),)
    assert len(answer.receipt.snapshots) == 1
