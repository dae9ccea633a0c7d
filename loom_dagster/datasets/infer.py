"""What a table of the artifact becomes as a dataset: its id, its schema, its questions, whether
it is complete (seed 000 "Datasets"). Plain Python over the artifact; no value is typed here
(loom_dagster.datasets.typing does that).

A column takes the extractor's type (`tables[].columns[].type`): number is an exact decimal,
date a date, datetime an instant in UTC, duration exact seconds, bool a boolean; string, time
(a time of day has no instant) and mixed are text, and a mixed column asks for an answer.

The seed's ClickHouse slots (24 decimal, 8 double, 24 text, 8 time, 8 boolean) are not this
storage's limit: a snapshot is a Parquet file with a column per dataset column, so the limit is
one of width for the whole dataset, MAX_STORED_COLUMNS. Past it a column is not stored, and the
schema asks about it (one question per type, naming the first such column).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from loom_dagster.contract.artifact import Artifact, Table
from loom_dagster.datasets.model import ColumnType, DatasetColumn, DatasetSchema, dataset_id

# A dataset stores at most this many columns. A Parquet footer holds metadata per column per
# row group and DuckDB keeps a scan state per column read, so both grow with width; 1,024 keeps
# a snapshot's footer small and a `SELECT *` bounded while no table a person reads is wider.
MAX_STORED_COLUMNS = 1_024
# Questions about single columns (mixed, generated or repeated names) stop here; past them a
# column's inferred type says the rest.
MAX_COLUMN_QUESTIONS = 100
# The capabilities a table's values depend on (the artifact's coverage.lost).
VALUE_CAPABILITIES = ("formula_values", "shared_strings", "number_formats")

TYPES: Mapping[str, ColumnType] = {
    "string": ColumnType.TEXT,
    "time": ColumnType.TEXT,
    "mixed": ColumnType.TEXT,
    "number": ColumnType.DECIMAL,
    "bool": ColumnType.BOOLEAN,
    "date": ColumnType.DATE,
    "datetime": ColumnType.TIMESTAMP,
    "duration": ColumnType.DURATION,
}

_NUMBER = re.compile(r"[+-]?(?:\d+(?:[.,]\d*)?|[.,]\d+)(?:[eE][+-]?\d+)?%?")
_DATE = re.compile(r"\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?)?")
_REPEATED = re.compile(r"(.*) \((\d+)\)")
_GENERATED = "column {}"
# Only these units of a multi-table format can name a table: `<table> ...`, `page N`.
_PAGE = re.compile(r"page (\d+)")


@dataclass(frozen=True)
class Inferred:
    """A table's dataset before its values are typed."""

    dataset_id: str
    table_id: str
    name: str
    schema: DatasetSchema
    # Position in the artifact's rows of each stored column, in schema order.
    positions: tuple[int, ...]
    questions: tuple[str, ...]
    complete: bool
    incomplete_reasons: tuple[str, ...]


def table_keys(artifact: Artifact) -> list[str]:
    """The key each table's dataset id is made from, in the artifact's order: a sheet by its
    name (by name and table id when the workbook split it into several tables), any other
    table (a CSV or Parquet file's, a PDF's in page order) by its id."""
    if artifact.format != "xlsx":
        return [table.id for table in artifact.tables]
    sheets = [table.locator.sheet or table.name for table in artifact.tables]
    return [
        sheet if sheets.count(sheet) == 1 else f"{sheet}/{table.id}"
        for sheet, table in zip(sheets, artifact.tables, strict=True)
    ]


def reads_as_number_or_date(name: str) -> bool:
    text = name.strip()
    return bool(_NUMBER.fullmatch(text) or _DATE.fullmatch(text))


def column_names(raw: Sequence[str]) -> tuple[list[str], list[str]]:
    """The names columns are addressed by, and the questions about them: an empty name is
    generated (`column N`), a repeated one named `<name> (2)` as the reference extractor does;
    a name the reference extractor generated or numbered that way asks the same question."""
    names: list[str] = []
    questions: list[str] = []
    seen: set[str] = set()
    raw_set = set(raw)
    for index, name in enumerate(raw):
        if not name.strip():
            base = _GENERATED.format(index + 1)
            questions.append(f"column {index + 1} has no name in its header: named {base!r}")
        else:
            base = name
            if name == _GENERATED.format(index + 1):
                questions.append(f"column {index + 1} has no name in its header: named {name!r}")
            else:
                repeated = _REPEATED.fullmatch(name)
                if repeated and repeated.group(1) in raw_set and int(repeated.group(2)) >= 2:
                    questions.append(f"column {name!r} repeats the name {repeated.group(1)!r}")
        candidate, count = base, 1
        while candidate in seen:
            count += 1
            candidate = f"{base} ({count})"
        if candidate != base:
            questions.append(f"column {candidate!r} repeats the name {base!r}")
        seen.add(candidate)
        names.append(candidate)
    return names, questions


def infer(artifact: Artifact, table: Table, table_key: str, *, source: str, path: str) -> Inferred:
    """The dataset a table of `artifact` becomes (its values still untyped)."""
    raw = [column.name for column in table.columns]
    names, column_questions = column_names(raw)
    kinds = [column.type for column in table.columns]
    for index, kind in enumerate(kinds[:MAX_STORED_COLUMNS]):
        if kind == "mixed":
            column_questions.append(
                f"column {names[index]!r} holds values of more than one kind: held as text"
            )
    questions: list[str] = []
    if len(column_questions) > MAX_COLUMN_QUESTIONS:
        rest = len(column_questions) - MAX_COLUMN_QUESTIONS
        column_questions = column_questions[:MAX_COLUMN_QUESTIONS] + [
            f"{rest} more questions about single columns: their inferred types stand"
        ]
    questions += column_questions
    real = [name for name in raw if name.strip()]
    if table.header_rows > 0 and real and all(reads_as_number_or_date(n) for n in real):
        questions.append(
            "every column name reads as a number or a date: the header row may be data"
        )
    types = [TYPES.get(kind, ColumnType.TEXT) for kind in kinds]
    reasons: list[str] = []
    if len(names) > MAX_STORED_COLUMNS:
        past: dict[ColumnType, list[str]] = {}
        for name, column_type in zip(
            names[MAX_STORED_COLUMNS:], types[MAX_STORED_COLUMNS:], strict=True
        ):
            past.setdefault(column_type, []).append(name)
        for column_type, columns in past.items():
            questions.append(
                f"{len(columns)} {column_type.value} columns past the {MAX_STORED_COLUMNS:,} a "
                f"dataset stores are not stored, from {columns[0]!r}"
            )
        reasons.append(
            f"{len(names) - MAX_STORED_COLUMNS} columns past the {MAX_STORED_COLUMNS:,} a "
            "dataset stores are not stored"
        )
    stored = min(len(names), MAX_STORED_COLUMNS)
    schema = DatasetSchema(tuple(DatasetColumn(names[i], types[i]) for i in range(stored)))
    reasons = table_gaps(artifact, table) + reasons
    return Inferred(
        dataset_id=dataset_id(source, path, table_key),
        table_id=table.id,
        name=f"{path}#{table.name}",
        schema=schema,
        positions=tuple(range(stored)),
        questions=tuple(questions),
        complete=not reasons,
        incomplete_reasons=tuple(reasons),
    )


def table_gaps(artifact: Artifact, table: Table) -> list[str]:
    """Why the extraction did not keep every value of `table`: its failed units (its rows,
    merges, values, cells or header) and the lost capabilities a value depends on.

    A file of one table (CSV, Parquet) fails units of that table only; a workbook's units name
    their sheet, a PDF's their table id or their page.
    """
    reasons: list[str] = []
    single = len(artifact.tables) == 1 and artifact.format in ("csv", "parquet")
    prefixes = {p for p in (table.id, table.name, table.locator.sheet) if p}
    pages = (
        range(table.locator.page_start, (table.locator.page_end or table.locator.page_start) + 1)
        if table.locator.page_start is not None
        else range(0)
    )
    for failure in artifact.coverage.failed:
        unit = failure.unit
        page = _PAGE.fullmatch(unit)
        if (
            single
            or any(unit == p or unit.startswith(p + " ") for p in prefixes)
            or (page is not None and int(page.group(1)) in pages)
        ):
            reasons.append(f"{unit}: {failure.reason}")
    reasons += [f"lost: {lost}" for lost in artifact.coverage.lost if lost in VALUE_CAPABILITIES]
    return reasons
