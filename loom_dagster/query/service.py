"""A query from its plan to its answer: read, validate, compile, run, revalidate, receipt."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loom_dagster.query.compile import compile_plan
from loom_dagster.query.errors import QueryError
from loom_dagster.query.plan import read_plan, validate
from loom_dagster.query.run import (
    Answer,
    Catalog,
    Ceilings,
    Receipt,
    SnapshotFiles,
    completeness,
    execute,
    finish_rows,
    opened,
    snapshot_reads,
    still_served,
)


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
            rows = execute(compiled.sql, compiled.parameters, paths, ceilings)
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
