"""Inference: a table's schema, questions, completeness and stable id (seed 000 "Datasets")."""

from __future__ import annotations

import time

from loom_dagster.contract.artifact import (
    Artifact,
    Column,
    Coverage,
    FailedUnit,
    Locator,
    Table,
)
from loom_dagster.datasets.infer import (
    MAX_COLUMN_QUESTIONS,
    MAX_STORED_COLUMNS,
    infer,
    table_keys,
)
from loom_dagster.datasets.model import ColumnType, dataset_id


def table(columns: list[tuple[str, str]], rows=(), *, id="t0", name="t", header_rows=1, **loc):
    return Table(
        id, name, tuple(Column(n, t) for n, t in columns), tuple(tuple(r) for r in rows),
        header_rows, Locator(**loc),
    )  # fmt: skip


def artifact(tables, fmt="csv", failed=(), lost=()):
    coverage = Coverage("rows", 1, 1, tuple(FailedUnit(u, r) for u, r in failed), tuple(lost))
    return Artifact(1, fmt, "p", "1", {}, {}, (), coverage, (), tuple(tables))


def run(t, **kw):
    a = kw.pop("art", None) or artifact([t], **kw)
    return infer(a, t, t.id, source="docs", path="a.csv")


def test_a_column_takes_the_extractors_type() -> None:
    kinds = ["string", "number", "bool", "date", "datetime", "time", "duration"]
    got = run(table([(k, k) for k in kinds]))
    assert [c.type for c in got.schema.columns] == [
        ColumnType.TEXT, ColumnType.DECIMAL, ColumnType.BOOLEAN, ColumnType.DATE,
        ColumnType.TIMESTAMP, ColumnType.TEXT, ColumnType.DURATION,
    ]  # fmt: skip
    assert got.questions == () and got.complete


def test_a_mixed_column_is_text_and_asks() -> None:
    got = run(table([("id", "number"), ("v", "mixed")]))
    assert got.schema.columns[1].type is ColumnType.TEXT
    assert got.questions == ("column 'v' holds values of more than one kind: held as text",)


def test_a_generated_name_asks() -> None:
    got = run(table([("a", "string"), ("", "string"), ("column 3", "number")]))
    assert [c.name for c in got.schema.columns] == ["a", "column 2", "column 3"]
    assert got.questions == (
        "column 2 has no name in its header: named 'column 2'",
        "column 3 has no name in its header: named 'column 3'",
    )


def test_a_repeated_name_is_numbered_and_asks() -> None:
    got = run(table([("x", "string"), ("x", "number"), ("y", "string"), ("y (2)", "number")]))
    assert [c.name for c in got.schema.columns] == ["x", "x (2)", "y", "y (2)"]
    assert got.questions == (
        "column 'x (2)' repeats the name 'x'",
        "column 'y (2)' repeats the name 'y'",
    )


def test_a_header_of_numbers_or_dates_asks_unless_it_is_no_row() -> None:
    question = "every column name reads as a number or a date: the header row may be data"
    assert run(table([("2024-01-31", "number"), ("12.5", "number")])).questions == (question,)
    assert run(table([("2024", "number"), ("x", "number")])).questions == ()
    parquet = table([("2024", "number"), ("1", "number")], header_rows=0)
    assert run(parquet).questions == ()


def test_columns_past_the_store_ask_once_per_type_naming_the_first() -> None:
    wide = [(f"c{i}", "number" if i % 2 else "string") for i in range(MAX_STORED_COLUMNS + 10)]
    got = run(table(wide))
    assert len(got.schema.columns) == MAX_STORED_COLUMNS
    assert got.questions == (
        f"5 text columns past the 1,024 a dataset stores are not stored, from 'c{MAX_STORED_COLUMNS}'",
        f"5 decimal columns past the 1,024 a dataset stores are not stored, from 'c{MAX_STORED_COLUMNS + 1}'",
    )
    assert not got.complete
    assert got.incomplete_reasons == ("10 columns past the 1,024 a dataset stores are not stored",)


def test_answers_about_single_columns_stop_at_100() -> None:
    got = run(table([(f"m{i}", "mixed") for i in range(150)]))
    assert len(got.questions) == MAX_COLUMN_QUESTIONS + 1
    assert got.questions[-1] == "50 more questions about single columns: their inferred types stand"


def test_a_16384_column_table_does_not_stall() -> None:
    start = time.perf_counter()
    got = run(table([("", "mixed")] * 16_384, rows=[[1] * 16_384] * 3))
    # Not a timing test of speed: a quadratic pass over 16,384 names takes minutes, this a blink.
    assert time.perf_counter() - start < 30
    assert len(got.schema.columns) == MAX_STORED_COLUMNS
    assert len(got.questions) == MAX_COLUMN_QUESTIONS + 2


def test_complete_names_the_tables_own_failed_units_and_lost_capabilities() -> None:
    sheet_a = table([("a", "number")], id="t0", name="A", sheet="A")
    sheet_b = table([("b", "number")], id="t1", name="B", sheet="B")
    art = artifact(
        [sheet_a, sheet_b], fmt="xlsx",
        failed=[("A rows 5-9", "past 100,000 rows a table"), ("Bx", "other sheet"), ("C", "macro")],
        lost=["formula_values", "images"],
    )  # fmt: skip
    a = infer(art, sheet_a, "A", source="docs", path="w.xlsx")
    b = infer(art, sheet_b, "B", source="docs", path="w.xlsx")
    assert a.incomplete_reasons == ("A rows 5-9: past 100,000 rows a table", "lost: formula_values")
    assert b.incomplete_reasons == ("lost: formula_values",)
    pdf_t = table([("a", "number")], id="t1", page_start=2, page_end=3)
    pdf = artifact([pdf_t], fmt="pdf", failed=[("page 3", "needs_ocr"), ("page 5", "needs_ocr")])
    assert infer(pdf, pdf_t, "t1", source="s", path="p").incomplete_reasons == (
        "page 3: needs_ocr",
    )
    csv_t = table([("a", "number")])
    assert run(csv_t, failed=[("rows 7-", "past 1,000,000 cells")]).incomplete_reasons == (
        "rows 7-: past 1,000,000 cells",
    )


def test_ids_are_stable_by_sheet_name_or_table_id() -> None:
    one = artifact([table([], id="t0", name="Sales", sheet="Sales")], fmt="xlsx")
    moved = artifact(
        [
            table([], id="t0", name="Intro", sheet="Intro"),
            table([], id="t1", name="Sales", sheet="Sales"),
        ],
        fmt="xlsx",
    )
    assert table_keys(one) == ["Sales"]
    assert table_keys(moved) == ["Intro", "Sales"]
    split = artifact(
        [table([], id="t0", name="S", sheet="S"), table([], id="t1", name="S", sheet="S")],
        fmt="xlsx",
    )
    assert table_keys(split) == ["S/t0", "S/t1"]
    pdf = artifact([table([], id="t0"), table([], id="t1")], fmt="pdf")
    assert table_keys(pdf) == ["t0", "t1"]
    assert (
        dataset_id("docs", "w.xlsx", "Sales")
        == infer(moved, moved.tables[1], "Sales", source="docs", path="w.xlsx").dataset_id
    )
