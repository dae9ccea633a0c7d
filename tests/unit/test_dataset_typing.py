"""Typing: rows into Arrow columns of the schema's types; what cannot be held is rejected."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from decimal import Decimal

import pyarrow as pa
import pytest

from loom_dagster.datasets.model import ROW_ID, ColumnType, DatasetColumn, DatasetSchema
from loom_dagster.datasets.typing import CONVERTERS, _fast, type_rows


def schema(*columns: tuple[str, ColumnType]) -> DatasetSchema:
    return DatasetSchema(tuple(DatasetColumn(n, t) for n, t in columns))


def typed(columns, rows):
    s = schema(*columns)
    return type_rows(s, range(len(columns)), rows)


def test_values_take_their_columns_types() -> None:
    got = typed(
        [("t", ColumnType.TEXT), ("n", ColumnType.DECIMAL), ("d", ColumnType.DATE),
         ("ts", ColumnType.TIMESTAMP), ("b", ColumnType.BOOLEAN), ("dur", ColumnType.DURATION),
         ("f", ColumnType.DOUBLE)],
        [["a", 1.5, "2024-02-29", "2024-01-01T10:00:00+02:00", True, "36:00:00.5", 2],
         [None, "12345678901234567890.123456789", None, "2024-01-01T10:00:00", None, None, None]],
    )  # fmt: skip
    assert got.rows_rejected == 0
    rows = got.table.to_pylist()
    utc = dt.UTC
    assert rows[0] == {
        ROW_ID: 0, "t": "a", "n": Decimal("1.500000000"), "d": dt.date(2024, 2, 29),
        "ts": dt.datetime(2024, 1, 1, 8, tzinfo=utc), "b": True,
        "dur": Decimal("129600.500000000"), "f": 2.0,
    }  # fmt: skip
    assert rows[1]["n"] == Decimal("12345678901234567890.123456789")
    assert rows[1]["ts"] == dt.datetime(2024, 1, 1, 10, tzinfo=utc)
    assert got.table.schema == schema(
        ("t", ColumnType.TEXT), ("n", ColumnType.DECIMAL), ("d", ColumnType.DATE),
        ("ts", ColumnType.TIMESTAMP), ("b", ColumnType.BOOLEAN), ("dur", ColumnType.DURATION),
        ("f", ColumnType.DOUBLE),
    ).arrow_schema()  # fmt: skip


def test_a_mixed_column_as_text_keeps_each_value() -> None:
    got = typed([("v", ColumnType.TEXT)], [[1], [2.5], [3.0], [True], ["x"], [None]])
    assert [r["v"] for r in got.table.to_pylist()] == ["1", "2.5", "3", "TRUE", "x", None]


def test_a_cell_error_rejects_its_row_whole() -> None:
    got = typed(
        [("a", ColumnType.DECIMAL), ("b", ColumnType.TEXT)],
        [[1, "x"], [{"error": "#DIV/0!"}, "y"], [3, "z"]],
    )
    assert got.rows_rejected == 1
    assert [r[ROW_ID] for r in got.table.to_pylist()] == [0, 2]
    assert [(r.row, r.reason) for r in got.rejects] == [
        (1, "column 'a': holds the error '#DIV/0!'")
    ]


def test_a_decimal_of_10_29_after_rounding_is_rejected() -> None:
    just_below = "99999999999999999999999999999.999999999"
    rounds_up = "99999999999999999999999999999.9999999995"
    got = typed([("n", ColumnType.DECIMAL)], [[just_below], [rounds_up], [10**29], [-(10**29) + 1]])
    assert [r["n"] for r in got.table.to_pylist()] == [Decimal(just_below), Decimal(-(10**29) + 1)]
    assert [(r.row, r.reason) for r in got.rejects] == [
        (1, f"column 'n': '{rounds_up}' is past what a decimal holds (10^29)"),
        (2, "column 'n': '100000000000000000000000000000' is past what a decimal holds (10^29)"),
    ]


def test_decimals_round_half_to_even_at_nine_places() -> None:
    got = typed([("n", ColumnType.DECIMAL)], [["0.0000000005"], ["0.0000000015"], [0.1]])
    assert [r["n"] for r in got.table.to_pylist()] == [
        Decimal("0E-9"),
        Decimal("0.000000002"),
        Decimal("0.100000000"),
    ]


def test_a_double_out_of_range_is_rejected() -> None:
    got = typed([("f", ColumnType.DOUBLE)], [["1e400"], [1.5], [10**400], ["x"]])
    assert [(r.row, r.reason) for r in got.rejects] == [
        (0, "column 'f': '1e400' is past what a double holds"),
        (2, f"column 'f': '{'1' + '0' * 59}…' is past what a double holds"),
        (3, "column 'f': 'x' is not a number"),
    ]


def test_an_instant_the_storage_cannot_hold_is_rejected() -> None:
    got = typed(
        [("ts", ColumnType.TIMESTAMP)],
        [["0001-01-01T01:00:00+05:00"], ["9999-12-31T23:00:00-05:00"], ["2024-01-01"]],
    )
    reason = "is outside what a timestamp holds (0001-01-01 to 9999-12-31 UTC)"
    assert [(r.row, r.reason) for r in got.rejects] == [
        (0, f"column 'ts': '0001-01-01T01:00:00+05:00' {reason}"),
        (1, f"column 'ts': '9999-12-31T23:00:00-05:00' {reason}"),
    ]
    assert got.table.column("ts").to_pylist() == [dt.datetime(2024, 1, 1, tzinfo=dt.UTC)]


def test_a_value_not_of_an_approved_type_is_rejected() -> None:
    got = typed(
        [("n", ColumnType.DECIMAL), ("d", ColumnType.DATE), ("b", ColumnType.BOOLEAN),
         ("u", ColumnType.DURATION)],
        [["n/a", "2024-13-01", "yes", "1:75:00"], [1, "2024-01-01", "true", "0:01:00"]],
    )  # fmt: skip
    assert [(r.row, r.reason) for r in got.rejects] == [(0, "column 'n': 'n/a' is not a number")]
    assert got.table.to_pylist()[0]["u"] == Decimal("60.000000000")


def test_only_the_first_20_rejects_keep_their_reason() -> None:
    got = typed([("n", ColumnType.DECIMAL)], [[{"error": "#N/A"}]] * 30 + [[1]])
    assert got.rows_rejected == 30 and len(got.rejects) == 20
    assert got.table.num_rows == 1


def test_an_empty_table_has_the_schema() -> None:
    got = typed([("n", ColumnType.DECIMAL)], [])
    assert got.table.num_rows == 0
    assert got.table.schema.field("n").type == pa.decimal128(38, 9)


@pytest.mark.parametrize(
    ("column_type", "values"),
    [
        (ColumnType.DECIMAL, [1, -(2**63), 2**63 - 1, None]),
        (ColumnType.DECIMAL, [0.1, 1e-07, 123456789.12345679, 2.5, 3, "0.0000000015", None]),
        (ColumnType.DECIMAL, ["-12.5", "99999999999999999999999999999.999999999", "1E+5"]),
        (ColumnType.DATE, ["2024-02-29", "0001-01-01", "9999-12-31", None]),
        (ColumnType.TIMESTAMP, ["2024-01-05T10:11:12+02:00", "2024-01-05T23:00:00-05:00"]),
        (ColumnType.TIMESTAMP, ["2024-01-05T10:11:12", "2024-01-05T10:11:12.5", None]),
        (ColumnType.DURATION, ["1:02:03", "-36:00:00.5", "0:00:00.000001", None]),
        (ColumnType.BOOLEAN, [True, False, None]),
        (ColumnType.DOUBLE, [0.1, -1e308, None]),
    ],
)
def test_arrows_fast_path_types_as_the_per_value_path_does(
    column_type: ColumnType, values: list[object]
) -> None:
    """A column Arrow's casts take whole must come out as the per-value path makes it."""
    assert _fast(column_type, values) is not None  # the fast path took it
    fast = typed([("v", column_type)], [[v] for v in values])
    assert fast.rows_rejected == 0
    convert = CONVERTERS[column_type]
    slow = [None if v is None else convert(v) for v in values]
    assert fast.table.column("v").to_pylist() == pa.array(slow, column_type.arrow).to_pylist()


def test_a_column_arrow_refuses_falls_back_and_names_its_rejects() -> None:
    got = typed(
        [("d", ColumnType.DURATION), ("ts", ColumnType.TIMESTAMP)],
        [["1:00:00", "2024-01-05T10:00:00"], ["1:75:00", "2024-01-05T10:00:00+01:00"]],
    )
    assert [(r.row, r.reason) for r in got.rejects] == [
        (1, "column 'd': '1:75:00' is not a duration")
    ]
    assert got.table.column("d").to_pylist() == [Decimal("3600")]


def test_only_a_plain_decimal_spelling_reads_as_a_number() -> None:
    got = typed([("n", ColumnType.DECIMAL)], [["1_000"], ["NaN"], ["-Infinity"], [" 2.5 "]])
    assert [(r.row, r.reason) for r in got.rejects] == [
        (0, "column 'n': '1_000' is not a number"),
        (1, "column 'n': 'NaN' is not a number"),
        (2, "column 'n': '-Infinity' is not a number"),
    ]
    assert got.table.column("n").to_pylist() == [Decimal("2.5")]


def test_loading_the_typing_module_imports_no_pandas() -> None:
    # Every run's and step's process loads it with the pipeline; pandas would add 0.4 s to each.
    code = "import sys, loom_dagster.datasets.typing; print('pandas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
