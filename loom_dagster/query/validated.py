"""The plan as validated: every column, filter, join, group and aggregate checked against the
datasets' schemas (seed 000 "Queries"), each filter value read as its column's type.

`validate` takes the plan `read_plan` read (plan.py) and a way to find a served dataset; what it
gives is all that compile.py and run.py use.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
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
from loom_dagster.query.errors import QueryError
from loom_dagster.query.plan import (
    COMPARISONS,
    MAX_IN_VALUES,
    MAX_TEXT_VALUE,
    Filter,
    Plan,
    _invalid,
    shown,
)

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
