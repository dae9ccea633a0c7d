"""Dagster's event log, written a batch at a time: the same events in the same tables, fewer
transactions.
Over 500 lines: one idea, Dagster's storages' writes made per batch, on SQLite and PostgreSQL alike.

A run of the ingest job stores about thirteen events per revision (the materialization planned
and made of each asset, each check's evaluation), and Dagster's storages write each in its own
transaction, on SQLite in two files (the run's and the index): ~12 ms and ~80 kB of pages per
event here, most of a first load's time and 1.5-2.4 GB per 1,000 files. None of those events is
read back before the step that made them moves on, so inside `batched_events` the storage keeps
the asset events a run stores in a row and writes them in one transaction per file once anything
else happens: another kind of event (a step's start or end, a log line), any read of the
storage, the block's end, or `MAX_PENDING` events. Each event is stored by Dagster's own code
(`store_event`, every table it touches), only inside a connection held for the batch; the events
and their order are exactly what the stock storage writes, and a reader in another process sees
a batch whole once it is committed. Two of its rows are written lighter (each method says how
and why): an asset's `asset_keys` row once per batch and kind of event, and a planned check's
PLANNED rows each with the event narrowed to its own partition. On SQLite, each file's
`event_logs` rows of a batch are inserted by one statement, not one per event, and the batch's
check evaluations update their rows by one statement.

What a crash costs: the events of an unfinished batch (at most one step's asset events). The run
is then left STARTED, which `loom ingest` reaps as failed (runs.py), and the step's work is in the
catalog and the object store, so a retry makes the same events again.

The storages are named in the dagster.yaml Loom writes (settings.py); an instance configured
otherwise (a dagster.yaml of the operator's own) uses its own storage, and `batched_events` then
changes nothing. resources/events.py holds the resource that batches a run's steps.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from typing import Any, cast

import sqlalchemy as db
from dagster import DagsterEventType, DagsterInstance
from dagster._core.definitions.asset_checks.asset_check_evaluation import (
    AssetCheckEvaluation,
    AssetCheckEvaluationPlanned,
)
from dagster._core.definitions.partitions.subset.default import DefaultPartitionsSubset
from dagster._core.events import ASSET_CHECK_EVENTS, ASSET_EVENTS
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.schema import (
    AssetCheckExecutionsTable,
    SqlEventLogStorageTable,
)
from dagster._core.storage.event_log.sqlite.sqlite_event_log import INDEX_SHARD_NAME
from dagster._core.storage.sqlite import SQLITE_BUSY_TIMEOUT_SECONDS
from dagster._serdes import ConfigurableClassData, serialize_value
from dagster_postgres import PostgresEventLogStorage
from dagster_postgres.utils import get_token_provider_from_config, pg_url_from_config
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.pool import NullPool

from loom_dagster.errors import LoomError

# Events a step makes per partition, which no step reads back before its next non-asset event.
BATCHED_EVENTS = frozenset(
    {
        DagsterEventType.ASSET_MATERIALIZATION,
        DagsterEventType.ASSET_OBSERVATION,
        DagsterEventType.ASSET_MATERIALIZATION_PLANNED,
        DagsterEventType.ASSET_CHECK_EVALUATION,
        DagsterEventType.ASSET_CHECK_EVALUATION_PLANNED,
    }
)
# What the schema cache calls the asset_keys table's index columns (no table has this name).
_ASSET_KEY_INDEX_COLS = "asset_keys.last_materialization_timestamp"
# A batch is written once it holds this many events, whatever comes next: bounds the memory a
# step of many partitions holds and what a crash can lose.
MAX_PENDING = 2000
# A batch connection's page cache on a file with a rollback journal, in KiB: a batch of
# MAX_PENDING events (~2.5 kB each, with their index entries) fits.
_BATCH_CACHE_KIB = 65536
# How long a file just created waits to leave WAL while another connection holds it, in ms.
_SWITCH_WAIT_MS = 200
# The events Dagster's SQLite storage mirrors in the index file, with their rows there.
_INDEXED = frozenset(ASSET_EVENTS) | frozenset(ASSET_CHECK_EVENTS)


class _Batch(threading.local):
    """One thread's batch: Dagster stores a run's events from the thread that runs it."""

    def __init__(self) -> None:
        self.depth = 0
        self.pending: list[EventLogEntry] = []
        self.held: dict[str, Connection] | None = None
        # The batch's last event of each kind per asset, for the asset's row (below).
        self.asset_rows: dict[tuple[str, str], tuple[EventLogEntry, int]] = {}


class BatchedEventWrites:
    """What both storages below add to Dagster's: a batch per thread, written in one
    transaction per database file."""

    _batch: _Batch
    _schema_present: set[str]

    def _batch_state(self) -> _Batch:
        try:
            return self._batch
        except AttributeError:
            self._batch = _Batch()
            return self._batch

    def has_table(self, table_name: str) -> bool:
        """Dagster asks this for every check evaluation it stores, every tagged asset event and
        every dynamic-partition read, each time on a new engine and connection (a fifth of a
        first load's event storage, measured). Tables are only ever added (by `dagster instance
        migrate`), so a table found stays found; a missing one is asked again."""
        present = self._present_schema()
        if table_name not in present and super().has_table(table_name):  # type: ignore[misc]
            present.add(table_name)
        return table_name in present

    def _has_asset_key_index_cols_on_connection(self, conn: Connection) -> bool:
        # Asked (by reading the table's columns) for every asset event stored; a column once
        # added by a migration stays.
        present = self._present_schema()
        if _ASSET_KEY_INDEX_COLS not in present:
            if not super()._has_asset_key_index_cols_on_connection(conn):  # type: ignore[misc]
                return False
            present.add(_ASSET_KEY_INDEX_COLS)
        return True

    def _present_schema(self) -> set[str]:
        try:
            return self._schema_present
        except AttributeError:
            self._schema_present = set()
            return self._schema_present

    def wipe(self) -> None:
        self._present_schema().clear()
        super().wipe()  # type: ignore[misc]

    @contextmanager
    def batched(self) -> Iterator[None]:
        """Within the block, this thread's asset events are written a batch at a time."""
        state = self._batch_state()
        state.depth += 1
        try:
            yield
        finally:
            state.depth -= 1
            self.flush()

    def store_event(self, event: EventLogEntry) -> None:
        state = self._batch_state()
        if state.depth and state.held is None and _batchable(event):
            if state.pending and state.pending[-1].run_id != event.run_id:
                self.flush()  # a batch holds one run's events (a SQLite run file per run)
            state.pending.append(event)
            if len(state.pending) >= MAX_PENDING:
                self.flush()
            return
        self.flush()  # what was kept is stored first: the order is the order things happened
        super().store_event(event)  # type: ignore[misc]

    def flush(self) -> None:
        """Write this thread's pending events, in the order they came, in one transaction per
        database file."""
        state = self._batch_state()
        if not state.pending or state.held is not None:
            return
        pending, state.pending = state.pending, []
        with self._held_connections(pending[0].run_id) as held:
            state.held = held
            try:
                self._store_batch(pending, held)
                rows = list(state.asset_rows.values())
                state.asset_rows.clear()
                for event, event_id in rows:
                    super()._store_asset_event(held[INDEX_SHARD_NAME], event, event_id)  # type: ignore[misc]
            finally:
                state.held = None
                state.asset_rows.clear()

    def _store_batch(self, events: list[EventLogEntry], held: dict[str, Connection]) -> None:
        """Store a batch's events, one run's, in the order they came, on the held connections."""
        for event in events:
            super().store_event(event)  # type: ignore[misc]

    def _store_asset_event(self, conn: Connection, event: EventLogEntry, event_id: int) -> None:
        """The asset's row (`asset_keys`: its last materialization, run and event time) is
        written once per batch and kind of event, from the batch's last event of that kind, as
        Dagster's own batch writes do (`store_event_batch`: "We only update the asset table with
        the last event"). Stored per event, it was a serialized copy of the event, a failed
        insert and an update for every one of a batch's thousands of events, a third of their
        storage's time (measured); the row a reader sees after the commit is the same, since
        each column holds what the last event that sets it gave it, replayed in their order."""
        state = self._batch_state()
        if state.held is None or not (event.dagster_event and event.dagster_event.asset_key):
            super()._store_asset_event(conn, event, event_id)  # type: ignore[misc]
            return
        key = (event.dagster_event.asset_key.to_string(), event.dagster_event.event_type_value)
        state.asset_rows.pop(key, None)  # kept in the order of each kind's last event
        state.asset_rows[key] = (event, event_id)

    def run_connection(self, run_id: str | None = None) -> Any:
        held = self._batch_state().held
        if held is not None and run_id in held:
            return nullcontext(held[run_id])
        self.flush()  # a read sees every event stored before it
        return super().run_connection(run_id)  # type: ignore[misc]

    def index_connection(self) -> Any:
        held = self._batch_state().held
        if held is not None:
            return nullcontext(held[INDEX_SHARD_NAME])
        self.flush()
        return super().index_connection()  # type: ignore[misc]

    def _store_asset_check_evaluation_planned(
        self, event: EventLogEntry, event_id: int | None
    ) -> None:
        """A run's planned check (one event per check, naming every partition of the run) makes
        a PLANNED row per partition, which Dagster gives a copy of the whole event: for a run
        of 200 revisions, 200 copies of a 13 kB event per check, a quarter of a first load's
        event log and rewritten when each row gets its evaluation (measured). Each row here
        carries the same event narrowed to its own partition (the same type, check, run, time
        and message: what a reader of a PLANNED row uses); the event log keeps the event whole.
        """
        planned = event.get_dagster_event().event_specific_data
        if not (
            isinstance(planned, AssetCheckEvaluationPlanned)
            and isinstance(planned.partitions_subset, DefaultPartitionsSubset)
        ):
            super()._store_asset_check_evaluation_planned(event, event_id)  # type: ignore[misc]
            return
        dagster_event = event.get_dagster_event()
        timestamp = self._event_insert_timestamp(event)  # type: ignore[attr-defined]
        rows = [
            dict(
                asset_key=planned.asset_key.to_string(),
                check_name=planned.check_name,
                partition=key,
                run_id=event.run_id,
                execution_status=AssetCheckExecutionRecordStatus.PLANNED.value,
                evaluation_event=serialize_value(
                    event._replace(
                        dagster_event=dagster_event._replace(
                            event_specific_data=AssetCheckEvaluationPlanned(
                                asset_key=planned.asset_key,
                                check_name=planned.check_name,
                                partitions_subset=DefaultPartitionsSubset({key}),
                            )
                        )
                    )
                ),
                evaluation_event_timestamp=timestamp,
                evaluation_event_storage_id=event_id,
            )
            for key in planned.partitions_subset.get_partition_keys()
        ]
        if rows:
            with self.index_connection() as conn:
                conn.execute(AssetCheckExecutionsTable.insert().values(rows))

    def _held_connections(self, run_id: str) -> Any:
        raise NotImplementedError


def _is_asset_event(event: EventLogEntry) -> bool:
    return event.dagster_event_type in ASSET_EVENTS


def _is_run_evaluation(event: EventLogEntry) -> bool:
    """A check's evaluation in a run: Dagster updates the row its planned event made."""
    return bool(event.run_id) and isinstance(
        event.dagster_event and event.dagster_event.event_specific_data, AssetCheckEvaluation
    )


# Dagster's `_update_asset_check_evaluation` for a partition's row, with its values as
# parameters so one statement serves a batch (`partition` is set to the value it is found by).
_EVALUATION_UPDATE = (
    AssetCheckExecutionsTable.update()
    .where(
        db.and_(
            AssetCheckExecutionsTable.c.asset_key == db.bindparam("k_asset"),
            AssetCheckExecutionsTable.c.check_name == db.bindparam("k_check"),
            AssetCheckExecutionsTable.c.run_id == db.bindparam("k_run"),
            AssetCheckExecutionsTable.c.partition == db.bindparam("k_partition"),
        )
    )
    .values(
        execution_status=db.bindparam("v_status"),
        evaluation_event=db.bindparam("v_event"),
        evaluation_event_timestamp=db.bindparam("v_timestamp"),
        evaluation_event_storage_id=db.bindparam("v_event_id"),
        materialization_event_storage_id=db.bindparam("v_target_id"),
    )
)


def _batchable(event: EventLogEntry) -> bool:
    # An event recorded outside a run (run_id "") is stored at once: Dagster refuses a second
    # one per check and partition, and its caller must see that where it asked.
    return bool(event.run_id) and event.dagster_event_type in BATCHED_EVENTS


class BatchedSqliteEventLogStorage(BatchedEventWrites, SqliteEventLogStorage):
    """Dagster's SQLite event log (a file per run and an index file), batched, each file it
    creates kept with SQLite's rollback journal rather than the WAL Dagster gives it (below).

    In a file Dagster made (WAL, e.g. a home from before), a batch's connections run
    `synchronous=NORMAL`: a commit then survives the process dying at any point, and only an
    operating system crash may roll back the last commits, never corrupt the file. In a file
    with a rollback journal they keep SQLite's default, `FULL`: a commit survives an operating
    system crash too (`NORMAL` there could corrupt the file on a power loss).
    """

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> BatchedSqliteEventLogStorage:
        return cls(inst_data=inst_data, **config_value)

    def _store_batch(self, events: list[EventLogEntry], held: dict[str, Connection]) -> None:
        """The batch's rows as Dagster's `store_event` makes them, one event after another, but
        each file's `event_logs` inserts as one statement executed over all the batch's rows:
        built and executed per event (SQLAlchemy building a statement around every row, twice),
        they were more than half of writing a batch (6.8 of 12.4 s in a profile of 300 files;
        the batches' writing then took 6.0 s, docs/benchmarks/house.md).

        The tables end as Dagster's leave them: every event in the run's file and mirrored in
        the index, in the same order, so with the same ids (the index's id is the event's storage
        id, which its tags, its asset row and its check row carry); then the asset tags, in the
        same order; then each event's asset row and check row, in the order the events came.
        Only the order between tables changes, inside the one transaction a reader sees whole.
        """
        if not all(e.dagster_event_type in _INDEXED for e in events):
            super()._store_batch(events, held)  # not one of the asset events Dagster mirrors
            return
        rows = [self._event_to_row(event) for event in events]  # type: ignore[attr-defined]
        held[events[0].run_id].execute(SqlEventLogStorageTable.insert(), rows)
        index = held[INDEX_SHARD_NAME]
        ids = self._insert_returning_ids(index, rows)
        assets = [(e, i) for e, i in zip(events, ids, strict=True) if _is_asset_event(e)]
        if assets:
            self._store_asset_event_tags(index, [e for e, _ in assets], [i for _, i in assets])  # type: ignore[attr-defined]
        evaluations: list[tuple[EventLogEntry, int, dict[str, Any]]] = []
        for event, event_id, row in zip(events, ids, rows, strict=True):
            if _is_asset_event(event):
                self._store_asset_event(index, event, event_id)
            elif _is_run_evaluation(event):
                evaluations.append((event, event_id, row))
            else:
                self._update_evaluations(index, evaluations)  # before a check planned after them
                evaluations = []
                self.store_asset_check_event(event, event_id)  # type: ignore[attr-defined]
        self._update_evaluations(index, evaluations)

    def _update_evaluations(
        self, conn: Connection, evaluations: list[tuple[EventLogEntry, int, dict[str, Any]]]
    ) -> None:
        """Each check evaluation's row (the check's PLANNED row for its run and partition) gets
        the evaluation, as Dagster's `_update_asset_check_evaluation` gives it, but by one
        `UPDATE` executed over the batch's evaluations, each carrying the event as its
        `event_logs` row already serialized it: built and serialized again per evaluation, they
        were the largest part left of writing a batch (docs/benchmarks/house.md).

        Where Dagster's own path would do anything else (no planned row to update, so it inserts
        one; an evaluation without a partition; two of the same row in the batch), each is
        stored by Dagster's path instead: its update sets what the batch's did, then inserts."""
        if not evaluations:
            return
        params = []
        for event, event_id, row in evaluations:
            evaluation = cast(AssetCheckEvaluation, event.get_dagster_event().event_specific_data)
            target = evaluation.target_materialization_data
            params.append(
                {
                    "k_asset": evaluation.asset_key.to_string(),
                    "k_check": evaluation.check_name,
                    "k_run": event.run_id,
                    "k_partition": evaluation.partition,
                    "v_status": (
                        AssetCheckExecutionRecordStatus.SUCCEEDED.value
                        if evaluation.passed
                        else AssetCheckExecutionRecordStatus.FAILED.value
                    ),
                    "v_event": row["event"],
                    "v_timestamp": row["timestamp"],
                    "v_event_id": event_id,
                    "v_target_id": target.storage_id if target else None,
                }
            )
        keys = {(p["k_asset"], p["k_check"], p["k_run"], p["k_partition"]) for p in params}
        if len(keys) == len(params) and all(p["k_partition"] is not None for p in params):
            updated = conn.execute(_EVALUATION_UPDATE, params).rowcount
            if updated == len(params):
                return
        for event, event_id, _ in evaluations:
            self.store_asset_check_event(event, event_id)  # type: ignore[attr-defined]

    @staticmethod
    def _insert_returning_ids(conn: Connection, rows: list[dict[str, Any]]) -> list[int]:
        """Insert `rows` into the index's event log in their order; their ids, in that order.

        The insert takes the file's write lock and the batch's transaction holds it to the
        commit, so no other writer adds a row in between: SQLite gives each row the id after
        the largest in the table, and the batch's rows are the ids up to the last one inserted.
        What was inserted is counted back all the same, since a storage id given to the wrong
        event would point its tags and check rows at another event.
        """
        table = SqlEventLogStorageTable
        conn.execute(table.insert(), rows)
        last = int(conn.execute(db.text("SELECT last_insert_rowid()")).scalar_one())
        ids = list(range(last - len(rows) + 1, last + 1))
        mine = conn.execute(
            db.select(db.func.count()).where(table.c.id.between(ids[0], last))
        ).scalar_one()
        if mine != len(rows):
            raise LoomError(
                f"the event log's index took {len(rows)} events in one insert but holds"
                f" {mine} rows with the ids {ids[0]}-{last}: their storage ids are unknown",
                code="internal",
            )
        return ids

    def _initdb(self, engine: Engine, for_index_shard: bool = False) -> None:
        """Dagster's schema in a file; a file created here then leaves WAL for SQLite's default
        rollback journal (`DELETE`), which every later connection to it uses.

        Why: in WAL mode every page a commit writes goes to the `-wal` file and again into the
        database at the checkpoint, so an event log written once is written twice: 116 of the
        283 kB a small file's first load wrote (an strace of 300 files). A rollback journal
        keeps only the pages a commit changes that were there before it (a batch mostly adds
        pages): 26 kB a file. What it changes for readers (the UI, sensors, other `loom`s): they
        still read while a batch is written and see it whole once committed, but a commit waits
        for the reads open at that moment to end, and a read starting during the commit's few
        milliseconds waits for it (each up to Dagster's 30 s busy timeout), where WAL never
        makes either wait. A file that exists is left as it is (a home's files from before stay
        WAL), and so is one another connection opened before the switch."""
        path = engine.url.database
        fresh = bool(path) and not os.path.exists(str(path))
        super()._initdb(engine, for_index_shard)
        if fresh:
            try:
                with engine.connect() as conn:
                    # Not Dagster's 30 s: a file another connection holds is left as it is.
                    conn.exec_driver_sql(f"PRAGMA busy_timeout={_SWITCH_WAIT_MS}")
                    conn.exec_driver_sql("PRAGMA journal_mode=DELETE")
            except db.exc.OperationalError:
                pass  # another connection has it open already: it stays WAL, as Dagster made it

    @contextmanager
    def _held_connections(self, run_id: str) -> Iterator[dict[str, Connection]]:
        with self._open(run_id) as run, self._open(INDEX_SHARD_NAME) as index:
            yield {run_id: run, INDEX_SHARD_NAME: index}

    @contextmanager
    def _open(self, shard: str) -> Iterator[Connection]:
        # Dagster's own `_connect` holds the storage's lock for the connection's life; a batch
        # holds two at once, so it opens them as `_connect` does, without the lock (SQLite's own
        # file locks keep writers apart).
        engine = db.create_engine(
            self.conn_string_for_shard(shard),
            poolclass=NullPool,
            connect_args={"timeout": SQLITE_BUSY_TIMEOUT_SECONDS},
        )
        try:
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn:
                if conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal":
                    conn.exec_driver_sql("PRAGMA synchronous=NORMAL")
                else:
                    # A batch's pages stay in memory to its commit: spilled (past the default
                    # 2 MB), they would take the file from its readers early and be written twice.
                    conn.exec_driver_sql(f"PRAGMA cache_size=-{_BATCH_CACHE_KIB}")
                conn.commit()
                with conn.begin():
                    yield conn
        finally:
            engine.dispose()


class BatchedPostgresEventLogStorage(BatchedEventWrites, PostgresEventLogStorage):
    """Dagster's PostgreSQL event log, batched: one connection and one transaction a batch."""

    @classmethod
    def from_config_value(  # type: ignore[override]
        cls, inst_data: ConfigurableClassData | None, config_value: Any
    ) -> BatchedPostgresEventLogStorage:
        return cls(
            postgres_url=pg_url_from_config(config_value),
            should_autocreate_tables=config_value.get("should_autocreate_tables", True),
            inst_data=inst_data,
            token_provider=get_token_provider_from_config(config_value),
        )

    def _connect(self) -> Any:
        # Dagster's PostgreSQL storage stores an event's row through `_connect` itself, not
        # through `run_connection`: inside a batch that is the batch's connection too.
        held = self._batch_state().held
        if held is not None:
            return nullcontext(held[INDEX_SHARD_NAME])
        self.flush()
        return super()._connect()

    @contextmanager
    def _held_connections(self, run_id: str) -> Iterator[dict[str, Connection]]:
        with self._engine.connect() as autocommit:
            conn = autocommit.execution_options(isolation_level="READ COMMITTED")
            with conn.begin():
                yield {run_id: conn, INDEX_SHARD_NAME: conn}


@contextmanager
def batched_events(instance: DagsterInstance) -> Iterator[None]:
    """Store this thread's asset events a batch at a time for the block, when the instance's
    event log is one of Loom's; otherwise as the instance always does."""
    storage = instance.event_log_storage
    with storage.batched() if isinstance(storage, BatchedEventWrites) else nullcontext():
        yield
