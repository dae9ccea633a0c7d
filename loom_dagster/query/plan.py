"""The typed plan (seed 000 "Queries") and its checks against the datasets' schemas.

A plan names up to four datasets under aliases; filters on their columns, all of which must
hold; an inner equi-join of each dataset past the first to one before it; groups (a date or
date-time by day, month or year, in UTC); and aggregates, or else the rows themselves with their
row ids. `read_plan` reads its JSON shape; `validate` checks it against the schemas and gives
the plan every later step uses, with each filter value read as its column's type.

The JSON shape:

    {"datasets": [{"alias": "u", "dataset": "<id or name>"}, ...],
     "filters": [{"alias": "u", "column": "day", "op": ">=", "value": "2026-11-01"}],
     "joins": [{"alias": "h", "to": "u", "on": [["host", "host"]]}],
     "groups": [{"alias": "u", "column": "day", "by": "month"}],
     "aggregates": [{"fn": "sum", "alias": "u", "column": "bytes"}, {"fn": "count"}],
     "columns": [{"alias": "u", "column": "host"}]}

`columns` (the rows asked for) applies only to a plan without aggregates; without it every
column of every dataset is returned, after each dataset's row id.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Context, Decimal, InvalidOperation
from typing import Any

from loom_dagster.datasets.model import (
    DECIMAL_PRECISION,
    DECIMAL_SCALE,
    ColumnType,
    Dataset,
    DatasetState,
)
from loom_dagster.display import bounded, printable
from loom_dagster.query.errors import QueryError

MAX_DATASETS = 4
MAX_FILTERS = 64
MAX_IN_VALUES = 1000
MAX_GROUPS = 16
MAX_AGGREGATES = 32
MAX_COLUMNS = 256
MAX_TEXT_VALUE = 10_000

COMPARISONS = ("=", "!=", "<", "<=", ">", ">=")
OPERATORS = (*COMPARISONS, "in", "is_null", "is_not_null")
GROUP_UNITS = ("day", "month", "year")
AGGREGATES = ("count", "count_distinct", "sum", "avg", "min", "max")

# Which comparisons each type allows: a boolean is equal or not; every other type is ordered.
_ORDERED: set[ColumnType] = {t for t in ColumnType if t is not ColumnType.BOOLEAN}
_SUMMABLE: set[ColumnType] = {ColumnType.DECIMAL, ColumnType.DURATION, ColumnType.DOUBLE}
_TIME: set[ColumnType] = {ColumnType.DATE, ColumnType.TIMESTAMP}
# A double has no exact value to group by: two readings of the same number may differ.
_GROUPABLE: set[ColumnType] = {t for t in ColumnType if t is not ColumnType.DOUBLE}
_MIN_MAX: set[ColumnType] = {t for t in ColumnType if t is not ColumnType.BOOLEAN}
_ALLOWED_BY: dict[str, set[ColumnType]] = {
    "sum": _SUMMABLE,
    "avg": _SUMMABLE,
    "min": _MIN_MAX,
    "max": _MIN_MAX,
}
_LIMIT = Decimal(10) ** (DECIMAL_PRECISION - DECIMAL_SCALE)
_QUANTUM = Decimal(1).scaleb(-DECIMAL_SCALE)
# Wide enough that quantizing any value below _LIMIT to nine places is exact.
_EXACT = Context(prec=DECIMAL_PRECISION + 10)


def shown(text: str, limit: int = 80) -> str:
    """A name a caller or a document wrote, quoted, escaped and cut for a one-line message."""
    return repr(bounded(printable(text), limit))


# The plan as written -----------------------------------------------------------------------


@dataclass(frozen=True)
class DatasetRef:
    alias: str
    dataset: str  # an id or a name


@dataclass(frozen=True)
class Filter:
    alias: str
    column: str
    op: str
    value: Any = None


@dataclass(frozen=True)
class Join:
    alias: str
    to: str
    on: tuple[tuple[str, str], ...]  # (this dataset's column, the earlier one's column)


@dataclass(frozen=True)
class Group:
    alias: str
    column: str
    by: str | None = None


@dataclass(frozen=True)
class Aggregate:
    fn: str
    alias: str | None = None
    column: str | None = None


@dataclass(frozen=True)
class ColumnName:
    alias: str
    column: str


@dataclass(frozen=True)
class Plan:
    datasets: tuple[DatasetRef, ...]
    filters: tuple[Filter, ...] = ()
    joins: tuple[Join, ...] = ()
    groups: tuple[Group, ...] = ()
    aggregates: tuple[Aggregate, ...] = ()
    columns: tuple[ColumnName, ...] | None = None


def _invalid(message: str) -> QueryError:
    return QueryError(message, code="invalid_plan")


def _object(value: Any, where: str, keys: set[str], required: set[str]) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        raise _invalid(f"{where} must be an object")
    unknown = sorted(set(value) - keys)
    if unknown:
        raise _invalid(f"{where} has an unknown field {shown(str(unknown[0]))}")
    missing = sorted(required - set(value))
    if missing:
        raise _invalid(f"{where} needs the field {missing[0]!r}")
    return value


def _list(value: Any, where: str, limit: int) -> list[Any]:
    if not isinstance(value, list):
        raise _invalid(f"{where} must be a list")
    if len(value) > limit:
        raise _invalid(f"{where} holds {len(value)} entries; at most {limit}")
    return value


def _text(value: Any, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise _invalid(f"{where} must be a non-empty string")
    return value


def read_plan(source: str | bytes | Mapping[str, Any]) -> Plan:
    """A plan from its JSON text (numbers read as exact decimals) or an already-decoded object."""
    if isinstance(source, (str, bytes)):
        try:
            decoded = json.loads(source, parse_float=Decimal)
        except (ValueError, RecursionError) as error:
            raise _invalid(f"the plan is not JSON: {bounded(str(error), 200)}") from None
    else:
        decoded = source
    top = _object(
        decoded,
        "the plan",
        {"datasets", "filters", "joins", "groups", "aggregates", "columns"},
        {"datasets"},
    )
    datasets = []
    for number, item in enumerate(_list(top["datasets"], "datasets", 1000)):
        where = f"datasets[{number}]"
        entry = _object(item, where, {"alias", "dataset"}, {"alias", "dataset"})
        datasets.append(
            DatasetRef(_text(entry["alias"], f"{where}.alias"), _text(entry["dataset"], where))
        )
    if not datasets:
        raise _invalid("the plan names no dataset")
    if len(datasets) > MAX_DATASETS:
        raise QueryError(
            f"the plan names {len(datasets)} datasets; a query reads at most {MAX_DATASETS}",
            code="too_many_datasets",
        )
    filters = []
    for number, item in enumerate(_list(top.get("filters", []), "filters", MAX_FILTERS)):
        where = f"filters[{number}]"
        entry = _object(item, where, {"alias", "column", "op", "value"}, {"alias", "column", "op"})
        op = entry["op"]
        if op not in OPERATORS:
            raise _invalid(f"{where}.op must be one of {', '.join(OPERATORS)}")
        if op not in ("is_null", "is_not_null") and "value" not in entry:
            raise _invalid(f"{where} needs the field 'value'")
        filters.append(
            Filter(
                _text(entry["alias"], f"{where}.alias"),
                _text(entry["column"], f"{where}.column"),
                op,
                entry.get("value"),
            )
        )
    joins = []
    for number, item in enumerate(_list(top.get("joins", []), "joins", MAX_DATASETS)):
        where = f"joins[{number}]"
        entry = _object(item, where, {"alias", "to", "on"}, {"alias", "to", "on"})
        pairs = []
        for pair_number, pair in enumerate(_list(entry["on"], f"{where}.on", 16)):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise _invalid(f"{where}.on[{pair_number}] must be [column, column of 'to']")
            pairs.append((_text(pair[0], f"{where}.on"), _text(pair[1], f"{where}.on")))
        if not pairs:
            raise _invalid(f"{where}.on names no column pair")
        joins.append(
            Join(
                _text(entry["alias"], f"{where}.alias"),
                _text(entry["to"], f"{where}.to"),
                tuple(pairs),
            )
        )
    groups = []
    for number, item in enumerate(_list(top.get("groups", []), "groups", MAX_GROUPS)):
        where = f"groups[{number}]"
        entry = _object(item, where, {"alias", "column", "by"}, {"alias", "column"})
        by = entry.get("by")
        if by is not None and by not in GROUP_UNITS:
            raise _invalid(f"{where}.by must be one of {', '.join(GROUP_UNITS)}")
        groups.append(
            Group(
                _text(entry["alias"], f"{where}.alias"),
                _text(entry["column"], f"{where}.column"),
                by,
            )
        )
    aggregates = []
    for number, item in enumerate(_list(top.get("aggregates", []), "aggregates", MAX_AGGREGATES)):
        where = f"aggregates[{number}]"
        entry = _object(item, where, {"fn", "alias", "column"}, {"fn"})
        if entry["fn"] not in AGGREGATES:
            raise _invalid(f"{where}.fn must be one of {', '.join(AGGREGATES)}")
        alias = entry.get("alias")
        column = entry.get("column")
        if (alias is None) != (column is None):
            raise _invalid(f"{where} names a column with its alias, or neither")
        if column is None and entry["fn"] != "count":
            raise _invalid(f"{where}: {entry['fn']} needs a column")
        aggregates.append(
            Aggregate(
                entry["fn"],
                None if alias is None else _text(alias, f"{where}.alias"),
                None if column is None else _text(column, f"{where}.column"),
            )
        )
    columns = None
    if "columns" in top:
        if aggregates:
            raise _invalid("columns are the rows asked for; a plan with aggregates has none")
        columns = []
        for number, item in enumerate(_list(top["columns"], "columns", MAX_COLUMNS)):
            where = f"columns[{number}]"
            entry = _object(item, where, {"alias", "column"}, {"alias", "column"})
            columns.append(
                ColumnName(_text(entry["alias"], f"{where}.alias"), _text(entry["column"], where))
            )
    if groups and not aggregates:
        raise _invalid("a plan with groups needs at least one aggregate")
    return Plan(
        tuple(datasets),
        tuple(filters),
        tuple(joins),
        tuple(groups),
        tuple(aggregates),
        None if columns is None else tuple(columns),
    )


# The plan as validated ---------------------------------------------------------------------


@dataclass(frozen=True)
class Column:
    """A stored column of one of the plan's datasets: `index` is its place in the schema."""

    dataset: int  # the dataset's place in the plan
    index: int
    name: str
    type: ColumnType


@dataclass(frozen=True)
class CheckedFilter:
    column: Column
    op: str
    values: tuple[Any, ...]  # each read as the column's type (one, several for `in`, none)


@dataclass(frozen=True)
class CheckedJoin:
    dataset: int
    to: int
    on: tuple[tuple[Column, Column], ...]


@dataclass(frozen=True)
class CheckedGroup:
    column: Column
    by: str | None


@dataclass(frozen=True)
class CheckedAggregate:
    fn: str
    column: Column | None


@dataclass(frozen=True)
class ValidatedPlan:
    aliases: tuple[str, ...]
    datasets: tuple[Dataset, ...]
    filters: tuple[CheckedFilter, ...]
    joins: tuple[CheckedJoin, ...]
    groups: tuple[CheckedGroup, ...]
    aggregates: tuple[CheckedAggregate, ...]
    columns: tuple[Column, ...]  # the rows asked for (no aggregates), after each row id

    @property
    def returns_rows(self) -> bool:
        return not self.aggregates

    def to_dict(self) -> dict[str, Any]:
        """The plan as validated, for the receipt: dataset ids and snapshots resolved, every
        value as read (in its JSON form)."""

        def ref(column: Column) -> dict[str, Any]:
            return {
                "alias": self.aliases[column.dataset],
                "column": column.name,
                "type": column.type.value,
            }

        return {
            "datasets": [
                {
                    "alias": alias,
                    "dataset": dataset.dataset_id,
                    "name": dataset.name,
                    "snapshot": dataset.snapshot,
                }
                for alias, dataset in zip(self.aliases, self.datasets, strict=True)
            ],
            "filters": [
                {**ref(f.column), "op": f.op, "values": [json_value(v) for v in f.values]}
                for f in self.filters
            ],
            "joins": [
                {
                    "alias": self.aliases[j.dataset],
                    "to": self.aliases[j.to],
                    "on": [[a.name, b.name] for a, b in j.on],
                }
                for j in self.joins
            ],
            "groups": [{**ref(g.column), "by": g.by} for g in self.groups],
            "aggregates": [
                {"fn": a.fn, **({} if a.column is None else ref(a.column))} for a in self.aggregates
            ],
            "columns": [ref(c) for c in self.columns] if self.returns_rows else [],
        }


def json_value(value: Any) -> Any:
    """A typed value in a JSON-safe form: exact decimals and times as text."""
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


Resolve = Callable[[str], "Dataset | None"]


def validate(plan: Plan, resolve: Resolve) -> ValidatedPlan:
    """Check `plan` against the schemas of the datasets `resolve` serves (by id or name)."""
    aliases: list[str] = []
    datasets: list[Dataset] = []
    for ref in plan.datasets:
        if ref.alias in aliases:
            raise QueryError(
                f"the alias {shown(ref.alias)} names two datasets", code="duplicate_alias"
            )
        dataset = resolve(ref.dataset)
        if dataset is None:
            raise QueryError(
                f"no dataset {shown(ref.dataset)} is served (by id or name)",
                code="unknown_dataset",
            )
        if dataset.state is DatasetState.NEEDS_CLARIFICATION:
            raise QueryError(
                f"dataset {dataset.dataset_id} ({shown(dataset.name)}) needs clarification; "
                f"approve it first (loom datasets show {dataset.dataset_id})",
                code="needs_clarification",
            )
        aliases.append(ref.alias)
        datasets.append(dataset)

    def alias_index(alias: str) -> int:
        if alias not in aliases:
            raise QueryError(
                f"the alias {shown(alias)} names no dataset of the plan", code="unknown_alias"
            )
        return aliases.index(alias)

    def column(alias: str, name: str) -> Column:
        index = alias_index(alias)
        for position, stored in enumerate(datasets[index].schema.columns):
            if stored.name == name:
                return Column(index, position, stored.name, stored.type)
        raise QueryError(
            f"dataset {shown(alias)} stores no column {shown(name)}", code="unknown_column"
        )

    filters = []
    for item in plan.filters:
        target = column(item.alias, item.column)
        filters.append(_check_filter(target, item, aliases))

    joins: dict[int, CheckedJoin] = {}
    for join in plan.joins:
        index, to = alias_index(join.alias), alias_index(join.to)
        if to >= index:
            raise QueryError(
                f"dataset {shown(join.alias)} may join only a dataset named before it, "
                f"not {shown(join.to)}",
                code="join_not_allowed",
            )
        if index in joins:
            raise QueryError(
                f"dataset {shown(join.alias)} has two joins; give one with several column pairs",
                code="join_not_allowed",
            )
        pairs = []
        for left_name, right_name in join.on:
            left, right = column(join.alias, left_name), column(join.to, right_name)
            if left.type.kind != right.type.kind:
                raise QueryError(
                    f"join keys {shown(join.alias)}.{shown(left.name)} ({left.type.value}) and "
                    f"{shown(join.to)}.{shown(right.name)} ({right.type.value}) are of different "
                    "kinds",
                    code="join_kind_mismatch",
                )
            pairs.append((left, right))
        joins[index] = CheckedJoin(index, to, tuple(pairs))
    for index in range(1, len(datasets)):
        if index not in joins:
            raise QueryError(
                f"dataset {shown(aliases[index])} joins no dataset before it "
                "(every dataset past the first is joined)",
                code="join_not_allowed",
            )

    groups = []
    for group in plan.groups:
        target = column(group.alias, group.column)
        if target.type not in _GROUPABLE:
            raise QueryError(
                f"column {shown(target.name)} is a {target.type.value}: it cannot be grouped",
                code="group_not_allowed",
            )
        if group.by is not None and target.type not in _TIME:
            raise QueryError(
                f"column {shown(target.name)} is a {target.type.value}: only a date or a "
                f"timestamp groups by {group.by}",
                code="group_not_allowed",
            )
        groups.append(CheckedGroup(target, group.by))

    aggregates = []
    for aggregate in plan.aggregates:
        measured = (
            None if aggregate.column is None else column(str(aggregate.alias), aggregate.column)
        )
        if measured is not None:
            allowed = _ALLOWED_BY.get(aggregate.fn, set(ColumnType))
            if measured.type not in allowed:
                raise QueryError(
                    f"{aggregate.fn} of column {shown(measured.name)} ({measured.type.value}) is not "
                    "allowed",
                    code="aggregate_not_allowed",
                )
        aggregates.append(CheckedAggregate(aggregate.fn, measured))

    if plan.columns is not None:
        columns = tuple(column(name.alias, name.column) for name in plan.columns)
    elif not aggregates:
        columns = tuple(
            Column(index, position, stored.name, stored.type)
            for index, dataset in enumerate(datasets)
            for position, stored in enumerate(dataset.schema.columns)
        )
    else:
        columns = ()
    return ValidatedPlan(
        tuple(aliases),
        tuple(datasets),
        tuple(filters),
        tuple(joins[i] for i in sorted(joins)),
        tuple(groups),
        tuple(aggregates),
        columns,
    )


def _check_filter(target: Column, item: Filter, aliases: Sequence[str]) -> CheckedFilter:
    if item.op in ("is_null", "is_not_null"):
        return CheckedFilter(target, item.op, ())
    if item.op in COMPARISONS[2:] and target.type not in _ORDERED:
        raise QueryError(
            f"column {shown(target.name)} is a {target.type.value}: it compares with = or != only",
            code="comparison_not_allowed",
        )
    if item.op == "in":
        if not isinstance(item.value, list) or not item.value:
            raise _invalid(f"the value of 'in' on {shown(target.name)} must be a non-empty list")
        if len(item.value) > MAX_IN_VALUES:
            raise _invalid(f"'in' takes at most {MAX_IN_VALUES} values")
        raw = list(item.value)
    else:
        raw = [item.value]
    return CheckedFilter(target, item.op, tuple(read_value(target, value) for value in raw))


def read_value(target: Column, value: Any) -> Any:
    """`value` read as `target`'s type, as a row's value is, but a decimal past nine places is
    refused rather than rounded."""
    kind = target.type

    def refuse(why: str) -> QueryError:
        return QueryError(
            f"value {shown(str(value), 60)} is not a {kind.value} for column "
            f"{shown(target.name)}: {why}",
            code="value_not_readable",
        )

    if value is None:
        raise refuse("a filter compares with a value; use is_null for a missing one")
    if kind is ColumnType.TEXT:
        if not isinstance(value, str):
            raise refuse("text is a JSON string")
        if len(value) > MAX_TEXT_VALUE:
            raise refuse(f"longer than {MAX_TEXT_VALUE} characters")
        return value
    if kind is ColumnType.BOOLEAN:
        if not isinstance(value, bool):
            raise refuse("a boolean is true or false")
        return value
    if kind in (ColumnType.DECIMAL, ColumnType.DURATION):
        if isinstance(value, bool) or not isinstance(value, (str, int, Decimal, float)):
            raise refuse("a number is a JSON number or a string of digits")
        try:
            number = Decimal(str(value).strip()) if not isinstance(value, Decimal) else value
        except InvalidOperation:
            raise refuse("not a number") from None
        if not number.is_finite():
            raise refuse("not a finite number")
        if abs(number) >= _LIMIT:
            raise refuse(f"{DECIMAL_PRECISION - DECIMAL_SCALE} digits or more before the point")
        exact = number.quantize(_QUANTUM, context=_EXACT)
        if exact != number:
            raise refuse(f"more than {DECIMAL_SCALE} decimal places (it is not rounded)")
        return exact
    if kind is ColumnType.DOUBLE:
        if isinstance(value, bool) or not isinstance(value, (str, int, Decimal, float)):
            raise refuse("a number is a JSON number or a string of digits")
        try:
            number_float = float(value)
        except (ValueError, OverflowError):
            raise refuse("not a number") from None
        if not math.isfinite(number_float):
            raise refuse("not a finite number")
        return number_float
    if not isinstance(value, str):
        raise refuse("a date or a timestamp is an ISO 8601 string")
    if kind is ColumnType.DATE:
        try:
            return date.fromisoformat(value)
        except ValueError:
            raise refuse("a date is YYYY-MM-DD") from None
    try:
        instant = datetime.fromisoformat(value)
    except ValueError:
        raise refuse("a timestamp is ISO 8601 (YYYY-MM-DDTHH:MM:SS[+HH:MM])") from None
    # As a row's value is: a time zone is turned to UTC, and none means UTC.
    if instant.tzinfo is None:
        return instant.replace(tzinfo=UTC)
    return instant.astimezone(UTC)
