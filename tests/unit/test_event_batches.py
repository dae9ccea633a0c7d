"""Dagster's event log written a batch at a time (issue 15.2): the events a step stores in a row
reach the database in one transaction per file, whole, in order, and before anything reads it.

Real Dagster SQLite storages in tmp_path: the batched one Loom configures, and the stock one
standing for another process (the UI) reading the same files.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from dagster import AssetCheckKey, AssetKey, AssetMaterialization, DagsterEventType
from dagster._core.events import DagsterEvent, EngineEventData, StepMaterializationData
from dagster._core.events.log import EventLogEntry
from dagster._core.storage.event_log import SqliteEventLogStorage
from dagster._core.storage.event_log.base import EventLogStorage, EventRecordsFilter

from loom_dagster.event_log import BatchedSqliteEventLogStorage

ASSET = AssetKey(["loom", "chunks"])
RUN = "4f1e2d3c-0000-4000-8000-000000000001"


def materialization(partition: str, run_id: str = RUN) -> EventLogEntry:
    event = DagsterEvent(
        DagsterEventType.ASSET_MATERIALIZATION.value,
        "ingest",
        event_specific_data=StepMaterializationData(
            AssetMaterialization(ASSET, partition=partition, metadata={"chunks": 1})
        ),
    )
    return entry(event, run_id)


def engine_event(run_id: str = RUN) -> EventLogEntry:
    return entry(
        DagsterEvent(
            DagsterEventType.ENGINE_EVENT.value, "ingest", event_specific_data=EngineEventData()
        ),
        run_id,
    )


def entry(event: DagsterEvent, run_id: str) -> EventLogEntry:
    return EventLogEntry(
        error_info=None,
        level="debug",
        user_message="",
        run_id=run_id,
        timestamp=time.time(),
        step_key="loom__published",
        job_name="ingest",
        dagster_event=event,
    )


def stored(storage: EventLogStorage) -> list[str]:
    """The partitions of the materializations another reader of the files sees, oldest first."""
    records = storage.get_event_records(
        EventRecordsFilter(event_type=DagsterEventType.ASSET_MATERIALIZATION, asset_key=ASSET),
        ascending=True,
    )
    return [r.partition_key or "" for r in records]


@pytest.fixture
def storages(tmp_path: Path) -> tuple[BatchedSqliteEventLogStorage, SqliteEventLogStorage]:
    base = str(tmp_path / "runs")
    return BatchedSqliteEventLogStorage(base), SqliteEventLogStorage(base)


def test_a_batch_is_written_whole_in_order_once_another_kind_of_event_comes(
    storages: tuple[BatchedSqliteEventLogStorage, SqliteEventLogStorage],
) -> None:
    batched, reader = storages
    keys = [f"note-{n:02d}.md~h@s" for n in range(30)]
    with batched.batched():
        for key in keys:
            batched.store_event(materialization(key))
        assert stored(reader) == []  # kept: nothing read them yet
        batched.store_event(engine_event())  # the step moves on: the batch goes first
        assert stored(reader) == keys
    assert [e.dagster_event_type for e in reader.get_logs_for_run(RUN)][-1] == (
        DagsterEventType.ENGINE_EVENT
    )


def test_a_read_inside_a_batch_sees_every_event_stored_before_it(
    storages: tuple[BatchedSqliteEventLogStorage, SqliteEventLogStorage],
) -> None:
    batched, _ = storages
    with batched.batched():
        for n in range(5):
            batched.store_event(materialization(f"k{n}"))
        latest = batched.get_latest_storage_id_by_partition(
            ASSET, DagsterEventType.ASSET_MATERIALIZATION, {f"k{n}" for n in range(5)}
        )
    assert sorted(latest) == [f"k{n}" for n in range(5)]


def test_the_end_of_the_block_writes_what_is_left_and_outside_it_nothing_waits(
    storages: tuple[BatchedSqliteEventLogStorage, SqliteEventLogStorage],
) -> None:
    batched, reader = storages
    with batched.batched():
        batched.store_event(materialization("a"))
    assert stored(reader) == ["a"]
    batched.store_event(materialization("b"))
    assert stored(reader) == ["a", "b"]


def test_an_event_outside_a_run_is_stored_at_once(
    storages: tuple[BatchedSqliteEventLogStorage, SqliteEventLogStorage],
) -> None:
    """An event recorded outside a run (`report_runless_asset_event`) is written where it is
    stored: Dagster refuses a second runless check evaluation per check and partition, and the
    caller must see that refusal there, not at some later write."""
    batched, reader = storages
    with batched.batched():
        batched.store_event(materialization("kept"))
        batched.store_event(materialization("runless", run_id=""))
        assert stored(reader) == ["kept", "runless"]  # the kept one first: the order holds


def test_a_batch_of_one_run_never_takes_another_runs_events(
    storages: tuple[BatchedSqliteEventLogStorage, SqliteEventLogStorage],
) -> None:
    batched, reader = storages
    other = "4f1e2d3c-0000-4000-8000-000000000002"
    with batched.batched():
        batched.store_event(materialization("a"))
        batched.store_event(materialization("b", run_id=other))
    assert [e.run_id for e in reader.get_logs_for_run(RUN)] == [RUN]
    assert [e.run_id for e in reader.get_logs_for_run(other)] == [other]


def written() -> int:
    """Bytes this process has handed to write(2) so far (SQLite writes its pages so)."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise AssertionError("no wchar in /proc/self/io")


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="no /proc/self/io to count bytes")
def test_a_batch_writes_a_fraction_of_the_bytes_event_by_event_costs(tmp_path: Path) -> None:
    """200 revisions' materializations: Dagster's stock storage commits each in the run's file
    and in the index (pages of every index touched, each time); a batch commits once per file."""
    events = [materialization(f"note-{n:03d}.md~h@s") for n in range(200)]
    stock = SqliteEventLogStorage(str(tmp_path / "stock"))
    batched = BatchedSqliteEventLogStorage(str(tmp_path / "batched"))
    stock.store_event(engine_event())  # each file created before counting
    batched.store_event(engine_event())

    before = written()
    for event in events:
        stock.store_event(event)
    one_by_one = written() - before
    before = written()
    with batched.batched():
        for event in events:
            batched.store_event(event)
    in_a_batch = written() - before

    assert stored(SqliteEventLogStorage(str(tmp_path / "batched"))) == stored(stock)
    assert in_a_batch * 10 < one_by_one, (in_a_batch, one_by_one)


def test_a_runs_resource_batches_its_steps_events_until_the_run_ends(tmp_path: Path) -> None:
    """Runs the UI or automation launch get no `loom ingest` around them: the assets' bound
    `event_batches` resource batches their steps from set-up (before the first step) to
    teardown (after the last)."""
    from dagster import DagsterInstance, build_init_resource_context

    from loom_dagster.resources.events import EventBatchResource
    from loom_dagster.settings import LoomSettings

    settings = LoomSettings.from_env({"LOOM_HOME": str(tmp_path / "home")})
    settings.prepare()  # the dagster.yaml `loom` writes: the batched event log
    instance = DagsterInstance.from_config(str(settings.dagster_home))
    storage = instance.event_log_storage
    assert isinstance(storage, BatchedSqliteEventLogStorage)
    reader = SqliteEventLogStorage(str(settings.dagster_home / "history" / "runs"))
    context = build_init_resource_context(instance=instance)
    resource = EventBatchResource()

    resource.setup_for_execution(context)
    storage.store_event(materialization("a"))
    assert stored(reader) == []
    resource.teardown_after_execution(context)

    assert stored(reader) == ["a"]


def check_evaluation(partition: str, run_id: str = RUN) -> EventLogEntry:
    from dagster import AssetCheckEvaluation

    return entry(
        DagsterEvent(
            DagsterEventType.ASSET_CHECK_EVALUATION.value,
            "ingest",
            event_specific_data=AssetCheckEvaluation(
                asset_key=ASSET, check_name="live", passed=True, partition=partition
            ),
        ),
        run_id,
    )


def test_the_schema_is_asked_once_not_for_every_event_stored(
    storages: tuple[BatchedSqliteEventLogStorage, SqliteEventLogStorage],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Dagster's storage asks whether a table exists (a new engine and connection each time)
    for every check evaluation and tagged asset event, and reads the asset_keys table's columns
    for every asset event: a fifth of a first load's event storage. Tables and columns are only
    ever added, so the batched storage asks once; the events stored are the same."""
    from sqlalchemy.dialects.sqlite.base import SQLiteDialect
    from sqlalchemy.engine.reflection import Inspector

    asked: list[str] = []
    has_table, get_columns = SQLiteDialect.has_table, Inspector.get_columns

    def counted_has_table(self: SQLiteDialect, *args: object, **kwargs: object) -> bool:
        asked.append("table")
        return has_table(self, *args, **kwargs)  # type: ignore[arg-type]

    def counted_get_columns(self: Inspector, *args: object, **kwargs: object) -> object:
        asked.append("columns")
        return get_columns(self, *args, **kwargs)  # type: ignore[arg-type]

    batched, reader = storages
    batched.store_event(engine_event())  # the files exist before counting
    monkeypatch.setattr(SQLiteDialect, "has_table", counted_has_table)
    monkeypatch.setattr(Inspector, "get_columns", counted_get_columns)
    keys = [f"note-{n:02d}.md~h@s" for n in range(40)]
    with batched.batched():
        for key in keys:
            batched.store_event(materialization(key))
            batched.store_event(check_evaluation(key))
    monkeypatch.undo()

    assert stored(reader) == keys
    checks = reader.get_asset_check_execution_history(AssetCheckKey(ASSET, "live"), limit=100)
    assert sorted(c.partition for c in checks) == sorted(keys)
    assert asked.count("table") <= 3, asked  # asset_check_executions, asset_event_tags, ...
    assert asked.count("columns") <= 1, asked


def test_a_missing_table_is_asked_again(
    storages: tuple[BatchedSqliteEventLogStorage, SqliteEventLogStorage],
) -> None:
    batched, _ = storages
    batched.store_event(engine_event())
    assert batched.has_table("event_logs")
    assert not batched.has_table("loom_added_later")
    with batched.index_connection() as conn:
        conn.exec_driver_sql("CREATE TABLE loom_added_later (x INTEGER)")
    assert batched.has_table("loom_added_later")


def planned(asset: AssetKey, partition: str, run_id: str = RUN) -> EventLogEntry:
    from dagster._core.events import AssetMaterializationPlannedData

    return entry(
        DagsterEvent(
            DagsterEventType.ASSET_MATERIALIZATION_PLANNED.value,
            "ingest",
            event_specific_data=AssetMaterializationPlannedData(asset, partition=partition),
        ),
        run_id,
    )


def asset_rows(base: Path) -> list[tuple[object, ...]]:
    import sqlite3

    with sqlite3.connect(base / "index.db") as con:
        return con.execute(
            "SELECT asset_key, last_materialization, last_run_id, last_materialization_timestamp"
            " FROM asset_keys ORDER BY asset_key"
        ).fetchall()


def test_the_asset_row_is_written_once_a_batch_and_kind_and_reads_as_event_by_event(
    tmp_path: Path,
) -> None:
    """Dagster writes an asset's `asset_keys` row (its last materialization, serialized whole,
    its last run) for every asset event: a failed insert and an update each, a third of a
    first load's event storage. A batch writes it once per asset and kind of event, from the
    last event of that kind, as Dagster's own batch writes do; the row then is the one the
    stock storage leaves after the same events one by one."""
    from sqlalchemy import event as sa_event
    from sqlalchemy.engine import Engine

    other = AssetKey(["loom", "published"])
    keys = [f"note-{n:02d}.md~h@s" for n in range(20)]
    events = [planned(asset, key) for key in keys for asset in (ASSET, other)]
    events += [materialization(key) for key in keys]
    stock = SqliteEventLogStorage(str(tmp_path / "stock"))
    batched = BatchedSqliteEventLogStorage(str(tmp_path / "batched"))
    stock.store_event(engine_event())
    batched.store_event(engine_event())
    for each in events:
        stock.store_event(each)

    statements: list[str] = []

    def count(_conn: object, _cursor: object, statement: str, *_args: object) -> None:
        if "asset_keys" in statement:
            statements.append(statement.split()[0])

    sa_event.listen(Engine, "before_cursor_execute", count)
    try:
        with batched.batched():
            for each in events:
                batched.store_event(each)
    finally:
        sa_event.remove(Engine, "before_cursor_execute", count)

    assert asset_rows(tmp_path / "batched") == asset_rows(tmp_path / "stock")
    assert len(asset_rows(tmp_path / "stock")) == 2
    # Three rows to write (planned for two assets, materialized for one), an insert each and
    # an update where the row exists: not one per event (60 events).
    assert len(statements) <= 6, statements


def check_planned_for(keys: list[str]) -> EventLogEntry:
    """The run's planned evaluation of ASSET's `live` check over `keys`."""
    from dagster._core.definitions.partitions.subset.default import DefaultPartitionsSubset
    from dagster._core.events import AssetCheckEvaluationPlanned

    return entry(
        DagsterEvent(
            DagsterEventType.ASSET_CHECK_EVALUATION_PLANNED.value,
            "ingest",
            event_specific_data=AssetCheckEvaluationPlanned(
                asset_key=ASSET,
                check_name="live",
                partitions_subset=DefaultPartitionsSubset(set(keys)),
            ),
        ),
        RUN,
    )


def test_a_planned_checks_rows_each_carry_the_event_of_their_own_partition(
    storages: tuple[BatchedSqliteEventLogStorage, SqliteEventLogStorage],
) -> None:
    """A run's planned check names every partition of the run, and Dagster copies the whole
    event into each partition's PLANNED row (200 copies of a 13 kB event per check for a run of
    200): the rows here carry the event narrowed to their own partition, and read back as the
    stock storage's do, PLANNED, of that run, then SUCCEEDED once evaluated."""
    import sqlite3

    from dagster._core.definitions.partitions.subset.default import DefaultPartitionsSubset
    from dagster._core.events import AssetCheckEvaluationPlanned
    from dagster._core.storage.asset_check_execution_record import (
        AssetCheckExecutionRecordStatus,
    )

    batched, reader = storages
    keys = [f"note-{n:03d}.md~{'h' * 40}@s" for n in range(200)]
    planned = check_planned_for(keys)
    with batched.batched():
        batched.store_event(planned)
    check = AssetCheckKey(ASSET, "live")
    rows = reader.get_asset_check_execution_history(check, limit=500)
    assert sorted(r.partition or "" for r in rows) == keys
    assert {(r.run_id, r.status) for r in rows} == {(RUN, AssetCheckExecutionRecordStatus.PLANNED)}
    for row in rows:
        assert row.event is not None
        data = row.event.get_dagster_event().event_specific_data
        assert isinstance(data, AssetCheckEvaluationPlanned)
        assert (data.asset_key, data.check_name) == (ASSET, "live")
        assert data.partitions_subset == DefaultPartitionsSubset({row.partition})
    with sqlite3.connect(Path(batched._base_dir) / "index.db") as con:  # noqa: SLF001
        (largest,) = con.execute("SELECT max(length(evaluation_event)) FROM asset_check_executions")
    assert largest[0] < 2000, largest  # one key, not the run's 200

    with batched.batched():
        batched.store_event(check_evaluation(keys[0]))
    after = reader.get_asset_check_execution_history(check, limit=500)
    statuses = {r.partition: r.status for r in after}
    assert statuses[keys[0]] == AssetCheckExecutionRecordStatus.SUCCEEDED
    assert statuses[keys[1]] == AssetCheckExecutionRecordStatus.PLANNED
    assert len(after) == len(keys)  # the evaluation took its planned row, as Dagster's does


def table_rows(base: Path, shard: str) -> dict[str, list[tuple[object, ...]]]:
    """Every row of every event-log table in one of the storage's files, in id order, less the
    columns SQLite fills with the clock at insert (`create_timestamp`)."""
    import sqlite3

    with sqlite3.connect(base / f"{shard}.db") as con:
        tables = [
            name
            for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name not in ("alembic_version", "secondary_indexes")
        ]
        found = {}
        for table in tables:
            columns = [
                row[1]
                for row in con.execute(f"PRAGMA table_info({table})")
                if row[1] != "create_timestamp"
            ]
            listed = ", ".join(f'"{c}"' for c in columns)
            found[table] = con.execute(f"SELECT {listed} FROM {table} ORDER BY id").fetchall()
    return found


def stored_both_ways(tmp_path: Path, events: list[EventLogEntry], statement: str) -> list[int]:
    """Store `events` one by one in a stock storage (tmp_path/stock) and in one batch in Loom's
    (tmp_path/batched); the rows each execution of `statement` in the batch carried."""
    from sqlalchemy import event as sa_event
    from sqlalchemy.engine import Engine

    stock = SqliteEventLogStorage(str(tmp_path / "stock"))
    batched = BatchedSqliteEventLogStorage(str(tmp_path / "batched"))
    for each in events:
        stock.store_event(each)

    rows: list[int] = []

    def count(_conn: object, _cursor: object, executed: str, params: object, *_: object) -> None:
        if executed.startswith(statement):
            rows.append(len(params) if isinstance(params, list) else 1)

    sa_event.listen(Engine, "before_cursor_execute", count)
    try:
        with batched.batched():
            for each in events:
                batched.store_event(each)
    finally:
        sa_event.remove(Engine, "before_cursor_execute", count)
    return rows


def test_a_batch_inserts_each_event_table_once_and_leaves_the_rows_event_by_event_leaves(
    tmp_path: Path,
) -> None:
    """Built and executed per event, the two `event_logs` inserts (the run's file and the
    index's mirror) were 40% of storing a first load's events. A batch inserts its events into
    each file's `event_logs` as one statement of many rows; every row of every table in both
    files (the events with their ids, the asset tags that point at those ids, the asset rows,
    the check rows with their evaluations' storage ids) is the one the stock storage leaves
    after the same events one by one."""
    from dagster import AssetObservation
    from dagster._core.definitions.data_version import DATA_VERSION_TAG
    from dagster._core.events import AssetObservationData

    other = AssetKey(["loom", "published"])
    keys = [f"note-{n:02d}.md~h@s" for n in range(25)]

    def tagged(key: str) -> EventLogEntry:
        return entry(
            DagsterEvent(
                DagsterEventType.ASSET_MATERIALIZATION.value,
                "ingest",
                event_specific_data=StepMaterializationData(
                    AssetMaterialization(ASSET, partition=key, tags={DATA_VERSION_TAG: key[:7]})
                ),
            ),
            RUN,
        )

    def observation(key: str) -> EventLogEntry:
        return entry(
            DagsterEvent(
                DagsterEventType.ASSET_OBSERVATION.value,
                "ingest",
                event_specific_data=AssetObservationData(AssetObservation(other, partition=key)),
            ),
            RUN,
        )

    check_planned = check_planned_for(keys)
    # Two steps' worth: a step's start (an engine event) ends the batch before it.
    events = [engine_event(), check_planned]
    events += [planned(asset, key) for key in keys for asset in (ASSET, other)]
    events += [engine_event()]
    events += [e for key in keys for e in (tagged(key), observation(key), check_evaluation(key))]
    events += [engine_event()]

    inserts = stored_both_ways(tmp_path, events, "INSERT INTO event_logs")

    for shard in (RUN, "index"):
        assert table_rows(tmp_path / "batched", shard) == table_rows(tmp_path / "stock", shard)
    index = table_rows(tmp_path / "stock", "index")
    assert len(index["asset_event_tags"]) == len(keys)  # the fixture has rows to compare
    assert len(index["asset_check_executions"]) == len(keys)
    # Two batches (planned events, then the step's events) into two files, plus the three
    # engine events, each stored alone: not an insert per event per file (2 x 126 events).
    assert len(inserts) == 2 * 2 + 3, inserts
    assert sum(inserts) == 2 * (len(events) - 3) + 3


def test_a_batchs_check_evaluations_update_their_rows_by_one_statement_as_dagster_leaves_them(
    tmp_path: Path,
) -> None:
    """Dagster updates each evaluation's PLANNED row by an `UPDATE` built and serialized per
    evaluation (the largest part left of writing a batch); a batch's evaluations update theirs
    by one statement executed over them all. An evaluation Dagster's path would insert a row for
    (none planned) takes that path, the batch's other evaluations with it. Every check row,
    failures and target materializations included, is the one the stock storage leaves."""
    from dagster import AssetCheckEvaluation
    from dagster._core.definitions.asset_checks.asset_check_evaluation import (
        AssetCheckEvaluationTargetMaterializationData,
    )

    keys = [f"note-{n:02d}.md~h@s" for n in range(12)]

    def evaluation(key: str, n: int) -> EventLogEntry:
        target = AssetCheckEvaluationTargetMaterializationData(
            storage_id=n + 1, run_id=RUN, timestamp=1.0
        )
        return entry(
            DagsterEvent(
                DagsterEventType.ASSET_CHECK_EVALUATION.value,
                "ingest",
                event_specific_data=AssetCheckEvaluation(
                    asset_key=ASSET,
                    check_name="live",
                    passed=n % 3 != 0,
                    partition=key,
                    target_materialization_data=target if n % 2 else None,
                ),
            ),
            RUN,
        )

    check_planned = check_planned_for(keys[:10])
    # The planned rows; a step's eight evaluations, each with its row; a step's four, two of
    # them without one.
    events = [engine_event(), check_planned, engine_event()]
    events += [evaluation(key, n) for n, key in enumerate(keys[:8])] + [engine_event()]
    events += [evaluation(key, n) for n, key in enumerate(keys[8:], 8)] + [engine_event()]

    updates = stored_both_ways(tmp_path, events, "UPDATE asset_check_executions")

    for shard in (RUN, "index"):
        assert table_rows(tmp_path / "batched", shard) == table_rows(tmp_path / "stock", shard)
    checks = table_rows(tmp_path / "stock", "index")["asset_check_executions"]
    assert len(checks) == len(keys)  # ten planned and updated, two inserted
    # The first step's eight in one statement; the second's four tried so, then one by one.
    assert updates == [8, 4, 1, 1, 1, 1], updates


def journal_mode(base: Path, shard: str) -> str:
    import sqlite3

    with sqlite3.connect(base / f"{shard}.db") as con:
        return str(con.execute("PRAGMA journal_mode").fetchone()[0])


def test_the_files_a_storage_creates_keep_a_rollback_journal_and_files_from_before_stay_wal(
    tmp_path: Path,
) -> None:
    """A file Loom's storage creates leaves Dagster's WAL for SQLite's rollback journal (every
    page written once, not to the WAL and again at the checkpoint), and its batches commit with
    `synchronous=FULL` (`NORMAL` could corrupt such a file on a power loss); a home's files
    Dagster made in WAL mode stay so, with the batches' `NORMAL` as before."""
    fresh = BatchedSqliteEventLogStorage(str(tmp_path / "fresh"))
    fresh.store_event(engine_event())
    assert journal_mode(tmp_path / "fresh", "index") == "delete"
    assert journal_mode(tmp_path / "fresh", RUN) == "delete"

    SqliteEventLogStorage(str(tmp_path / "before")).store_event(engine_event())
    before = BatchedSqliteEventLogStorage(str(tmp_path / "before"))
    with before.batched():
        before.store_event(materialization("a"))
    other_run = "4f1e2d3c-0000-4000-8000-000000000002"
    before.store_event(engine_event(other_run))  # a new run's file in a home from before
    assert journal_mode(tmp_path / "before", "index") == "wal"
    assert journal_mode(tmp_path / "before", RUN) == "wal"
    assert journal_mode(tmp_path / "before", other_run) == "delete"
    assert stored(SqliteEventLogStorage(str(tmp_path / "before"))) == ["a"]

    synchronous = {}
    for name, storage, run in (("fresh", fresh, RUN), ("wal", before, RUN)):
        with storage._open(run) as conn:
            synchronous[name] = conn.exec_driver_sql("PRAGMA synchronous").scalar()
    assert synchronous == {"fresh": 2, "wal": 1}  # FULL, NORMAL


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="no /proc/self/io to count bytes")
def test_a_batch_into_a_rollback_journal_file_writes_far_less_than_into_a_wal_file(
    tmp_path: Path,
) -> None:
    """The same batch of 200 revisions' materializations, into the files of a fresh home and of
    a home whose files Dagster made (WAL): the WAL file gets each page twice (the log, then the
    checkpoint when the batch's connection closes), the rollback journal only the few pages
    the batch changed rather than added."""
    events = [materialization(f"note-{n:03d}.md~h@s") for n in range(200)]
    SqliteEventLogStorage(str(tmp_path / "wal")).store_event(engine_event())
    homes = {
        "wal": BatchedSqliteEventLogStorage(str(tmp_path / "wal")),
        "fresh": BatchedSqliteEventLogStorage(str(tmp_path / "fresh")),
    }
    homes["fresh"].store_event(engine_event())  # each file created before counting
    cost = {}
    for name, storage in homes.items():
        before = written()
        with storage.batched():
            for event in events:
                storage.store_event(event)
        cost[name] = written() - before
        assert len(stored(SqliteEventLogStorage(str(tmp_path / name)))) == len(events)
    assert cost["fresh"] * 10 < cost["wal"] * 7, cost
