"""Loom's Python API: what the `loom` command does, callable from code and tests.

`ingest_folder` drives Dagster for real: it registers the folder, adds a partition per new
revision to the instance under LOOM_HOME, and materializes them in batched runs of the
`ingest` job, so the UI shows the runs, partitions and checks the command made.

The API lives in this package by idea: `home` (the home and its Dagster instance),
`registration` (sources), `ingest` (and its batched runs), `lookup` (search, show), `tables`
(datasets, queries, `read` a dataset as pandas or Arrow, export it), `cleanup` (retention, the partition window, gc, removing a source), `reports` (what an ingest
reports per file) and `quick` (the commands that answer without Dagster). Each name below is
loaded from its module on first use (`api.ingest_folder`), so importing `api.quick` loads no
Dagster.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from loom_dagster.api.cleanup import (
        Compaction,
        Removal,
        collect_garbage,
        compact_partitions,
        prune_partitions_now,
        remove_source,
    )
    from loom_dagster.api.home import dagster_instance, prepare_environment
    from loom_dagster.api.ingest import (
        ingest_folder,
        materialize_in_batches,
        stale_live_revisions,
    )
    from loom_dagster.api.lookup import FileHistory, search, show
    from loom_dagster.api.registration import Registration, register, register_source, sources
    from loom_dagster.api.reports import FileOutcome, IngestReport
    from loom_dagster.api.tables import (
        approve_dataset,
        dataset,
        datasets,
        export_dataset,
        query,
        read,
        read_arrow,
        sql,
    )

# Each public name, and the module of this package that holds it.
_MODULES = {
    "prepare_environment": "home",
    "dagster_instance": "home",
    "Registration": "registration",
    "register": "registration",
    "register_source": "registration",
    "sources": "registration",
    "ingest_folder": "ingest",
    "stale_live_revisions": "ingest",
    "materialize_in_batches": "ingest",
    "FileHistory": "lookup",
    "show": "lookup",
    "search": "lookup",
    "prune_partitions_now": "cleanup",
    "collect_garbage": "cleanup",
    "Compaction": "cleanup",
    "compact_partitions": "cleanup",
    "Removal": "cleanup",
    "remove_source": "cleanup",
    "datasets": "tables",
    "dataset": "tables",
    "approve_dataset": "tables",
    "query": "tables",
    "sql": "tables",
    "read": "tables",
    "read_arrow": "tables",
    "export_dataset": "tables",
    "FileOutcome": "reports",
    "IngestReport": "reports",
}

__all__ = [
    "Compaction",
    "FileHistory",
    "FileOutcome",
    "IngestReport",
    "Registration",
    "Removal",
    "approve_dataset",
    "collect_garbage",
    "compact_partitions",
    "dagster_instance",
    "dataset",
    "datasets",
    "export_dataset",
    "ingest_folder",
    "materialize_in_batches",
    "prepare_environment",
    "prune_partitions_now",
    "query",
    "read",
    "read_arrow",
    "register",
    "register_source",
    "remove_source",
    "search",
    "show",
    "sources",
    "sql",
    "stale_live_revisions",
]


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{module}"), name)
