"""A revision's tables as datasets: inferred, typed, written as snapshots, ready for their rows.

Plain Python: the publishing step (pipeline.publish) calls `build_datasets` before the catalog
switches the document, and `loom datasets approve` calls `retype`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace

from loom_dagster.contract.artifact import Artifact, Table
from loom_dagster.datasets.catalog import DatasetError
from loom_dagster.datasets.infer import Inferred, infer, table_keys
from loom_dagster.datasets.model import (
    ColumnType,
    Dataset,
    DatasetColumn,
    DatasetSchema,
    DatasetState,
)
from loom_dagster.datasets.snapshots import new_snapshot, write_snapshot
from loom_dagster.datasets.typing import type_rows
from loom_dagster.objectstore import ObjectStore
from loom_dagster.sources import Revision

# The dataset a document serves now under an id, if any (its approved types carry over).
Served = Callable[[str], Dataset | None]


def _store(
    store: ObjectStore, revision: Revision, inferred: Inferred, table: Table,
    schema: DatasetSchema, state: DatasetState, questions: tuple[str, ...],
) -> Dataset:  # fmt: skip
    typed = type_rows(schema, inferred.positions, table.rows)
    snapshot = new_snapshot()
    key = write_snapshot(store, inferred.dataset_id, snapshot, typed.table)
    return Dataset(
        dataset_id=inferred.dataset_id,
        source=revision.source,
        path=revision.path,
        revision=revision.key,
        table_id=inferred.table_id,
        name=inferred.name,
        schema=schema,
        state=state,
        questions=questions,
        rows_stored=typed.table.num_rows,
        rows_rejected=typed.rows_rejected,
        rejects=typed.rejects,
        complete=inferred.complete,
        incomplete_reasons=inferred.incomplete_reasons,
        snapshot=snapshot,
        snapshot_key=key,
    )


def _inferred(artifact: Artifact, revision: Revision) -> list[tuple[Inferred, Table]]:
    return [
        (infer(artifact, table, key, source=revision.source, path=revision.path), table)
        for table, key in zip(artifact.tables, table_keys(artifact), strict=True)
    ]


def build_datasets(
    store: ObjectStore, artifact: Artifact, revision: Revision, served: Served
) -> list[Dataset]:
    """Every table of the artifact as a dataset of `revision`, its snapshot written.

    A dataset whose served revision was approved keeps the approved types when its columns are
    the same names in the same order (and is approved, with nothing to ask).
    """
    datasets = []
    for inferred, table in _inferred(artifact, revision):
        schema, state, questions = inferred.schema, DatasetState.INFERRED, inferred.questions
        if questions:
            state = DatasetState.NEEDS_CLARIFICATION
        before = served(inferred.dataset_id)
        if (
            before is not None
            and before.state is DatasetState.APPROVED
            and [c.name for c in before.schema.columns] == [c.name for c in schema.columns]
        ):
            schema, state, questions = before.schema, DatasetState.APPROVED, ()
        datasets.append(_store(store, revision, inferred, table, schema, state, questions))
    return datasets


def retype(
    store: ObjectStore,
    artifact: Artifact,
    revision: Revision,
    dataset: Dataset,
    types: Mapping[str, ColumnType],
) -> Dataset:
    """The dataset approved, the columns of `types` retyped, typed again from the artifact
    under a new snapshot (its row not yet written)."""
    for inferred, table in _inferred(artifact, revision):
        if inferred.dataset_id != dataset.dataset_id:
            continue
        schema = DatasetSchema(
            tuple(
                DatasetColumn(c.name, types[c.name], True) if c.name in types else c
                for c in dataset.schema.columns
            )
        )
        inferred = replace(inferred, schema=schema)
        return _store(store, revision, inferred, table, schema, DatasetState.APPROVED, ())
    raise DatasetError(
        f"{dataset.name} is no table of its revision's artifact", code="unknown_dataset"
    )
