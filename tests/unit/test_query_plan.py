"""Every check of a typed plan against the schemas: one test per kind, with its exact code and
message (seed 000 "Queries")."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from loom_dagster.datasets.model import ColumnType as T
from loom_dagster.datasets.model import DatasetState
from loom_dagster.objectstore import ObjectStore
from loom_dagster.query.errors import QueryError
from loom_dagster.query.plan import read_plan
from loom_dagster.query.validated import validate
from tests.support.query_datasets import MemoryCatalog, publish

USAGE = [
    ("host", T.TEXT),
    ("day", T.DATE),
    ("bytes", T.DECIMAL),
    ("load", T.DOUBLE),
    ("at", T.TIMESTAMP),
    ("up", T.BOOLEAN),
    ("took", T.DURATION),
]


@pytest.fixture
def catalog(tmp_path: Path) -> MemoryCatalog:
    store = ObjectStore(tmp_path.as_uri())
    served = MemoryCatalog()
    publish(store, served, "usage", USAGE, [])
    publish(store, served, "hosts", [("host", T.TEXT), ("rack", T.DECIMAL)], [])
    publish(store, served, "racks", [("rack", T.DOUBLE)], [])
    return served


def check(catalog: MemoryCatalog, plan: dict[str, Any]) -> Any:
    return validate(read_plan(plan), catalog.served_dataset)


def refused(catalog: MemoryCatalog, plan: dict[str, Any] | str) -> str:
    with pytest.raises(QueryError) as caught:
        validate(read_plan(plan), catalog.served_dataset)
    return str(caught.value)


def usage(**parts: Any) -> dict[str, Any]:
    return {"datasets": [{"alias": "u", "dataset": "usage"}], **parts}


def where(column: str, op: str, value: Any) -> dict[str, Any]:
    return usage(filters=[{"alias": "u", "column": column, "op": op, "value": value}])


def test_unknown_dataset(catalog: MemoryCatalog) -> None:
    plan = {"datasets": [{"alias": "u", "dataset": "nope'; DROP TABLE x"}]}
    assert refused(catalog, plan) == (
        'unknown_dataset: no dataset "nope\'; DROP TABLE x" is served (by id or name)'
    )


def test_unknown_alias(catalog: MemoryCatalog) -> None:
    plan = usage(filters=[{"alias": "x", "column": "host", "op": "=", "value": "a"}])
    assert refused(catalog, plan) == "unknown_alias: the alias 'x' names no dataset of the plan"


def test_duplicate_alias(catalog: MemoryCatalog) -> None:
    plan = {"datasets": [{"alias": "u", "dataset": "usage"}, {"alias": "u", "dataset": "hosts"}]}
    assert refused(catalog, plan) == "duplicate_alias: the alias 'u' names two datasets"


def test_unknown_column(catalog: MemoryCatalog) -> None:
    assert refused(catalog, where("nope", "=", "a")) == (
        "unknown_column: dataset 'u' stores no column 'nope'"
    )


def test_more_than_four_datasets(catalog: MemoryCatalog) -> None:
    plan = {"datasets": [{"alias": f"a{i}", "dataset": "usage"} for i in range(5)]}
    assert refused(catalog, plan) == (
        "too_many_datasets: the plan names 5 datasets; a query reads at most 4"
    )


def test_a_dataset_that_needs_clarification_is_refused_until_approved(
    catalog: MemoryCatalog,
) -> None:
    usage_dataset = catalog.served_dataset("usage")
    assert usage_dataset is not None
    catalog.serve(replace(usage_dataset, state=DatasetState.NEEDS_CLARIFICATION))
    assert refused(catalog, usage()) == (
        f"needs_clarification: dataset {usage_dataset.dataset_id} ('usage') needs clarification; "
        f"approve it first (loom datasets show {usage_dataset.dataset_id})"
    )
    catalog.serve(replace(usage_dataset, state=DatasetState.APPROVED))
    assert check(catalog, usage()).datasets[0].state is DatasetState.APPROVED


@pytest.mark.parametrize(
    ("column", "value", "why"),
    [
        ("bytes", "1.0000000001", "more than 9 decimal places (it is not rounded)"),
        ("bytes", "1e29", "29 digits or more before the point"),
        ("bytes", "twelve", "not a number"),
        ("bytes", True, "a number is a JSON number or a string of digits"),
        ("took", "NaN", "not a finite number"),
        ("load", "inf", "not a finite number"),
        ("day", "2026-13-01", "a date is YYYY-MM-DD"),
        ("at", "yesterday", "a timestamp is ISO 8601 (YYYY-MM-DDTHH:MM:SS[+HH:MM])"),
        ("up", "true", "a boolean is true or false"),
        ("host", 7, "text is a JSON string"),
    ],
)
def test_a_filter_value_not_readable_as_its_columns_type(
    catalog: MemoryCatalog, column: str, value: Any, why: str
) -> None:
    kind = dict(USAGE)[column].value
    assert refused(catalog, where(column, "=", value)) == (
        f"value_not_readable: value {str(value)!r} is not a {kind} for column {column!r}: {why}"
    )


def test_a_decimal_past_nine_places_in_json_is_refused_not_rounded(catalog: MemoryCatalog) -> None:
    text = (
        '{"datasets": [{"alias": "u", "dataset": "usage"}], "filters": [{"alias": "u", '
        '"column": "bytes", "op": ">", "value": 0.1234567891}]}'
    )
    assert refused(catalog, text) == (
        "value_not_readable: value '0.1234567891' is not a decimal for column 'bytes': "
        "more than 9 decimal places (it is not rounded)"
    )


def test_filter_values_are_read_as_their_columns_types(catalog: MemoryCatalog) -> None:
    plan = usage(
        filters=[
            {"alias": "u", "column": "bytes", "op": "=", "value": "1.5000000000"},
            {"alias": "u", "column": "day", "op": ">=", "value": "2026-11-01"},
            {"alias": "u", "column": "at", "op": "<", "value": "2026-11-01T02:00:00+02:00"},
            {"alias": "u", "column": "host", "op": "in", "value": ["a", "b"]},
            {"alias": "u", "column": "up", "op": "is_null"},
        ]
    )
    values = [f.values for f in check(catalog, plan).filters]
    assert values == [
        (Decimal("1.500000000"),),
        (date(2026, 11, 1),),
        (datetime(2026, 11, 1, 0, 0, tzinfo=UTC),),
        ("a", "b"),
        (),
    ]


def test_a_comparison_the_type_does_not_allow(catalog: MemoryCatalog) -> None:
    assert refused(catalog, where("up", "<", True)) == (
        "comparison_not_allowed: column 'up' is a boolean: it compares with = or != only"
    )


def test_join_keys_of_different_kinds(catalog: MemoryCatalog) -> None:
    plan = {
        "datasets": [{"alias": "h", "dataset": "hosts"}, {"alias": "r", "dataset": "racks"}],
        "joins": [{"alias": "r", "to": "h", "on": [["rack", "rack"]]}],
    }
    assert refused(catalog, plan) == (
        "join_kind_mismatch: join keys 'r'.'rack' (double) and 'h'.'rack' (decimal) are of "
        "different kinds"
    )


def test_a_join_to_a_later_dataset_or_none_at_all(catalog: MemoryCatalog) -> None:
    two = [{"alias": "u", "dataset": "usage"}, {"alias": "h", "dataset": "hosts"}]
    backwards = {"datasets": two, "joins": [{"alias": "u", "to": "h", "on": [["host", "host"]]}]}
    assert refused(catalog, backwards) == (
        "join_not_allowed: dataset 'u' may join only a dataset named before it, not 'h'"
    )
    assert refused(catalog, {"datasets": two}) == (
        "join_not_allowed: dataset 'h' joins no dataset before it (every dataset past the first "
        "is joined)"
    )


def test_a_group_the_types_do_not_allow(catalog: MemoryCatalog) -> None:
    by_month = usage(
        groups=[{"alias": "u", "column": "host", "by": "month"}], aggregates=[{"fn": "count"}]
    )
    assert refused(catalog, by_month) == (
        "group_not_allowed: column 'host' is a text: only a date or a timestamp groups by month"
    )
    double = usage(groups=[{"alias": "u", "column": "load"}], aggregates=[{"fn": "count"}])
    assert refused(catalog, double) == (
        "group_not_allowed: column 'load' is a double: it cannot be grouped"
    )


@pytest.mark.parametrize(("fn", "column"), [("sum", "host"), ("avg", "day"), ("max", "up")])
def test_an_aggregate_the_types_do_not_allow(catalog: MemoryCatalog, fn: str, column: str) -> None:
    plan = usage(aggregates=[{"fn": fn, "alias": "u", "column": column}])
    kind = dict(USAGE)[column].value
    assert refused(catalog, plan) == (
        f"aggregate_not_allowed: {fn} of column {column!r} ({kind}) is not allowed"
    )


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        (
            "{not json",
            "the plan is not JSON: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
        ),
        ({"datasets": []}, "the plan names no dataset"),
        ({"datasets": [{"alias": "u"}]}, "datasets[0] needs the field 'dataset'"),
        (usage(limit=3), "the plan has an unknown field 'limit'"),
        (
            where("host", "like", "a%"),
            "filters[0].op must be one of =, !=, <, <=, >, >=, in, is_null, is_not_null",
        ),
        (
            usage(groups=[{"alias": "u", "column": "host"}]),
            "a plan with groups needs at least one aggregate",
        ),
        (
            usage(aggregates=[{"fn": "median", "alias": "u", "column": "bytes"}]),
            "aggregates[0].fn must be one of count, count_distinct, sum, avg, min, max",
        ),
    ],
)
def test_a_plan_of_the_wrong_shape(catalog: MemoryCatalog, plan: Any, message: str) -> None:
    assert refused(catalog, plan) == f"invalid_plan: {message}"


def test_a_name_holding_control_characters_is_escaped_in_the_message(
    catalog: MemoryCatalog,
) -> None:
    assert refused(catalog, where("\x1b[2Jx", "=", "a")) == (
        "unknown_column: dataset 'u' stores no column '\\\\x1b[2Jx'"
    )
