"""The resource that writes a run's events a batch at a time, however the run was launched
(event_log.py holds the storages and the batching itself).

The storage classes are imported here too, so a dagster.yaml written before they moved (naming
`loom_dagster.resources.events`) still loads.
"""

from __future__ import annotations

from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from loom_dagster.event_log import (  # noqa: F401  (re-exported for older dagster.yaml files)
    BatchedPostgresEventLogStorage,
    BatchedSqliteEventLogStorage,
    batched_events,
)


class EventBatchResource(dg.ConfigurableResource):
    """Batched event writes for a whole run, however it was launched (`loom ingest`, the UI,
    automation): Dagster sets a run's resources up in the thread that runs its steps (the
    in-process executor) and tears them down when they are done."""

    _batch: Any = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        if context.instance is not None:
            self._batch = batched_events(context.instance)
            self._batch.__enter__()

    def teardown_after_execution(self, context: dg.InitResourceContext) -> None:
        batch, self._batch = self._batch, None
        if batch is not None:
            batch.__exit__(None, None, None)
