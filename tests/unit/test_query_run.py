"""Compiling and running typed plans against real Parquet snapshots in a real object-store
folder, with a real (locked-down, in-memory) DuckDB; the catalog is an in-memory stand-in.

Every expected value is computed here from the rows the test wrote, in plain Python."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, date, datetime
from decimal import Decimal, localcontext
from fractions import Fraction
from pathlib import Path
from typing import Any

import duckdb
import pytest

from loom_dagster.datasets.model import ColumnType as T
from loom_dagster.datasets.model import Dataset
from loom_dagster.objectstore import ObjectStore
from loom_dagster.query.errors import QueryError
from loom_dagster.query.run import Ceilings, exact_average, locked_connection
from loom_dagster.query.service import run_query
from loom_dagster.query.snapshots import StoreSnapshots
from tests.support.query_datasets import MemoryCatalog, publish

USAGE_COLUMNS = [("host", T.TEXT), ("day", T.DATE), ("bytes", T.DECIMAL), ("at", T.TIMESTAMP)]
USAGE_ROWS = [
    ("a", date(2026, 10, 30), Decimal("0.1"), datetime(2026, 10, 31, 23, 30, tzinfo=UTC)),
    ("a", date(2026, 11, 1), Decimal("0.2"), datetime(2026, 11, 1, 0, 30, tzinfo=UTC)),
    ("a", date(2026, 11, 15), Decimal("0.000000001"), datetime(2026, 11, 15, 12, 0, tzinfo=UTC)),
    (
        "b",
        date(2026, 11, 2),
        Decimal("12345678901234567890.123456789"),
        datetime(2026, 11, 2, tzinfo=UTC),
    ),
    ("b", date(2026, 12, 1), Decimal("-3.5"), datetime(2026, 12, 1, tzinfo=UTC)),
    ("c", date(2026, 11, 30), None, datetime(2026, 11, 30, 23, 59, tzinfo=UTC)),
]
HOSTS = [("a", "web"), ("b", "db"), ("z", "none")]


@pytest.fixture
def store(tmp_path: Path) -> ObjectStore:
    return ObjectStore((tmp_path / "store").as_uri())


@pytest.fixture
def catalog(store: ObjectStore) -> MemoryCatalog:
    served = MemoryCatalog()
    publish(store, served, "usage", USAGE_COLUMNS, USAGE_ROWS)
    publish(store, served, "hosts", [("host", T.TEXT), ("team", T.TEXT)], HOSTS)
    return served


def exact_sum(values: list[Decimal]) -> Decimal:
    with localcontext(prec=80):
        return sum(values, Decimal(0))


def ask(catalog: MemoryCatalog, store: ObjectStore, plan: Any, **ceilings: Any) -> Any:
    return run_query(plan, catalog, StoreSnapshots(store), Ceilings(**ceilings))


def python_average(values: list[Decimal]) -> Decimal:
    """Independent of the code under test: exact fraction, cut at 18 places, half up to nine."""
    exact = Fraction(exact_sum(values)) / len(values)
    cut = Fraction(int(exact * 10**18), 10**18)  # toward zero, as a decimal division truncates
    scaled = cut * 10**9
    whole = int(scaled)
    if abs(scaled - whole) >= Fraction(1, 2):
        whole += 1 if scaled > 0 else -1
    with localcontext(prec=80):
        return Decimal(whole).scaleb(-9)


def test_a_group_by_with_sum_avg_and_count_matches_python(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    answer = ask(
        catalog,
        store,
        {
            "datasets": [{"alias": "u", "dataset": "usage"}],
            "groups": [{"alias": "u", "column": "host"}],
            "aggregates": [
                {"fn": "sum", "alias": "u", "column": "bytes"},
                {"fn": "avg", "alias": "u", "column": "bytes"},
                {"fn": "count"},
                {"fn": "count", "alias": "u", "column": "bytes"},
            ],
        },
    )
    expected = []
    for host in ("a", "b", "c"):
        values = [r[2] for r in USAGE_ROWS if r[0] == host and r[2] is not None]
        total = exact_sum(values) if values else None
        average = python_average(values) if values else None
        rows = sum(1 for r in USAGE_ROWS if r[0] == host)
        expected.append((host, total, average, rows, len(values)))
    assert answer.rows == tuple(expected)
    assert [c.name for c in answer.columns] == ["c0", "c1", "c2", "c3", "c4"]
    # The average is exact where a double is not: a's is (0.1 + 0.2 + 1e-9) / 3.
    assert answer.rows[0][2] == Decimal("0.100000000")


def test_an_average_is_divided_at_18_places_and_rounded_to_nine() -> None:
    for values in (
        [Decimal("1"), Decimal("0"), Decimal("0")],
        [Decimal("0.000000001"), Decimal("0")],  # a tie at the tenth place: half up
        [Decimal("-0.000000001"), Decimal("0")],
        [Decimal("2"), Decimal("0"), Decimal("0")],
        [Decimal("99999999999999999999999999999.999999999")] * 7,
    ):
        assert exact_average(exact_sum(values), len(values)) == python_average(values)


def test_a_date_range_filter(catalog: MemoryCatalog, store: ObjectStore) -> None:
    answer = ask(
        catalog,
        store,
        {
            "datasets": [{"alias": "u", "dataset": "usage"}],
            "filters": [
                {"alias": "u", "column": "day", "op": ">=", "value": "2026-11-01"},
                {"alias": "u", "column": "day", "op": "<", "value": "2026-12-01"},
            ],
            "aggregates": [{"fn": "count"}, {"fn": "min", "alias": "u", "column": "day"}],
        },
    )
    in_range = [r for r in USAGE_ROWS if date(2026, 11, 1) <= r[1] < date(2026, 12, 1)]
    assert answer.rows == ((len(in_range), min(r[1] for r in in_range)),)


def test_timestamps_group_by_month_in_utc(catalog: MemoryCatalog, store: ObjectStore) -> None:
    answer = ask(
        catalog,
        store,
        {
            "datasets": [{"alias": "u", "dataset": "usage"}],
            "groups": [{"alias": "u", "column": "at", "by": "month"}],
            "aggregates": [{"fn": "count"}],
        },
    )
    months: dict[date, int] = {}
    for row in USAGE_ROWS:
        month = row[3].astimezone(UTC).date().replace(day=1)
        months[month] = months.get(month, 0) + 1
    assert answer.rows == tuple(sorted(months.items()))


def test_a_join_of_two_datasets(catalog: MemoryCatalog, store: ObjectStore) -> None:
    answer = ask(
        catalog,
        store,
        {
            "datasets": [{"alias": "u", "dataset": "usage"}, {"alias": "h", "dataset": "hosts"}],
            "joins": [{"alias": "h", "to": "u", "on": [["host", "host"]]}],
            "groups": [{"alias": "h", "column": "team"}],
            "aggregates": [{"fn": "sum", "alias": "u", "column": "bytes"}, {"fn": "count"}],
        },
    )
    teams = dict(HOSTS)
    expected = []
    for team in sorted(set(teams.values())):
        rows = [r for r in USAGE_ROWS if teams.get(r[0]) == team]
        if rows:
            values = [r[2] for r in rows if r[2] is not None]
            expected.append((team, exact_sum(values), len(rows)))
    assert answer.rows == tuple(expected)


def test_rows_come_with_their_row_ids(catalog: MemoryCatalog, store: ObjectStore) -> None:
    answer = ask(
        catalog,
        store,
        {
            "datasets": [{"alias": "u", "dataset": "usage"}],
            "filters": [{"alias": "u", "column": "host", "op": "in", "value": ["b", "c"]}],
            "columns": [{"alias": "u", "column": "bytes"}],
        },
    )
    assert [c.label for c in answer.columns] == ["u.row_id", "u.bytes"]
    assert answer.rows == tuple(
        (i, None if r[2] is None else r[2]) for i, r in enumerate(USAGE_ROWS) if r[0] in ("b", "c")
    )


HOSTILE = "x'); COPY (SELECT 1) TO '/nonexistent/pwn' --"


def test_values_aliases_and_names_never_become_sql_text(store: ObjectStore) -> None:
    catalog = MemoryCatalog()
    # A document's column names and a dataset name that read as SQL, too.
    publish(
        store,
        catalog,
        HOSTILE,
        [(HOSTILE, T.TEXT), ('a" OR 1=1 --', T.DECIMAL)],
        [(HOSTILE, Decimal(1))],
    )
    answer = ask(
        catalog,
        store,
        {
            "datasets": [{"alias": HOSTILE, "dataset": HOSTILE}],
            "filters": [
                {"alias": HOSTILE, "column": HOSTILE, "op": "=", "value": HOSTILE},
                {"alias": HOSTILE, "column": 'a" OR 1=1 --', "op": "<", "value": "5"},
            ],
            "groups": [{"alias": HOSTILE, "column": HOSTILE}],
            "aggregates": [{"fn": "sum", "alias": HOSTILE, "column": 'a" OR 1=1 --'}],
        },
    )
    assert answer.rows == ((HOSTILE, Decimal("1.000000000")),)
    statement = answer.receipt.statement
    for fragment in ("COPY", "pwn", "OR 1=1", "'5'", "x'", "--", "/"):
        assert fragment not in statement
    assert answer.receipt.parameters["v0"] == HOSTILE
    assert answer.receipt.parameters["v1"] == Decimal("5.000000000")


def test_the_receipt(catalog: MemoryCatalog, store: ObjectStore) -> None:
    usage = catalog.served_dataset("usage")
    assert usage is not None
    catalog.serve(
        replace(usage, complete=False, incomplete_reasons=("1 failed cell",), rows_rejected=2)
    )
    answer = ask(
        catalog,
        store,
        {
            "datasets": [{"alias": "u", "dataset": usage.dataset_id}],
            "filters": [{"alias": "u", "column": "bytes", "op": ">", "value": 0}],
            "aggregates": [{"fn": "count"}],
        },
    )
    receipt = answer.receipt.to_dict()
    assert receipt["complete"] is False
    assert receipt["reasons"] == ["u: incomplete (1 failed cell)", "u: 2 rows rejected"]
    assert [s["snapshot"] for s in receipt["snapshots"]] == [usage.snapshot]
    assert receipt["parameters"] == {"s0": usage.snapshot_key, "v0": "0E-9", "n0": 10001}
    assert receipt["plan"]["datasets"][0]["dataset"] == usage.dataset_id
    assert receipt["plan"]["filters"][0]["values"] == ["0E-9"]
    assert receipt["statement"] == answer.receipt.statement
    json.dumps(answer.to_dict())  # the whole answer is JSON for scripts


def test_a_complete_answer_says_so(catalog: MemoryCatalog, store: ObjectStore) -> None:
    plan = {"datasets": [{"alias": "u", "dataset": "hosts"}], "aggregates": [{"fn": "count"}]}
    receipt = ask(catalog, store, plan).receipt
    assert (receipt.complete, receipt.reasons) == (True, ())


class _Swapping:
    """Serves a new snapshot of every dataset as soon as the query opens the old one: a publish
    landing while the statement runs."""

    def __init__(self, store: ObjectStore, catalog: MemoryCatalog) -> None:
        self.inner = StoreSnapshots(store)
        self.store, self.catalog = store, catalog

    @contextlib.contextmanager
    def open(self, snapshot_key: str) -> Iterator[Path]:
        with self.inner.open(snapshot_key) as path:
            for dataset in list(self.catalog.served.values()):
                if dataset.snapshot_key == snapshot_key:
                    publish(
                        self.store, self.catalog, dataset.name, USAGE_COLUMNS, [], snapshot="snap2"
                    )
            yield path


def test_a_snapshot_replaced_while_the_query_ran_is_dataset_changed(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    usage = catalog.served_dataset("usage")
    assert usage is not None
    plan = {"datasets": [{"alias": "u", "dataset": "usage"}], "aggregates": [{"fn": "count"}]}
    with pytest.raises(QueryError) as caught:
        run_query(plan, catalog, _Swapping(store, catalog))
    assert str(caught.value) == (
        f"dataset_changed: dataset {usage.dataset_id} ('usage') changed while the query ran "
        "(snapshot snap1 no longer serves it); run it again"
    )


def test_a_snapshot_gone_before_it_was_read_is_dataset_changed(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    usage = catalog.served_dataset("usage")
    assert usage is not None
    store.delete(usage.snapshot_key)
    plan = {"datasets": [{"alias": "u", "dataset": "usage"}], "aggregates": [{"fn": "count"}]}
    with pytest.raises(QueryError) as caught:
        ask(catalog, store, plan)
    assert caught.value.code == "snapshot_missing"  # still served: the store lost it
    catalog.served.pop(usage.dataset_id)
    catalog.serve(replace(usage, snapshot="snap9", snapshot_key="datasets/x/snap9.parquet"))
    gone = _Gone(catalog, usage)
    with pytest.raises(QueryError) as caught:
        run_query(plan, gone, StoreSnapshots(store))
    assert caught.value.code == "dataset_changed"


class _Gone(MemoryCatalog):
    """Looks the dataset up at its old snapshot, whose file GC deleted once a new one served."""

    def __init__(self, inner: MemoryCatalog, old: Dataset) -> None:
        super().__init__()
        self.served = inner.served
        self.old = old

    def served_dataset(self, id_or_name: str) -> Dataset | None:
        return self.old


def test_a_snapshot_whose_columns_differ_from_its_schema_is_refused(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    hosts = catalog.served_dataset("hosts")
    usage = catalog.served_dataset("usage")
    assert hosts is not None and usage is not None
    catalog.serve(replace(hosts, snapshot_key=usage.snapshot_key))
    plan = {"datasets": [{"alias": "h", "dataset": "hosts"}], "aggregates": [{"fn": "count"}]}
    with pytest.raises(QueryError) as caught:
        ask(catalog, store, plan)
    assert str(caught.value) == (
        f"snapshot_mismatch: snapshot snap1 of {hosts.dataset_id} does not hold its schema's columns"
    )


# Ceilings ------------------------------------------------------------------------------------


def test_more_rows_than_the_ceiling_is_an_error_not_a_cut(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    plan = {"datasets": [{"alias": "u", "dataset": "usage"}]}
    assert len(ask(catalog, store, plan, max_rows=6).rows) == 6
    with pytest.raises(QueryError) as caught:
        ask(catalog, store, plan, max_rows=5)
    assert str(caught.value) == "too_many_rows: the answer has more than 5 rows; filter or group it"


def _big(store: ObjectStore, catalog: MemoryCatalog, rows: int) -> None:
    publish(
        store,
        catalog,
        "big",
        [("n", T.DECIMAL), ("t", T.TEXT)],
        [(Decimal(i), f"text {i}") for i in range(rows)],
    )


def test_past_the_memory_ceiling_is_memory_limit(
    catalog: MemoryCatalog, store: ObjectStore
) -> None:
    _big(store, catalog, 200_000)
    plan = {
        "datasets": [{"alias": "b", "dataset": "big"}],
        "aggregates": [{"fn": "count_distinct", "alias": "b", "column": "t"}],
    }
    assert ask(catalog, store, plan).rows == ((200_000,),)
    with pytest.raises(QueryError) as caught:
        ask(catalog, store, plan, memory="2MB")
    assert str(caught.value) == "memory_limit: the query needs more memory than its ceiling (2MB)"


def test_past_the_time_ceiling_is_time_limit(catalog: MemoryCatalog, store: ObjectStore) -> None:
    # Four copies joined on a key every row shares: 50,000**4 rows to sum, which no machine
    # finishes in a second; the timer interrupts it.
    publish(store, catalog, "big", [("n", T.DECIMAL)], [(Decimal(1),)] * 50_000)
    plan = {
        "datasets": [{"alias": a, "dataset": "big"} for a in "wxyz"],
        "joins": [{"alias": a, "to": "w", "on": [["n", "n"]]} for a in "xyz"],
        "aggregates": [{"fn": "sum", "alias": "z", "column": "n"}],
    }
    with pytest.raises(QueryError) as caught:
        ask(catalog, store, plan, seconds=1.0)
    assert str(caught.value) == "time_limit: the query ran past its time limit (1 s)"


def test_the_connection_holds_the_thread_and_memory_ceilings() -> None:
    con = locked_connection([], Ceilings(threads=1, memory="64MB"))
    try:
        settings = dict(
            con.execute(
                "SELECT name, value FROM duckdb_settings() WHERE name IN "
                "('threads', 'enable_external_access', 'lock_configuration', 'max_temp_directory_size')"
            ).fetchall()
        )
        assert settings["threads"] == "1"
        assert settings["enable_external_access"] == "false"
        assert settings["lock_configuration"] == "true"
        with pytest.raises(duckdb.InvalidInputException, match="locked"):
            con.execute("SET threads = 4")
    finally:
        con.close()


def test_the_query_reads_only_its_snapshots(
    catalog: MemoryCatalog, store: ObjectStore, tmp_path: Path
) -> None:
    usage = catalog.served_dataset("usage")
    hosts = catalog.served_dataset("hosts")
    assert usage is not None and hosts is not None
    with (
        StoreSnapshots(store).open(usage.snapshot_key) as allowed,
        StoreSnapshots(store).open(hosts.snapshot_key) as other,
    ):
        con = locked_connection([allowed], Ceilings())
        try:
            assert con.execute(
                "SELECT count(*) FROM read_parquet($p)", {"p": str(allowed)}
            ).fetchone() == (len(USAGE_ROWS),)
            for statement in (
                "SELECT count(*) FROM read_parquet($p)",
                "SELECT * FROM read_csv($p)",
                "SELECT * FROM read_text($p)",
            ):
                with pytest.raises(duckdb.PermissionException):
                    con.execute(statement, {"p": str(other)})
            with pytest.raises(duckdb.PermissionException):
                con.execute("SELECT * FROM read_text('/etc/passwd')")
        finally:
            con.close()


def test_a_sum_past_a_decimal_is_sum_overflow(catalog: MemoryCatalog, store: ObjectStore) -> None:
    huge = Decimal("99999999999999999999999999999.999999999")
    publish(store, catalog, "huge", [("n", T.DECIMAL)], [(huge,), (huge,)])
    plan = {
        "datasets": [{"alias": "h", "dataset": "huge"}],
        "aggregates": [{"fn": "sum", "alias": "h", "column": "n"}],
    }
    with pytest.raises(QueryError) as caught:
        ask(catalog, store, plan)
    assert str(caught.value) == (
        "sum_overflow: a sum does not fit a decimal of 38 digits (29 before the point)"
    )
    publish(
        store,
        catalog,
        "huge",
        [("n", T.DECIMAL)],
        [(huge,), (huge.copy_negate(),), (Decimal("0.000000001"),)],
    )
    assert ask(catalog, store, plan).rows == ((Decimal("1E-9"),),)
