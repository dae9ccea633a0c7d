"""The `datasets` table of the catalog: a row per (dataset, revision), and which of them serve.

A dataset is served while its document's live revision is the revision its row was written for:
the documents row is the switch for chunks and datasets alike (catalog.publish_revision), so a
retired or superseded revision stops serving both at once, and a run that fails before its
switch leaves the earlier revision's datasets serving. A publish writes its rows in the
switch's own transaction (pipeline.publish), their snapshots typed before it with the catalog
closed; nothing reads a row until its switch lands.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

import duckdb

from loom_dagster.datasets.model import (
    ColumnType,
    Dataset,
    DatasetColumn,
    DatasetSchema,
    DatasetState,
    Reject,
)
from loom_dagster.errors import LoomError


class DatasetError(LoomError):
    code = "dataset"


_COLUMNS = (
    "d.dataset_id, d.source, d.path, d.revision, d.table_id, d.name, d.schema, d.state, "
    "d.questions, d.rows_stored, d.rows_rejected, d.rejects, d.complete, d.incomplete_reasons, "
    "d.snapshot, d.snapshot_key"
)
# A row serves while its document is live at the row's revision.
_SERVED = (
    "FROM datasets d JOIN documents doc ON doc.live_revision = d.revision AND doc.status = 'live'"
)


def schema_json(schema: DatasetSchema) -> str:
    return json.dumps(
        [{"name": c.name, "type": c.type.value, "approved": c.approved} for c in schema.columns]
    )


def schema_from_json(text: str) -> DatasetSchema:
    return DatasetSchema(
        tuple(
            DatasetColumn(str(c["name"]), ColumnType(c["type"]), bool(c.get("approved", False)))
            for c in json.loads(text)
        )
    )


def _dataset(row: Sequence[object]) -> Dataset:
    (did, source, path, revision, table_id, name, schema, state, questions, stored, rejected,
     rejects, complete, reasons, snapshot, key) = row  # fmt: skip
    return Dataset(
        dataset_id=str(did),
        source=str(source),
        path=str(path),
        revision=str(revision),
        table_id=str(table_id),
        name=str(name),
        schema=schema_from_json(str(schema)),
        state=DatasetState(str(state)),
        questions=tuple(json.loads(str(questions))),
        rows_stored=int(stored),  # type: ignore[call-overload]
        rows_rejected=int(rejected),  # type: ignore[call-overload]
        rejects=tuple(Reject(int(r), str(why)) for r, why in json.loads(str(rejects))),
        complete=bool(complete),
        incomplete_reasons=tuple(json.loads(str(reasons))),
        snapshot=str(snapshot),
        snapshot_key=str(key),
    )


def write_dataset(con: duckdb.DuckDBPyConnection, dataset: Dataset) -> str | None:
    """Write (or replace) the row of `dataset` at its revision; returns the snapshot key the
    row held before, if it held another, which the caller deletes once nothing serves it."""
    row = con.execute(
        "SELECT snapshot_key FROM datasets WHERE dataset_id = ? AND revision = ?",
        [dataset.dataset_id, dataset.revision],
    ).fetchone()
    con.execute(
        "INSERT OR REPLACE INTO datasets (dataset_id, revision, source, path, table_id, name, "
        "schema, state, questions, rows_stored, rows_rejected, rejects, complete, "
        "incomplete_reasons, snapshot, snapshot_key, written_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, current_timestamp)",
        [
            dataset.dataset_id,
            dataset.revision,
            dataset.source,
            dataset.path,
            dataset.table_id,
            dataset.name,
            schema_json(dataset.schema),
            dataset.state.value,
            json.dumps(list(dataset.questions)),
            dataset.rows_stored,
            dataset.rows_rejected,
            json.dumps([[r.row, r.reason] for r in dataset.rejects]),
            dataset.complete,
            json.dumps(list(dataset.incomplete_reasons)),
            dataset.snapshot,
            dataset.snapshot_key,
        ],
    )
    before = None if row is None else str(row[0])
    return before if before != dataset.snapshot_key else None


def served_dataset(con: duckdb.DuckDBPyConnection, id_or_name: str) -> Dataset | None:
    """The dataset as its document's live revision serves it, by id or by name; None when it
    is unknown or not served. A name two served datasets share is refused (ambiguous_dataset):
    the id names one."""
    rows = con.execute(
        f"SELECT {_COLUMNS} {_SERVED} WHERE d.dataset_id = ? ORDER BY d.dataset_id",
        [id_or_name],
    ).fetchall()
    if not rows:
        rows = con.execute(
            f"SELECT {_COLUMNS} {_SERVED} WHERE d.name = ? ORDER BY d.dataset_id LIMIT 2",
            [id_or_name],
        ).fetchall()
    if len(rows) > 1:
        raise DatasetError(
            f"{len(rows)} served datasets are named {id_or_name!r}; name one by its id",
            code="ambiguous_dataset",
        )
    return _dataset(rows[0]) if rows else None


def served_at(con: duckdb.DuckDBPyConnection, source: str, path: str) -> dict[str, Dataset]:
    """The datasets the file's document serves now, by id (its tables' ids name its path): what
    a new revision of the file is typed against, read before the typing and checked again at
    the switch."""
    rows = con.execute(
        f"SELECT {_COLUMNS} {_SERVED} WHERE d.source = ? AND d.path = ? ORDER BY d.dataset_id",
        [source, path],
    ).fetchall()
    return {dataset.dataset_id: dataset for dataset in map(_dataset, rows)}


def is_served(con: duckdb.DuckDBPyConnection, dataset_id: str, snapshot: str) -> bool:
    """Whether `snapshot` still serves the dataset right now (a publish, a retirement or an
    approval that retyped it serves another, or none)."""
    row = con.execute(
        f"SELECT count(*) {_SERVED} WHERE d.dataset_id = ? AND d.snapshot = ?",
        [dataset_id, snapshot],
    ).fetchone()
    return bool(row and row[0])


def list_served(con: duckdb.DuckDBPyConnection) -> list[Dataset]:
    """Every served dataset, by source, path and table."""
    rows = con.execute(
        f"SELECT {_COLUMNS} {_SERVED} ORDER BY d.source, d.path, d.name, d.dataset_id"
    ).fetchall()
    return [_dataset(row) for row in rows]


def datasets_of_revision(con: duckdb.DuckDBPyConnection, revision: str) -> list[Dataset]:
    """The rows written for one revision, served or not (in their table order)."""
    rows = con.execute(
        f"SELECT {_COLUMNS} FROM datasets d WHERE d.revision = ? ORDER BY d.name, d.dataset_id",
        [revision],
    ).fetchall()
    return [_dataset(row) for row in rows]


def datasets_of_revisions(
    con: duckdb.DuckDBPyConnection, revisions: Sequence[str]
) -> dict[str, list[Dataset]]:
    """`datasets_of_revision` of each of `revisions` in one query (a publishing step asks for
    its whole batch); a revision with no rows maps to an empty list."""
    found: dict[str, list[Dataset]] = {revision: [] for revision in revisions}
    rows = con.execute(
        f"SELECT {_COLUMNS} FROM datasets d WHERE d.revision IN (SELECT unnest(?::VARCHAR[])) "
        "ORDER BY d.revision, d.name, d.dataset_id",
        [list(found)],
    ).fetchall()
    for row in rows:
        dataset = _dataset(row)
        found[dataset.revision].append(dataset)
    return found


def get_dataset(con: duckdb.DuckDBPyConnection, dataset_id: str, revision: str) -> Dataset | None:
    row = con.execute(
        f"SELECT {_COLUMNS} FROM datasets d WHERE d.dataset_id = ? AND d.revision = ?",
        [dataset_id, revision],
    ).fetchone()
    return None if row is None else _dataset(row)


def stale_snapshots(
    con: duckdb.DuckDBPyConnection, documents: Iterable[str] | None = None
) -> list[str]:
    """Snapshot keys no row serves and none may serve later: the rows of revisions registered
    before their document's live one, and every row of a retired document. A revision
    registered after the live one may still be on its way to the switch, so its rows stay.
    `documents` limits the look to those documents (None: all)."""
    ids = None if documents is None else sorted(set(documents))
    rows = con.execute(
        """
        SELECT DISTINCT d.snapshot_key FROM datasets d
        JOIN revisions r ON r.key = d.revision
        JOIN documents doc ON doc.document_id = r.document_id
        LEFT JOIN revisions live ON live.key = doc.live_revision
        WHERE (?::VARCHAR[] IS NULL OR r.document_id IN (SELECT unnest(?::VARCHAR[])))
          AND (doc.status = 'retired' OR (live.seq IS NOT NULL AND r.seq < live.seq))
          AND d.snapshot_key NOT IN (SELECT d2.snapshot_key FROM datasets d2
              JOIN documents doc2 ON doc2.live_revision = d2.revision AND doc2.status = 'live')
        ORDER BY 1
        """,
        [ids, ids],
    ).fetchall()
    return [str(row[0]) for row in rows]


def forget_snapshots(con: duckdb.DuckDBPyConnection, keys: Sequence[str]) -> None:
    """Delete the rows that name these snapshots (stale ones: no revision serves them again)."""
    con.execute("DELETE FROM datasets WHERE snapshot_key IN (SELECT unnest(?))", [list(keys)])


def referenced_snapshots(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Every snapshot key a catalog row names (served, pending or stale)."""
    return {str(row[0]) for row in con.execute("SELECT snapshot_key FROM datasets").fetchall()}
