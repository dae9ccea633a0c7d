"""A query from its plan to its answer: read, validate, compile, run, revalidate, receipt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loom_dagster.query.compile import Output, compile_plan
from loom_dagster.query.errors import QueryError
from loom_dagster.query.plan import read_plan
from loom_dagster.query.run import (
    Answer,
    Ceilings,
    Receipt,
    execute,
    finish_rows,
    snapshot_reads,
)
from loom_dagster.query.snapshots import (
    Catalog,
    SnapshotFiles,
    completeness,
    opened,
    still_served,
)
from loom_dagster.query.sql import check_sql, rewrite
from loom_dagster.query.validated import validate


def run_query(
    plan: str | bytes | Mapping[str, Any],
    catalog: Catalog,
    files: SnapshotFiles,
    ceilings: Ceilings | None = None,
) -> Answer:
    """Answer a typed plan (JSON text or its decoded object) over the served datasets."""
    ceilings = ceilings or Ceilings()
    validated = validate(read_plan(plan), catalog.served_dataset)
    datasets = validated.datasets
    try:
        with opened(files, datasets) as paths:
            compiled = compile_plan(validated, [str(p) for p in paths], ceilings.max_rows)
            _, rows = execute(compiled.sql, compiled.parameters, paths, ceilings)
    except QueryError as error:
        # A snapshot gone or replaced under the query is a change to run again for.
        if error.code in ("snapshot_missing", "snapshot_mismatch", "query_failed"):
            still_served(catalog, datasets)
        raise
    still_served(catalog, datasets)
    parameters = dict(compiled.parameters)
    for index, dataset in enumerate(datasets):
        parameters[f"s{index}"] = dataset.snapshot_key  # what was read, not where it was copied
    reasons = completeness(validated.aliases, datasets)
    receipt = Receipt(
        snapshot_reads(validated.aliases, datasets),
        validated.to_dict(),
        compiled.sql,
        parameters,
        not reasons,
        reasons,
    )
    return Answer(compiled.outputs, finish_rows(compiled, rows), receipt)


def run_sql(
    text: str,
    catalog: Catalog,
    files: SnapshotFiles,
    ceilings: Ceilings | None = None,
) -> Answer:
    """Answer one allowlisted SELECT over served datasets named as tables (`loom sql`)."""
    ceilings = ceilings or Ceilings()
    checked = check_sql(text, catalog.served_dataset)
    datasets = checked.datasets
    try:
        with opened(files, datasets) as paths:
            statement, parameters = rewrite(checked, [str(p) for p in paths], ceilings.max_rows)
            names, rows = execute(statement, parameters, paths, ceilings)
    except QueryError as error:
        if error.code in ("snapshot_missing", "snapshot_mismatch", "query_failed"):
            still_served(catalog, datasets)
        raise
    still_served(catalog, datasets)
    for index, dataset in enumerate(datasets):
        parameters[f"s{index}"] = dataset.snapshot_key
    reasons = completeness(checked.aliases, datasets)
    receipt = Receipt(
        snapshot_reads(checked.aliases, datasets),
        None,
        statement,
        parameters,
        not reasons,
        reasons,
    )
    columns = tuple(Output(f"c{i}", name, "") for i, name in enumerate(names))
    return Answer(columns, tuple(tuple(row) for row in rows), receipt)
