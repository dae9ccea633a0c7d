"""A validated plan compiled to one read-only DuckDB statement, built as a sqlglot AST.

Nothing a caller or a document wrote becomes SQL text: each dataset is a subquery over
`read_parquet($sN)` whose columns are renamed by position (`t(r, k0, k1, ...)`, the snapshot's
schema order: the row id, then the schema's columns), every filter value is a bound parameter
cast to its column's type, and the result names are `c0, c1, ...`. Function names, type names
and the group units come from this module's own constants.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlglot import exp

from loom_dagster.datasets.model import DECIMAL_PRECISION, DECIMAL_SCALE, ColumnType
from loom_dagster.query.validated import Column, ValidatedPlan

DIALECT = "duckdb"
ROW = "r"  # the row id's name inside a dataset's subquery

_SQL_TYPES = {
    ColumnType.TEXT: "VARCHAR",
    ColumnType.DECIMAL: f"DECIMAL({DECIMAL_PRECISION}, {DECIMAL_SCALE})",
    ColumnType.DURATION: f"DECIMAL({DECIMAL_PRECISION}, {DECIMAL_SCALE})",
    ColumnType.DOUBLE: "DOUBLE",
    ColumnType.DATE: "DATE",
    ColumnType.TIMESTAMP: "TIMESTAMPTZ",
    ColumnType.BOOLEAN: "BOOLEAN",
}
_COMPARE: dict[str, type[exp.Binary]] = {
    "=": exp.EQ,
    "!=": exp.NEQ,
    "<": exp.LT,
    "<=": exp.LTE,
    ">": exp.GT,
    ">=": exp.GTE,
}
# An exact average is summed here and divided in Python (see Compiled.averages).
_FOLD: dict[str, type[exp.Func]] = {"sum": exp.Sum, "avg": exp.Sum, "min": exp.Min, "max": exp.Max}
_UNITS = {"day": "day", "month": "month", "year": "year"}
_EXACT = {ColumnType.DECIMAL, ColumnType.DURATION}


@dataclass(frozen=True)
class Output:
    """A result column: `name` is c0, c1, ...; `label` says what it is, for a person."""

    name: str
    label: str
    type: str  # a ColumnType value, "integer" (counts, row ids) or a group's unit type


@dataclass(frozen=True)
class Compiled:
    sql: str
    parameters: dict[str, Any]
    outputs: tuple[Output, ...]
    # An exact average: output position -> (its sum's column, its count's column), divided in
    # Python at 18 places and rounded to nine (DuckDB's avg of a decimal is a double).
    averages: dict[int, tuple[int, int]] = field(default_factory=dict)
    selected: int = 0  # how many columns the statement selects (outputs plus hidden counts)


def sql_type(kind: ColumnType) -> exp.DataType:
    return exp.DataType.build(_SQL_TYPES[kind], dialect=DIALECT)


def key(column: Column) -> str:
    return f"k{column.index}"


class _Parameters:
    def __init__(self) -> None:
        self.values: dict[str, Any] = {}

    def bind(self, prefix: str, value: Any) -> exp.Expr:
        name = f"{prefix}{sum(1 for n in self.values if n.startswith(prefix))}"
        self.values[name] = value
        return exp.Placeholder(this=name)


def _ref(column: Column) -> exp.Column:
    return exp.column(key(column), table=f"d{column.dataset}")


def _typed(parameters: _Parameters, value: Any, kind: ColumnType) -> exp.Expr:
    return exp.Cast(this=parameters.bind("v", value), to=sql_type(kind))


def dataset_source(path_parameter: exp.Expr, width: int, alias: str) -> exp.Table:
    """`read_parquet($sN) AS alias(r, k0, ..., k<width-1>)`: the columns renamed by position."""
    names = [exp.to_identifier(ROW)] + [exp.to_identifier(f"k{i}") for i in range(width)]
    return exp.Table(
        this=exp.Anonymous(this="read_parquet", expressions=[path_parameter]),
        alias=exp.TableAlias(this=exp.to_identifier(alias), columns=names),
    )


def compile_plan(plan: ValidatedPlan, paths: Sequence[str], max_rows: int) -> Compiled:
    """The statement for `plan`, reading dataset i from `paths[i]`, returning at most
    `max_rows` + 1 rows (one more than the ceiling, so a result past it is seen, not cut)."""
    parameters = _Parameters()
    subqueries = []
    for index, dataset in enumerate(plan.datasets):
        source = dataset_source(
            parameters.bind("s", paths[index]), len(dataset.schema.columns), "t"
        )
        conditions: list[exp.Expr] = []  # each dataset's own filters
        for item in plan.filters:
            if item.column.dataset != index:
                continue
            target = exp.column(key(item.column))
            kind = item.column.type
            if item.op == "is_null":
                conditions.append(exp.Is(this=target, expression=exp.Null()))
            elif item.op == "is_not_null":
                conditions.append(exp.Not(this=exp.Is(this=target, expression=exp.Null())))
            elif item.op == "in":
                conditions.append(
                    exp.In(
                        this=target,
                        expressions=[_typed(parameters, v, kind) for v in item.values],
                    )
                )
            else:
                conditions.append(
                    _COMPARE[item.op](
                        this=target, expression=_typed(parameters, item.values[0], kind)
                    )
                )
        select = exp.select(exp.Star()).from_(source)
        if conditions:
            select = select.where(exp.and_(*conditions))
        subqueries.append(select.subquery(f"d{index}"))

    query = exp.select().from_(subqueries[0])
    for join in plan.joins:
        condition = exp.and_(*(exp.EQ(this=_ref(a), expression=_ref(b)) for a, b in join.on))
        query = query.join(subqueries[join.dataset], on=condition, join_type="inner")

    outputs: list[Output] = []
    projections: list[exp.Expr] = []
    hidden: list[exp.Expr] = []
    averages: dict[int, tuple[int, int]] = {}
    order: list[exp.Expr] = []

    def label(column: Column) -> str:
        return f"{plan.aliases[column.dataset]}.{column.name}"

    if plan.returns_rows:
        for index in range(len(plan.datasets)):
            row = exp.column(ROW, table=f"d{index}")
            projections.append(row)
            order.append(row.copy())
            outputs.append(Output("", f"{plan.aliases[index]}.row_id", "integer"))
        for column in plan.columns:
            projections.append(_ref(column))
            outputs.append(Output("", label(column), column.type.value))
    else:
        groups = []
        for group in plan.groups:
            value: exp.Expr = _ref(group.column)
            if group.by is not None:
                if group.column.type is ColumnType.TIMESTAMP:
                    # The session's time zone is UTC, so this is the instant's UTC wall time.
                    value = exp.Cast(this=value, to=exp.DataType.build("TIMESTAMP"))
                value = exp.Cast(
                    this=exp.Anonymous(
                        this="date_trunc", expressions=[exp.Literal.string(_UNITS[group.by]), value]
                    ),
                    to=exp.DataType.build("DATE"),
                )
            groups.append(value)
            projections.append(value.copy())
            order.append(value.copy())
            by = f" by {group.by}" if group.by else ""
            outputs.append(
                Output(
                    "", label(group.column) + by, "date" if group.by else group.column.type.value
                )
            )
        for aggregate in plan.aggregates:
            measured = aggregate.column
            operand = None if measured is None else _ref(measured)
            position = len(outputs)
            result_type = "integer"
            if aggregate.fn == "count":
                value = exp.Count(this=exp.Star() if operand is None else operand)
            elif aggregate.fn == "count_distinct":
                value = exp.Count(this=exp.Distinct(expressions=[operand]))
            else:
                assert measured is not None and operand is not None
                result_type = measured.type.value
                if aggregate.fn == "avg" and measured.type not in _EXACT:
                    value = exp.Avg(this=operand)
                else:
                    value = _FOLD[aggregate.fn](this=operand)
                if aggregate.fn == "avg" and measured.type in _EXACT:
                    hidden.append(exp.Count(this=operand.copy()))
                    averages[position] = (position, len(hidden) - 1)
            projections.append(value)
            text = aggregate.fn if measured is None else f"{aggregate.fn} {label(measured)}"
            outputs.append(Output("", text, result_type))
        if groups:
            query = query.group_by(*groups)

    named = [Output(f"c{i}", o.label, o.type) for i, o in enumerate(outputs)]
    query = query.select(
        *(exp.alias_(p, f"c{i}") for i, p in enumerate(projections)),
        *(exp.alias_(h, f"n{i}") for i, h in enumerate(hidden)),
        append=False,
    )
    # Hidden counts come after every output: resolve their positions now.
    width = len(projections)
    resolved = {
        position: (sum_at, width + count_at) for position, (sum_at, count_at) in averages.items()
    }
    if order:
        query = query.order_by(*order)
    query = query.limit(parameters.bind("n", max_rows + 1))
    return Compiled(
        query.sql(dialect=DIALECT),
        parameters.values,
        tuple(named),
        resolved,
        width + len(hidden),
    )
