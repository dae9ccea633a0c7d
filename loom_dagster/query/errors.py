"""The typed refusals and failures of a query: each a stable code and a one-line message."""

from __future__ import annotations

from loom_dagster.errors import LoomError


class QueryError(LoomError):
    """A plan or a statement refused, or a query that could not finish within its ceilings.

    Codes: invalid_plan, unknown_dataset, unknown_alias, duplicate_alias, unknown_column,
    too_many_datasets, value_not_readable, comparison_not_allowed, join_not_allowed,
    join_kind_mismatch, group_not_allowed, aggregate_not_allowed, needs_clarification,
    snapshot_missing, snapshot_mismatch, too_many_rows, memory_limit, time_limit, sum_overflow,
    dataset_changed, sql_refused, query_failed; a read (query.read): incomplete_dataset,
    ambiguous_dataset.
    """

    code = "query_failed"


class DatasetChanged(QueryError):
    """A dataset's snapshot was replaced (or stopped serving) while the query ran: run it again."""

    code = "dataset_changed"
    retryable = True
