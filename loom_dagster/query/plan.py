"""The typed plan (seed 000 "Queries") as a caller writes it, read from its JSON shape.

A plan names up to four datasets under aliases; filters on their columns, all of which must
hold; an inner equi-join of each dataset past the first to one before it; groups (a date or
date-time by day, month or year, in UTC); and aggregates, or else the rows themselves with their
row ids. `read_plan` reads its JSON shape; `validate` (validated.py) checks it against the
schemas and gives the plan every later step uses, with each filter value read as its column's
type.

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
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

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
